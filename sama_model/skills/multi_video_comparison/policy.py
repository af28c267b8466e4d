"""Scripted policies of the multi-video comparison skill: reference first, then every candidate
with the same queries; appearance questions rank by visual_similarity, event questions add
video_reader and motion evidence; a decision is made once every comparison is in.

Each task has a ``plan_<task>(ctx) -> list[ToolCall]`` (the calls its decision needs; the
planner drops calls already made) and a ``decide_<task>(ctx) -> (letter | None, reason)``
that works on whatever evidence exists (so a forced final answer is possible). The evidence
keys each decision reads are named in its docstring; thresholds are module constants so they
can be tuned against the real backends.
"""
from __future__ import annotations

import math
import re
from typing import Any

from ...actions import ToolCall
from ...claims import singular, text_claims
from ..context import PolicyContext, mentions, text_overlap

Decision = tuple[str | None, str]

#: video_reader queries, fixed so every video gets the same question (comparable evidence)
ACTION_QUERY = "What action is the person or main subject performing? Describe the movement in one sentence."
STYLE_QUERY = "Describe the visual style: colour palette, line quality, shading and texture."
SCENE_QUERY = "Describe the place, the objects and people present and the event taking place."
CAMERA_QUERY = "How does the camera move: pan left or right, tilt up or down, zoom in or out, forward, or static?"
TIE_MARGIN = 0.02  # similarity gap under which a reader tie-break is requested
MVR_CONTENT_WEIGHT = 0.5  # weight of content similarity next to motion timing in multi-view reasoning
RID_IDENTITY_THRESHOLD = 0.5  # identity score (calibrated same-subject probability) for "same individual"
RID_SAME_THRESHOLD = 0.8  # content similarity for "same individual" when no moving subject was found


def _keep(calls: list[ToolCall | None]) -> list[ToolCall]:
    return [c for c in calls if c is not None]


def candidate_letters(ctx: PolicyContext) -> dict[str, str]:
    """letter -> candidate label, from the option texts; when options name no videos, the i-th
    option is taken to be the i-th candidate (stated rule)."""
    mapping = {letter: labels[0] for letter, labels in ctx.option_map.items() if len(labels) == 1}
    mapping = {k: v for k, v in mapping.items() if v in ctx.candidates or v == ctx.reference}
    if not mapping and len(ctx.letters) == len(ctx.candidates):
        mapping = dict(zip(ctx.letters, ctx.candidates))
    return mapping


def _argmax(scores: dict[str, float]) -> str | None:
    return max(scores, key=lambda k: (scores[k], -list(scores).index(k))) if scores else None


def _pick(ctx: PolicyContext, scores: dict[str, float], what: str) -> Decision:
    """The option whose candidate scores highest."""
    letters = candidate_letters(ctx)
    by_letter = {letter: scores[label] for letter, label in letters.items() if label in scores}
    best = _argmax(by_letter)
    if best is None:
        return None, f"no {what} evidence for any candidate"
    detail = ", ".join(f"{letters[k]}={v:.3f}" for k, v in by_letter.items())
    return best, f"highest {what}: {letters[best]} ({detail})"


# ----------------------------------------------------------------------------- similarity family

def _similarity_calls(ctx: PolicyContext, aspect: str) -> list[ToolCall]:
    return _keep([ctx.call("visual_similarity", video_a=ctx.reference, video_b=c, aspect=aspect)
                  for c in ctx.candidates])


def _similarities(ctx: PolicyContext, aspect: str) -> dict[str, float]:
    """Evidence key: visual_similarity data["score"] for (reference, candidate)."""
    out = {}
    for c in ctx.candidates:
        s = ctx.similarity(ctx.reference, c, aspect)
        if s is not None:
            out[c] = s
    return out


def _tie_break_calls(ctx: PolicyContext, aspect: str, query: str) -> list[ToolCall]:
    """Reader calls for the reference and the top two candidates when their similarities are
    within TIE_MARGIN of each other."""
    sims = _similarities(ctx, aspect)
    if len(sims) < 2 or len(sims) < len(ctx.candidates):
        return []
    top = sorted(sims, key=sims.get, reverse=True)[:2]
    if sims[top[0]] - sims[top[1]] > TIE_MARGIN:
        return []
    return _keep([ctx.call("video_reader", video=v, query=query) for v in [ctx.reference, *top]])


def _similarity_decision(ctx: PolicyContext, aspect: str, query: str, what: str) -> Decision:
    sims = _similarities(ctx, aspect)
    if sims and ctx.reader_answer(ctx.reference, query):
        ref = ctx.reader_answer(ctx.reference, query)
        top = sorted(sims, key=sims.get, reverse=True)[:2]
        if len(top) == 2 and sims[top[0]] - sims[top[1]] <= TIE_MARGIN:
            for c in top:  # tie-break: description overlap, scaled below the margin
                sims[c] += TIE_MARGIN * text_overlap(ref, ctx.reader_answer(c, query))
    return _pick(ctx, sims, what)


def plan_art(ctx: PolicyContext) -> list[ToolCall]:
    return _similarity_calls(ctx, "style") + _tie_break_calls(ctx, "style", STYLE_QUERY)


def decide_art(ctx: PolicyContext) -> Decision:
    """Style similarity to the reference; reader style descriptions break near-ties."""
    return _similarity_decision(ctx, "style", STYLE_QUERY, "style similarity")


def plan_vs(ctx: PolicyContext) -> list[ToolCall]:
    return _similarity_calls(ctx, "content") + _tie_break_calls(ctx, "content", SCENE_QUERY)


def decide_vs(ctx: PolicyContext) -> Decision:
    """Content similarity to the reference (near-duplicates score highest)."""
    return _similarity_decision(ctx, "content", SCENE_QUERY, "content similarity")


def plan_mvr(ctx: PolicyContext) -> list[ToolCall]:
    return _similarity_calls(ctx, "motion") + _similarity_calls(ctx, "content")


def decide_mvr(ctx: PolicyContext) -> Decision:
    """Same event, another camera or sensor: motion-timing similarity (synchronised recordings move
    at the same moments, whatever the viewpoint or modality) + MVR_CONTENT_WEIGHT x content
    similarity (same-sensor views also share what is shown)."""
    motion, content = _similarities(ctx, "motion"), _similarities(ctx, "content")
    scores = {c: motion.get(c, 0.0) + MVR_CONTENT_WEIGHT * content.get(c, 0.0)
              for c in ctx.candidates if c in motion or c in content}
    return _pick(ctx, scores, "same-event score (motion timing + content)")


# ----------------------------------------------------------------------------- action matching

#: motion vocabulary read from video_reader action descriptions (the motion-off path); appearance
#: words (colours, shapes) are deliberately absent: the actor may look different
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


def plan_am(ctx: PolicyContext) -> list[ToolCall]:
    """Motion analysis of every video; the reader's action description only without the motion tool."""
    if "motion_analyzer" in ctx.tools:
        return _keep([ctx.call("motion_analyzer", video=v) for v in ctx.labels])
    return _keep([ctx.call("video_reader", video=v, query=ACTION_QUERY) for v in ctx.labels])


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


def decide_am(ctx: PolicyContext) -> Decision:
    """The candidate whose main actor moves like the reference's (see :func:`action_scores`)."""
    ref_actor = main_actor(_objects(ctx, ctx.reference) or [])
    letter, why = _pick(ctx, action_scores(ctx), "action score (actor motion patterns)")
    actor = f"{ref_actor.get('color', '')} {ref_actor.get('label', '')} {sorted(_pattern_set(ref_actor))}" \
        if ref_actor else "none"
    return letter, f"reference actor {actor.strip()}; {why}"


# ----------------------------------------------------------------------------- re-identification

def _yes_no_letters(ctx: PolicyContext) -> tuple[str | None, str | None]:
    same = ctx.letter_by_keywords("same", "yes", "identical")
    diff = ctx.letter_by_keywords("different", "not the same", "no", "distinct")
    return same, diff


def _rid_pairs(ctx: PolicyContext) -> list[tuple[str, str]]:
    """(reference, candidate) pairs when options name candidates, else the first and last video."""
    if candidate_letters(ctx) and len(ctx.labels) > 2:
        return [(ctx.reference, c) for c in ctx.candidates]
    return [(ctx.labels[0], ctx.labels[-1])]


def _identity_undecided(ctx: PolicyContext, a: str, b: str) -> bool:
    """True when the identity comparison ran but found no moving subject in a clip (the backend
    reports identity_similarity None); then whole-clip content similarity is the fallback."""
    for x, y in ((a, b), (b, a)):
        d = ctx.latest("visual_similarity", x, video_a=x, video_b=y, aspect="identity")
        if d is not None:
            return "identity_similarity" in d and d["identity_similarity"] is None
    return False


def plan_rid(ctx: PolicyContext) -> list[ToolCall]:
    """Identity similarity of each pair; content similarity only where no subject was found."""
    calls = [ctx.call("visual_similarity", video_a=a, video_b=b, aspect="identity") for a, b in _rid_pairs(ctx)]
    calls += [ctx.call("visual_similarity", video_a=a, video_b=b, aspect="content")
              for a, b in _rid_pairs(ctx) if _identity_undecided(ctx, a, b)]
    return _keep(calls)


def _rid_score(ctx: PolicyContext, a: str, b: str) -> tuple[float | None, str, float]:
    """(score, aspect used, same/different threshold) for one pair."""
    if not _identity_undecided(ctx, a, b):
        s = ctx.similarity(a, b, "identity")
        if s is not None:
            return s, "identity", RID_IDENTITY_THRESHOLD
    return ctx.similarity(a, b, "content"), "content", RID_SAME_THRESHOLD


def decide_rid(ctx: PolicyContext) -> Decision:
    """Candidates named by the options: highest identity score. Yes/no form: same individual when
    the identity score (a calibrated same-subject probability) >= RID_IDENTITY_THRESHOLD; when no
    moving subject was found, content similarity >= RID_SAME_THRESHOLD."""
    if candidate_letters(ctx) and len(ctx.labels) > 2:
        scores = {c: s for c in ctx.candidates if (s := _rid_score(ctx, ctx.reference, c)[0]) is not None}
        return _pick(ctx, scores, "identity score")
    same, diff = _yes_no_letters(ctx)
    score, aspect, threshold = _rid_score(ctx, ctx.labels[0], ctx.labels[-1])
    if score is None or not (same and diff):
        return None, "no identity similarity evidence or options are not same/different"
    verdict = same if score >= threshold else diff
    return verdict, f"{aspect} score {score:.3f} {'>=' if verdict == same else '<'} threshold {threshold}"


# ----------------------------------------------------------------------------- counting

_REL = [("eq", r"\b(same number|as many|equal|same count|identical number)\b"),
        ("gt", r"\b(more|greater|larger|higher|most|exceeds?)\b"),
        ("lt", r"\b(fewer|less|smaller|lower|least)\b")]


def counting_target(question: str) -> str | None:
    """The object being counted, from phrases like "number of cups" or "how many people"."""
    q = question.lower()
    for pat in (r"number of ([a-z][a-z ]*?)(?= as\b| than\b| in\b| compared\b| does\b| is\b|[?.,;:]|$)",
                r"how many ([a-z][a-z ]*?)(?= are\b| does\b| do\b| in\b| appear\b| can\b|[?.,;:]|$)",
                r"(?:more|fewer|less|as many) ([a-z][a-z ]*?)(?= than\b| as\b| in\b|[?.,;:]|$)",
                r"count of ([a-z][a-z ]*?)(?= as\b| than\b| in\b|[?.,;:]|$)"):
        m = re.search(pat, q)
        if m:
            words = [w for w in m.group(1).split() if w not in ("the", "a", "an", "visible", "distinct")]
            if words:
                return singular(words[-1])
    return None


def counting_relation(question: str) -> str:
    """"eq", "gt" or "lt" (candidate versus reference); "eq" when the text states none."""
    q = question.lower()
    for rel, pat in _REL:
        if re.search(pat, q):
            return rel
    return "eq"


def count_query(target: str | None) -> str:
    return f"How many {target}s are visible? Answer with a number." if target else \
        "How many objects are visible? Answer with a number."


def plan_cnt(ctx: PolicyContext) -> list[ToolCall]:
    target = counting_target(ctx.question.question)
    q = target or ""
    calls: list[ToolCall | None] = []
    for v in [ctx.reference, *ctx.candidates]:
        calls += [ctx.call("scene_graph", video=v, query=q), ctx.call("object_tracker", video=v, query=q),
                  ctx.call("video_reader", video=v, query=count_query(target))]
    return _keep(calls)


def decide_cnt(ctx: PolicyContext) -> Decision:
    """Per-video count (verified fact, else median of scene_graph/object_tracker "counts" and the
    reader's number); then the relation: same -> closest count, more -> largest, fewer -> smallest."""
    target = counting_target(ctx.question.question)
    rel = counting_relation(ctx.question.question)
    ref = ctx.count(ctx.reference, target)
    counts = {c: ctx.count(c, target) for c in ctx.candidates}
    counts = {c: v for c, v in counts.items() if v is not None}
    if not counts:
        return None, "no counts for any candidate"
    if rel == "eq" and ref is not None:
        scores = {c: -abs(v - ref) for c, v in counts.items()}
    elif rel == "lt":
        scores = {c: -v for c, v in counts.items()}
    else:
        scores = dict(counts)
    letter, why = _pick(ctx, scores, f"count match ({rel})")
    return letter, f"target={target}, reference count={ref}, candidate counts={counts}; {why}"


# ----------------------------------------------------------------------------- spatial relation

_TREND_AXES = {"pan": "pan", "tilt": "tilt", "zoom": "zoom"}


def _camera(ctx: PolicyContext, video: str) -> tuple[set[str], list[float]]:
    """Evidence keys: motion_analyzer data["camera"]["trends"|"pan"|"tilt"|"zoom"]; without the
    motion tool, camera trends parsed from the video_reader's CAMERA_QUERY answer."""
    d = ctx.latest("motion_analyzer", video, next_video=None)
    if d and "camera" in d:
        cam = d["camera"]
        return set(cam.get("trends", [])), [float(cam.get(k, 0.0) or 0.0) for k in _TREND_AXES]
    trends = text_claims(ctx.reader_answer(video, CAMERA_QUERY))["motion"].get("camera", ())
    return set(trends), [0.0, 0.0, 0.0]


def plan_spr(ctx: PolicyContext) -> list[ToolCall]:
    if "motion_analyzer" in ctx.tools:
        return _keep([ctx.call("motion_analyzer", video=v) for v in ctx.labels])
    return _keep([ctx.call("video_reader", video=v, query=CAMERA_QUERY) for v in ctx.labels])


def decide_spr(ctx: PolicyContext) -> Decision:
    """Candidates sharing the most camera trends with the reference; ties by cosine of the
    (pan, tilt, zoom) vectors."""
    ref_t, ref_v = _camera(ctx, ctx.reference)
    scores = {}
    for c in ctx.candidates:
        t, v = _camera(ctx, c)
        norm = math.hypot(*ref_v) * math.hypot(*v)
        cos = sum(a * b for a, b in zip(ref_v, v)) / norm if norm else 0.0
        scores[c] = len(ref_t & t) + 0.1 * cos
    letter, why = _pick(ctx, scores, "shared camera trends")
    return letter, f"reference trends {sorted(ref_t)}; {why}"


# ----------------------------------------------------------------------------- sequence ordering

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


def plan_seq(ctx: PolicyContext) -> list[ToolCall]:
    if "motion_analyzer" in ctx.tools:
        return _keep([ctx.call("motion_analyzer", video=a, next_video=b) for a, b in _pairs(ctx)])
    unordered = list(dict.fromkeys(tuple(sorted(p)) for p in _pairs(ctx)))
    return _keep([ctx.call("visual_similarity", video_a=a, video_b=b, aspect="content") for a, b in unordered])


def _continuity(ctx: PolicyContext, a: str, b: str) -> float | None:
    """Evidence key: motion_analyzer data["continuity"]["score"] for a -> b; without the motion
    tool, visual_similarity data["score"] (symmetric)."""
    d = ctx.latest("motion_analyzer", a, next_video=b)
    if d and "continuity" in d:
        return float(d["continuity"].get("score", 0.0))
    return ctx.similarity(a, b, "content")


def decide_seq(ctx: PolicyContext) -> Decision:
    """The option order whose consecutive clips continue each other best (mean continuity)."""
    scores: dict[str, float] = {}
    for letter, seq in option_orders(ctx).items():
        vals = [_continuity(ctx, a, b) for a, b in zip(seq, seq[1:])]
        vals = [v for v in vals if v is not None]
        if vals:
            scores[letter] = sum(vals) / len(vals)
    if not scores:
        return None, "no continuity evidence for any option order"
    best = _argmax(scores)
    return best, "mean continuity per option: " + ", ".join(f"{k}={v:.3f}" for k, v in scores.items())


POLICIES: dict[str, tuple[Any, Any]] = {
    "CNT": (plan_cnt, decide_cnt), "AM": (plan_am, decide_am), "ART": (plan_art, decide_art),
    "RID": (plan_rid, decide_rid), "MVR": (plan_mvr, decide_mvr), "VS": (plan_vs, decide_vs),
    "SPR": (plan_spr, decide_spr), "SEQ": (plan_seq, decide_seq),
}
