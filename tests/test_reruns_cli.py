"""Reruns as users do them, through the real lmms-eval CLI: a SIGKILLed run resumed gives the same
samples as a clean run; ``--use_cache`` never keeps a failed question; every wrapper exits non-zero
when its run failed and never shows an older run's results."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness_run import run_lmms_eval, samples

pytestmark = pytest.mark.slow

KILL_TASKS = ["SEQ", "SPR", "CNT", "VS"]


def _sama_cmd(out: Path, tasks: str, model_args: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "lmms_eval", "--model", "sama", "--model_args", model_args, "--tasks", tasks,
            "--batch_size", "1", "--output_path", str(out), "--log_samples", *extra]


def _env(data: Path) -> dict:
    return {**os.environ, "MVX_SYNTH_DATA": str(data), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _finished(tdir: Path) -> list[Path]:
    done = []
    for p in tdir.glob("*.json"):
        try:
            if json.loads(p.read_text()).get("status") == "finished":
                done.append(p)
        except ValueError:
            pass
    return done


def _per_question(folder: Path, tasks: list[str]) -> dict[str, tuple]:
    out = {}
    for code in tasks:
        for s in samples(folder, f"mvx_synth_{code.lower()}"):
            rec = s["mvx_acc"]
            assert rec["id"] not in out, f"question {rec['id']} appears twice in the samples"
            out[rec["id"]] = (rec["raw_output"], rec["parsed"], rec["correct"], rec["failed"])
    return out


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    from mvx_tasks.synth import generate

    return generate(tmp_path_factory.mktemp("synth") / "data", per_task=2, seed=4, tasks=KILL_TASKS,
                    progress=False, workers=1)


def test_sigkill_mid_run_then_rerun_matches_a_clean_run(synth, tmp_path):
    tasks = ",".join(f"mvx_synth_{c.lower()}" for c in KILL_TASKS)
    n = 2 * len(KILL_TASKS)
    clean_args = f"profile=offline,workers=4,trace_dir={tmp_path / 'clean_traces'},cache_dir={tmp_path / 'clean_cache'}"
    run_lmms_eval(["--model", "sama", "--model_args", clean_args, "--tasks", tasks], tmp_path / "clean",
                  env={"MVX_SYNTH_DATA": str(synth)})
    clean = _per_question(tmp_path / "clean", KILL_TASKS)
    assert len(clean) == n and not any(v[3] for v in clean.values())

    tdir = tmp_path / "traces"
    args = f"profile=offline,workers=4,trace_dir={tdir},cache_dir={tmp_path / 'cache'}"
    cmd = _sama_cmd(tmp_path / "run", tasks, args)
    proc = subprocess.Popen(cmd, env=_env(synth), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 400
    try:
        while time.time() < deadline and proc.poll() is None and len(_finished(tdir)) < 3:
            time.sleep(0.2)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # mid-question: four workers are busy
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finished_before = {p.name for p in _finished(tdir)}
    assert 3 <= len(finished_before) < n, finished_before
    assert not list((tmp_path / "run").rglob("*_results.json"))

    rerun = subprocess.run(cmd, env=_env(synth), capture_output=True, text=True, timeout=600)
    log = rerun.stdout + rerun.stderr
    assert list((tmp_path / "run").rglob("*_results.json")), log[-3000:]
    resumed = [line for line in log.splitlines() if line.startswith("SAMA: ")]
    assert resumed and resumed[-1].startswith(f"SAMA: {len(finished_before)} resumed from finished traces"), resumed
    assert _per_question(tmp_path / "run", KILL_TASKS) == clean
    assert len(_finished(tdir)) == n


def test_use_cache_never_stores_a_failed_question(tmp_path):
    """One question fails (its video is unreadable); after the fix, a rerun with the same --use_cache
    recomputes exactly that question and reuses lmms-eval's cached answers for the others."""
    from mvx_tasks.synth import generate

    data = generate(tmp_path / "data", per_task=3, seed=6, tasks=["SEQ"], progress=False, workers=1)
    rows = [json.loads(line) for line in (data / "data.jsonl").read_text().splitlines()]
    victims = {data / v["path"]: (data / v["path"]).read_bytes() for v in rows[1]["videos"]}
    for path in victims:
        path.write_bytes(b"")  # empty files: every tool call fails, so the question fails
    cache = tmp_path / "lmms_cache"

    def run(name: str) -> tuple[dict, Path]:
        # the same model arguments both times (lmms-eval's cache key includes them); no trace_dir, so each
        # run's traces go under its own output folder and show which questions SAMA was asked
        args = "profile=offline,workers=2,cache_dir=none"
        return run_lmms_eval(["--model", "sama", "--model_args", args, "--tasks", "mvx_synth_seq",
                              "--use_cache", str(cache)], tmp_path / name, env={"MVX_SYNTH_DATA": str(data)})

    def traces(name: str) -> list[str]:
        return sorted(p.stem for p in (tmp_path / name).rglob("sama_traces/*/*.json"))

    _, out1 = run("first")
    recs1 = {s["mvx_acc"]["id"]: s["mvx_acc"] for s in samples(out1, "mvx_synth_seq")}
    assert recs1[rows[1]["id"]]["raw_output"] == "" and recs1[rows[1]["id"]]["correct"] is False
    assert traces("first") == sorted(r["id"] for r in rows)

    for path, good in victims.items():  # the cause is fixed
        path.write_bytes(good)
    _, out2 = run("second")
    # SAMA was asked only the failed question: the other two came from lmms-eval's cache
    assert traces("second") == [rows[1]["id"]]
    recs2 = {s["mvx_acc"]["id"]: s["mvx_acc"] for s in samples(out2, "mvx_synth_seq")}
    assert recs2[rows[1]["id"]]["raw_output"].startswith("Answer: ")
    for qid in (rows[0]["id"], rows[2]["id"]):
        assert recs2[qid]["raw_output"] == recs1[qid]["raw_output"] != ""


def _stale_results(folder: Path, name: str = "20200101_000000_results.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(json.dumps({"results": {"mvx_synth": {"mvx_acc,none": 99.0}}, "groups": {"mvx_synth": {}}}))
    return p


def _cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    mvx = Path(sys.executable).with_name("mvx-bench")
    return subprocess.run([str(mvx), *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}, cwd=cwd)


def test_demo_fails_loudly_and_never_prints_an_older_results_file(tmp_path, monkeypatch):
    out = tmp_path / "demo"
    stale = _stale_results(out / "results" / "sama")
    (out / "traces").parent.mkdir(parents=True, exist_ok=True)
    (out / "traces").write_text("a file where the trace folder should be")  # SAMA cannot start
    proc = _cli("demo", "--out", str(out), "--per-task", "1", "--limit", "1")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "error: the demo run failed" in proc.stderr
    assert str(stale) not in proc.stdout and "99.0" not in proc.stdout


def test_demo_data_is_keyed_on_per_task_seed_and_difficulty(tmp_path, monkeypatch):
    import mvx_tasks.synth as synth
    from sama_model.commands import demo_data

    calls = []
    real = synth.generate

    def only_spr(folder, per_task, seed, difficulty):
        calls.append((per_task, seed, difficulty))
        return real(folder, per_task=per_task, seed=seed, difficulty=difficulty, tasks=["SPR"], progress=False,
                    workers=1)

    monkeypatch.setattr(synth, "generate", only_spr)
    folder = tmp_path / "data"
    demo_data(folder, 1, 0, "default")
    first = (folder / "data.jsonl").read_text()
    demo_data(folder, 1, 0, "default")  # same parameters: reused
    assert calls == [(1, 0, "default")]
    demo_data(folder, 1, 7, "default")  # another seed: regenerated, other questions under the same ids
    demo_data(folder, 2, 7, "default")
    demo_data(folder, 2, 7, "hard")
    assert calls == [(1, 0, "default"), (1, 7, "default"), (2, 7, "default"), (2, 7, "hard")]
    assert (folder / "data.jsonl").read_text() != first
    assert json.loads((folder / "synth.json").read_text())["difficulty"] == "hard"
    assert len((folder / "data.jsonl").read_text().splitlines()) == 2


def test_run_probe_and_leaderboard_exit_non_zero_on_failed_runs(tmp_path):
    import yaml

    from mvx_tasks.harness_configs import CONFIG_DIR

    data = yaml.safe_load((CONFIG_DIR / "sama_offline.yaml").read_text())
    data.update(name="broken_sama", tasks="mvx_synth")
    data["model_args"] = {**data["model_args"], "no_such_option": 1}  # SAMA refuses to start
    cfg = tmp_path / "configs" / "broken_sama.yaml"
    cfg.parent.mkdir()
    cfg.write_text(yaml.safe_dump(data))
    _stale_results(tmp_path / "runs" / "broken_sama" / "sama")
    (tmp_path / "nodata").mkdir()
    (tmp_path / "nodata" / "data.jsonl").write_text("")
    proc = _cli("run", str(cfg), "--output", str(tmp_path / "runs"), "--limit", "1",
                env={"MVX_SYNTH_DATA": str(tmp_path / "nodata")})
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "broken_sama: lmms-eval exited" in proc.stderr and "wrote no results file" in proc.stderr

    probe_out = tmp_path / "probe"
    (probe_out / "sama").mkdir(parents=True)
    (probe_out / "sama" / "20200101_samples_mvx_probe.jsonl").write_text("{}\n")  # an older run's
    proc = _cli("probe", "--model", "sama", "--model_args", "no_such_option=1", "--output", str(probe_out))
    assert proc.returncode == 1 and "error: the probe run failed" in proc.stderr, proc.stderr[-2000:]

    proc = _cli("leaderboard", "--runs", str(tmp_path / "missing"), "--out", str(tmp_path / "lb"))
    assert proc.returncode == 1 and "does not exist" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = _cli("leaderboard", "--runs", str(tmp_path / "empty"), "--out", str(tmp_path / "lb"))
    assert proc.returncode == 1 and "holds no lmms-eval results file" in proc.stderr
    assert not (tmp_path / "lb").exists()


def test_vlmeval_exits_non_zero_and_ignores_an_older_record(tmp_path):
    from mvx_tasks.vlmeval.launch import expected_patterns

    work = tmp_path / "work"
    empty = tmp_path / "empty_data"
    empty.mkdir()
    (empty / "data.jsonl").write_text("")  # no questions: the run has nothing to evaluate
    for model, name in expected_patterns(["MVX_Synth_8frame"], ["SAMA_offline"], "all"):
        p = work / model / name  # an older run's records (an hour old)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text('{"id": "old"}\n')
        os.utime(p, (time.time() - 3600, time.time() - 3600))
    proc = _cli("vlmeval", "--data", "MVX_Synth_8frame", "--model", "SAMA_offline", "--work-dir", str(work),
                "--data-root", str(empty), "--limit", "1")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "this run did not write" in proc.stderr
