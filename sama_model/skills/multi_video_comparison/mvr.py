"""MVR (multi-view reasoning): which candidate shows the reference's event from another camera or
sensor."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext
from .common import Decision, pick, similarities, similarity_calls

MVR_CONTENT_WEIGHT = 0.5  # weight of content similarity next to motion timing


def plan(ctx: PolicyContext) -> list[ToolCall]:
    return similarity_calls(ctx, "motion") + similarity_calls(ctx, "content")


def decide(ctx: PolicyContext) -> Decision:
    """Same event, another camera or sensor: motion-timing similarity (synchronised recordings move
    at the same moments, whatever the viewpoint or modality) + MVR_CONTENT_WEIGHT x content
    similarity (same-sensor views also share what is shown)."""
    motion, content = similarities(ctx, "motion"), similarities(ctx, "content")
    scores = {c: motion.get(c, 0.0) + MVR_CONTENT_WEIGHT * content.get(c, 0.0)
              for c in ctx.candidates if c in motion or c in content}
    return pick(ctx, scores, "same-event score (motion timing + content)")
