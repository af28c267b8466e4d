"""Paper scale: the offline profile through the real ``lmms-eval --model sama`` over an MVX-Synth folder
(``mvx-bench synth --paper-scale``), one run per configuration, measured from outside the harness.

Configurations (``--configs``, any of):

- ``w1``, ``w2``, ``w4``: one process with 1, 2 or 4 question workers;
- ``acc2``: ``accelerate launch --multi_gpu --num_processes 2`` on CPUs (``ACCELERATE_USE_CPU=true``,
  two gloo ranks, one worker each), answers compared question by question with the first of ``w1``,
  ``w2``, ``w4`` run before it in the same invocation;
- ``baseline``: the Pixtral-12B config's frames route (``llava_hf``, ``mvx_bench_frames``) on a tiny
  randomly initialised llava model (``mvx-bench routes``' builder), 4 new tokens per answer;
- ``resume``: ``w2`` again into the same folders (every question resumed from its trace);
- ``kill``: ``w2`` into fresh folders, the process group SIGKILLed once half the traces exist, then
  rerun; answers compared with the uninterrupted ``w2`` (list ``w2`` before ``kill``);
- ``view``: ``mvx-bench view``, ``summary`` and ``leaderboard`` on ``w2``'s output, the site opened in
  headless Chromium.

Per run: wall and CPU time of the process tree, questions per minute, RSS of every process every
``--interval`` seconds, disk used by traces / tool cache / stills / results / answer notes, decodes per
video and tool-cache hit rate (``<trace_dir>/run_stats/rank*.json``), per-task accuracy and
answered / failed counts from the results file.

    .venv/bin/python benchmarks/scale.py --data DATA --per-task 2 --configs w1,w2,w4,acc2,baseline,resume,kill,view
    .venv/bin/python benchmarks/scale.py --data DATA --full --configs w2,resume,view

Each invocation writes ``<work>/<tag>/scale.json``, ``results/scale_<tag>.json``; then
``results/scale.md`` and ``results/scale_rss.png`` are rebuilt from every ``results/scale_*.json``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_measure import count_files, du_mib, run_measured  # noqa: E402
from scale_report import write_report  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
BASELINE_CONFIG = "pixtral_12b"
ALL = ("w1", "w2", "w4", "acc2", "baseline", "resume", "kill", "view")


def expected_questions(data: Path, per_task: int | None) -> dict[str, int]:
    """Questions per task code the run will answer (``--limit`` is per task in lmms-eval)."""
    counts: dict[str, int] = {}
    with (data / "data.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                code = json.loads(line)["task"]
                counts[code] = counts.get(code, 0) + 1
    return {c: min(n, per_task) if per_task else n for c, n in counts.items()}


class Bench:
    def __init__(self, data: Path, work: Path, per_task: int | None, interval: float) -> None:
        self.data, self.work, self.per_task, self.interval = data, work, per_task, interval
        self.expected = expected_questions(data, per_task)
        self.n = sum(self.expected.values())
        self.runs: dict[str, dict] = {}

    # ------------------------------------------------------------------ commands
    def folders(self, name: str) -> dict[str, Path]:
        root = self.work / name
        return {"root": root, "results": root / "results", "cache": root / "tool_cache", "notes": root / "notes"}

    def env(self, f: dict[str, Path], **extra: str) -> dict[str, str]:
        return {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "YOLO_OFFLINE": "1",
                "MVX_SYNTH_DATA": str(self.data), "MVX_ANSWER_NOTES": str(f["notes"]), **extra}

    def sama_cmd(self, f: dict[str, Path], workers: int, processes: int = 1) -> list[str]:
        args = ["-m", "lmms_eval", "--model", "sama", "--model_args",
                f"profile=offline,workers={workers},cache_dir={f['cache']}", "--tasks", "mvx_synth",
                "--batch_size", "1", "--output_path", str(f["results"]), "--log_samples"]
        if self.per_task:
            args += ["--limit", str(self.per_task)]
        if processes == 1:
            return [PY, *args]
        acc = str(Path(PY).with_name("accelerate"))
        return [acc, "launch", "--multi_gpu", "--num_processes", str(processes), "--num_machines", "1",
                "--mixed_precision", "no", "--dynamo_backend", "no", *args]

    # ------------------------------------------------------------------ one measured run
    def measure(self, label: str, name: str, cmd: list[str], env: dict[str, str], *, fresh: bool,
                kill_at: float | None = None) -> dict:
        f = self.folders(name)
        if fresh:
            shutil.rmtree(f["root"], ignore_errors=True)
        f["root"].mkdir(parents=True, exist_ok=True)
        start = time.time()
        kill_when = None
        if kill_at is not None:
            want = int(self.n * kill_at)
            kill_when = lambda: sum(count_files(d) for d in self.trace_dirs(f)) >= want  # noqa: E731
        print(f"# {label}: {' '.join(cmd)}", flush=True)
        m = run_measured(cmd, env=env, log=f["root"] / f"{label}.log", interval=self.interval, kill_when=kill_when)
        row = {"label": label, "folder": name, "questions": self.n, **m.to_dict()}
        row.update(self.outcome(f, start, killed=m.killed))
        row["questions_per_min"] = round(row.get("answered_total", 0) / (m.wall_s / 60), 2) if m.wall_s else None
        self.runs[label] = row
        print(f"# {label}: {m.wall_s:.1f}s wall, {m.cpu_s:.1f}s CPU, peak {m.peak_total_mib:.0f} MiB, "
              f"{row.get('answered_total')} answered, {row.get('failed_total')} failed", flush=True)
        return row

    def trace_dirs(self, f: dict[str, Path]) -> list[Path]:
        base = f["results"] / "sama_traces"
        return sorted(d for d in base.iterdir() if d.is_dir()) if base.is_dir() else []

    def outcome(self, f: dict[str, Path], start: float, killed: bool) -> dict:
        out: dict = {"disk_mib": {"traces": sum(du_mib(d) for d in self.trace_dirs(f)),
                                  "tool_cache": du_mib(f["cache"], exclude=("stills",)),
                                  "stills": du_mib(f["cache"] / "stills"),
                                  "results": du_mib(f["results"], exclude=("sama_traces",)),
                                  "notes": du_mib(f["notes"])},
                     "traces": sum(count_files(d) for d in self.trace_dirs(f)),
                     "task_spans": task_spans(self.trace_dirs(f), start)}
        stats = [json.loads(p.read_text()) for d in self.trace_dirs(f) for p in sorted((d / "run_stats").glob("rank*.json"))
                 if p.stat().st_mtime >= start]
        if stats:
            dec = sum(s["decode"]["decodes"] + s["decode"]["window_decodes"] for s in stats)
            videos = sum(s["videos"] for s in stats)
            hits = sum((s["tool_cache"] or {}).get("hits", 0) for s in stats)
            miss = sum((s["tool_cache"] or {}).get("misses", 0) for s in stats)
            out["run_stats"] = stats
            out["decodes_per_video"] = round(dec / videos, 2) if videos else None
            out["frame_cache_hits"] = sum(s["decode"]["hits"] for s in stats)
            out["tool_cache_hit_rate"] = round(hits / (hits + miss), 3) if hits + miss else None
            out["resumed"] = sum(s["resumed"] for s in stats)
        if killed:
            return out
        results = [p for p in f["results"].rglob("*_results.json") if p.stat().st_mtime >= start]
        if not results:
            out["error"] = "no results file"
            return out
        res = json.loads(max(results, key=lambda p: p.stat().st_mtime).read_text())
        per_task = {}
        for task, r in (res.get("results") or {}).items():
            code = task.rsplit("_", 1)[-1].upper()
            if code not in self.expected or not task.endswith("_" + code.lower()):
                continue
            n = int(((res.get("n-samples") or {}).get(task) or {}).get("effective", 0))
            failed = int(r.get("mvx_failed,none") or 0) + int(r.get("mvx_agent_failed,none") or 0)
            per_task[code] = {"n": n, "acc": r.get("mvx_acc,none"), "failed": failed,
                              "unparsed": int(r.get("mvx_unparsed,none") or 0)}
        out["per_task"] = per_task
        out["answered_total"] = sum(t["n"] for t in per_task.values())
        out["failed_total"] = sum(t["failed"] for t in per_task.values())
        out["results_file"] = str(max(results, key=lambda p: p.stat().st_mtime))
        return out

    # ------------------------------------------------------------------ answers
    def answers(self, name: str, since: float = 0.0) -> dict[str, tuple]:
        """question id -> (raw output, parsed letter, correct) from the newest samples file of each task."""
        out: dict[str, tuple] = {}
        newest: dict[str, Path] = {}
        for p in self.folders(name)["results"].rglob("*_samples_*.jsonl"):
            task = p.name.split("_samples_", 1)[1]
            if p.stat().st_mtime >= since and (task not in newest or p.stat().st_mtime > newest[task].stat().st_mtime):
                newest[task] = p
        for p in newest.values():
            for line in p.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    rec = json.loads(line)["mvx_acc"]
                    out[rec["id"]] = (rec.get("raw_output"), rec.get("parsed"), rec.get("correct"))
        return out

    def compare(self, a: str, b: str) -> dict:
        x, y = self.answers(a), self.answers(b)
        differ = sorted(q for q in set(x) | set(y) if x.get(q) != y.get(q))
        return {"a": a, "b": b, "questions_a": len(x), "questions_b": len(y), "identical": not differ and bool(x),
                "differing": differ[:20], "n_differing": len(differ)}

    # ------------------------------------------------------------------ configurations
    def sama(self, label: str, workers: int, processes: int = 1, name: str | None = None, fresh: bool = True,
             kill_at: float | None = None) -> dict:
        name = name or label
        f = self.folders(name)
        extra = {"ACCELERATE_USE_CPU": "true"} if processes > 1 else {}
        return self.measure(label, name, self.sama_cmd(f, workers, processes), self.env(f, **extra), fresh=fresh,
                            kill_at=kill_at)

    def baseline(self) -> dict:
        from mvx_tasks.baselines.routes import default_cache, tiny_model
        from mvx_tasks.harness_configs import CONFIG_DIR, build_command, load_config, local_args, replace_args, run_env

        cfg = load_config(CONFIG_DIR / f"{BASELINE_CONFIG}.yaml")
        folder = tiny_model(cfg.architecture, default_cache())
        local = replace_args(cfg, local_args(cfg, folder, "cpu"))
        f = self.folders("baseline")
        cmd = build_command(local, output=f["results"], limit=self.per_task, python=PY,
                            extra_args=["--gen_kwargs", "max_new_tokens=4,temperature=0,do_sample=False"])
        env = self.env(f, MVX_BENCH_DATA=str(self.data), **run_env(cfg))
        row = self.measure("baseline", "baseline", cmd, env, fresh=True)
        row["route"] = f"{BASELINE_CONFIG}: {cfg.model}, {cfg.tasks}, {cfg.frames_per_video} frames/video, tiny {cfg.architecture}"
        return row

    def tools(self, name: str) -> dict:
        """``mvx-bench view`` / ``summary`` / ``leaderboard`` on a run's output, timed; the site in Chromium."""
        f = self.folders(name)
        mvx = str(Path(PY).with_name("mvx-bench"))
        site, board = f["root"] / "site", f["root"] / "leaderboard"
        shutil.rmtree(site, ignore_errors=True)
        shutil.rmtree(board, ignore_errors=True)
        out: dict = {}
        for key, cmd in (("view", [mvx, "view", str(f["results"]), "--out", str(site), "--data", str(self.data)]),
                         ("summary", [mvx, "summary", str(f["results"])]),
                         ("leaderboard", [mvx, "leaderboard", "--runs", str(f["results"]), "--out", str(board)])):
            # short commands: sampled every 0.1 s (the kernel's ru_maxrss of a child starts at its parent's size)
            m = run_measured(cmd, env=self.env(f), log=f["root"] / f"{key}.log", interval=0.1)
            out[key] = {"rc": m.rc, "wall_s": m.wall_s, "cpu_s": m.cpu_s, "peak_mib": round(m.peak_total_mib, 1)}
        out["view"].update({"site_mib": du_mib(site), "files": sum(1 for p in site.rglob("*") if p.is_file()),
                            "pages": {p.name: round(p.stat().st_size / 1024, 1) for p in sorted(site.glob("*.html"))}})
        out["leaderboard"]["out_mib"] = du_mib(board)
        out["browser"] = open_in_browser(site)
        return out


def task_spans(dirs: list[Path], start: float) -> dict[str, list[float]]:
    """Per task code, seconds after the run's start of its first and last trace written in this run:
    lmms-eval hands questions task by task, so a task's tools first load (and RSS steps up) at its start."""
    spans: dict[str, list[float]] = {}
    for d in dirs:
        for p in d.glob("*.json"):
            t = p.stat().st_mtime - start
            parts = p.stem.split("-")
            if t < 0 or len(parts) < 3:
                continue
            code = parts[-2].upper()
            lo, hi = spans.get(code, [t, t])
            spans[code] = [round(min(lo, t), 1), round(max(hi, t), 1)]
    return dict(sorted(spans.items(), key=lambda kv: kv[1][0]))


def open_in_browser(site: Path) -> dict:
    """Load times of the site's pages in headless Chromium (navigation start to load event, ms)."""
    sys.path.insert(0, str(REPO / "tests"))
    from browser import chromium_missing, quit_chromium, start_chromium

    why = chromium_missing()
    if why:
        return {"skipped": why}
    pages = [p for p in (site / "index.html", site / "questions.html") if p.is_file()]
    q = sorted((site / "q").glob("*.html")) if (site / "q").is_dir() else []
    pages += q[:1]
    driver = start_chromium()
    out = {}
    try:
        for p in pages:
            t0 = time.monotonic()
            driver.get(p.resolve().as_uri())
            wall = time.monotonic() - t0
            nav = driver.execute_script("var t = performance.timing; return [t.domContentLoadedEventEnd - "
                                        "t.navigationStart, t.loadEventEnd - t.navigationStart, "
                                        "document.getElementsByTagName('*').length]")
            out[str(p.relative_to(site))] = {"wall_ms": round(wall * 1000), "dom_ready_ms": nav[0], "load_ms": nav[1],
                                             "elements": nav[2]}
    finally:
        quit_chromium(driver)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="an MVX-Synth folder (mvx-bench synth --paper-scale --out DATA)")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--per-task", type=int, help="the first N questions of each task (lmms-eval --limit N)")
    g.add_argument("--full", action="store_true", help="every question of the folder")
    ap.add_argument("--configs", default=",".join(ALL), help=f"comma-separated, of {', '.join(ALL)}")
    ap.add_argument("--work", default="outputs/scale")
    ap.add_argument("--tag", default=None, help="name of this sweep (default: full or ptN)")
    ap.add_argument("--interval", type=float, default=2.0, help="seconds between RSS samples")
    ap.add_argument("--kill-at", type=float, default=0.5, help="fraction of traces written when `kill` kills")
    ap.add_argument("--fresh", action="store_true", help="drop the runs an earlier invocation of this tag recorded")
    args = ap.parse_args(argv)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    bad = [c for c in configs if c not in ALL]
    if bad:
        ap.error(f"unknown configs {bad}")
    tag = args.tag or ("full" if args.full else f"pt{args.per_task}")
    data = Path(args.data).resolve()
    bench = Bench(data, Path(args.work).resolve() / tag, None if args.full else args.per_task, args.interval)
    report: dict = {"tag": tag, "date": datetime.date.today().isoformat(), "commit": _commit(), "data": str(data),
                    "per_task": args.per_task, "questions": bench.n, "expected": bench.expected,
                    "cpus": os.cpu_count(), "configs": configs, "comparisons": [], "ratios": {}}
    earlier = REPO / "results" / f"scale_{tag}.json"
    if earlier.is_file() and not args.fresh:  # a later invocation of the same sweep adds runs to it
        old = json.loads(earlier.read_text())
        if old.get("questions") == bench.n and old.get("data") == str(data):
            bench.runs = old.get("runs", {})
            report["comparisons"] = old.get("comparisons", [])
            report["tools"] = old.get("tools")
            report["ratios"] = old.get("ratios", {})
            report["configs"] = [c for c in old.get("configs", []) if c not in configs] + configs
    now = {"w1", "w2", "w4", "acc2", "baseline", "resume", "kill", "kill+rerun"} & set(configs) | (
        {"kill+rerun"} if "kill" in configs else set())
    for c in configs:
        if c in ("w1", "w2", "w4"):
            bench.sama(c, int(c[1:]))
        elif c == "acc2":
            bench.sama("acc2", 1, processes=2)
            one = next((k for k in ("w1", "w2", "w4") if k in bench.runs), None)
            if one:
                _add(report, bench.compare(one, "acc2"))
        elif c == "baseline":
            bench.baseline()
        elif c == "resume":
            bench.sama("resume", 2, name="w2", fresh=False)
        elif c == "kill":
            bench.sama("kill", 2, name="kill", kill_at=args.kill_at)
            bench.sama("kill+rerun", 2, name="kill", fresh=False)
            if "w2" in bench.runs:
                _add(report, bench.compare("w2", "kill"))
        elif c == "view":
            report["tools"] = bench.tools("w2")
        _save(bench, report)
    for a, b in (("w1", "w2"), ("w1", "w4")):
        if a in bench.runs and b in bench.runs:
            _add(report, bench.compare(a, b))
    # ratios only between runs of this invocation (same machine load), never against an earlier one's
    qpm = {k: r.get("questions_per_min") for k, r in bench.runs.items() if k in now}
    for a, b in (("w2", "w1"), ("w4", "w1"), ("w4", "w2"), ("acc2", "w1"), ("acc2", "w2")):
        if qpm.get(a) and qpm.get(b):
            report["ratios"][f"{a}/{b} questions per minute"] = round(qpm[a] / qpm[b], 2)
    if "resume" in now and "w2" in now:
        report["ratios"]["resume/w2 wall"] = round(bench.runs["resume"]["wall_s"] / bench.runs["w2"]["wall_s"], 3)
    _save(bench, report)
    print(json.dumps({"ratios": report["ratios"], "comparisons": report["comparisons"]}, indent=1))
    return 0


def _add(report: dict, comparison: dict) -> None:
    """Record a comparison, replacing an earlier one of the same pair."""
    report["comparisons"] = [c for c in report["comparisons"] if (c["a"], c["b"]) != (comparison["a"], comparison["b"])]
    report["comparisons"].append(comparison)


def portable(text: str, data: Path, work: Path) -> str:
    """The record as committed to results/: this machine's folders as ``<data>``, ``<work>``, ``<repo>`` and ``~``
    (whole path components only, the longest first, so a folder inside another keeps its own name)."""
    import re

    names = {str(data.resolve()): "<data>", str(work.resolve()): "<work>", str(REPO.resolve()): "<repo>",
             str(Path.home()): "~"}
    for path in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(json.dumps(path)[1:-1]) + r'(?=[/"\\]|$)', names[path], text)
    return text


def _save(bench: Bench, report: dict) -> None:
    report["runs"] = bench.runs
    bench.work.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report, indent=1)
    (bench.work / "scale.json").write_text(text)
    (REPO / "results" / f"scale_{report['tag']}.json").write_text(portable(text, bench.data, bench.work))
    write_report(REPO / "results")


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


if __name__ == "__main__":
    sys.exit(main())
