"""The leaderboard: paper-table self-check, lmms-eval runs re-scored from hand-written result and
samples files, bootstrap intervals, Delta against the reproduced row, partial-run flags, outputs."""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import pytest

from mvx_tasks.leaderboard import add_leaderboard_arguments, cmd_leaderboard
from mvx_tasks.leaderboard.output import markdown
from mvx_tasks.leaderboard.runs import flagged_paper_rows, load_paper_table, task_code
from mvx_tasks.leaderboard.table import bootstrap_ci, build_leaderboard
from mvx_tasks.registry import bench_tasks

FLAGGED = ["Phi-3.5-Vision", "SAMA (Qwen2.5-VL-7B + GPT-5.2)"]


def rec(qid: str, task: str, correct: bool, unparsed: bool = False) -> dict:
    parsed = None if unparsed else ("A" if correct else "B")
    return {"id": qid, "task": task, "raw_output": parsed or "no idea", "parsed": parsed, "answer": "A",
            "correct": correct, "unparsed": unparsed, "failed": None}


def write_lmms_run(folder: Path, model: str, model_args: str, per_task: dict[str, list[dict]],
                   stamp: str = "20261130_120000", samples: bool = True) -> Path:
    """Files laid out exactly as lmms-eval writes them (results + one samples log per task)."""
    folder.mkdir(parents=True, exist_ok=True)
    results, n = {}, {}
    for code, records in per_task.items():
        task = f"mvx_bench_{code.lower()}"
        results[task] = {"alias": task, "mvx_acc,none": 100 * sum(r["correct"] for r in records) / len(records),
                         "mvx_acc_stderr,none": "N/A", "mvx_unparsed,none": sum(r["unparsed"] for r in records)}
        n[task] = {"original": len(records), "effective": len(records)}
        if samples:
            with (folder / f"{stamp}_samples_{task}.jsonl").open("w") as fh:
                for i, r in enumerate(records):
                    fh.write(json.dumps({"doc_id": i, "target": "A", "mvx_acc": r, "mvx_unparsed": int(r["unparsed"])})
                             + "\n")
    results["mvx_bench"] = {"alias": "mvx_bench", "mvx_acc,none": 0.0}  # a group row: not a task
    path = folder / f"{stamp}_results.json"
    path.write_text(json.dumps({"results": results, "n-samples": n,
                                "config": {"model": model, "model_args": model_args}}))
    return path


def test_paper_table_alone_flags_exactly_two_rows(tmp_path):
    rows = load_paper_table()
    assert len(rows) == 24
    assert flagged_paper_rows(rows) == FLAGGED
    by = {r.model: r for r in rows}
    assert round(by["Phi-3.5-Vision"].recomputed, 3) == 20.431
    assert round(by["SAMA (Qwen2.5-VL-7B + GPT-5.2)"].recomputed, 3) == 52.864
    assert round(by["GPT-4o"].recomputed, 3) == 47.713
    board = build_leaderboard()
    assert board.flagged_paper == FLAGGED and board.runs() == []
    assert sorted(e.name for e in board.entries if e.flags) == sorted(FLAGGED)
    # rows whose config route cannot run offline (remote code, vLLM, API) are marked, the others verified
    assert sorted(e.name for e in board.entries if e.route_unverified) == [
        "Bee-8B", "GPT-4o", "GPT-5.2", "MiniCPM-V-2", "Phi-3.5-Vision"]
    verified = {e.name for e in board.entries if e.route_verified}
    assert {"Gemma-3-4B-IT", "LLaVA-OneVision-7B", "Idefics3-8B-Llama3", "InternVL3.5-4B", "Pixtral-12B",
            "Qwen2.5-VL-7B", "Qwen3.6-27B", "Phi-4-Multimodal"} <= verified and len(verified) == 16
    assert "route not verified offline (hub remote code run by vLLM" in markdown(board)
    perception = {e.name: e.per_level["perception"] for e in board.entries}
    assert perception["Random"] == pytest.approx((25.0 * 150 + 50.0 * 100) / 250)


def test_task_names_map_to_codes():
    assert task_code("mvx_bench_cnt") == ("MVX-Bench", "CNT")
    assert task_code("mvx_bench_frames_spr") == ("MVX-Bench", "SPR")
    assert task_code("mvx_synth_de") == ("MVX-Synth", "DE")
    assert task_code("mvx_bench_perception") is None and task_code("mvx_bench") is None


def test_bootstrap_is_stratified_and_deterministic():
    perfect = [rec(f"q{i}", "CNT", True) for i in range(10)]
    assert bootstrap_ci(perfect, n_boot=300) == {"CNT": (100.0, 100.0), "overall": (100.0, 100.0)}
    # one task always right, one always wrong: resampling within tasks leaves exactly 50%
    split = perfect + [rec(f"w{i}", "FD", False) for i in range(10)]
    assert bootstrap_ci(split, n_boot=300)["overall"] == (50.0, 50.0)
    mixed = [rec(f"m{i}", "AM", i % 2 == 0) for i in range(100)]
    a, b = bootstrap_ci(mixed, seed=3), bootstrap_ci(mixed, seed=3)
    assert a == b
    lo, hi = a["overall"]
    assert 38.0 < lo < 45.0 and 55.0 < hi < 62.0  # about 50 +- 1.96 * 5


def test_lmms_run_row_counts_interval_delta_and_partial_flag(tmp_path):
    runs = tmp_path / "runs"
    cnt = [rec("c1", "CNT", True), rec("c2", "CNT", True), rec("c3", "CNT", False, unparsed=True),
           rec("c4", "CNT", False)]
    fd = [rec("f1", "FD", True), rec("f2", "FD", True), rec("f3", "FD", True), rec("f4", "FD", False)]
    write_lmms_run(runs / "Qwen__Qwen2.5-VL-7B-Instruct", "qwen2_5_vl",
                   "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=8,device_map=auto", {"CNT": cnt, "FD": fd})
    board = build_leaderboard([runs], n_boot=500, seed=0)
    (run,) = board.runs()
    assert run.paper_row == "Qwen2.5-VL-7B"  # matched through the harness config's model and hub id
    assert (run.avg, run.answered, run.unparsed, run.failed) == (62.5, 8, 1, 0)
    assert run.per_task == {"CNT": 50.0, "FD": 75.0} and run.per_level == {"perception": 62.5}
    assert run.partial and "partial run (8 questions)" in run.flags
    assert run.delta == pytest.approx({"Avg": 62.5 - 32.6, "CNT": 50.0 - 22.0, "FD": 75.0 - 59.0})
    assert run.ci == bootstrap_ci(cnt + fd, n_boot=500, seed=0)["overall"]
    assert run.ci[0] <= 62.5 <= run.ci[1] and run.ci[0] < run.ci[1]


def test_full_run_reproducing_a_row_is_not_partial(tmp_path):
    """A run with every registry question whose correct counts are the paper's row: Delta ~ 0."""
    rows = {r.model: r for r in load_paper_table()}
    row = rows["Qwen2.5-VL-3B"]
    per_task = {}
    for spec in bench_tasks():
        k = round(row.per_task[spec.code] * spec.n_questions / 100)
        per_task[spec.code] = [rec(f"{spec.code}{i}", spec.code, i < k) for i in range(spec.n_questions)]
    folder = tmp_path / "runs" / "my_rerun"
    write_lmms_run(folder / "qwen2_5_vl", "qwen2_5_vl", "pretrained=/local/ckpt", per_task)
    (folder / "mvx_run.json").write_text(json.dumps({"config": "my_rerun", "paper_row": "Qwen2.5-VL-3B"}))
    (run,) = build_leaderboard([tmp_path / "runs"], n_boot=200).runs()
    assert (run.name, run.answered, run.partial) == ("my_rerun", 1442, False)
    assert run.avg == pytest.approx(100 * 550 / 1442)  # 38.14: the paper prints 38.1
    assert run.delta["Avg"] == pytest.approx(100 * 550 / 1442 - 38.1)
    assert max(abs(run.delta[c]) for c in row.per_task) < 0.05


def test_sama_ablation_run_is_not_matched_to_the_full_sama_row(tmp_path):
    per_task = {"CR": [rec("c1", "CR", True), rec("c2", "CR", False)]}
    write_lmms_run(tmp_path / "r" / "full", "sama", "profile=paper-gpt", per_task)
    write_lmms_run(tmp_path / "r" / "ablation", "sama", "profile=paper-gpt,skills=False", per_task)
    rows = {Path(r.path).parent.name: r.paper_row for r in build_leaderboard([tmp_path / "r"], n_boot=50).runs()}
    assert rows == {"full": "SAMA (Qwen2.5-VL-7B + GPT-5.2)", "ablation": None}


def test_results_without_samples_use_reported_figures(tmp_path):
    per_task = {"AM": [rec(f"a{i}", "AM", i < 3) for i in range(4)]}
    write_lmms_run(tmp_path / "r" / "m", "mvx_hf_chat", "pretrained=google/gemma-3-4b-it", per_task, samples=False)
    (run,) = build_leaderboard([tmp_path / "r"]).runs()
    assert (run.paper_row, run.avg, run.answered, run.unparsed, run.ci) == ("Gemma-3-4B-IT", 75.0, 4, 0, None)


def test_cli_writes_markdown_csv_and_png(tmp_path, capsys):
    write_lmms_run(tmp_path / "runs" / "x", "qwen2_5_vl", "pretrained=Qwen/Qwen2.5-VL-3B-Instruct",
                   {"SEQ": [rec("s1", "SEQ", True), rec("s2", "SEQ", False)]})
    parser = argparse.ArgumentParser()
    add_leaderboard_arguments(parser)
    args = parser.parse_args(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "lb"), "--n-boot", "100"])
    assert cmd_leaderboard(args) == 0
    assert "flagged paper rows: Phi-3.5-Vision, SAMA (Qwen2.5-VL-7B + GPT-5.2)" in capsys.readouterr().out
    with (tmp_path / "lb" / "leaderboard.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 25
    assert sorted(r["model"] for r in rows if r["Avg_check"] == "MISMATCH") == sorted(FLAGGED)
    (run,) = [r for r in rows if r["kind"] == "run"]
    assert (run["Avg"], run["SEQ"], run["answered"], run["partial"], run["paper_row"], run["delta_SEQ"]) == \
           ("50.00", "50.00", "2", "True", "Qwen2.5-VL-3B", "9.00")
    md = (tmp_path / "lb" / "leaderboard.md").read_text()
    assert "22 of 24 paper rows reproduce their Avg within 0.1." in md
    assert "| qwen2_5_vl:Qwen2.5-VL-3B-Instruct | Qwen2.5-VL-3B | +11.9 |" in md
    assert (tmp_path / "lb" / "leaderboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
