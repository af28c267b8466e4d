"""Faults a real server will not produce on demand, against the hand-written server
(tests/fake_endpoint.py): parameter rejections adapted once per run, 429 with Retry-After, the
run-wide in-flight cap under 16 workers (measured by the server), a model that answers tool
requests with prose, DeepSeek's reasoning_content and cache counts, and the run budget."""
from __future__ import annotations

import json
import time

import pytest

import test_sama_doubles as D
from fake_endpoint import FakeChatEndpoint, completion, error, scripted
from sama_model.agent import SamaAgent
from sama_model.chat_api import RequestLimiter, rejected_parameter
from sama_model.profiles import build_config
from sama_model.runner import RunStats, answer_questions, failure_cause, run_questions
from sama_model.trace import load_trace

Q = "Which video has the same number of cups as the reference video?"
STEMS = {"Reference": "ref", "Video A": "a", "Video B": "b"}


@pytest.fixture()
def questions(tmp_path):
    D.reset({"ref": {"sg": 1}, "a": {"sg": 1}, "b": {"sg": 3}})
    return [D.make_question(tmp_path, f"q{i}", "CNT", Q, {"A": "Video A", "B": "Video B"}, STEMS) for i in range(5)]


def _agent(base_url, monkeypatch, **extra) -> SamaAgent:
    monkeypatch.setenv("SAMA_FAULT_KEY", "sk-fault-123456")
    args = {"planner": "openai", "model": "local-model", "base_url": base_url, "api_key_env": "SAMA_FAULT_KEY",
            "planner.backoff": 0.01, "planner.max_retries": 3, "planner.protocol": "tools", "max_iterations": 2,
            **D.DOUBLE_ARGS, **extra}
    return SamaAgent(build_config(**args))


def _planner_steps(path) -> list[dict]:
    return [s for s in load_trace(path)["steps"] if s["kind"] == "planner"]


def test_parameter_rejections_adapt_once_and_the_run_finishes(tmp_path, monkeypatch, questions):
    """A reasoning-model API: max_tokens and a non-default temperature are refused with HTTP 400."""
    def respond(body):
        if "max_tokens" in body:
            return error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                              "Use 'max_completion_tokens' instead.", param="max_tokens")
        if "temperature" in body:  # no `param` field: found in the message
            return error(400, "Unsupported value: 'temperature' does not support 0 with this model. "
                              "Only the default (1) value is supported.")
        if "Iteration 1 of" in body["messages"][-1]["content"]:
            return 200, completion(tool_calls=[("scene_graph", {"video": "Video A", "query": "cup"})])
        return 200, completion(content="Answer: A")

    with FakeChatEndpoint(respond) as ep:
        agent = _agent(ep.base_url, monkeypatch, max_tokens=256)
        stats = RunStats()
        outs = run_questions(agent, questions[:3], tmp_path / "traces", workers=1, progress=False, stats=stats)
    assert outs == ["Answer: A"] * 3 and stats.failed == 0
    # two refusals in the whole run, then every request carries what the server accepts
    statuses = ["max_tokens" in r or "temperature" in r for r in ep.requests]
    assert statuses == [True, True] + [False] * 6
    assert all(r["max_completion_tokens"] == 256 and r["seed"] == 42 for r in ep.requests[2:])
    first = _planner_steps(tmp_path / "traces" / "q0.json")
    assert [(e["parameter"], e["replacement"], e["status"]) for e in first[0]["events"]] == [
        ("max_tokens", "max_completion_tokens", 400), ("temperature", None, 400)]
    assert all(not s["events"] for q in ("q1", "q2") for s in _planner_steps(tmp_path / "traces" / f"{q}.json"))
    # later questions' traces show the run's protocol state
    assert load_trace(tmp_path / "traces" / "q2.json")["config"]["planner_config"]["adapted"] == {
        "max_tokens": "max_completion_tokens", "temperature": None}


def test_rejected_parameter_is_read_from_param_or_message():
    class E(Exception):
        def __init__(self, msg, body=None):
            super().__init__(msg)
            self.body = body

    sent = {"messages": [], "tool_choice": "auto", "seed": 1, "max_tokens": 5}
    assert rejected_parameter(E("x", {"param": "seed"}), sent) == "seed"
    assert rejected_parameter(E("'tool_choice' is not supported"), sent) == "tool_choice"
    assert rejected_parameter(E("Use 'max_completion_tokens' instead of max_tokens"), sent) == "max_tokens"
    assert rejected_parameter(E("messages too long"), sent) is None


def test_429_waits_what_retry_after_says(tmp_path, monkeypatch, questions):
    responses = [error(429, "rate limited", headers={"Retry-After": "1.5"}), completion(content="Answer: B")]
    with FakeChatEndpoint(scripted(responses)) as ep:
        result = _agent(ep.base_url, monkeypatch).answer(questions[0])
    assert result.output == "Answer: B" and len(ep.requests) == 2
    waited = ep.times[1] - ep.times[0]
    assert 1.5 <= waited < 2.5, waited  # not the 0.01 s backoff: the server's word


def test_in_flight_cap_holds_under_16_workers(tmp_path, monkeypatch, tmp_path_factory):
    D.reset({"ref": {"sg": 1}, "a": {"sg": 1}, "b": {"sg": 3}})
    qs = [D.make_question(tmp_path, f"c{i}", "CNT", Q, {"A": "Video A", "B": "Video B"}, STEMS) for i in range(16)]
    with FakeChatEndpoint(lambda body: (200, completion(content="Answer: A")), latency=0.25) as ep:
        agent = _agent(ep.base_url, monkeypatch, **{"planner.max_in_flight": 3})
        t0 = time.perf_counter()
        outs = run_questions(agent, qs, tmp_path / "traces", workers=16, progress=False)
        elapsed = time.perf_counter() - t0
    assert outs == ["Answer: A"] * 16 and len(ep.requests) == 16
    assert ep.peak == 3  # measured by the server: the cap is reached and never exceeded
    assert elapsed >= 16 / 3 * 0.25 - 0.05


def test_requests_per_minute_window():
    limiter = RequestLimiter(per_minute=3, window=0.6)
    t0 = time.monotonic()
    for _ in range(7):
        with limiter:
            pass
    assert 1.2 <= time.monotonic() - t0 < 2.0  # 3 per window: the 4th waits one window, the 7th two


def test_prose_instead_of_tool_calls_switches_the_run_to_json_actions(tmp_path, monkeypatch, questions):
    """A model served without a tool-call parser: tools in the request, prose back."""
    def respond(body):
        if body.get("tools"):
            return 200, completion(content="Sure, I can help with counting cups in videos.")
        user = body["messages"][-1]["content"]
        if "invalid" in user or "Iteration 2 of" in user or "tool budget is spent" in user:
            return 200, completion(content='{"final_answer": "A", "reason": "both show one cup"}')
        return 200, completion(content='Let me look. {"tool": "scene_graph", "args": {"video": "Video A", "query": "cup"}}')

    with FakeChatEndpoint(respond) as ep:
        agent = _agent(ep.base_url, monkeypatch, **{"planner.protocol": "auto"})
        outs = run_questions(agent, questions[:2], tmp_path / "traces", workers=1, progress=False)
    assert outs == ["Answer: A", "Answer: A"]
    with_tools = [bool(r.get("tools")) for r in ep.requests]
    assert with_tools == [True] + [False] * (len(ep.requests) - 1)  # one prose reply switches the whole run
    first = _planner_steps(tmp_path / "traces" / "q0.json")
    (switch,) = first[0]["events"]
    assert (switch["kind"], switch["from"], switch["to"]) == ("protocol", "tools", "json")
    assert first[0]["actions"] == [{"tool": "scene_graph", "args": {"video": "Video A", "query": "cup"}, "id": ""}]
    assert "Reply with exactly one JSON object" in first[0]["messages"][0]["content"]
    t = load_trace(tmp_path / "traces" / "q1.json")
    assert t["config"]["planner_config"]["protocol"] == "json"
    assert [s["source"] for s in t["steps"] if s["kind"] == "final"] == ["planner"]


def test_a_plain_letter_in_the_json_protocol_is_an_answer(tmp_path, monkeypatch, questions):
    """What SmolLM2 does under transformers serve: prose to tools, then "The answer is: B." to the
    JSON protocol; that commits to one option, so it answers (2 requests, then 1 per question)."""
    def respond(body):
        return 200, completion(content="Sure, let me help." if body.get("tools") else "The answer is: B. Video B.")

    with FakeChatEndpoint(respond) as ep:
        agent = _agent(ep.base_url, monkeypatch, **{"planner.protocol": "auto"})
        outs = run_questions(agent, questions[:2], tmp_path / "traces", workers=1, progress=False)
    assert outs == ["Answer: B", "Answer: B"] and len(ep.requests) == 3


def test_a_blind_first_answer_switches_too_but_not_after_native_tool_calls(tmp_path, monkeypatch, questions):
    """Text with a letter before any evidence is a model answering blind; once the run has seen
    native tool calls, a text answer is an answer."""
    def respond(body):
        if body.get("tools"):
            return 200, completion(content="The answer is B.")
        return 200, completion(content='{"final_answer": "A"}')

    with FakeChatEndpoint(respond) as ep:
        assert _agent(ep.base_url, monkeypatch, **{"planner.protocol": "auto"}).answer(questions[0]).output == "Answer: A"
    assert [bool(r.get("tools")) for r in ep.requests] == [True, False]
    script = [completion(tool_calls=[("scene_graph", {"video": "Video A", "query": "cup"})]),
              completion(content="Answer: A"), completion(content="Answer: B")]
    with FakeChatEndpoint(scripted(script)) as ep:
        agent = _agent(ep.base_url, monkeypatch, **{"planner.protocol": "auto"})
        assert [agent.answer(q).output for q in questions[:2]] == ["Answer: A", "Answer: B"]
    assert agent.planner.protocol == "tools" and all(r.get("tools") for r in ep.requests)


def test_unusable_json_replies_get_a_forced_final_answer(tmp_path, monkeypatch, questions):
    def respond(body):
        if "No more tools can be called" in body["messages"][-1]["content"]:
            return 200, completion(content="Answer: B")
        return 200, completion(content="I think the videos are nice.")

    with FakeChatEndpoint(respond) as ep:
        agent = _agent(ep.base_url, monkeypatch, **{"planner.protocol": "auto"})
        result = agent.answer(questions[0], tmp_path / "t.json")
    assert result.output == "Answer: B"
    # native prose -> switch; JSON prose, re-ask prose -> the final answer asked for in plain words
    assert len(ep.requests) == 4
    assert ep.requests[-1]["messages"][-1]["content"].endswith(
        'Which option is correct? Reply with one letter (A, B) in the form "Answer: X".')
    (step,) = _planner_steps(tmp_path / "t.json")
    assert [e["kind"] for e in step["events"]] == ["protocol", "forced-final"]
    assert step["final"] == "Answer: B" and step["invalid"] == 3


def test_a_model_that_never_acts_nor_answers_costs_four_requests(tmp_path, monkeypatch, questions):
    """Prose to everything: the switch, a JSON turn and its re-ask, the final answer asked for in
    plain words; then the agent decides from the evidence without asking again (deterministic
    decoding would repeat the same reply)."""
    with FakeChatEndpoint(lambda body: (200, completion(content="Videos are fun to watch."))) as ep:
        agent = _agent(ep.base_url, monkeypatch, **{"planner.protocol": "auto"})
        result = agent.answer(questions[0], tmp_path / "t.json")
    assert result.status == "finished" and len(ep.requests) == 4
    t = load_trace(tmp_path / "t.json")
    assert [s["source"] for s in t["steps"] if s["kind"] == "final"] in (["evidence-fallback"], ["first-option-rule"])
    assert t["totals"]["invalid_planner_outputs"] == 4


def test_reasoning_content_stays_out_of_requests_and_cache_counts_are_read(tmp_path, monkeypatch, questions):
    first = completion(tool_calls=[("scene_graph", {"video": "Video A", "query": "cup"})])
    first["choices"][0]["message"]["reasoning_content"] = "SECRET-CHAIN: count the cups first."
    first["usage"].update(prompt_cache_hit_tokens=64, completion_tokens_details={"reasoning_tokens": 12})
    second = completion(content="not sure")
    second["choices"][0]["message"]["reasoning_content"] = "SECRET-CHAIN-2"
    with FakeChatEndpoint(scripted([first, second, completion(content="Answer: A")])) as ep:
        result = _agent(ep.base_url, monkeypatch, aggregation="off").answer(questions[0], tmp_path / "t.json")
    assert result.output == "Answer: A" and len(ep.requests) == 3
    assert not any("SECRET-CHAIN" in json.dumps(r) or "reasoning_content" in json.dumps(r) for r in ep.requests)
    steps = _planner_steps(tmp_path / "t.json")
    assert steps[0]["output"][0]["reasoning_content"] == "SECRET-CHAIN: count the cups first."
    assert steps[0]["usage"] == {"prompt_tokens": 100, "completion_tokens": 20, "reasoning_tokens": 12,
                                 "cached_tokens": 64}


PRICES = "models:\n  local-model: {input: 1.0, cached_input: 0.5, output: 10.0}\n"


def test_budget_stops_new_questions_and_a_rerun_completes_them(tmp_path, monkeypatch, questions):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    reply = completion(content="Answer: A", prompt_tokens=1000, completion_tokens=100)  # $0.002 per question
    with FakeChatEndpoint(lambda body: (200, reply)) as ep:
        agent = _agent(ep.base_url, monkeypatch, max_cost_usd="0.005", prices=str(prices))
        stats = RunStats()
        answered = answer_questions(agent, questions, tmp_path / "traces", workers=1, progress=False, stats=stats)
        outs = [a.output for a in answered]
        assert outs == ["Answer: A"] * 3 + ["", ""] and len(ep.requests) == 3
        assert (stats.answered, stats.failed) == (5, 2)
        assert [failure_cause(f) for f in stats.failures.values()] == ["budget", "budget"]
        t = load_trace(tmp_path / "traces" / "q0.json")["totals"]
        assert (t["tokens"], t["cost_usd"]) == (1100, 0.002)
        assert t["usage_by_source"]["planner"] == {"model": "local-model", "prompt_tokens": 1000,
                                                   "completion_tokens": 100, "reasoning_tokens": 0,
                                                   "cached_tokens": 0, "calls": 1}
        skipped = load_trace(tmp_path / "traces" / "q3.json")
        assert skipped["status"] == "failed"
        assert skipped["failure"].startswith("budget: the run spent $0.0060 of max_cost_usd=0.005")
        assert answered[4].note.failure.startswith("budget: ")
        # in each answer's note, for lmms-eval's mvx_tokens / mvx_cost_usd / mvx_iterations / mvx_tool_calls
        usage = ("mvx_tokens", "mvx_cost_usd", "mvx_iterations", "mvx_tool_calls")
        assert {k: answered[0].note.metrics()[k] for k in usage} == {
            "mvx_tokens": 1100.0, "mvx_cost_usd": 0.002, "mvx_iterations": 1.0, "mvx_tool_calls": 0.0}
        assert (answered[0].prompt_tokens, answered[0].completion_tokens) == (1000, 100)
        assert {k: answered[4].note.metrics()[k] for k in usage} == dict.fromkeys(usage, 0.0)
        assert agent.budget.snapshot()["spent_usd"] == 0.006

        # the same run with a higher budget: three resumed (their spending counts), two answered
        agent2 = _agent(ep.base_url, monkeypatch, max_cost_usd="1", prices=str(prices))
        stats2 = RunStats()
        outs2 = run_questions(agent2, questions, tmp_path / "traces", workers=1, progress=False, stats=stats2)
    assert outs2 == ["Answer: A"] * 5 and len(ep.requests) == 5
    assert (stats2.resumed, stats2.answered, stats2.failed) == (3, 2, 0)
    assert agent2.budget.snapshot()["spent_usd"] == 0.01


def test_token_budget(tmp_path, monkeypatch, questions):
    reply = completion(content="Answer: A", prompt_tokens=1000, completion_tokens=100)
    with FakeChatEndpoint(lambda body: (200, reply)) as ep:
        agent = _agent(ep.base_url, monkeypatch, max_tokens_run="2000")
        outs = run_questions(agent, questions, tmp_path / "traces", workers=1, progress=False)
    assert outs == ["Answer: A"] * 2 + [""] * 3 and len(ep.requests) == 2
    assert load_trace(tmp_path / "traces" / "q2.json")["failure"].startswith(
        "budget: the run used 2200 tokens of max_tokens_run=2000")
