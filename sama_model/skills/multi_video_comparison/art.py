"""ART (art style): which candidate is drawn in the reference's style."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext
from .common import Decision, similarity_calls, similarity_decision, tie_break_calls

STYLE_QUERY = "Describe the visual style: colour palette, line quality, shading and texture."


def plan(ctx: PolicyContext) -> list[ToolCall]:
    return similarity_calls(ctx, "style") + tie_break_calls(ctx, "style", STYLE_QUERY)


def decide(ctx: PolicyContext) -> Decision:
    """Style similarity to the reference; reader style descriptions break near-ties."""
    return similarity_decision(ctx, "style", STYLE_QUERY, "style similarity")
