"""The one planner interface: given the question and the current state, the next turn.

A planner (``openai``, ``hf``, ``scripted``) is built once per run and shared by all
questions; ``start`` opens a per-question session that keeps that question's conversation.
Each turn either requests tool calls (run in parallel by the agent) or gives a final answer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ..actions import FinalAnswer, ToolCall
from ..memory import EvidenceMemory
from ..question import AgentQuestion
from ..tools.base import ToolResult


class PlannerUnavailable(RuntimeError):
    """The planner's endpoint cannot be used (after retries): the question fails with this reason."""


class PlannerConfigError(ValueError):
    """A planner configured wrongly (missing key, unknown option)."""


@dataclass
class QuestionContext:
    """Everything fixed for one question."""

    question: AgentQuestion
    task: str  # identified task code ("" when unknown)
    task_source: str
    option_map: dict[str, list[str]]
    tool_specs: list[dict[str, Any]]  # OpenAI function specs of the switched-on tools
    skills: bool
    memory: EvidenceMemory
    duration: Callable[[str], float]

    @property
    def tool_names(self) -> list[str]:
        return [s["function"]["name"] for s in self.tool_specs]


@dataclass
class AgentState:
    """What changes between turns."""

    iteration: int
    max_iterations: int
    memory: EvidenceMemory
    verification_notes: list[str] = field(default_factory=list)  # conflicts found in the last step


@dataclass
class PlannerTurn:
    calls: list[ToolCall] = field(default_factory=list)
    final: FinalAnswer | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)  # what the planner was shown
    output: Any = None  # raw planner output
    usage: dict[str, int] = field(default_factory=dict)
    invalid: int = 0
    note: str = ""
    #: protocol adaptations made during this turn (sama_model.chat_api), written into the trace
    events: list[dict[str, Any]] = field(default_factory=list)


class PlannerSession(Protocol):
    def next_turn(self, state: AgentState) -> PlannerTurn: ...

    def final_turn(self, state: AgentState) -> PlannerTurn: ...

    def observe(self, turn: PlannerTurn, results: list[ToolResult]) -> None: ...


class Planner(Protocol):
    name: str

    def start(self, ctx: QuestionContext) -> PlannerSession: ...

    def describe(self) -> dict[str, Any]: ...


def add_usage(total: dict[str, int], usage: dict[str, int]) -> dict[str, int]:
    """Add token counts into ``total`` (in place; returned for chaining)."""
    for k, v in usage.items():
        total[k] = total.get(k, 0) + int(v or 0)
    return total
