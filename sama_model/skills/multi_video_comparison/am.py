"""AM (action matching): which candidate's main actor performs the reference actor's action,
whatever it looks like."""
from __future__ import annotations

import re
from typing import Any

from ...actions import ToolCall
from ..context import PolicyContext
from .common import Decision, keep, pick

ACTION_QUERY = "What action is the person or main subject performing? Describe the movement in one sentence."

#: motion vocabulary read from video_reader action descriptions (the motion-off path); appearance
#: words (colours, shapes) are deliberately absent: the actor may look different. The stems cover
#: the lite motion analyzer's pattern names (which are MVX-Synth's sprite motions) plus a few
#: everyday actions; real-video action words beyond these are not recognised.
ACTION_WORDS: dict[str, str] = {
    "bounc": "bouncing", "spin": "spinning", "rotat": "spinning", "orbit": "orbiting", "circl": "orbiting",
    "zig": "zig-zag", "grow": "growing", "shrink": "shrinking", "puls": "pulsing", "linear": "linear",
    "slid": "linear", "shak": "shaking", "oscillat": "shaking", "jump": "jumping", "walk": "walking",
    "run": "running", "wav": "waving", "static": "static", "still": "static",
}
AM_ANY_OBJECT_WEIGHT = 0.3  # weight of "some object in the candidate moves like the reference actor"
AM_READER_WEIGHT = 0.2  # weight of motion-word agreement of reader descriptions when motion data exist


def _pattern_set(obj: dict[str, Any]) -> set[str]:
    """A tracked object's motion patterns; "unknown" dropped, "static" only when nothing else."""
    pats = {str(p) for p in (obj.get("patterns") or [obj.get("pattern")]) if p and p != "unknown"}
    return pats - {"static"} if len(pats) > 1 else pats


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def main_actor(objects: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The object performing the action: the largest (data "size_px") of those doing something
    (a pattern other than "static": moving, spinning, pulsing...), else the largest of all; when the
    analyzer reports no sizes, the one that moves most (data "path_px"). Objects with too few
    observations ("unknown" pattern) are skipped; large static regions (backdrop shapes, poles)
    are not actors."""
    live = [o for o in objects if _pattern_set(o)]
    if not live:
        return None
    if any(o.get("size_px") for o in live):
        active = [o for o in live if _pattern_set(o) != {"static"}] or live
        return max(active, key=lambda o: (float(o.get("size_px") or 0.0), float(o.get("path_px") or 0.0)))
    return max(live, key=lambda o: float(o.get("path_px") or 0.0))


def actor_patterns(objects: list[dict[str, Any]]) -> set[str]:
    """The main actor's motion patterns (empty when there is no actor)."""
    actor = main_actor(objects)
    return _pattern_set(actor) if actor else set()


def motion_match(ref_pats: set[str], objects: list[dict[str, Any]]) -> float:
    """How well a candidate's motion matches the reference actor's patterns: Jaccard with the
    candidate's main actor + AM_ANY_OBJECT_WEIGHT x the best Jaccard of any candidate object."""
    best_any = max([_jaccard(ref_pats, _pattern_set(o)) for o in objects] + [0.0])
    return _jaccard(ref_pats, actor_patterns(objects)) + AM_ANY_OBJECT_WEIGHT * best_any


def _objects(ctx: PolicyContext, video: str) -> list[dict[str, Any]] | None:
    """Evidence key: motion_analyzer data["objects"] (whole video); None without motion evidence."""
    d = ctx.latest("motion_analyzer", video, next_video=None)
    return None if d is None or "objects" not in d else list(d["objects"])


def action_words(text: str) -> set[str]:
    """Motion words (normalised) in a free-text action description."""
    t = text.lower()
    return {name for stem, name in ACTION_WORDS.items() if re.search(rf"\b{stem}", t)}


def plan(ctx: PolicyContext) -> list[ToolCall]:
    """Motion analysis of every video; the reader's action description only without the motion tool."""
    if "motion_analyzer" in ctx.tools:
        return keep([ctx.call("motion_analyzer", video=v) for v in ctx.labels])
    return keep([ctx.call("video_reader", video=v, query=ACTION_QUERY) for v in ctx.labels])


def action_scores(ctx: PolicyContext) -> dict[str, float]:
    """Per candidate: Jaccard of the main actors' motion patterns + AM_ANY_OBJECT_WEIGHT x the best
    Jaccard of any candidate object with the reference actor + the reader's motion-word Jaccard
    (weight 1 without motion data, AM_READER_WEIGHT with). Appearance similarity is not used: the
    question allows a different-looking actor, so looking alike is no evidence of the same action."""
    ref_objs = _objects(ctx, ctx.reference)
    ref_pats = actor_patterns(ref_objs or [])
    ref_words = action_words(ctx.reader_answer(ctx.reference, ACTION_QUERY))
    scores: dict[str, float] = {}
    for c in ctx.candidates:
        objs = _objects(ctx, c)
        words = action_words(ctx.reader_answer(c, ACTION_QUERY))
        if objs is None and not words:
            continue
        score = 0.0
        if objs is not None and ref_pats:
            score += motion_match(ref_pats, objs)
        score += (AM_READER_WEIGHT if ref_objs is not None else 1.0) * _jaccard(ref_words, words)
        scores[c] = score
    return scores


def decide(ctx: PolicyContext) -> Decision:
    """The candidate whose main actor moves like the reference's (see :func:`action_scores`)."""
    ref_actor = main_actor(_objects(ctx, ctx.reference) or [])
    letter, why = pick(ctx, action_scores(ctx), "action score (actor motion patterns)")
    actor = f"{ref_actor.get('color', '')} {ref_actor.get('label', '')} {sorted(_pattern_set(ref_actor))}" \
        if ref_actor else "none"
    return letter, f"reference actor {actor.strip()}; {why}"
