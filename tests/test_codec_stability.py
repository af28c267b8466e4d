"""benchmarks/codec_stability.py: answers moved by re-encoding, pooled over seeds, from the files a run leaves."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import codec_stability as cs  # noqa: E402

from mvx_tasks.real_composite.generate import GENERATOR_VERSION, MANIFEST  # noqa: E402


def _question(qid: str, task: str, answer: str) -> dict:
    """A question in the composite's format: CNT a reference and four candidates, RID two videos and yes / no."""
    if task == "RID":
        return {"id": qid, "task": task, "question": "Is it the same individual?", "options": {"A": "Yes", "B": "No"},
                "answer": answer, "videos": [{"label": f"Video {k}", "path": f"videos/{qid}_video-{k}.mp4"}
                                             for k in (1, 2)]}
    labels = ["Reference", *(f"Video {x}" for x in "ABCD")]
    return {"id": qid, "task": task, "question": "Which candidate?", "options": {x: f"Video {x}" for x in "ABCD"},
            "answer": answer, "videos": [{"label": lb, "path": f"videos/{qid}_{lb.lower().replace(' ', '-')}.mp4"}
                                         for lb in labels]}


def _seed(out: Path, seed: int, answers: dict[int, list[tuple[str, bool]]], truth: list[tuple[str, str]]) -> None:
    """A finished seed as the script leaves it: each CRF's set (data.jsonl, manifest) and its answers JSON."""
    for crf, letters in answers.items():
        folder = cs.set_dir(out, seed, crf)
        folder.mkdir(parents=True)
        qs = [_question(f"q{i}", task, ans) for i, (task, ans) in enumerate(truth)]
        (folder / "data.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
        (folder / MANIFEST).write_text(json.dumps({"per_task": 2, "seed": seed, "crf": crf, "tasks": ["CNT", "RID"],
                                                   "version": GENERATOR_VERSION}))
        records = [{"id": q["id"], "task": q["task"], "answer": q["answer"], "letter": letter, "source": "planner",
                    "fragile": fragile} for q, (letter, fragile) in zip(qs, letters)]
        cs.profile_json(out, seed, crf).write_text(json.dumps({"runs": [{"config": "full", "records": records}]}))


def test_wilson_interval_exact_numbers():
    lo, hi = cs.wilson(18, 240)
    assert (round(100 * lo, 1), round(100 * hi, 1)) == (4.8, 11.5)
    assert cs.wilson(0, 60)[0] == 0.0 and round(100 * cs.wilson(0, 60)[1], 1) == 6.0
    assert cs.wilson(0, 0) == (0.0, 1.0)


def test_pooled_over_seeds_from_a_finished_run_and_nothing_rerun(tmp_path, monkeypatch):
    truth = [("CNT", "A"), ("CNT", "B"), ("RID", "A"), ("RID", "B")]
    # seed 70: CNT q1 moves (marked), RID q3 moves (unmarked); seed 71: nothing moves
    _seed(tmp_path, 70, {20: [("A", False), ("B", True), ("A", False), ("B", False)],
                         30: [("A", False), ("A", False), ("A", False), ("A", False)]}, truth)
    _seed(tmp_path, 71, {20: [("B", False)] * 4, 30: [("B", False)] * 4}, truth)
    ran = []
    monkeypatch.setattr(cs, "_run", lambda cmd, log: ran.append(cmd))
    out_json = tmp_path / "report.json"
    assert cs.main([str(tmp_path), "--seeds", "70", "71", "--per-task", "2", "--tasks", "CNT,RID",
                    "--json", str(out_json)]) == 0
    assert ran == []  # every set and every answer file was there: a second run resumes, it does not start over
    report = json.loads(out_json.read_text())
    rows = {r["seed"]: r for r in report["rows"]}
    assert (rows[70]["n"], rows[70]["changed"], rows[70]["marked"], rows[70]["right_base"], rows[70]["right"]) == \
        (4, 2, 1, 4, 2)
    assert rows[70]["changed_questions"] == ["q1", "q3"] and rows[71]["changed"] == 0
    p = report["pooled"]["30"]
    assert (p["n"], p["changed"], p["marked"]) == (8, 2, 1) and p["share"] == 0.25
    assert p["per_task"]["CNT"]["changed"] == 1 and p["per_task"]["RID"]["changed"] == 1
    assert [round(x, 4) for x in p["interval"]] == [round(x, 4) for x in cs.wilson(2, 8)]


def test_missing_steps_are_run_and_fitting_seeds_refused(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(cs, "_run", lambda cmd, log: ran.append((cmd[1:3], log.name)))
    monkeypatch.setattr(cs, "pool", lambda out, seeds, crfs: {"base_crf": 20, "rows": [], "pooled": {}})
    assert cs.main([str(tmp_path), "--seeds", "72", "--crfs", "20", "26"]) == 0
    assert [log for _, log in ran] == ["generate_s72_crf20.log", "answers_s72_crf20.log",
                                       "generate_s72_crf26.log", "answers_s72_crf26.log"]
    # an answers file cut off by a kill is answered again; a whole one is kept
    cs.profile_json(tmp_path, 72, 20).write_text('{"runs": [{"config": "full", "rec')
    cs.profile_json(tmp_path, 72, 26).write_text('{"runs": [{"config": "full", "records": []}]}')
    ran.clear()
    monkeypatch.setattr(cs, "_set_done", lambda *a: True)
    assert cs.main([str(tmp_path), "--seeds", "72", "--crfs", "20", "26"]) == 0
    assert [log for _, log in ran] == ["answers_s72_crf20.log"]
    with pytest.raises(SystemExit):
        cs.main([str(tmp_path), "--seeds", "3"])  # a fitting seed
    with pytest.raises(SystemExit):
        cs.main([str(tmp_path), "--seeds", "72", "--crfs", "20"])  # nothing to compare with
