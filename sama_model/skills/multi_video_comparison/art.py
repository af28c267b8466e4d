"""ART (art style): which candidate is drawn in the reference's style."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext
from .common import Decision, similarity_calls, similarity_decision, tie_break_calls

STYLE_QUERY = "Describe the visual style: colour palette, line quality, shading and texture."
#: an answer whose best candidate leads the next by less than this (style similarity, after the reader tie-break) is
#: marked fragile in its reason. Fitted on MVX-Synth seed 0 (the demo set, 20 ART questions) answered at CRF 20 and
#: at CRF 30: 5 of the 20 marked in either run (1 at CRF 20, 4 at CRF 30), holding the 1 answer that changed. (0.04:
#: 1 marked, 0 held; 0.1: 9 marked.) ART's leads are small: 9 of 20 at CRF 20 and 10 at CRF 30 are under 0.12.
#: Checked on seed 81 (never fitted, CRF 20 vs 30): 6 of 20 marked, holding 2 of 2 changes.
ART_FRAGILE_MARGIN = 0.05


def plan(ctx: PolicyContext) -> list[ToolCall]:
    return similarity_calls(ctx, "style") + tie_break_calls(ctx, "style", STYLE_QUERY)


def decide(ctx: PolicyContext) -> Decision:
    """Style similarity to the reference; reader style descriptions break near-ties; a lead under
    ART_FRAGILE_MARGIN is marked fragile."""
    return similarity_decision(ctx, "style", STYLE_QUERY, "style similarity", ART_FRAGILE_MARGIN)
