"""VS (video similarity): which candidate is a near-duplicate of the reference."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext
from .common import Decision, similarity_calls, similarity_decision, tie_break_calls

SCENE_QUERY = "Describe the place, the objects and people present and the event taking place."
#: an answer whose best candidate leads the next by less than this (content similarity, after the reader tie-break)
#: is marked fragile in its reason. Set from MVX-Synth seed 0 (the demo set, 20 VS questions) answered at CRF 20 and
#: at CRF 30: no answer changed; the lead moved by 0.011 at most (0.009 at the 90th percentile), so the margin is
#: about twice the largest move; it marks 1 of the 20 (a lead of 0.011). Checked on seed 83 (never fitted, CRF 20 vs
#: its CRF 30 copy): no answer changed, 1 of 20 marked in either run (leads 0.007 / 0.014).
VS_FRAGILE_MARGIN = 0.02


def plan(ctx: PolicyContext) -> list[ToolCall]:
    return similarity_calls(ctx, "content") + tie_break_calls(ctx, "content", SCENE_QUERY)


def decide(ctx: PolicyContext) -> Decision:
    """Content similarity to the reference (near-duplicates score highest); a lead under
    VS_FRAGILE_MARGIN is marked fragile."""
    return similarity_decision(ctx, "content", SCENE_QUERY, "content similarity", VS_FRAGILE_MARGIN)
