"""Answers a stated rule gave (a tie's first listed option, a default) are counted as ``rule`` answers, with the rule's
reason in the trace, not as the planner's."""
from __future__ import annotations

import test_sama_doubles as D

from mvx_tasks import answer_sources
from sama_model.agent import SamaAgent
from sama_model.profiles import build_config
from sama_model.skills import rules
from sama_model.skills.multi_video_comparison.cnt import (
    counting_relation,
    stated_relation,
)
from sama_model.trace import load_trace

FOUR = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}
REF4 = {"Reference": "ref", "Video A": "a", "Video B": "b", "Video C": "c", "Video D": "d"}
TWO = {"A": "Video 1", "B": "Video 2"}


def solve(tmp_path, script, task, question, options, stems, planner=None):
    D.reset(script)
    q = D.make_question(tmp_path, "q", task, question, options, stems)
    agent = SamaAgent(build_config(**{**D.DOUBLE_ARGS, "task_hint": "on"}), planner=planner)
    result = agent.answer(q, tmp_path / "t.json")
    final = [s for s in load_trace(tmp_path / "t.json")["steps"] if s["kind"] == "final"][-1]
    return result, final


def test_tie_helpers_take_the_first_listed_and_say_so():
    scores = {"B": 0.5, "A": 0.5 + 1e-12, "C": 0.2}
    assert rules.tied_best(scores) == ["B", "A"] and rules.first_best(scores) == "B"  # float noise never decides
    assert rules.first_best({"A": 0.3, "B": 0.1}, highest=False) == "B" and rules.first_best({}) is None
    mark = rules.tie_mark(scores, "score", lambda k: f"Video {k}")
    assert mark == "; by rule: Video B and Video A tie at 0.500 (highest score): the first listed, Video B, is taken"
    assert rules.rule_of(f"facts{mark}; fragile: x") == ("Video B and Video A tie at 0.500 (highest score): the first "
                                                         "listed, Video B, is taken")
    assert rules.tie_mark({"A": 0.9, "B": 0.1}, "score") == "" and rules.rule_of("highest score: A") is None
    assert rules.tie_mark({"A": -0.0, "B": 0.0}, "x").startswith("; by rule: A and B tie at 0.000")


def test_cnt_tie_is_a_rule_answer_with_its_reason_in_the_trace(tmp_path):
    question = "Which video has the same number of cups as the reference video?"
    tied = {"ref": {"sg": 2}, "a": {"sg": 2}, "b": {"sg": 3}, "c": {"sg": 2}, "d": {"sg": 4}}
    result, final = solve(tmp_path, tied, "CNT", question, FOUR, REF4)
    assert (result.letter, result.source, final["source"]) == ("A", "rule", "rule")
    assert "by rule: Video A and Video C tie at 0.000 (highest count match (eq)): the first listed, Video A" \
        in final["reason"]
    assert answer_sources.METRIC_OF["rule"] == "mvx_src_rule"  # the harness counts it with the first-option rule
    clear = {**tied, "a": {"sg": 1}}
    result, final = solve(tmp_path, clear, "CNT", question, FOUR, REF4)
    assert (result.letter, result.source) == ("C", "planner") and "by rule" not in final["reason"]


def test_cnt_count_that_cannot_tell_the_target_is_a_guess(tmp_path):
    """The tracker counts moving regions and says it cannot tell the asked-for cut-outs from the scene's other movers
    in one video: the same letter as before, now a rule answer with that reason; separable everywhere, the planner's."""
    question = "Count the moving cut-outs in each video. Which candidate video contains more of them than the Reference?"
    counts = {"ref": {"sg": 2}, "a": {"sg": 1}, "b": {"sg": 4}, "c": {"sg": 2}, "d": {"sg": 3}}
    result, final = solve(tmp_path, counts, "CNT", question, FOUR, REF4)
    assert (result.letter, result.source, final["source"]) == ("B", "planner", "planner")
    assert "by rule" not in final["reason"]
    separable = {v: {**s, "separable": True} for v, s in counts.items()}
    result, final = solve(tmp_path, separable, "CNT", question, FOUR, REF4)
    assert (result.letter, result.source) == ("B", "planner") and "by rule" not in final["reason"]
    blind = {**separable, "c": {"sg": 2, "separable": False, "kind": "cut-out"}}
    result, final = solve(tmp_path, blind, "CNT", question, FOUR, REF4)
    assert (result.letter, result.source, final["source"]) == ("B", "rule", "rule")
    assert "; Video C: the count counts moving regions; by rule: the count cannot tell moving cut-outs from the " \
           "scene's other movers: a guess" in final["reason"]
    assert rules.rule_of(final["reason"]) == "the count cannot tell moving cut-outs from the scene's other movers: a guess"


def test_cnt_same_number_without_a_reference_count_is_a_rule_answer(tmp_path):
    question = "Which video has the same number of cups as the reference video?"
    no_ref = {"ref": {"sg": 0, "reader": "nothing"}, "a": {"sg": 1}, "b": {"sg": 3}, "c": {"sg": 2}, "d": {"sg": 2}}
    result, final = solve(tmp_path, no_ref, "CNT", question, FOUR, REF4)
    assert (result.letter, result.source) == ("B", "rule")
    assert "reference count=None" in final["reason"]
    assert "by rule: the reference's count is unknown, so 'the same number' compares with nothing" in final["reason"]
    assert stated_relation("How many cups are there in each?") is None
    assert counting_relation("How many cups are there in each?") == "eq"
    assert stated_relation("Which video has fewer cups?") == "lt"


def test_fd_without_evidence_that_separates_the_videos_is_a_rule_answer(tmp_path):
    """No detector score and no inconsistency anywhere: every video scores 0, the first is taken by rule."""
    script = {"v1": {"reader": "a calm scene"}, "v2": {"reader": "a calm scene"}}
    result, final = solve(tmp_path, script, "FD", "Which video has been manipulated?", TWO,
                          {"Video 1": "v1", "Video 2": "v2"}, planner=None)
    assert (result.letter, result.source) == ("A", "rule")
    assert "by rule: Video 1 and Video 2 tie at" in final["reason"] and "the first listed, Video 1, is taken" \
        in final["reason"]


def test_a_silent_planner_falls_back_to_a_rule_answer_as_rule(tmp_path):
    """The evidence fallback's decision is a tie: the source is ``rule``, not ``evidence-fallback``."""
    from test_answer_sources import _Mute

    tied = {"ref": {"sg": 2}, "a": {"sg": 2}, "b": {"sg": 3}, "c": {"sg": 2}, "d": {"sg": 4}}
    result, final = solve(tmp_path, tied, "CNT", "Which video has the same number of cups as the reference video?",
                          FOUR, REF4, planner=_Mute())
    assert (result.letter, result.source) == ("A", "rule") and "by rule:" in final["reason"]


def test_an_llm_planners_text_never_makes_a_rule_answer(tmp_path):
    from sama_model.actions import FinalAnswer
    from sama_model.planners.base import PlannerTurn

    class Says:
        name = "says"

        def start(self, ctx):
            return self

        def next_turn(self, state):
            return PlannerTurn(final=FinalAnswer("Answer: B", "by rule: I like B"))

        final_turn = next_turn

        def observe(self, turn, results):
            return None

        def describe(self):
            return {"name": self.name}

    result, _ = solve(tmp_path, {}, "CNT", "Which video has more cups?", FOUR, REF4, planner=Says())
    assert (result.letter, result.source) == ("B", "planner")


def test_profile_table_counts_rule_answers_apart_from_the_solvers():
    import sys
    from collections import Counter
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from offline_profile import markdown, task_cell

    assert task_cell(14, 20, Counter({"planner": 16, "rule": 4})) == "70% (14/20; stated rule 4)"
    assert task_cell(2, 4, Counter({"rule": 1, "first-option-rule": 3})) == \
        "no solver (4/4 by rule: stated rule 1, rule 3; 2 right)"
    records = [{"task": "CNT", "correct": c, "status": "finished", "source": s}
               for c, s in [(True, "planner"), (False, "planner"), (True, "rule"), (False, "first-option-rule")]]
    cost = {"s_per_q_wall": 1.0, "s_per_q_cpu": 1.0, "tool_calls_per_q": 1.0, "rereads_per_q": 0.0,
            "conflicts_per_q": 0.0, "decodes_per_video": 1.0, "tools": {}}
    table = markdown([{"config": "full", "records": records, "cold": cost}], warm=False)
    assert "| decided by a solver (no rule) | | 50.0% (1/2) |" in table
    assert "| **overall** | | **50.0%** (2/4) |" in table
