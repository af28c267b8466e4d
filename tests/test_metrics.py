"""Per-task, per-level and question-weighted overall accuracy on constructed records."""
import csv
from pathlib import Path

import pytest

from mvx_tasks.metrics import score_output, summarize, weighted_overall

OPTS = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}


def recs(task, n_correct, n_wrong, n_unparsed=0):
    out = [score_output(f"{task}-c{i}", task, "A", OPTS, "A") for i in range(n_correct)]
    out += [score_output(f"{task}-w{i}", task, "B", OPTS, "A") for i in range(n_wrong)]
    out += [score_output(f"{task}-u{i}", task, "no idea", OPTS, "A") for i in range(n_unparsed)]
    return out


def test_summary_is_question_weighted():
    records = recs("CNT", 3, 1) + recs("FD", 1, 3, n_unparsed=2) + recs("AM", 2, 0)
    s = summarize(records)
    assert s.per_task == {"CNT": 75.0, "FD": pytest.approx(100 / 6), "AM": 100.0}
    assert s.n_per_task == {"CNT": 4, "FD": 6, "AM": 2}
    assert s.unparsed_per_task == {"CNT": 0, "FD": 2, "AM": 0}
    assert s.per_level == {"perception": 40.0, "matching": 100.0}  # (3+1)/10 and 2/2
    assert s.overall == pytest.approx(100 * 6 / 12)  # not the task mean (63.9)
    assert s.n_total == 12


def test_failed_question_is_wrong_even_with_the_right_letter():
    r = score_output("q", "FD", "A", {"A": "x", "B": "y"}, "A", failed="Video B: video file missing")
    assert (r.correct, r.parsed, r.failed) == (False, "A", "Video B: video file missing")
    assert summarize([r]).failed_per_task == {"FD": 1}


def test_weighted_overall_reproduces_the_papers_avg_column():
    table = Path(__file__).resolve().parents[1] / "results" / "paper_table1.csv"
    if not table.exists():
        table = Path(__file__).resolve().parents[2] / "shared" / "reference" / "mvx_bench_table1.csv"
    rows = {r["model"]: r for r in csv.DictReader(table.open())}
    codes = ["CNT", "FD", "AM", "ART", "RID", "MVR", "VS", "CR", "DE", "SEQ", "SPR"]
    for model, avg in (("GPT-4o", 47.7), ("InternVL3.5-38B", 47.2), ("SAMA (Qwen2.5-VL-7B + DeepSeek-V4-Pro)", 51.7)):
        got = weighted_overall({c: float(rows[model][c]) for c in codes})
        assert abs(got - avg) <= 0.1, (model, got)
    # the plain mean of task accuracies would not reproduce it
    gpt4o = [float(rows["GPT-4o"][c]) for c in codes]
    assert abs(sum(gpt4o) / 11 - 47.7) > 0.5
