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
    # seed 970: CNT q1 moves (marked), RID q3 moves (unmarked); seed 971: nothing moves
    _seed(tmp_path, 970, {20: [("A", False), ("B", True), ("A", False), ("B", False)],
                         30: [("A", False), ("A", False), ("A", False), ("A", False)]}, truth)
    _seed(tmp_path, 971, {20: [("B", False)] * 4, 30: [("B", False)] * 4}, truth)
    ran = []
    monkeypatch.setattr(cs, "_run", lambda cmd, log: ran.append(cmd))
    out_json = tmp_path / "report.json"
    assert cs.main([str(tmp_path), "--seeds", "970", "971", "--per-task", "2", "--tasks", "CNT,RID",
                    "--json", str(out_json)]) == 0
    assert ran == []  # every set and every answer file was there: a second run resumes, it does not start over
    report = json.loads(out_json.read_text())
    rows = {r["seed"]: r for r in report["rows"]}
    assert (rows[970]["n"], rows[970]["changed"], rows[970]["marked"], rows[970]["right_base"], rows[970]["right"]) == \
        (4, 2, 1, 4, 2)
    assert rows[970]["changed_questions"] == ["q1", "q3"] and rows[971]["changed"] == 0
    p = report["pooled"]["30"]
    assert (p["n"], p["changed"], p["marked"]) == (8, 2, 1) and p["share"] == 0.25
    assert p["per_task"]["CNT"]["changed"] == 1 and p["per_task"]["RID"]["changed"] == 1
    assert [round(x, 4) for x in p["interval"]] == [round(x, 4) for x in cs.wilson(2, 8)]


def test_missing_steps_are_run_and_recorded_seeds_refused(tmp_path, monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(cs, "_run", lambda cmd, log: ran.append((cmd[1:3], log.name)))
    monkeypatch.setattr(cs, "pool", lambda out, seeds, crfs: {"base_crf": 20, "rows": [], "pooled": {}})
    assert cs.main([str(tmp_path), "--seeds", "972", "--crfs", "20", "26"]) == 0
    assert [log for _, log in ran] == ["generate_s972_crf20.log", "answers_s972_crf20.log",
                                       "generate_s972_crf26.log", "answers_s972_crf26.log"]
    # an answers file cut off by a kill is answered again; a whole one is kept
    cs.profile_json(tmp_path, 972, 20).write_text('{"runs": [{"config": "full", "rec')
    cs.profile_json(tmp_path, 972, 26).write_text('{"runs": [{"config": "full", "records": []}]}')
    ran.clear()
    monkeypatch.setattr(cs, "_set_done", lambda *a: True)
    assert cs.main([str(tmp_path), "--seeds", "972", "--crfs", "20", "26"]) == 0
    assert [log for _, log in ran] == ["answers_s972_crf20.log"]
    with pytest.raises(SystemExit):
        cs.main([str(tmp_path), "--seeds", "972", "3"])  # a fitting seed
    err = capsys.readouterr().err
    assert "seeds 3 of real_composite" in err and "fitting_record.yaml" in err and "follow_classes.json" in err
    with pytest.raises(SystemExit):
        cs.main([str(tmp_path), "--seeds", "129"])  # read by the last round: recorded, so refused too
    assert "seed 129: checked: RID's second reading" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cs.main([str(tmp_path), "--seeds", "972", "--crfs", "20"])  # nothing to compare with
