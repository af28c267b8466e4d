"""Where each answer came from: the trace's final step, the runner's record and the harness's
``mvx_src_*`` metrics (planner, forced final turn, evidence fallback, first-option rule)."""
from __future__ import annotations

import json

import pytest

import test_sama_doubles as D
from mvx_tasks import answer_sources, harness
from mvx_tasks.answer_notes import use_store
from sama_model.actions import FinalAnswer
from sama_model.agent import SamaAgent
from sama_model.planners.base import PlannerTurn
from sama_model.profiles import build_config
from sama_model.runner import answer_questions

from test_sama_doubles import CUPS_OPTIONS as OPTIONS, CUPS_Q as Q, CUPS_SCRIPT as SCRIPT, CUPS_STEMS as STEMS  # noqa: E402


class _Mute:
    """A planner that reads every video once, then never names an option."""

    name = "mute"

    def start(self, ctx):
        return self

    def next_turn(self, state):
        if state.iteration == 1:
            from sama_model.actions import ToolCall
            return PlannerTurn(calls=[ToolCall("scene_graph", {"video": v, "query": "cup"}) for v in STEMS])
        return PlannerTurn(final=FinalAnswer("I cannot tell.", "no idea"))

    def final_turn(self, state):
        return PlannerTurn(final=FinalAnswer("", "cap"))

    def observe(self, turn, results):
        return None

    def describe(self):
        return {"name": self.name}


@pytest.fixture()
def question(tmp_path):
    D.reset(SCRIPT)
    return D.make_question(tmp_path, "q-src", "CNT", Q, OPTIONS, STEMS)


def _doc(question) -> dict:
    return {"id": question.id, "task": "CNT", "options": json.dumps(OPTIONS), "answer": "C",
            "videos": json.dumps([])}


def test_scripted_planner_answers_as_planner_and_forced_at_the_cap(tmp_path, question):
    agent = SamaAgent(build_config(**D.DOUBLE_ARGS))
    assert agent.answer(question).source == "planner"
    capped = SamaAgent(build_config(**{**D.DOUBLE_ARGS, "max_iterations": 1}))
    assert capped.answer(question).source == "planner-forced"


def test_a_silent_planner_falls_back_to_evidence_then_to_the_first_option_rule(tmp_path, question):
    agent = SamaAgent(build_config(**D.DOUBLE_ARGS), planner=_Mute())
    result = agent.answer(question)
    assert (result.letter, result.source) == ("C", "evidence-fallback")  # the counting decision: 2 == 2
    D.reset({})  # no counts anywhere: the decision abstains, the rule names the first option
    result = agent.answer(question)
    assert (result.letter, result.source) == ("A", "first-option-rule")
    final = [s for s in result.trace.steps if s.kind == "final"][0]
    assert final.reason.startswith("no evidence decided (no counts for any candidate)")


def test_the_runner_notes_sources_for_the_harness_metrics(tmp_path, question):
    """The runner gives each answer's source in its note; the adapter files the note by the question
    and the answer; process_results reads it back (also for a resumed question)."""
    agent = SamaAgent(build_config(**D.DOUBLE_ARGS), planner=_Mute())
    store = use_store(f"test-sources-{tmp_path.name}")
    (answered,) = answer_questions(agent, [question], tmp_path / "traces", progress=False)
    assert (answered.output, answered.note.source) == ("Answer: C", "evidence-fallback")
    store.write(_doc(question), answered.output, answered.note)
    out = harness.process_results(_doc(question), ["Answer: C"])
    assert {k: out[k] for k in answer_sources.METRICS.values()} == {
        "mvx_src_planner": 0, "mvx_src_forced": 0, "mvx_src_fallback": 1, "mvx_src_rule": 0}
    # a resumed question reads its source from the stored trace
    (resumed,) = answer_questions(agent, [question], tmp_path / "traces", progress=False)
    assert resumed.note == answered.note
    # another answer text to the same question has no note; another question neither
    other = harness.process_results(_doc(question), ["Answer: A"])
    assert sum(other[k] for k in answer_sources.METRICS.values()) == 0
    baseline = harness.process_results({**_doc(question), "id": "baseline-q"}, ["B"])
    assert sum(baseline[k] for k in answer_sources.METRICS.values()) == 0


def test_profile_table_says_where_answers_came_from():
    """A task answered only by the first-option rule shows no accuracy as if it were a result."""
    import sys
    from collections import Counter
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from offline_profile import task_cell

    assert task_cell(5, 20, Counter({"first-option-rule": 20})) == "no solver (20/20 first-option rule; 5 right)"
    assert task_cell(13, 20, Counter({"planner": 16, "evidence-fallback": 1, "first-option-rule": 3})) == \
        "65% (13/20; fallback 1, rule 3)"
    assert task_cell(15, 20, Counter({"planner": 20})) == "75% (15/20)"
