"""SEQ (sequence ordering): which option lists the clips in the order they continue each other."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext, mentions
from ..rules import tie_mark
from .common import Decision, argmax, keep, lead_mark

#: an answer whose option order leads the next by less than this (mean continuity) is marked fragile in its reason.
#: Set from MVX-Synth seed 0 (the demo set, 20 SEQ questions) answered at CRF 20 and at CRF 30: no answer changed;
#: an option's mean continuity moved by 0.035 (median) to 0.136, the lead between the best two by up to 0.158
#: (0.122 at the 90th percentile); 3 of the 20 lead by less than 0.15 (0.037, 0.115, 0.136). Checked on seed 83
#: (never fitted, CRF 20 vs its CRF 30 copy): no answer changed, 3 of 20 marked in either run.
SEQ_FRAGILE_MARGIN = 0.15


def option_orders(ctx: PolicyContext) -> dict[str, list[str]]:
    """letter -> the clip labels in the order the option lists them."""
    out = {}
    for letter, text in ctx.question.options.items():
        seq = mentions(text, ctx.labels)
        if len(seq) >= 2:
            out[letter] = seq
    return out


def _pairs(ctx: PolicyContext) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for seq in option_orders(ctx).values():
        for a, b in zip(seq, seq[1:]):
            if (a, b) not in pairs and a != b:
                pairs.append((a, b))
    return pairs


def plan(ctx: PolicyContext) -> list[ToolCall]:
    if "motion_analyzer" in ctx.tools:
        return keep([ctx.call("motion_analyzer", video=a, next_video=b) for a, b in _pairs(ctx)])
    unordered = list(dict.fromkeys(tuple(sorted(p)) for p in _pairs(ctx)))
    return keep([ctx.call("visual_similarity", video_a=a, video_b=b, aspect="content") for a, b in unordered])


def _continuity(ctx: PolicyContext, a: str, b: str) -> float | None:
    """Evidence key: motion_analyzer data["continuity"]["score"] for a -> b; without the motion
    tool, visual_similarity data["score"] (symmetric)."""
    d = ctx.latest("motion_analyzer", a, next_video=b)
    if d and "continuity" in d:
        return float(d["continuity"].get("score", 0.0))
    return ctx.similarity(a, b, "content")


def decide(ctx: PolicyContext) -> Decision:
    """The option order whose consecutive clips continue each other best (mean continuity); a lead under
    SEQ_FRAGILE_MARGIN is marked fragile."""
    scores: dict[str, float] = {}
    for letter, seq in option_orders(ctx).items():
        vals = [_continuity(ctx, a, b) for a, b in zip(seq, seq[1:])]
        vals = [v for v in vals if v is not None]
        if vals:
            scores[letter] = sum(vals) / len(vals)
    if not scores:
        return None, "no continuity evidence for any option order"
    best = argmax(scores)
    why = "mean continuity per option: " + ", ".join(f"{k}={v:.3f}" for k, v in scores.items())
    return best, why + lead_mark(list(scores), scores, SEQ_FRAGILE_MARGIN) + tie_mark(scores, "mean continuity")
