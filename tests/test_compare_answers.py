"""benchmarks/compare_answers.py: answer moves between two runs, and the tool evidence behind them."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from sama_model.trace import FinalStep, ToolStep

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import compare_answers as ca  # noqa: E402


def _tool(tool: str, video: str, data: dict, error: str | None = None) -> dict:
    return asdict(ToolStep(iteration=1, call_id=f"{tool}-{video}", tool=tool, args={"video": video}, backend="lite",
                           data=data, text="", error=error, elapsed=0.1, cached=False))


def _write(folder: Path, qid: str, steps: list[dict], letter: str, reason: str = "") -> None:
    final = asdict(FinalStep(answer=letter, letter=letter, reason=reason, forced=False, source="planner"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{qid}.json").write_text(json.dumps({"question": {"id": qid}, "steps": [*steps, final]}))


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "crf20", tmp_path / "crf30"
    actor = {"patterns": ["linear"], "signature": {"extent": 2.0}}
    # q1 (AM): the reference's actor is named differently and a candidate's extent moves; the answer moves
    _write(a, "q1", [_tool("motion_analyzer", "Reference", {"actor": actor, "frames_used": 24}),
                     _tool("motion_analyzer", "Video A", {"actor": {"patterns": ["spinning"], "signature": {"extent": 0.5}}})],
           "A", "highest action score: A; fragile: the best leads the next by 0.010 < 0.2")
    _write(b, "q1", [_tool("motion_analyzer", "Reference", {"actor": {**actor, "patterns": ["zig-zag"]}, "frames_used": 24}),
                     _tool("motion_analyzer", "Video A", {"actor": {"patterns": ["spinning"], "signature": {"extent": 0.8}}})],
           "B")
    # q2 (RID): the score moves by 0.25, the answer stays; a failed call on one side is not compared
    _write(a, "q2", [_tool("visual_similarity", "Reference", {"score": 0.5}),
                     _tool("video_reader", "Reference", {"answer": "x"})], "A")
    _write(b, "q2", [_tool("visual_similarity", "Reference", {"score": 0.25}),
                     _tool("video_reader", "Reference", {}, error="decode failed")], "A")
    # q3 (RID): identical evidence, identical answer; marked fragile in one run only
    _write(a, "q3", [_tool("visual_similarity", "Reference", {"score": 0.9})], "B",
           "identity score 0.400 < threshold 0.5; fragile: near the threshold (within 0.15)")
    _write(b, "q3", [_tool("visual_similarity", "Reference", {"score": 0.9})], "B")
    return a, b


TRUTH = {"q1": ("AM", "B"), "q2": ("RID", "A"), "q3": ("RID", "B")}


def test_answers_and_evidence_are_compared_per_task_and_tool(runs: tuple[Path, Path]) -> None:
    a, b = runs
    result = ca.compare(ca.load_run(str(a)), ca.load_run(str(b)), TRUTH)
    assert result["changed"] == [("q1", "AM", "B", "A", "B", "planner")]
    assert dict(result["rows"]["RID"]) == {"n": 2, "same": 2, "right_before": 2, "right_after": 2, "marked": 1,
                                           "changed_marked": 0}
    assert dict(result["rows"]["AM"]) == {"n": 1, "same": 0, "right_before": 0, "right_after": 1, "marked": 1,
                                          "changed_marked": 1}
    assert ca.markdown(result).splitlines()[2:5] == ["| AM | 1 | 0 | 0 | 1 | 1 | 1 / 0 |",
                                                     "| RID | 2 | 2 | 2 | 2 | 1 | 0 / 0 |",
                                                     "| **all** | 3 | 2 | 2 | 3 | 2 | 1 / 0 |"]

    ev = ca.compare_evidence(ca.load_evidence(str(a)), ca.load_evidence(str(b)), {"q1"}, TRUTH)
    mot = ev["tools"]["motion_analyzer"]
    assert (mot["calls"], mot["identical"]) == (2, 0)
    assert dict(ev["fields"]["motion_analyzer"]) == {"actor.patterns": 1, "actor.signature": 1}
    sim = ev["tools"]["visual_similarity"]
    assert (sim["calls"], sim["identical"], ev["fields"]["visual_similarity"]["score"]) == (2, 1, 1)
    assert ev["moves"]["visual_similarity"]["score"] == [0.25]
    assert "video_reader" not in ev["tools"]  # the failed call has no result to compare
    assert dict(ev["tasks"]["AM"]) == {"n": 1, "evidence_same": 0, "answer_moved_evidence_moved": 1,
                                       "answer_moved_evidence_same": 0}
    assert ev["tasks"]["RID"]["n"] == 2 and ev["tasks"]["RID"]["evidence_same"] == 1

    table = ca.evidence_markdown(ev)
    assert "| visual_similarity | 2 | 1 | score 1 (0.25) |" in table
    assert "| AM | 1 | 0 | 1 | 0 |" in table


def test_cli_prints_the_evidence_table_for_trace_folders(runs: tuple[Path, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "videos").mkdir()
    (data / "videos" / "r.mp4").write_bytes(b"")
    options = {"AM": {k: f"Video {k}" for k in "ABCD"}, "RID": {"A": "Yes", "B": "No"}}
    rows = [{"id": q, "task": t, "question": "?", "options": options[t], "answer": ans,
             "videos": [{"label": "Reference", "path": "videos/r.mp4"}]} for q, (t, ans) in TRUTH.items()]
    (data / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a, b = runs
    assert ca.main([str(a), str(b), "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert "| **all** | 3 | 2 | 2 | 3 | 2 | 1 / 0 |" in out
    assert "| motion_analyzer | 2 | 0 | actor.patterns 1, actor.signature 1 |" in out


def test_profile_json_records_carry_their_fragile_mark(tmp_path: Path) -> None:
    """An offline_profile.py --json file: each record's letter, source and fragile mark (absent: unmarked)."""
    records = [{"id": "q1", "letter": "A", "source": "planner", "fragile": True},
               {"id": "q2", "letter": "B", "source": "planner"}]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"runs": [{"config": "full", "records": records}]}))
    assert ca.load_run(str(path)) == {"q1": {"letter": "A", "source": "planner", "fragile": True},
                                      "q2": {"letter": "B", "source": "planner", "fragile": False}}
