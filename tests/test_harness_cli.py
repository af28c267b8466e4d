"""The MVX tasks through the real lmms-eval CLI (its built-in `dummy` model answers a fixed letter)."""
import json
import textwrap

import pytest

from fixtures import make_dataset, write_video
from harness_run import run_lmms_eval, samples
from mvx_tasks.registry import bench_tasks

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    make_dataset(root, tasks=[t.code for t in bench_tasks()], per_task=1, video_frames=4)
    # uneven sizes: CNT gets 3 questions (answers A, B, C), FD keeps 1 (answer A)
    rows = [json.loads(x) for x in (root / "data.jsonl").read_text().splitlines()]
    extra = []
    for i, ans in ((1, "B"), (2, "C")):
        r = json.loads(json.dumps(rows[0]))
        r["id"], r["answer"] = f"cnt-extra-{i}", ans
        extra.append(r)
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows + extra))
    return root


def test_no_flags_discovery_weighted_overall_and_levels(bench, tmp_path):
    res, out = run_lmms_eval(["--model", "dummy", "--model_args", "response=A", "--tasks", "mvx_bench"],
                             tmp_path / "out", env={"MVX_BENCH_DATA": str(bench)})
    r = res["results"]
    for t in bench_tasks():
        assert f"mvx_bench_{t.slug}" in r, f"task {t.code} missing from results"
    assert r["mvx_bench_cnt"]["mvx_acc,none"] == pytest.approx(100 / 3)
    assert r["mvx_bench_fd"]["mvx_acc,none"] == 100.0
    # chance on the questions asked (FD: two options) and the data notes of a canonical folder
    assert (r["mvx_bench_fd"]["mvx_chance,none"], r["mvx_bench_cnt"]["mvx_chance,none"]) == (50.0, 25.0)
    assert r["mvx_bench_cnt"]["mvx_data_notes,none"] == "repaired 0, skipped 0"
    # question-weighted: perception = (1 + 1) / (3 + 1) = 50 %, not the task mean 66.7 %
    assert res["groups"]["mvx_bench_perception"]["mvx_acc,none"] == pytest.approx(50.0)
    n_correct = sum(1 for t in bench_tasks() for s in samples(out, f"mvx_bench_{t.slug}") if s["mvx_acc"]["correct"])
    assert res["groups"]["mvx_bench"]["mvx_acc,none"] == pytest.approx(100 * n_correct / 13)
    rec = samples(out, "mvx_bench_cnt")[1]["mvx_acc"]
    assert rec == {"id": "cnt-extra-1", "task": "CNT", "raw_output": "A", "parsed": "A", "answer": "B",
                   "correct": False, "unparsed": False, "failed": None, "agent_failed": None, "chance": 0.25}


def test_bad_video_fails_only_its_question_and_include_path_still_works(tmp_path):
    from mvx_tasks.lmms_eval_plugin import TASKS_DIR

    root = make_dataset(tmp_path / "d", tasks=["FD"], per_task=2, video_frames=4)
    (root / "videos" / "fd-0_1.mp4").write_bytes(b"\x00not a video")
    res, out = run_lmms_eval(["--model", "dummy", "--model_args", "response=A", "--tasks", "mvx_bench_fd",
                              "--include_path", TASKS_DIR], tmp_path / "out", env={"MVX_BENCH_DATA": str(root)})
    recs = [s["mvx_acc"] for s in samples(out, "mvx_bench_fd")]
    assert [r["id"] for r in recs] == ["fd-0", "fd-1"]
    assert recs[0]["correct"] is False and "Video B: video file" in recs[0]["failed"]
    assert "cannot be decoded" in recs[0]["failed"]
    assert recs[1]["failed"] is None
    assert res["results"]["mvx_bench_fd"]["mvx_failed,none"] == 1


def test_adding_a_task_is_a_registry_entry_and_one_yaml(tmp_path):
    """A throwaway task outside the package: registry file + one YAML + data, evaluated by the CLI."""
    from mvx_tasks.lmms_eval_plugin import TASKS_DIR

    data = tmp_path / "toy_data"
    (data / "videos").mkdir(parents=True)
    rows = []
    for i, ans in enumerate("ABA"):
        for j in range(2):
            write_video(data / "videos" / f"t{i}_{j}.mp4", n_frames=4)
        rows.append({"id": f"toy-{i}", "task": "TOY", "question": "Which clip is brighter?",
                     "options": {"A": "Clip 1", "B": "Clip 2"}, "answer": ans,
                     "videos": [{"label": "Clip 1", "path": f"videos/t{i}_0.mp4"},
                                {"label": "Clip 2", "path": f"videos/t{i}_1.mp4"}]})
    (data / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "registry.yaml").write_text(
        "tasks:\n  - {code: TOY, name: Toy Brightness, level: perception, n_options: 2, chance: 0.5}\n")
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "mvx_toy.yaml").write_text(textwrap.dedent(f"""\
        task: mvx_toy
        include: {TASKS_DIR}/_mvx_template.yaml
        process_docs: !function mvx_tasks.harness.local_docs_toy
        """))
    res, out = run_lmms_eval(["--model", "dummy", "--model_args", "response=A", "--tasks", "mvx_toy",
                              "--include_path", str(tasks)], tmp_path / "out",
                             env={"MVX_TASK_REGISTRY": str(tmp_path / "registry.yaml"), "MVX_LOCAL_DATA": str(data)})
    assert res["results"]["mvx_toy"]["mvx_acc,none"] == pytest.approx(200 / 3)
    assert [s["mvx_acc"]["task"] for s in samples(out, "mvx_toy")] == ["TOY"] * 3
