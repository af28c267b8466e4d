"""`mvx-bench synth --paper-scale`: the paper's question count per task (1,442), its videos per question,
the same plan for the same seed, and the CLI flag reaching the generator. Checked on the plan (no
rendering) except one small CLI run."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from mvx_tasks.cli import main
from mvx_tasks.registry import total_questions
from mvx_tasks.synth import plan
from mvx_tasks.synth.generate import PAPER, task_counts

PAPER_COUNTS = {"CNT": 150, "FD": 100, "AM": 150, "ART": 150, "RID": 150, "MVR": 106, "VS": 69, "CR": 150,
                "DE": 150, "SEQ": 117, "SPR": 150}
#: videos per question in the paper's task descriptions (SEQ: "several clips", the synth's 3 or 4)
PAPER_VIDEOS = {"CNT": 5, "FD": 2, "AM": 5, "ART": 5, "RID": 2, "MVR": 5, "VS": 5, "CR": 5, "DE": 2, "SPR": 5}


@pytest.fixture(scope="module")
def paper_plan():
    return plan(per_task=PAPER, seed=0)


def test_paper_counts_come_from_the_registry():
    assert task_counts(PAPER) == PAPER_COUNTS
    assert sum(task_counts(PAPER).values()) == total_questions() == 1442
    assert task_counts(PAPER, tasks="VS,SEQ") == {"VS": 69, "SEQ": 117}
    assert task_counts(3, tasks=["CNT"]) == {"CNT": 3}
    for bad in (0, -1, "all"):
        with pytest.raises(ValueError):
            task_counts(bad)


def test_paper_scale_plan_has_exact_counts_and_videos(paper_plan):
    assert len(paper_plan) == 1442
    assert Counter(s.task for s in paper_plan) == PAPER_COUNTS
    assert len({s.id for s in paper_plan}) == 1442
    for s in paper_plan:
        if s.task == "SEQ":
            assert len(s.videos) in (3, 4)
        else:
            assert len(s.videos) == PAPER_VIDEOS[s.task], s.id
    seq = sum(len(s.videos) for s in paper_plan if s.task == "SEQ")
    assert sum(len(s.videos) for s in paper_plan) == 5425 + seq


def test_same_seed_same_plan_other_seed_another(paper_plan):
    again = plan(per_task=PAPER, seed=0, tasks="VS")
    assert [s.to_dict() for s in again] == [s.to_dict() for s in paper_plan if s.task == "VS"]
    other = plan(per_task=PAPER, seed=1, tasks="VS")
    assert [s.to_dict() for s in other] != [s.to_dict() for s in again]


def test_cli_paper_scale_writes_the_counts(tmp_path, capsys):
    assert main(["synth", "--out", str(tmp_path / "d"), "--paper-scale", "--tasks", "VS", "--workers", "1"]) == 0
    lines = (tmp_path / "d" / "data.jsonl").read_text().splitlines()
    assert len(lines) == 69
    manifest = json.loads((tmp_path / "d" / "synth.json").read_text())
    assert manifest["per_task"] == "paper" and manifest["counts"] == {"VS": 69}
    assert len(list((tmp_path / "d" / "videos").glob("*.mp4"))) == 69 * 5
