"""MVR (multi-view reasoning): which candidate shows the reference's event from another camera or
sensor."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext
from .common import Decision, pick, similarities, similarity_calls, small_lead

MVR_CONTENT_WEIGHT = 0.5  # weight of content similarity next to motion timing
#: an answer whose best candidate leads the next by less than this (same-event score) is marked fragile in its
#: reason. Fitted on MVX-Synth seed 0 (the demo set, 20 MVR questions) answered at CRF 20 and at CRF 30: 8 of the 20
#: marked in either run (6 at CRF 20, 6 at CRF 30), holding 4 of the 5 answers that changed (the fifth led by 0.745
#: at CRF 20). (0.12: 5 marked, 3 held; 0.2: 9 marked, 5 held.) Checked on seed 81 (never fitted, CRF 20 vs 30): 5 of
#: 20 marked, holding 3 of 5 changes.
MVR_FRAGILE_MARGIN = 0.16


def plan(ctx: PolicyContext) -> list[ToolCall]:
    return similarity_calls(ctx, "motion") + similarity_calls(ctx, "content")


def decide(ctx: PolicyContext) -> Decision:
    """Same event, another camera or sensor: motion-timing similarity (synchronised recordings move
    at the same moments, whatever the viewpoint or modality) + MVR_CONTENT_WEIGHT x content
    similarity (same-sensor views also share what is shown)."""
    motion, content = similarities(ctx, "motion"), similarities(ctx, "content")
    scores = {c: motion.get(c, 0.0) + MVR_CONTENT_WEIGHT * content.get(c, 0.0)
              for c in ctx.candidates if c in motion or c in content}
    letter, why = pick(ctx, scores, "same-event score (motion timing + content)")
    if letter is not None:
        why += small_lead(ctx, scores, MVR_FRAGILE_MARGIN)
    return letter, why
