"""AM (action matching): which candidate's main actor performs the reference actor's action,
whatever it looks like."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...actions import ToolCall
from ..context import PolicyContext
from .common import Decision, keep, pick, small_lead

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
#: weight of the segmentation objects' match when both videos also have a motion-found actor
#: (data["actor"]: found by how it moves, followed by its texture; on real footage the colour
#: segmentation often takes background for the actor). Fitted on real-footage composite seeds
#: 7, 1, 3, 4 and MVX-Synth seed 0.
AM_SEGMENT_WEIGHT = 0.5
#: weight of the motion-found actors' signature similarity (continuous measures of the motion:
#: extent, straightness, turn, size swing, reversals) next to their pattern names. Fitted on
#: real-footage composite seeds 7, 1, 3, 4 (0.2-0.7 scored alike; 0 and 3 lower).
AM_SIGNATURE_WEIGHT = 0.5


#: an answer whose best candidate leads the next by less than this (action score) is marked fragile in
#: its reason: on the real-footage composite fitting seeds 7, 1, 3, 4, 8, 9 and 10 (140 AM questions,
#: each answered at CRF 20 and at CRF 30, 280 answers), 52 of the 85 answers under this margin
#: changed when the same frames were re-encoded at the other quality and 34 were right; of the 195
#: over it, 60 changed and 130 were right. (0.1: 35 of 56 changed; 0.3: 62 of 108.) A per-video
#: actor's "near threshold" note says which measure sat on a naming edge; this says the answer does.
#: With the flow-read movers' agreement (scores 0-1; fitting seeds 3, 8, 1, 4, 7, each answered by a
#: discriminant fitted on the other four, 400 answers): 46 under the margin, 7 changed and 33 right;
#: 354 over it, 7 changed and 329 right.
AM_FRAGILE_MARGIN = 0.2


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


def _mover(ctx: PolicyContext, video: str) -> dict[str, float] | None:
    """Evidence key: motion_analyzer data["mover"]["action_probs"] (the main mover's action
    probabilities, read from dense flow: :mod:`sama_model.backends.lite.motion.motion_field`; empty when
    nothing moves), None without a mover."""
    d = ctx.latest("motion_analyzer", video, next_video=None)
    mover = (d or {}).get("mover")
    if not mover or "action_probs" not in mover:
        return None
    # a still video ("static", no probabilities) agrees with no action
    return {str(k): float(v) for k, v in mover["action_probs"].items()}


def action_agreement(a: dict[str, float], b: dict[str, float]) -> float:
    """The chance that two movers perform the same action, their actions drawn from their
    probabilities (sum over actions of p_a x p_b): 1 for two sure and equal actions, 0 for two sure
    and different ones. Why: it moves as little as the probabilities do when the clips are
    re-encoded, where a comparison of action names jumps."""
    return float(sum(p * b.get(k, 0.0) for k, p in a.items()))


def _actor(ctx: PolicyContext, video: str) -> dict[str, Any] | None:
    """Evidence key: motion_analyzer data["actor"] (the main actor found by its own motion), if any."""
    d = ctx.latest("motion_analyzer", video, next_video=None)
    return None if d is None or not d.get("actor") else dict(d["actor"])


#: per-measure weights of the actor signature distance (data["actor"]["signature"]: extent in
#: sizes, straightness, turns per second, log-size range, reversals per second); fitted on
#: real-footage composite seeds 7, 1, 3, 4
SIGNATURE_WEIGHTS = {"extent": 1.0, "straight": 1.0, "turn": 1.0, "swing": 2.0, "reversals": 0.5}


def signature_similarity(a: dict[str, float], b: dict[str, float]) -> float:
    """exp(-weighted L1 distance) of two actor signatures (extent compared as log(1 + x): a slide
    of 3 sizes and one of 4 are alike, a still actor and a slide are not); 1 = alike. A continuous
    comparison changes little when codec noise moves a measure across a naming threshold."""
    d = 0.0
    for key, wt in SIGNATURE_WEIGHTS.items():
        x, y = float(a.get(key, 0.0)), float(b.get(key, 0.0))
        d += wt * (abs(np.log1p(x) - np.log1p(y)) if key == "extent" else abs(x - y))
    return float(np.exp(-d))


#: actions in place that the segmentation path reads from an object's outline (its turn, its size
#: swing) better than the motion-found actor's texture match does; added to the actor's patterns
OUTLINE_ACTIONS = frozenset({"spinning", "pulsing"})


def combined_patterns(actor: dict[str, Any], objects: list[dict[str, Any]]) -> set[str]:
    """The motion-found actor's patterns plus the segmentation main actor's spinning / pulsing
    (:data:`OUTLINE_ACTIONS`); "static" dropped when anything else is there. On real-footage
    composite seeds 7, 1, 3 this named 109/200 videos' actions right (segmentation alone 92, the
    motion-found actor alone 95)."""
    pats = _pattern_set(actor) | (actor_patterns(objects) & OUTLINE_ACTIONS)
    return pats - {"static"} if len(pats) > 1 else pats


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
    """Per candidate: when the reference and every candidate with motion evidence have a flow-read
    mover (data["mover"]), their :func:`action_agreement` (one scale for all; the rest is not added: on the real-footage composite fitting seed 8,
    the texture-followed actor's and the segmentation's names changed with the codec in a fifth of
    the videos, the mover's probabilities by 0.1 on average). Otherwise: Jaccard of the motion-found actors' patterns (data["actor"], when both videos
    have one; :func:`combined_patterns`) + AM_SIGNATURE_WEIGHT x their signature similarity + the
    segmentation objects' match (Jaccard of the main actors' motion patterns +
    AM_ANY_OBJECT_WEIGHT x the best Jaccard of any candidate object with the reference actor;
    weight AM_SEGMENT_WEIGHT next to a motion-found actor, else 1) + the reader's motion-word
    Jaccard (weight 1 without motion data, AM_READER_WEIGHT with). Appearance similarity is not used: the
    question allows a different-looking actor, so looking alike is no evidence of the same action."""
    ref_objs = _objects(ctx, ctx.reference)
    ref_pats = actor_patterns(ref_objs or [])
    ref_actor = _actor(ctx, ctx.reference)
    ref_words = action_words(ctx.reader_answer(ctx.reference, ACTION_QUERY))
    movers = {c: _mover(ctx, c) for c in ctx.candidates if _objects(ctx, c) is not None}
    ref_mover = _mover(ctx, ctx.reference)
    if ref_mover and movers and all(m is not None for m in movers.values()):
        return {c: action_agreement(ref_mover, m) for c, m in movers.items() if m is not None}
    scores: dict[str, float] = {}
    for c in ctx.candidates:
        objs = _objects(ctx, c)
        words = action_words(ctx.reader_answer(c, ACTION_QUERY))
        if objs is None and not words:
            continue
        score = 0.0
        actor = _actor(ctx, c)
        both = ref_actor is not None and actor is not None
        if both:
            score += _jaccard(combined_patterns(ref_actor, ref_objs or []), combined_patterns(actor, objs or []))
            if ref_actor.get("signature") and actor.get("signature"):
                score += AM_SIGNATURE_WEIGHT * signature_similarity(ref_actor["signature"], actor["signature"])
        if objs is not None and ref_pats:
            score += (AM_SEGMENT_WEIGHT if both else 1.0) * motion_match(ref_pats, objs)
        score += (AM_READER_WEIGHT if ref_objs is not None else 1.0) * _jaccard(ref_words, words)
        scores[c] = score
    return scores


def decide(ctx: PolicyContext) -> Decision:
    """The candidate whose main actor moves like the reference's (see :func:`action_scores`)."""
    ref_actor = main_actor(_objects(ctx, ctx.reference) or [])
    scores = action_scores(ctx)
    letter, why = pick(ctx, scores, "action score (actor motion patterns)")
    if letter is not None:
        why += small_lead(ctx, scores, AM_FRAGILE_MARGIN)
    actor = f"{ref_actor.get('color', '')} {ref_actor.get('label', '')} {sorted(_pattern_set(ref_actor))}" \
        if ref_actor else "none"
    moving = _actor(ctx, ctx.reference)
    found = f"; found by its motion: {sorted(_pattern_set(moving))}" if moving else ""
    d = ctx.latest("motion_analyzer", ctx.reference, next_video=None) or {}
    if d.get("mover") and d["mover"].get("action_probs"):
        top = sorted(d["mover"]["action_probs"].items(), key=lambda kv: -kv[1])[:2]
        found += "; main mover (flow): " + ", ".join(f"{k} {v:.2f}" for k, v in top)
    if moving and moving.get("near_threshold"):
        found += f" (near threshold: {', '.join(moving['near_threshold'])})"
    return letter, f"reference actor {actor.strip()}{found}; {why}"
