"""The openai planner through the real openai client against a local scripted endpoint."""
from __future__ import annotations

import json

import pytest

import test_sama_doubles as D
from sama_model.agent import SamaAgent
from fake_endpoint import FakeChatEndpoint, completion, error, scripted
from sama_model.profiles import build_config
from sama_model.runner import RunStats, run_questions
from sama_model.trace import load_trace, render_trace

KEY = "sk-test-secret-123456"
Q = "Which video has the same number of cups as the reference video?"


@pytest.fixture()
def cnt_question(tmp_path):
    D.reset({"ref": {"sg": 1, "reader": "There are 2 cups.", "reader_narrow": "There is 1 cup."},
             "a": {"sg": 1}, "b": {"sg": 3}})
    return D.make_question(tmp_path, "q-cnt", "CNT", Q, {"A": "Video A", "B": "Video B"},
                           {"Reference": "ref", "Video A": "a", "Video B": "b"})


def _agent(tmp_path, base_url, monkeypatch, **extra):
    """An agent whose server is known to take tools (``protocol=tools``: a first-turn text answer is
    an answer, not a sign to switch to JSON actions; tests/test_serving_faults.py covers that)."""
    monkeypatch.setenv("SAMA_TEST_KEY", KEY)
    cfg = build_config(planner="openai", model="local-model", base_url=base_url, api_key_env="SAMA_TEST_KEY",
                       **{"planner.backoff": 0.01, "planner.max_retries": 2, "planner.protocol": "tools"},
                       **D.DOUBLE_ARGS, **{"max_iterations": 3, **extra})
    return SamaAgent(cfg)


def test_openai_planner_full_loop(tmp_path, monkeypatch, cnt_question):
    reader_q = {"video": "Reference", "query": "How many cups are on the table?"}
    responses = [
        completion(tool_calls=[("video_reader", reader_q), ("scene_graph", {"video": "Reference", "query": "cup"})],
                   prompt_tokens=300, completion_tokens=40),
        completion(tool_calls=[("scene_graph", {"video": "Video A", "query": "cup"}),
                               ("scene_graph", {"video": "video b", "query": "cup"})]),
        completion(content="I am not sure yet."),  # invalid: neither a tool call nor a letter -> re-ask
        completion(tool_calls=[("object_tracker", {"video": "Video A", "query": "cup"})]),
        completion(content="Both Video A and the reference have one cup. Answer: A"),  # forced final
    ]
    with FakeChatEndpoint(scripted(responses)) as ep:
        agent = _agent(tmp_path, ep.base_url, monkeypatch)
        result = agent.answer(cnt_question, tmp_path / "trace.json")
    assert (result.output, result.letter, result.status) == ("Answer: A", "A", "finished")

    # the requests: deterministic settings, native tools, key sent only as a header
    assert len(ep.requests) == 5
    assert all(r["temperature"] == 0 and r["seed"] == 42 and r["model"] == "local-model" for r in ep.requests)
    assert [r["tool_choice"] for r in ep.requests] == ["auto"] * 4 + ["none"]
    names = [t["function"]["name"] for t in ep.requests[0]["tools"]]
    assert names == ["video_reader", "temporal_grounding", "scene_graph", "object_tracker", "visual_similarity",
                     "subtitle_retriever", "motion_analyzer", "manipulation_detector", "final_answer"]
    assert ep.headers[0]["authorization"] == f"Bearer {KEY}"
    # skills are in the system context; the second turn sees the memory with the verified count
    assert "## Skill: meta_planner" in ep.requests[0]["messages"][0]["content"]
    second_user = ep.requests[1]["messages"][-1]["content"]
    assert "verified count(cup) = 1 [resolved" in second_user
    assert "conflict c1 on Reference count(cup)" in second_user
    assert "Iteration 2 of 3." in second_user
    assert ep.requests[3]["messages"][-1]["content"].startswith("Your reply was invalid")

    t = load_trace(tmp_path / "trace.json")
    steps = t["steps"]
    planner = [s for s in steps if s["kind"] == "planner"]
    assert [(s["iteration"], s["forced"], s["invalid"]) for s in planner] == [(1, False, 0), (2, False, 0),
                                                                              (3, False, 1), (3, True, 0)]
    zero = {"reasoning_tokens": 0, "cached_tokens": 0}
    assert planner[0]["usage"] == {"prompt_tokens": 300, "completion_tokens": 40, **zero}
    assert planner[2]["usage"] == {"prompt_tokens": 200, "completion_tokens": 40, **zero}
    assert t["totals"]["prompt_tokens"] == 300 + 100 + 200 + 100
    assert t["totals"]["invalid_planner_outputs"] == 1
    # the conflict and its re-read (narrower window around the detections, denser frames)
    (conflict,) = [s for s in steps if s["kind"] == "conflict"]
    assert conflict["video"] == "Reference" and conflict["subject"] == "cup"
    assert conflict["values"] == {"video_reader": 2, "scene_graph": 1}
    assert conflict["status"] == "resolved" and conflict["resolution"] == 1
    assert conflict["rereads"][0]["window"] == [0.0, 1.1] and conflict["rereads"][0]["n_frames"] == 16
    rereads = [s for s in steps if s["kind"] == "tool" and s["reread_of"] == "c1"]
    assert {s["tool"] for s in rereads} == {"video_reader", "scene_graph"}
    assert all(s["args"]["start"] == 0.0 and s["args"]["end"] == 1.1 for s in rereads)
    # labels were resolved ("video b" -> "Video B") and recorded per video in memory
    tools = [s for s in steps if s["kind"] == "tool" and not s["reread_of"]]
    assert [s["args"]["video"] for s in tools] == ["Reference", "Reference", "Video A", "Video B", "Video A"]
    memory = [s for s in steps if s["kind"] == "memory"][-1]["snapshot"]
    assert memory["Reference"]["facts"][0].startswith("verified count(cup) = 1 [resolved")
    assert [e["tool"] for e in memory["Video A"]["evidence"]] == ["scene_graph", "object_tracker"]
    final = steps[-1]
    assert final == {"kind": "final", "answer": "Answer: A", "letter": "A", "forced": True,
                     "source": "planner-forced", "reason": "Both Video A and the reference have one cup. Answer: A",
                     "fragile": False}
    # no secret in the file
    raw = (tmp_path / "trace.json").read_text()
    assert KEY not in raw
    assert "CONFLICT c1 Reference count(cup)" in render_trace(tmp_path / "trace.json")


def test_retries_on_429_and_5xx_then_succeeds(tmp_path, monkeypatch, cnt_question):
    responses = [error(429, "slow down"), error(503, "busy"), completion(content="Answer: B")]
    with FakeChatEndpoint(scripted(responses)) as ep:
        result = _agent(tmp_path, ep.base_url, monkeypatch).answer(cnt_question, tmp_path / "t.json")
    assert result.output == "Answer: B" and len(ep.requests) == 3


def test_unreachable_endpoint_fails_that_question_and_the_run_goes_on(tmp_path, monkeypatch, cnt_question):
    def respond(body):
        if "BROKEN" in body["messages"][1]["content"]:
            return error(500, "down")
        return 200, completion(content="Answer: B")

    broken = D.make_question(tmp_path, "q-broken", "CNT", Q + " BROKEN", {"A": "Video A", "B": "Video B"},
                             {"Reference": "ref", "Video A": "a", "Video B": "b"})
    with FakeChatEndpoint(respond) as ep:
        agent = _agent(tmp_path, ep.base_url, monkeypatch)
        stats = RunStats()
        outs = run_questions(agent, [broken, cnt_question], tmp_path / "traces", workers=2, progress=False,
                             stats=stats)
    assert outs == ["", "Answer: B"]
    assert (stats.answered, stats.failed) == (2, 1)
    t = load_trace(tmp_path / "traces" / "q-broken.json")
    assert t["status"] == "failed"
    assert t["failure"].startswith("planner unavailable: planner endpoint unreachable after 3 attempts")
    assert sum("BROKEN" in r["messages"][1]["content"] for r in ep.requests) == 3


def test_non_retryable_status_fails_immediately(tmp_path, monkeypatch, cnt_question):
    with FakeChatEndpoint(scripted([error(401, "bad key")])) as ep:
        result = _agent(tmp_path, ep.base_url, monkeypatch).answer(cnt_question)
    assert result.status == "failed" and "HTTP 401" in result.failure and len(ep.requests) == 1


def test_aggregation_off_sends_raw_tool_messages(tmp_path, monkeypatch, cnt_question):
    responses = [completion(tool_calls=[("scene_graph", {"video": "Video B", "query": "cup"})]),
                 completion(content="Answer: A")]
    with FakeChatEndpoint(scripted(responses)) as ep:
        agent = _agent(tmp_path, ep.base_url, monkeypatch, aggregation="off")
        agent.answer(cnt_question, tmp_path / "t.json")
    msgs = ep.requests[1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "user"]
    assert json.loads(msgs[3]["content"])["counts"] == {"cup": 3}
    assert "Evidence memory" not in json.dumps(msgs)
    planner = [s for s in load_trace(tmp_path / "t.json")["steps"] if s["kind"] == "planner"]
    assert {s["context_mode"] for s in planner} == {"raw"}


def test_skills_off_leaves_tool_descriptions_only(tmp_path, monkeypatch, cnt_question):
    with FakeChatEndpoint(scripted([completion(content="Answer: A")])) as ep:
        _agent(tmp_path, ep.base_url, monkeypatch, skills="off").answer(cnt_question)
    system = ep.requests[0]["messages"][0]["content"]
    assert "Skill:" not in system and "Question type:" not in ep.requests[0]["messages"][1]["content"]
    assert len(ep.requests[0]["tools"]) == 9


def test_missing_key_without_base_url_is_a_config_error(monkeypatch):
    from sama_model.planners import PlannerConfigError, create_planner

    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(PlannerConfigError, match=r"\$NO_SUCH_KEY_VAR"):
        create_planner("openai", model="x", api_key_env="NO_SUCH_KEY_VAR")
