"""A question whose every tool call fails (missing weights, broken backend) is failed with the cause,
not answered with a guess; other questions of the run go on."""
from __future__ import annotations

import test_sama_doubles as D
from sama_model.agent import SamaAgent
from sama_model.profiles import build_config
from sama_model.runner import RunStats, run_questions
from sama_model.tools.backends import register_backend


@register_backend("video_reader", "missing")
class MissingWeightsReader:
    thread_safe = True

    def read(self, clip, query, window=(None, None), n_frames=8):
        raise OSError("video_reader/missing: model weight 'some/model' is not available")


def test_all_tools_failing_fails_the_question_with_the_cause(tmp_path):
    D.reset({})
    opts = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}
    stems = {"Reference": "ref", "Video A": "a", "Video B": "b", "Video C": "c", "Video D": "d"}
    q_fail = D.make_question(tmp_path, "q-fail", None, "Which video looks most like the reference?", opts, stems)
    args = {**D.DOUBLE_ARGS, "skills": "off"}
    for tool in ("scene_graph", "object_tracker", "visual_similarity", "temporal_grounding",
                 "subtitle_retriever", "motion_analyzer"):
        args[f"backend.{tool}"] = "off"
    args["backend.video_reader"] = "missing"
    agent = SamaAgent(build_config(**args))
    stats = RunStats()
    out = run_questions(agent, [q_fail], tmp_path / "traces", workers=1, progress=False, stats=stats)
    assert out == [""]
    assert stats.failed == 1
    assert "every tool call failed; first error: video_reader: OSError: video_reader/missing: model weight" \
        in stats.failures["q-fail"]

    ok_agent = SamaAgent(build_config(**{**D.DOUBLE_ARGS, "skills": "off"}))
    result = ok_agent.answer(q_fail, None)
    assert result.status == "finished" and result.letter in opts
