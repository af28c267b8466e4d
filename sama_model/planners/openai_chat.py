"""Planner over any OpenAI-compatible chat endpoint with native function calling.

Deterministic settings (temperature 0, seed 42) unless a server rejects them; every call goes
through :class:`sama_model.chat_api.ChatAPI` (429 honours ``Retry-After``, 5xx and timeouts back
off, a run-wide cap on requests in flight and per minute). Real servers differ, so the planner
adapts once per run and records it in the trace: a rejected parameter is dropped or renamed
(``max_tokens`` -> ``max_completion_tokens``); a model that answers tool requests with prose
(open models served without a tool-call parser) switches the run to the JSON-in-text action
protocol of the ``hf`` planner, and a question whose JSON replies stay unusable gets a forced
final answer. The API key is read from a named environment variable and registered as a secret
so traces never contain it; DeepSeek's ``reasoning_content`` is kept in the trace but never sent
back. An endpoint that stays unreachable raises :class:`PlannerUnavailable`, which fails only the
current question.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any

from mvx_tasks.answers import extract_choice

from ..actions import FinalAnswer, ToolCall
from ..chat_api import ChatAPI, ChatAPIError, limiter_for, usage_of
from ..tools.base import ToolResult
from ..trace import register_secret
from .base import AgentState, PlannerConfigError, PlannerTurn, PlannerUnavailable, QuestionContext, add_usage
from .hf_local import json_turn
from .json_actions import repair_json
from .prompting import FINAL_REQUEST, question_block, state_block, system_prompt

PROTOCOLS = ("auto", "tools", "json")
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")

FINAL_TOOL = "final_answer"


def final_answer_spec(letters: list[str]) -> dict[str, Any]:
    """The answer tool: an option letter, or free text for an open-ended question (no letters)."""
    answer = ({"type": "string", "enum": letters, "description": "The option letter."} if letters else
              {"type": "string", "description": "The answer itself, in the form the question asks."})
    return {"type": "function", "function": {
        "name": FINAL_TOOL, "description": "Give the final answer once the evidence is sufficient.",
        "parameters": {"type": "object", "properties": {
            "answer": answer,
            "reason": {"type": "string", "description": "One sentence citing the deciding evidence."}},
            "required": ["answer"], "additionalProperties": False}}}


class OpenAIPlanner:
    """Shared by all questions of a run; one session per question. Holds the run's protocol state
    (``protocol``, rejected parameters) and the run-wide request limiter."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, max_retries: int = 5, backoff: float = 1.0, backoff_max: float = 30.0,
                 temperature: float | None = 0.0, seed: int | None = 42, max_tokens: int | None = None,
                 max_completion_tokens: int | None = None, reasoning_effort: str | None = None,
                 protocol: str = "auto", max_in_flight: int | None = None, requests_per_minute: int | None = None,
                 skill_docs: str = "all") -> None:
        import openai

        key = os.environ.get(api_key_env)
        if not key:
            if not base_url:
                raise PlannerConfigError(f"the planner's API key is read from ${api_key_env}, which is not set; "
                                         f"export it or pass api_key_env=<VARIABLE>")
            key = "EMPTY"  # self-hosted endpoints often need none (a placeholder, not a secret)
        else:
            register_secret(key)
        if protocol not in PROTOCOLS:
            raise PlannerConfigError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
        if reasoning_effort is not None and str(reasoning_effort) not in REASONING_EFFORTS:
            raise PlannerConfigError(f"reasoning_effort must be one of {REASONING_EFFORTS}, got {reasoning_effort!r}")
        if max_tokens and max_completion_tokens:
            raise PlannerConfigError("give max_tokens or max_completion_tokens, not both")
        if skill_docs not in ("all", "task"):
            raise PlannerConfigError(f"skill_docs must be 'all' or 'task', got {skill_docs!r}")
        self.model, self.base_url, self.api_key_env = str(model), base_url, api_key_env
        self.temperature = None if temperature is None else float(temperature)
        self.seed = None if seed is None else int(seed)
        self.max_tokens = int(max_tokens) if max_tokens else None
        self.max_completion_tokens = int(max_completion_tokens) if max_completion_tokens else None
        self.reasoning_effort = None if reasoning_effort is None else str(reasoning_effort)
        self.skill_docs = skill_docs
        self.configured_protocol = protocol
        #: the run's action protocol: "tools" (native function calling) or "json" (text fallback)
        self.protocol = "json" if protocol == "json" else "tools"
        self.native_calls_seen = False
        self._lock = threading.Lock()
        self.api = ChatAPI(openai.OpenAI(api_key=key, base_url=base_url, timeout=float(timeout), max_retries=0),
                           self.model, base_url, label="planner endpoint", max_retries=int(max_retries),
                           backoff=float(backoff), backoff_max=float(backoff_max),
                           limiter=limiter_for(base_url, self.model, max_in_flight, requests_per_minute))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "base_url": self.base_url, "api_key_env": self.api_key_env,
                "temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens,
                "max_completion_tokens": self.max_completion_tokens, "reasoning_effort": self.reasoning_effort,
                "protocol": self.protocol, **self.api.describe()}

    def start(self, ctx: QuestionContext) -> "OpenAISession":
        return OpenAISession(self, ctx)

    def switch_to_json(self, reason: str) -> dict[str, Any] | None:
        """Fall back to the JSON-in-text protocol for the rest of the run (once); the event, or None
        when another question already switched or this run has seen native tool calls."""
        with self._lock:
            if self.protocol == "json" or self.native_calls_seen or self.configured_protocol == "tools":
                return None
            self.protocol = "json"
        event = {"kind": "protocol", "endpoint": "planner endpoint", "from": "tools", "to": "json",
                 "reason": reason[:300]}
        self.api.events.append(event)
        return event

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 tool_choice: str | None = None) -> tuple[Any, dict[str, int], list[dict[str, Any]]]:
        """One chat completion: (response, usage, adaptation events). Settings the run has learnt the
        server rejects are left out; an unusable endpoint raises :class:`PlannerUnavailable`."""
        params: dict[str, Any] = {"messages": messages}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.seed is not None:
            params["seed"] = self.seed
        if tools:
            params["tools"] = tools
            if tool_choice:
                params["tool_choice"] = tool_choice
        if self.max_tokens:
            params["max_tokens"] = self.max_tokens
        if self.max_completion_tokens:
            params["max_completion_tokens"] = self.max_completion_tokens
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = self.reasoning_effort
        try:
            resp, events = self.api.call(**params)
        except ChatAPIError as exc:
            raise PlannerUnavailable(str(exc)) from None
        if not getattr(resp, "choices", None):
            raise PlannerUnavailable(f"planner endpoint returned no choices: {str(resp)[:200]}")
        return resp, usage_of(resp), events

    def generate_text(self, messages: list[dict[str, str]]) -> tuple[str, dict[str, int], list[dict[str, Any]]]:
        """A plain completion (no tools), for the JSON-in-text protocol."""
        resp, usage, events = self.complete(messages)
        return resp.choices[0].message.content or "", usage, events


class OpenAISession:
    def __init__(self, planner: OpenAIPlanner, ctx: QuestionContext) -> None:
        self.p, self.ctx = planner, ctx
        self.tools = list(ctx.tool_specs) + [final_answer_spec(list(ctx.question.options))]
        self.history: list[dict[str, Any]] = []  # raw mode: assistant tool calls and tool results
        self.final_refused = False  # a forced final answer was asked for and none came: asking again is waste
        self._pending: dict[str, Any] | None = None

    def _messages(self, state: AgentState, extra: str | None = None) -> list[dict[str, Any]]:
        msgs = [{"role": "system", "content": system_prompt(self.ctx)}]
        if state.memory.aggregate:
            body = question_block(self.ctx) + "\n\n" + state_block(state)
            msgs.append({"role": "user", "content": body + (f"\n\n{extra}" if extra else "")})
        else:
            msgs.append({"role": "user", "content": question_block(self.ctx)})
            msgs += self.history
            msgs.append({"role": "user", "content": state_block(state, include_evidence=False)
                         + (f"\n\n{extra}" if extra else "")})
        return msgs

    def _parse(self, message: Any) -> tuple[list[ToolCall], FinalAnswer | None, str | None]:
        """(calls, final, error) from an assistant message."""
        calls, names = [], set(self.ctx.tool_names)
        for tc in message.tool_calls or []:
            fn = tc.function
            try:
                args = json.loads(fn.arguments or "{}")
            except json.JSONDecodeError:
                try:
                    args = json.loads(repair_json(fn.arguments or "{}"))
                except json.JSONDecodeError:
                    return [], None, f"arguments of {fn.name} are not valid JSON: {fn.arguments[:120]!r}"
            if fn.name == FINAL_TOOL:
                return [], FinalAnswer(f"Answer: {args.get('answer', '')}", str(args.get("reason", ""))), None
            if fn.name not in names:
                return [], None, f"unknown tool {fn.name!r}; available tools: {sorted(names)}"
            calls.append(ToolCall(fn.name, args if isinstance(args, dict) else {}, tc.id))
        if calls:
            return calls, None, None
        content = message.content or ""
        if self.ctx.question.open_ended and content.strip():
            return [], FinalAnswer(content.strip(), "plain-text answer"), None
        if extract_choice(content, self.ctx.question.options):
            return [], FinalAnswer(content, content), None
        return [], None, "the reply neither calls a tool nor states one option letter as 'Answer: X'"

    def _native(self, messages: list[dict[str, Any]], tool_choice: str, usage: dict[str, int],
                events: list[dict[str, Any]]) -> Any:
        resp, u, ev = self.p.complete(messages, self.tools, tool_choice)
        add_usage(usage, u)
        events += ev
        return resp.choices[0].message

    def _turn(self, state: AgentState, extra: str | None, tool_choice: str) -> PlannerTurn:
        if self.final_refused:  # deterministic decoding would repeat it: the agent answers from the evidence
            return PlannerTurn(note="the model gave no usable action nor a forced final answer for this question")
        forced = tool_choice == "none"
        if self.p.protocol == "json":
            return self._json(state, forced, PlannerTurn())
        messages = self._messages(state, extra)
        usage: dict[str, int] = {}
        events: list[dict[str, Any]] = []
        message = self._native(messages, tool_choice, usage, events)
        calls, final, error = self._parse(message)
        invalid, outputs = 0, [_dump(message)]
        # prose where a tool call was due: invalid, or an answer before any evidence (a model that cannot
        # see or emit the tools answers blind), and this run has never seen a native tool call
        if not forced and not message.tool_calls and (error or state.iteration == 1):
            switch = self.p.switch_to_json(f"the model answered a tool request with text: {(message.content or '')[:200]!r}")
            if switch is not None or self.p.protocol == "json":  # this run speaks JSON in text from now on
                head = PlannerTurn(messages=messages, output=outputs, usage=usage, invalid=1,
                                   events=events + ([switch] if switch else []))
                return self._json(state, forced, head)
        if error:  # re-ask once, saying what was wrong
            invalid = 1
            retry = messages + [{"role": "assistant", "content": _echo(message)},
                                {"role": "user", "content": f"Your reply was invalid: {error}. Call a tool with valid "
                                                            "JSON arguments or reply 'Answer: X'."}]
            message = self._native(retry, tool_choice, usage, events)
            outputs.append(_dump(message))
            calls, final, error = self._parse(message)
            if error:
                invalid += 1
            messages = retry
        if calls:
            self.p.native_calls_seen = True
        self._pending = _dump(message) if calls else None
        return PlannerTurn(calls=calls, final=final, messages=messages, output=outputs, usage=usage, invalid=invalid,
                           note=error or "", events=events)

    def _generate(self, events: list[dict[str, Any]]):
        def generate(messages: list[dict[str, str]]) -> tuple[str, dict[str, int]]:
            text, usage, ev = self.p.generate_text(messages)
            events.extend(ev)
            return text, usage
        return generate

    def _json(self, state: AgentState, forced: bool, head: PlannerTurn) -> PlannerTurn:
        """A turn in the JSON-in-text protocol (after ``head``, the native attempt that failed, if any).
        A reply that commits to one option in plain text is an answer. A forced turn, and a tool turn
        whose JSON replies stay unusable (a ``forced-final`` event), ask for the answer in plain words:
        a model that cannot act still answers."""
        events = list(head.events)
        outputs, usage, invalid = list(head.output or []), dict(head.usage), head.invalid
        calls: list[ToolCall] = []
        final, note, messages = None, "", head.messages
        if not forced:
            turn = json_turn(self.ctx, state, False, self.p.skill_docs, self._generate(events), text_answers=True)
            outputs += turn.output
            add_usage(usage, turn.usage)
            invalid += turn.invalid
            messages, calls, final, note = turn.messages, turn.calls, turn.final, turn.note
            if calls or final is not None:
                return PlannerTurn(calls=calls, final=final, messages=messages, output=outputs, usage=usage,
                                   invalid=invalid, note=note, events=events)
            events.append({"kind": "forced-final", "endpoint": "planner endpoint",
                           "reason": f"no usable JSON action ({turn.note})"})
        messages = self._text_final_messages(state)
        text, u = self._generate(events)(messages)
        outputs.append(text)
        add_usage(usage, u)
        final = self._text_final(text)
        if final is None:
            invalid += 1
            note = "the forced final reply names no option"
            self.final_refused = True
        return PlannerTurn(final=final, messages=messages, output=outputs, usage=usage, invalid=invalid, note=note,
                           events=events)

    def _text_final_messages(self, state: AgentState) -> list[dict[str, str]]:
        """The plain-words final request: the instruction comes last (small models echo what they read first)."""
        ask = ("Reply with the answer itself, in a few words." if self.ctx.question.open_ended else
               f"Which option is correct? Reply with one letter ({', '.join(self.ctx.question.options)}) "
               "in the form \"Answer: X\".")
        return [{"role": "system", "content": system_prompt(self.ctx, skill_docs=self.p.skill_docs)},
                {"role": "user", "content": question_block(self.ctx) + "\n\n" + state_block(state) + "\n\n"
                 + "No more tools can be called. Using only the evidence above: " + ask}]

    def _text_final(self, text: str) -> FinalAnswer | None:
        if self.ctx.question.open_ended:
            return FinalAnswer(text.strip(), "plain-text answer") if text.strip() else None
        return FinalAnswer(text, "plain-text answer") if extract_choice(text, self.ctx.question.options) else None

    def next_turn(self, state: AgentState) -> PlannerTurn:
        return self._turn(state, None, "auto")

    def final_turn(self, state: AgentState) -> PlannerTurn:
        return self._turn(state, FINAL_REQUEST, "none")

    def observe(self, turn: PlannerTurn, results: list[ToolResult]) -> None:
        """Raw mode keeps the native protocol: the assistant's tool calls, then one tool message each."""
        if not turn.calls:
            return
        self.history.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c.id or f"call_{i}", "type": "function",
             "function": {"name": c.tool, "arguments": json.dumps(c.args)}} for i, c in enumerate(turn.calls)]})
        for i, (c, r) in enumerate(zip(turn.calls, results)):
            body = {"error": r.error} if r.error else r.data
            self.history.append({"role": "tool", "tool_call_id": c.id or f"call_{i}",
                                 "content": json.dumps(body, ensure_ascii=False, default=str)})


def _reasoning(message: Any) -> str | None:
    """DeepSeek's (and vLLM's) ``reasoning_content``: kept in the trace, never sent back."""
    extra = getattr(message, "model_extra", None) or {}
    value = getattr(message, "reasoning_content", None) or extra.get("reasoning_content") or extra.get("reasoning")
    return str(value) if value else None


def _echo(message: Any) -> str:
    """What an invalid reply looks like when it is sent back for a re-ask: content and tool calls only."""
    if message.content:
        return str(message.content)
    return json.dumps({"tool_calls": [{"name": t.function.name, "arguments": t.function.arguments}
                                      for t in message.tool_calls or []]})


def _dump(message: Any) -> dict[str, Any]:
    """An assistant message for the trace (its reasoning included)."""
    out: dict[str, Any] = {"content": message.content}
    reasoning = _reasoning(message)
    if reasoning:
        out["reasoning_content"] = reasoning
    if message.tool_calls:
        out["tool_calls"] = [{"id": t.id, "name": t.function.name, "arguments": t.function.arguments}
                             for t in message.tool_calls]
    return out
