"""RID (re-identification): is it the same individual, or which candidate shows the reference's
individual."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext
from .common import FRAGILE, SHIFT_FRAMES, Decision, candidate_letters, keep, pick

RID_IDENTITY_THRESHOLD = 0.5  # identity score (calibrated same-subject probability) for "same individual"
RID_SAME_THRESHOLD = 0.8  # content similarity for "same individual" when no moving subject was found
#: a yes/no verdict whose score lies this close to its threshold is marked "near the threshold" in the
#: trace, so a reader sees which verdicts a codec could flip. Measured on the real-footage composite
#: seed 1 (12 RID pairs, the same frames at CRF 20 and 30): the identity score moved by 0.085 on average
#: and by at most 0.23 between the two encodings; 10 of the 12 moves were under 0.15.
RID_NEAR_MARGIN = 0.15


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


def plan(ctx: PolicyContext) -> list[ToolCall]:
    """Identity similarity of each pair; content similarity only where no subject was found; a second identity
    reading on shifted frames of each pair whose first read the subjects from their stacks
    (:func:`read_from_stacks`)."""
    calls = [ctx.call("visual_similarity", video_a=a, video_b=b, aspect="identity") for a, b in _rid_pairs(ctx)]
    calls += [ctx.call("visual_similarity", video_a=a, video_b=b, aspect="content")
              for a, b in _rid_pairs(ctx) if _identity_undecided(ctx, a, b)]
    calls += [ctx.call("visual_similarity", video_a=a, video_b=b, aspect="identity", shift_frames=SHIFT_FRAMES)
              for a, b in _rid_pairs(ctx) if read_from_stacks(ctx, a, b)]
    return keep(calls)


def read_from_stacks(ctx: PolicyContext, a: str, b: str) -> bool:
    """Whether the pair's first identity reading compared the subjects' views read from their aligned stacks (the lite
    backend under a moving camera: its data's ``stack_texture``); such a pair is read a second time on frames shifted by
    :data:`~.common.SHIFT_FRAMES` and scored by the mean of the two readings.

    Why every such pair, not only those near the threshold: a stack reading fails now and then as a whole (the
    follower takes another mover for the subject, or the cut drops a part) and which reading fails changes with the
    codec, so a verdict flips from far on one side (a pair read 0.95 at CRF 20 and 0.22 at CRF 30). Replayed on the
    real-footage composite's RID pairs read the stack way (the two readings' stack scores averaged; right at CRF 20 /
    30, verdicts changed by CRF 30): chosen on seeds 98-115 (256 pairs): one reading 249 / 242, 9 -> two 249 / 243, 6
    (three: 248 / 243, 5); checked on seeds 116-121 (112 pairs): 107 / 103, 6 -> 107 / 106, 3 (three: 105 / 105, 4).
    Reading again only the verdicts within 0.1-0.3 of the threshold did not help (116-121: 5-6 changed), and doing so
    for every aspect moved MVX-Synth's RID (seed 0, 40 questions: 28 -> 27 right; its still cameras read no stack, so
    this rule never reads it again). The second reading is its own tool call, so each call stays one reading's cost."""
    d = ctx.similarity_result(a, b, "identity")
    return d is not None and d.get("stack_texture") is not None


def _second_score(ctx: PolicyContext, a: str, b: str) -> float | None:
    """The pair's second identity score on shifted frames (either order); None when not read or when that reading
    found no moving subject in a clip."""
    d = ctx.similarity_result(a, b, "identity", shifted=True)
    return None if d is None or ("identity_similarity" in d and d["identity_similarity"] is None) else float(d["score"])


def _rid_score(ctx: PolicyContext, a: str, b: str) -> tuple[float | None, str, float]:
    """(score, aspect used, same/different threshold) for one pair: the identity score, or the mean of its two
    readings where the second was read and found the subject (aspect ``"identity (two readings)"``)."""
    if not _identity_undecided(ctx, a, b):
        s = ctx.similarity(a, b, "identity")
        if s is not None:
            second = _second_score(ctx, a, b)
            if second is not None:
                return (s + second) / 2, "identity (two readings)", RID_IDENTITY_THRESHOLD
            return s, "identity", RID_IDENTITY_THRESHOLD
    return ctx.similarity(a, b, "content"), "content", RID_SAME_THRESHOLD


def _gate_score(ctx: PolicyContext, a: str, b: str) -> float | None:
    """The identity score on the other side of the still-and-moving camera gate, when the pair lies near it
    (``gate_score``, see :func:`sama_model.backends.lite.identity.compare.near_gate`); None otherwise."""
    d = ctx.similarity_result(a, b, "identity")
    return float(d["gate_score"]) if d is not None and d.get("gate_score") is not None else None


def decide(ctx: PolicyContext) -> Decision:
    """Candidates named by the options: highest identity score. Yes/no form: same individual when
    the identity score (a calibrated same-subject probability) >= RID_IDENTITY_THRESHOLD; when no
    moving subject was found, content similarity >= RID_SAME_THRESHOLD."""
    if candidate_letters(ctx) and len(ctx.labels) > 2:
        scores = {c: s for c in ctx.candidates if (s := _rid_score(ctx, ctx.reference, c)[0]) is not None}
        return pick(ctx, scores, "identity score")
    same, diff = _yes_no_letters(ctx)
    score, aspect, threshold = _rid_score(ctx, ctx.labels[0], ctx.labels[-1])
    if score is None or not (same and diff):
        return None, "no identity similarity evidence or options are not same/different"
    verdict = same if score >= threshold else diff
    reason = f"{aspect} score {score:.3f} {'>=' if verdict == same else '<'} threshold {threshold}"
    if abs(score - threshold) < RID_NEAR_MARGIN:
        reason += f"; {FRAGILE} near the threshold (within {RID_NEAR_MARGIN}): re-encoding could flip this verdict"
    elif aspect.startswith("identity") and (gate := _gate_score(ctx, ctx.labels[0], ctx.labels[-1])) is not None \
            and (gate >= threshold) != (score >= threshold):
        reason += (f"; {FRAGILE} a camera reads near the still-and-moving gate and the score on its other side "
                   f"({gate:.3f}) gives the other verdict: re-encoding could flip this verdict")
    return verdict, reason
