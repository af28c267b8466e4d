"""Planners behind one interface: ``openai`` (function calling), ``hf`` (local JSON actions),
``scripted`` (deterministic skill policies, no LLM)."""
from __future__ import annotations

from typing import Any

from .base import (AgentState, Planner, PlannerConfigError, PlannerTurn, PlannerUnavailable,
                   QuestionContext)

PLANNER_NAMES = ("scripted", "openai", "hf")


def create_planner(name: str, **options: Any) -> Planner:
    """Build a planner by name with its options (unknown options raise PlannerConfigError)."""
    if name == "scripted":
        from .scripted import ScriptedPlanner

        if options:
            raise PlannerConfigError(f"the scripted planner takes no options, got {sorted(options)}")
        return ScriptedPlanner()
    if name == "openai":
        from .openai_chat import OpenAIPlanner as cls
    elif name == "hf":
        from .hf_local import HFPlanner as cls  # type: ignore[assignment]
    else:
        raise PlannerConfigError(f"unknown planner {name!r}; choose one of {PLANNER_NAMES}")
    try:
        return cls(**options)
    except TypeError as exc:
        raise PlannerConfigError(f"planner {name!r}: {exc}") from None


__all__ = ["create_planner", "PLANNER_NAMES", "AgentState", "Planner", "PlannerConfigError", "PlannerTurn",
           "PlannerUnavailable", "QuestionContext"]
