"""The scripted planner: no LLM. It runs each skill's policy deterministically and decides from
the structured evidence in memory (the offline default, and an ablation of the LLM planners)."""
from __future__ import annotations

from typing import Any

from ..actions import FinalAnswer
from ..skills.context import PolicyContext
from ..skills.meta_planner.policy import select_policy
from ..skills.rules import rule_of
from ..tools.base import ToolResult
from .base import AgentState, PlannerTurn, QuestionContext


class ScriptedSession:
    def __init__(self, ctx: QuestionContext) -> None:
        self.ctx = ctx
        self.policy = PolicyContext(ctx.question, ctx.task, ctx.task_source, ctx.memory, set(ctx.tool_names),
                                    ctx.duration, ctx.option_map)
        self.policy_name, self.plan, self.decide = select_policy(ctx.task, ctx.skills)
        self.done: set[str] = set()

    def _view(self, state: AgentState) -> list[dict[str, Any]]:
        """What the policy 'sees', recorded so traces show the memory vs raw-evidence switch."""
        return [{"role": "context", "content": state.memory.context()}]

    def next_turn(self, state: AgentState) -> PlannerTurn:
        calls = []
        for call in self.plan(self.policy):
            if call.key() not in self.done:
                self.done.add(call.key())
                calls.append(call)
        if calls:
            return PlannerTurn(calls=calls, messages=self._view(state), output=self.policy_name,
                               note=f"policy {self.policy_name}")
        return self._decide(state, "evidence complete")

    def final_turn(self, state: AgentState) -> PlannerTurn:
        return self._decide(state, "iteration cap")

    def _decide(self, state: AgentState, why: str) -> PlannerTurn:
        letter, reason = self.decide(self.policy)
        text = f"Answer: {letter}" if letter else ""
        final = FinalAnswer(text, reason, rule_of(reason) if letter else None)
        return PlannerTurn(final=final, messages=self._view(state), output=self.policy_name,
                           note=f"policy {self.policy_name} decides ({why})")

    def observe(self, turn: PlannerTurn, results: list[ToolResult]) -> None:
        return None


class ScriptedPlanner:
    name = "scripted"

    def start(self, ctx: QuestionContext) -> ScriptedSession:
        return ScriptedSession(ctx)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}
