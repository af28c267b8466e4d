"""Warm-up: a run loads the models its questions can need before the first question, not part way through."""
from __future__ import annotations

import test_sama_doubles as D
from sama_model.agent import SamaAgent
from sama_model.profiles import build_config
from sama_model.runner import run_questions
from sama_model.tools.backends import register_backend
from sama_model.tools.base import BackendSpec
from sama_model.tools.toolkit import warm_up

WARMED: list[str] = []


@register_backend("subtitle_retriever", "warm_counting")
class WarmCountingSubtitles(D.DoubleSubtitles):
    def warm_up(self):
        WARMED.append("subtitles")


@register_backend("subtitle_retriever", "warm_broken")
class WarmBrokenSubtitles(D.DoubleSubtitles):
    def warm_up(self):
        raise OSError("model weight 'x/y' is not available")


OPTS = {"A": "Video A", "B": "Video B"}
STEMS = {"Reference": "ref", "Video A": "a", "Video B": "b"}
SRT = "1\n00:00:00,000 --> 00:00:01,000\nthe cup falls\n"


def _questions(tmp_path):
    plain = D.make_question(tmp_path, "plain", None, "Which video matches the reference?", OPTS, STEMS)
    subs = D.make_question(tmp_path, "subs", None, "Which video matches the reference?", OPTS, STEMS,
                           subtitles={"Video A": SRT})
    return plain, subs


def test_only_backends_some_question_wants_are_warmed(tmp_path):
    plain, subs = _questions(tmp_path)
    backends = {"subtitle_retriever": BackendSpec("warm_counting"), "video_reader": BackendSpec("double"),
                "motion_analyzer": None}
    WARMED.clear()
    assert warm_up(backends, [plain]) == {}
    assert WARMED == []  # no question has subtitles: the retriever's model is not loaded
    assert warm_up(backends, [plain, subs]) == {}
    assert WARMED == ["subtitles"]


def test_a_failed_warm_up_is_reported_and_the_run_goes_on(tmp_path):
    D.reset({"ref": {"sg": 1}, "a": {"sg": 1}, "b": {"sg": 2}})
    plain, subs = _questions(tmp_path)
    failed = warm_up({"subtitle_retriever": BackendSpec("warm_broken")}, [subs])
    assert failed == {"subtitle_retriever": "OSError: model weight 'x/y' is not available"}
    agent = SamaAgent(build_config(**{**D.DOUBLE_ARGS, "backend.subtitle_retriever": "warm_broken"}))
    outputs = run_questions(agent, [plain, subs], tmp_path / "traces", progress=False)
    assert all(o.startswith("Answer: ") for o in outputs)


def test_the_runner_warms_up_before_the_first_question_and_not_on_a_full_resume(tmp_path):
    D.reset({"ref": {"sg": 1}, "a": {"sg": 1}, "b": {"sg": 2}})
    _, subs = _questions(tmp_path)
    agent = SamaAgent(build_config(**{**D.DOUBLE_ARGS, "backend.subtitle_retriever": "warm_counting"}))
    WARMED.clear()
    run_questions(agent, [subs], tmp_path / "traces", progress=False)
    assert WARMED == ["subtitles"]
    run_questions(agent, [subs], tmp_path / "traces", progress=False)  # resumed: nothing to answer
    assert WARMED == ["subtitles"]
