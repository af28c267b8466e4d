"""benchmarks/count_bound.py: CNT answers' expected change under one-off count moves at a rate, exact on
constructed counts, tied to the policy's own one-off test, and the CLI on a constructed counts file."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import count_bound
import count_stability

from sama_model.skills.multi_video_comparison.cnt import count_scores, one_off_changes

LABELS = ("Reference", "Video A", "Video B", "Video C", "Video D")
SAME = ("Count the moving cut-outs in each video. Which candidate video contains the same number of them as the "
        "Reference video?")
MORE = "Which candidate video has more moving patches than the Reference video? Count them in each video."


def _question(qid: str, text: str, counts: list[int]) -> dict:
    return {"id": qid, "task": "CNT", "question": text, "answer": "A",
            "options": {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"},
            "videos": [{"label": lb, "path": f"videos/{qid}_{i}.mp4"} for i, lb in enumerate(LABELS)],
            "meta": {"reference_count": counts[0], "counts": dict(zip(LABELS[1:], counts[1:]))}}


def _got(n: int) -> dict:
    return {"count": n, "regions": n, "points": n, "graded": float(n), "near": False, "floors": [n] * 7}


def _case(text: str, counts: list[int]) -> tuple[dict, list[tuple], list[dict]]:
    q = _question("q0", text, counts)
    rows = count_stability._rows(Path("set"), [q])
    return q, rows, [_got(n) for n in counts]


def test_a_count_moves_one_up_or_down_and_zero_only_up():
    assert count_bound.steps(3, 0.2) == [(0, 0.8), (1, 0.1), (-1, 0.1)]
    assert count_bound.steps(0, 0.2) == [(0, 0.8), (1, 0.2)]
    assert count_bound.steps(3, 0.0) == [(0, 1.0)]
    got = _got(2)
    assert count_bound.moved(got, -1)["count"] == 1 and count_bound.moved(got, -1)["graded"] == 1.0
    assert count_bound.moved(got, 0) is got and got["count"] == 2  # the reading itself is not touched
    # the followed objects move with it: a sure one more, or the most probable one less
    held = {**got, "probabilities": [0.7, 0.95, 0.2]}
    assert count_bound.moved(held, 1)["probabilities"] == [1.0, 0.95, 0.7, 0.2]
    assert count_bound.moved(held, -1)["probabilities"] == [0.7, 0.2]
    assert held["probabilities"] == [0.7, 0.95, 0.2]


def test_expected_change_is_exact_on_a_constructed_same_question():
    """Reference 2, A 2, B 3, C and D 9: the answer (A) changes only when B ends strictly closer to the
    reference than A (a tie stays with A, the first listed). Enumerated by hand over the reference's, A's and
    B's moves (q = p/2, s = 1 - p): q^3 + 2 s q^2 + q^2 + q s^2, i.e. 0.375 at p = 1 and 0.203125 at p = 0.5."""
    q, rows, got = _case(SAME, [2, 2, 3, 9, 9])
    assert count_stability.answers([q], rows, got) == {"q0": "A"}
    assert count_bound.expected_changes(q, rows, got, 1.0) == pytest.approx(0.375, abs=1e-12)
    assert count_bound.expected_changes(q, rows, got, 0.5) == pytest.approx(0.203125, abs=1e-12)
    assert count_bound.expected_changes(q, rows, got, 0.0) == 0.0


def test_no_one_off_move_changes_a_clear_answer():
    q, rows, got = _case(MORE, [2, 1, 6, 1, 2])  # B stays the largest whatever one-off moves happen
    for p in (0.1, 0.5, 1.0):
        assert count_bound.expected_changes(q, rows, got, p) == 0.0


def test_small_rates_follow_the_policys_one_off_test():
    """To first order in p the expected change is p/2 times the (video, step) moves that the policy's
    fragile test (one_off_changes) lists: the two measure the same edge."""
    q, rows, got = _case(SAME, [3, 2, 4, 3, 1])
    every = {lb: float(g["count"]) for lb, g in zip(LABELS, got)}
    grades = {lb: float(g["graded"]) for lb, g in zip(LABELS, got)}
    letter = {v: k for k, v in q["options"].items()}

    def choose(scores: dict[str, float]) -> str:
        return max(sorted(scores, key=lambda lb: letter[lb]), key=lambda lb: scores[lb])

    listed = one_off_changes("eq", "Reference", every, {}, choose, grades)
    # C (3) matches the reference; the reference one off either way, C one off either way (a tie goes to A, listed
    # first), A one up (a tie, A first) and B one down (a tie, B before C) each change it
    assert count_scores("eq", 3.0, {k: v for k, v in every.items() if k != "Reference"}, {}, grades, 3.0)["Video C"] == 0.0
    assert sorted((v, s) for v, s, _ in listed) == [("Reference", -1), ("Reference", 1), ("Video A", 1),
                                                    ("Video B", -1), ("Video C", -1), ("Video C", 1)]
    p = 1e-5
    assert count_bound.expected_changes(q, rows, got, p) / p == pytest.approx(len(listed) / 2, rel=1e-3)


def test_cli_on_a_constructed_counts_file(tmp_path, capsys):
    folders = [tmp_path / "c20", tmp_path / "c30"]
    questions = [_question("q0", SAME, [2, 2, 3, 9, 9]), _question("q1", MORE, [2, 1, 6, 1, 2])]
    videos = {}
    for folder, shift in zip(folders, (0, 1)):
        folder.mkdir()
        (folder / "data.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
        rows = count_stability._rows(folder, questions)
        counts = [r[2] + (shift if (r[0], r[1]) == ("q0", "Video B") else 0) for r in rows]
        videos[str(folder)] = [{"question": r[0], "video": r[1], "truth": r[2], "got": _got(n)} for r, n in zip(rows, counts)]
    report = {"change": {"videos_compared": 10, "counts_moved": 1, "answers_changed": 0}}
    src = tmp_path / "counts.json"
    src.write_text(json.dumps({"report": report, "videos": videos}), encoding="utf-8")
    out = tmp_path / "bound.json"
    assert count_bound.main([str(src), "--rates", "1", "0.5", "--json", str(out)]) == 0
    got = json.loads(out.read_text())[0]
    # the first encoding: q0 as in the exact test, q1 never changes
    assert got["encodings"][str(folders[0])]["expected_answers_changed_pct"] == {"1": 18.75, "0.5": 10.16}
    assert got["measured"] == {"counts_moved_pct": 10.0, "answers_changed_pct": 0.0}
    printed = capsys.readouterr().out
    assert "c20" in printed and "10.0 % / 0.0 %" in printed and "all (question-weighted)" in printed
    with pytest.raises(SystemExit):
        count_bound.main([str(src), "--rates", "1.5"])
