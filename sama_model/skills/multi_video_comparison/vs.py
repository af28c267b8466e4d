"""VS (video similarity): which candidate is a near-duplicate of the reference."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext
from .common import Decision, similarity_calls, similarity_decision, tie_break_calls

SCENE_QUERY = "Describe the place, the objects and people present and the event taking place."


def plan(ctx: PolicyContext) -> list[ToolCall]:
    return similarity_calls(ctx, "content") + tie_break_calls(ctx, "content", SCENE_QUERY)


def decide(ctx: PolicyContext) -> Decision:
    """Content similarity to the reference (near-duplicates score highest)."""
    return similarity_decision(ctx, "content", SCENE_QUERY, "content similarity")
