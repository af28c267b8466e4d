"""benchmarks/count_stability.py: CNT answers from the tool's counts by the policy's own rule, per-video
counts and what a re-encoding moved; the agent answers a generated set the same way."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import count_stability

from sama_model.skills.multi_video_comparison.cnt import (
    count_distribution,
    count_scores,
    doubt_changes,
    doubt_marks,
    match_scores,
    one_off_changes,
)

OPTIONS = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}
LABELS = ("Reference", "Video A", "Video B", "Video C", "Video D")


def _question(qid: str, text: str, answer: str) -> dict:
    return {"id": qid, "question": text, "options": OPTIONS, "answer": answer,
            "videos": [{"label": lb, "path": f"videos/{qid}_{lb}.mp4"} for lb in LABELS]}


def _got(count: int, regions: int | None = None, points: int | None = None) -> dict:
    return {"count": count, "regions": count if regions is None else regions,
            "points": count if points is None else points, "near": False}


def _best(scores: dict[str, float]) -> str:
    return max(scores, key=lambda k: scores[k])


def test_count_scores_follow_the_relation():
    counts = {"Video A": 2.0, "Video B": 4.0, "Video C": 3.0}
    assert count_scores("eq", 3.0, counts) == {"Video A": -1.0, "Video B": -1.0, "Video C": 0.0}
    assert _best(count_scores("gt", None, counts)) == "Video B"
    assert _best(count_scores("lt", None, counts)) == "Video A"
    # a tie of counts in a more/fewer question goes to the candidate with more / fewer evidence
    tied = {"Video A": 3.0, "Video B": 3.0}
    ev = {"Video A": 5.0, "Video B": 6.0}
    assert _best(count_scores("gt", None, tied, ev)) == "Video B"
    assert _best(count_scores("lt", None, tied, ev)) == "Video A"


def test_graded_counts_break_ties_before_the_evidence():
    """Two candidates count 2 like the reference: the one whose graded count (2.0) matches the reference's
    (2.0) wins over 2.333; in more/fewer the larger/smaller grade wins even against more/less evidence, and
    the evidence decides only between equal grades. A grade never outweighs a count."""
    tied = {"Video A": 2.0, "Video B": 2.0}
    grades = {"Video A": 2.333, "Video B": 2.0}
    scores = count_scores("eq", 2.0, tied, {}, grades, 2.0)
    assert _best(scores) == "Video B" and scores["Video B"] == -0.0
    assert _best(count_scores("eq", 2.0, tied, {}, grades, 2.667)) == "Video A"
    assert count_scores("eq", 2.0, tied, {}, grades) == {"Video A": -0.0, "Video B": -0.0}  # no reference grade
    ev = {"Video A": 4.0, "Video B": 9.0}
    assert _best(count_scores("gt", None, tied, ev, grades)) == "Video A"
    assert _best(count_scores("lt", None, tied, ev, grades)) == "Video B"
    assert _best(count_scores("gt", None, tied, ev, {"Video A": 2.0, "Video B": 2.0})) == "Video B"
    apart = {"Video A": 2.0, "Video B": 3.0}
    assert _best(count_scores("gt", None, apart, {}, {"Video A": 2.667, "Video B": 3.0})) == "Video B"
    assert _best(count_scores("eq", 3.0, apart, {}, {"Video A": 3.0, "Video B": 2.667}, 3.0)) == "Video B"


def test_one_off_changes_lists_every_count_whose_one_step_changes_the_choice():
    """Exact lists: the choice is the first listed maximum of the policy's scores; a count never goes
    below zero."""
    order = ["Video A", "Video B", "Video C", "Video D"]

    def choose(scores: dict[str, float]) -> str:
        return max(order, key=lambda c: (scores[c], -order.index(c)))

    more = {"Reference": 2.0, "Video A": 2.0, "Video B": 3.0, "Video C": 1.0, "Video D": 2.0}
    # B leads with 3: B one fewer ties A (listed first); A one more ties B (A listed first); D one more ties B
    # (B listed first: no change)
    assert one_off_changes("gt", "Reference", more, {}, choose) == [("Video A", 1, "Video A"),
                                                                    ("Video B", -1, "Video A")]
    same = {"Reference": 3.0, "Video A": 3.0, "Video B": 2.0, "Video C": 4.0, "Video D": 1.0}
    assert one_off_changes("eq", "Reference", same, {}, choose) == [("Reference", -1, "Video B"),
                                                                    ("Reference", 1, "Video C")]
    steady = {"Reference": 1.0, "Video A": 0.0, "Video B": 5.0, "Video C": 1.0, "Video D": 2.0}
    assert one_off_changes("lt", "Reference", steady, {}, choose) == []  # A at 0 cannot go lower
    assert one_off_changes("gt", "Reference", steady, {}, choose) == []  # B leads by 3
    # with graded counts a moved count moves its grade too: B one fewer (2, 2.0) ties A and D at 2, and D's
    # grade (2.667) wins; A one more (3, 3.0) ties B's count and grade (A listed first); D one more (3, 3.667)
    # outgrades B
    grades = {"Reference": 2.0, "Video A": 2.0, "Video B": 3.0, "Video C": 1.0, "Video D": 2.667}
    assert one_off_changes("gt", "Reference", more, {}, choose, grades) == [
        ("Video A", 1, "Video A"), ("Video B", -1, "Video D"), ("Video D", 1, "Video D")]


def test_count_distribution_is_the_poisson_binomial():
    assert count_distribution([]).tolist() == [1.0]
    assert count_distribution([0.5, 0.5]).tolist() == [0.25, 0.5, 0.25]
    assert count_distribution([1.0, 0.2]).tolist() == pytest.approx([0.0, 0.8, 0.2])
    assert count_distribution([0.9, 0.3, 0.6]).sum() == pytest.approx(1.0)


ORDER = ["Video A", "Video B", "Video C", "Video D"]


def _first_best(scores: dict[str, float]) -> str:
    return max(ORDER, key=lambda c: (scores[c], -ORDER.index(c)))


#: the reference's second object is a doubt (0.65); A's too (0.62); B holds two sure objects
DOUBTS = {"Reference": [1.0, 0.65], "Video A": [1.0, 0.62], "Video B": [1.0, 1.0], "Video C": [1.0],
          "Video D": [1.0, 1.0, 1.0]}


def test_match_scores_weigh_every_object_by_its_doubt():
    """Hand-computed: the reference counts 1 (0.35) or 2 (0.65); A 1 (0.38) or 2 (0.62). Same: A 0.35 x 0.38 +
    0.65 x 0.62 = 0.536, B (surely 2) 0.65, C (surely 1) 0.35, D (3) 0. Counts alone tie A and B at 2 (the
    count's threshold is 0.6), and the graded counts (1.65 vs A 1.62, B 2.0) choose A; the match probability
    chooses B. More: A 2 against 1, 0.62 x 0.35 = 0.217; fewer: A 1 against 2, 0.38 x 0.65 = 0.247."""
    cands = {k: v for k, v in DOUBTS.items() if k != "Reference"}
    assert match_scores("eq", DOUBTS["Reference"], cands) == {"Video A": 0.536, "Video B": 0.65, "Video C": 0.35,
                                                               "Video D": 0.0}
    assert match_scores("gt", DOUBTS["Reference"], cands) == {"Video A": 0.217, "Video B": 0.35, "Video C": 0.0,
                                                               "Video D": 1.0}
    assert match_scores("lt", DOUBTS["Reference"], cands) == {"Video A": 0.247, "Video B": 0.0, "Video C": 0.65,
                                                               "Video D": 0.0}
    counts = {"Video A": 2.0, "Video B": 2.0, "Video C": 1.0, "Video D": 3.0}
    grades = {"Reference": 1.65, "Video A": 1.62, "Video B": 2.0, "Video C": 1.0, "Video D": 3.0}
    assert _first_best(count_scores("eq", 2.0, counts, {}, grades, 1.65)) == "Video A"
    assert _first_best(match_scores("eq", DOUBTS["Reference"], cands)) == "Video B"


def test_doubt_marks_name_the_objects_and_the_close_runner_up():
    """Same question: the reference's 0.65 taken as none makes C (1) the match; A's 0.62 taken as one ties A with
    B at 0.65 (A listed first); B's and the sure objects are no doubt. A runner-up at 0.536 of 0.65 is close.
    A clear "more" (D surely 3 against a sure 1, nobody else above 1) is not marked."""
    assert doubt_changes("eq", "Reference", DOUBTS, _first_best) == [("Reference", 0.65, 0.0, "Video C"),
                                                                    ("Video A", 0.62, 1.0, "Video A")]
    assert doubt_marks("eq", "Reference", DOUBTS, _first_best) == (
        "; fragile: Reference's object at 0.65 taken as none -> Video C; Video A's object at 0.62 taken as one -> "
        "Video A; the runner-up's match probability 0.536 is at least 0.5 of the best's 0.650; such answers often "
        "change when the clips are re-encoded")
    clear = {"Reference": [1.0], "Video A": [1.0, 0.05], "Video B": [1.0], "Video C": [0.97], "Video D": [1.0] * 3}
    assert doubt_changes("gt", "Reference", clear, _first_best) == []
    assert doubt_marks("gt", "Reference", clear, _first_best) == ""


def test_answers_from_followed_objects_probabilities():
    """Where every video's reading lists its followed objects' probabilities, the script answers and marks by
    the match probability, as the policy does; a question with one reading without them falls back to the
    counts."""
    q = _question("q-same", "Which candidate video has the same number of moving objects as the Reference?", "B")
    rows = [("q-same", lb, 0, f"/x/{lb}.mp4") for lb in LABELS]
    graded = {"Reference": 1.65, "Video A": 1.62, "Video B": 2.0, "Video C": 1.0, "Video D": 3.0}
    got = [{**_got(len([p for p in DOUBTS[lb] if p >= 0.6])), "graded": graded[lb], "probabilities": DOUBTS[lb]}
           for lb in LABELS]
    assert count_stability.decisions([q], rows, got) == {"q-same": ("B", True)}
    without = [dict(g) for g in got]
    del without[1]["probabilities"]
    assert count_stability.decisions([q], rows, without) == {"q-same": ("A", True)}
    # the first readings' answer is marked, so, as the policy, the mean of both readings' count distributions
    # decides: A's second reading surely 2 (P(2) (0.536 + 0.65) / 2 = 0.593), B's holds one more sure object
    # (0.5 x 0.65 = 0.325): A
    second = {**DOUBTS, "Video A": [1.0, 1.0], "Video B": [1.0, 1.0, 1.0]}
    shifted = [{**g, "shifted_probabilities": second[lb]} for g, lb in zip(got, LABELS)]
    assert count_stability.decisions([q], rows, shifted) == {"q-same": ("A", True)}
    # a steady first answer (B surely 2 like the reference, nobody close) ignores the second readings
    sure = {**DOUBTS, "Reference": [1.0, 1.0], "Video A": [1.0, 0.05]}
    steady = [{**g, "probabilities": sure[lb], "shifted_probabilities": second[lb]} for g, lb in zip(got, LABELS)]
    assert count_stability.decisions([q], rows, steady) == {"q-same": ("B", False)}


def test_match_scores_of_two_readings_weigh_their_mean_distribution():
    """Two readings of a video count by the mean of their distributions: a reference read surely 2 and then 2 at
    0.5 (P(1) 0.25, P(2) 0.75) against A read surely 2 twice (0.75) and B read surely 1 then surely 2 (0.5 x 0.25 +
    0.5 x 0.75 = 0.5); a flat list is one reading, as before."""
    ref = [[1.0, 1.0], [1.0, 0.5]]
    got = match_scores("eq", ref, {"Video A": [[1.0, 1.0], [1.0, 1.0]], "Video B": [[1.0], [1.0, 1.0]]})
    assert got == {"Video A": 0.75, "Video B": 0.5}
    # B more: B 2 (0.5) against a reference under 2 (0.25); fewer: B 1 (0.5) against the reference's 2 (0.75)
    assert match_scores("gt", ref, {"Video B": [[1.0], [1.0, 1.0]]}) == {"Video B": 0.125}
    assert match_scores("lt", ref, {"Video B": [[1.0], [1.0, 1.0]]}) == {"Video B": 0.375}
    assert match_scores("eq", [1.0, 1.0], {"Video A": [1.0, 1.0]}) == match_scores("eq", [[1.0, 1.0]],
                                                                                   {"Video A": [[1.0, 1.0]]})
    assert match_scores("eq", [], {"Video A": []}) == {"Video A": 1.0}  # (no object either side: both count 0)


def test_answers_from_constructed_counts():
    """Exact letters for the three relations, the first listed on a tie, no answer without a reference
    in a 'same' question, and a failed candidate left out."""
    qs = [_question("q-same", "Which candidate video has the same number of moving objects as the Reference?", "C"),
          _question("q-more", "Which candidate shows more moving patches than the Reference?", "B"),
          _question("q-fewer", "Count the things that move in each clip. Which candidate contains fewer things "
                               "that move than the Reference clip?", "A"),
          _question("q-tie", "Which candidate has the same number of them as the Reference? Count the moving "
                             "cut-outs.", "D"),
          _question("q-noref", "Which candidate has the same number of moving objects as the Reference?", "A")]
    per = {"q-same": [3, 1, 5, 3, 2], "q-more": [2, 1, 4, 2, 4], "q-fewer": [3, 1, 3, 2, 5],
           "q-tie": [2, 1, 3, 4, 5], "q-noref": [None, 1, 2, 3, 4]}
    rows, got = [], []
    for q in qs:
        for lb, n in zip(LABELS, per[q["id"]]):
            rows.append((q["id"], lb, 0, f"/x/{q['id']}_{lb}.mp4"))
            got.append("VideoDecodeError: broken" if n is None else _got(n))
    # q-more: B and D both read 4; D's estimates (4 + 5) outweigh B's (4 + 4)
    got[rows.index(("q-more", "Video D", 0, "/x/q-more_Video D.mp4"))] = _got(4, 4, 5)
    picked = count_stability.answers(qs, rows, got)
    assert picked == {"q-same": "C", "q-more": "D", "q-fewer": "A", "q-tie": "A", "q-noref": ""}
    report = count_stability.summary(qs, rows, got)
    assert report["answers_right"] == 2 and report["failed"] == ["/x/q-noref_Reference.mp4: VideoDecodeError: broken"]
    # fragile: q-same (a Reference of 2 picks D), q-more (D at 3 loses to B), q-tie (A at 0 loses to B);
    # q-fewer holds (A at 2 ties C, and A's fewer estimates keep it), q-noref has no answer
    made = count_stability.decisions(qs, rows, got)
    assert {q: fragile for q, (_, fragile) in made.items()} == {
        "q-same": True, "q-more": True, "q-fewer": False, "q-tie": True, "q-noref": False}
    assert (report["answers_fragile"], report["fragile_right"]) == (3, 1)


def test_change_counts_what_moved_and_refuses_other_questions():
    qs = [_question("q1", "Which candidate has more moving objects than the Reference?", "B")]
    rows = [("q1", lb, t, f"/x/{lb}.mp4") for lb, t in zip(LABELS, (2, 1, 3, 2, 1))]
    a = [_got(2), _got(1), _got(3), _got(2), _got(1)]
    b = [_got(2), _got(1), _got(2, 2, 1), _got(3, 2, 3), _got(1)]
    out = count_stability.change((qs, rows, a), (qs, rows, b))
    assert out == {"videos_compared": 5, "counts_moved": 2, "mean_abs_change": 0.4, "regions_moved": 1,
                   "points_moved": 2, "answers_changed": 1, "changed_marked_fragile": 0, "changed_questions": ["q1"]}
    other = [(q, lb, t + 1, p) for q, lb, t, p in rows]
    with pytest.raises(SystemExit, match="do not hold the same CNT questions"):
        count_stability.change((qs, rows, a), (qs, other, b))


def test_script_on_a_generated_set_answers_as_the_agent_does(tmp_path, capsys):
    """As a user runs it, on a CNT set (fitting seed 7, two questions) and its CRF 30 copy; the answers it
    derives from the counts are the offline agent's answers on the same folder; a set without CNT refused."""
    from mvx_tasks.data import load_local
    from mvx_tasks.real_composite import generate
    from sama_model.agent import SamaAgent
    from sama_model.profiles import build_config
    from sama_model.question import AgentQuestion

    a = generate(tmp_path / "c20", per_task=2, seed=7, crf=20, tasks="CNT", workers=1)
    b = generate(tmp_path / "c30", per_task=2, seed=7, crf=30, tasks="CNT", workers=1)
    out_json = tmp_path / "counts.json"
    with pytest.raises(SystemExit):  # seed 7 is in the fitting record: no held-out figure from it
        count_stability.main([str(a), str(b), "--workers", "1"])
    assert "seeds 7 of real_composite" in capsys.readouterr().err
    assert count_stability.main([str(a), str(b), "--workers", "1", "--json", str(out_json), "--allow-recorded"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["standing"] == [f"{a}: real_composite seed 7, NOT held out (checked; chosen; fitted)",
                                  f"{b}: real_composite seed 7, NOT held out (checked; chosen; fitted)"]
    ra = report[str(a)]
    assert ra["videos"] == 10 and ra["questions"] == 2 and ra["failed"] == []
    assert ra["exact"] + ra["under"] + ra["over"] == 10
    assert report["change"]["videos_compared"] == 10
    saved = json.loads(out_json.read_text())
    assert saved["report"] == report and len(saved["videos"][str(a)]) == 10
    # every floor's reading is kept, and the regions' estimate replays from them; the followed objects'
    # probabilities are kept, and the count and its grade replay from those
    from sama_model.backends.lite.movers.count import COUNT_FLOORS, GRADE_FROM, agreed_count
    from sama_model.backends.lite.movers.follow import COUNT_PROBABILITY
    for v in saved["videos"][str(a)] + saved["videos"][str(b)]:
        assert len(v["got"]["floors"]) == len(COUNT_FLOORS)
        assert agreed_count(v["got"]["floors"]) == v["got"]["regions"]
        probs = v["got"]["probabilities"]
        assert sum(p >= COUNT_PROBABILITY for p in probs) == v["got"]["count"] == v["got"]["followed"]
        assert v["got"]["graded"] == pytest.approx(sum(p for p in probs if p >= GRADE_FROM), abs=0.01)

    questions, rows, got = count_stability.measure(a, 1)
    ours = count_stability.answers(questions, rows, got)
    agent = SamaAgent(build_config(profile="offline", workers="1"))
    theirs = {s.id: agent.answer(AgentQuestion.from_sample(s, root=a)).letter for s in load_local(a)}
    assert ours == theirs

    other = generate(tmp_path / "rid", per_task=1, seed=7, crf=20, tasks="RID", workers=1)
    with pytest.raises(SystemExit, match="has no CNT question"):
        count_stability.main([str(other), "--allow-recorded"])
