"""Planner over any OpenAI-compatible chat endpoint with native function calling.

Deterministic settings (temperature 0, seed 42), retries with exponential backoff on 429, 5xx,
timeouts and connection errors, token usage recorded per turn. The API key is read from a
named environment variable and registered as a secret so traces never contain it. An
endpoint that stays unreachable raises :class:`PlannerUnavailable`, which fails only the
current question.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any

from mvx_tasks.answers import extract_choice

from ..actions import FinalAnswer, ToolCall
from ..tools.base import ToolResult
from ..trace import register_secret
from .base import AgentState, PlannerConfigError, PlannerTurn, PlannerUnavailable, QuestionContext, add_usage
from .json_actions import repair_json
from .prompting import FINAL_REQUEST, question_block, state_block, system_prompt

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
    """Shared by all questions of a run; one session per question."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, max_retries: int = 5, backoff: float = 1.0, backoff_max: float = 30.0,
                 temperature: float = 0.0, seed: int = 42, max_tokens: int | None = None) -> None:
        import openai

        key = os.environ.get(api_key_env)
        if not key:
            if not base_url:
                raise PlannerConfigError(f"the planner's API key is read from ${api_key_env}, which is not set; "
                                         f"export it or pass api_key_env=<VARIABLE>")
            key = "EMPTY"  # self-hosted endpoints often need none
        register_secret(key)
        self.model, self.base_url, self.api_key_env = str(model), base_url, api_key_env
        self.temperature, self.seed, self.max_tokens = float(temperature), int(seed), max_tokens
        self.max_retries, self.backoff, self.backoff_max = int(max_retries), float(backoff), float(backoff_max)
        self._openai = openai
        self.client = openai.OpenAI(api_key=key, base_url=base_url, timeout=float(timeout), max_retries=0)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "base_url": self.base_url, "api_key_env": self.api_key_env,
                "temperature": self.temperature, "seed": self.seed}

    def start(self, ctx: QuestionContext) -> "OpenAISession":
        return OpenAISession(self, ctx)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: str) -> Any:
        """One chat completion, retried with exponential backoff on transient failures."""
        oa = self._openai
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature,
                                  "seed": self.seed, "tools": tools, "tool_choice": tool_choice}
        if self.max_tokens:
            kwargs["max_tokens"] = int(self.max_tokens)
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            try:
                return self.client.chat.completions.create(**kwargs)
            except (oa.RateLimitError, oa.InternalServerError, oa.APIConnectionError) as exc:
                last = exc
            except oa.APIStatusError as exc:
                if exc.status_code >= 500:
                    last = exc
                else:
                    raise PlannerUnavailable(f"planner endpoint refused the request (HTTP {exc.status_code}): "
                                             f"{str(exc)[:200]}") from None
            if attempt < self.max_retries:
                time.sleep(min(self.backoff_max, self.backoff * 2 ** attempt))
        raise PlannerUnavailable(f"planner endpoint unreachable after {self.max_retries + 1} attempts: "
                                 f"{type(last).__name__}: {str(last)[:200]}")


def _usage(resp: Any) -> dict[str, int]:
    u = getattr(resp, "usage", None)
    if u is None:
        return {}
    return {"prompt_tokens": int(getattr(u, "prompt_tokens", 0) or 0),
            "completion_tokens": int(getattr(u, "completion_tokens", 0) or 0)}


class OpenAISession:
    def __init__(self, planner: OpenAIPlanner, ctx: QuestionContext) -> None:
        self.p, self.ctx = planner, ctx
        self.tools = list(ctx.tool_specs) + [final_answer_spec(list(ctx.question.options))]
        self.history: list[dict[str, Any]] = []  # raw mode: assistant tool calls and tool results
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

    def _turn(self, state: AgentState, extra: str | None, tool_choice: str) -> PlannerTurn:
        messages = self._messages(state, extra)
        usage: dict[str, int] = {}
        resp = self.p.complete(messages, self.tools, tool_choice)
        add_usage(usage, _usage(resp))
        message = resp.choices[0].message
        calls, final, error = self._parse(message)
        invalid, outputs = 0, [_dump(message)]
        if error:  # re-ask once, saying what was wrong
            invalid = 1
            retry = messages + [{"role": "assistant", "content": message.content or json.dumps(_dump(message))},
                                {"role": "user", "content": f"Your reply was invalid: {error}. Call a tool with valid "
                                                            "JSON arguments or reply 'Answer: X'."}]
            resp = self.p.complete(retry, self.tools, tool_choice)
            add_usage(usage, _usage(resp))
            message = resp.choices[0].message
            outputs.append(_dump(message))
            calls, final, error = self._parse(message)
            if error:
                invalid += 1
            messages = retry
        self._pending = _dump(message) if calls else None
        return PlannerTurn(calls=calls, final=final, messages=messages, output=outputs, usage=usage, invalid=invalid,
                           note=error or "")

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


def _dump(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": t.id, "name": t.function.name, "arguments": t.function.arguments}
                             for t in message.tool_calls]
    return out
