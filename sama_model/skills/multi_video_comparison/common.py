"""What every comparison solver shares: the option -> candidate mapping, picking the best-scoring
option, and the reference-versus-candidate similarity procedure (ART, VS, MVR).

Each task's solver lives in its own module (``art.py``, ``vs.py``, ...) with a
``plan(ctx) -> list[ToolCall]`` (the calls its decision needs; the planner drops calls already
made) and a ``decide(ctx) -> (letter | None, reason)`` that works on whatever evidence exists (so
a forced final answer is possible). ``policy.py`` registers them by task code.
"""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext, text_overlap
from ..rules import first_best, tie_mark

Decision = tuple[str | None, str]

TIE_MARGIN = 0.02  # similarity gap under which a reader tie-break is requested


def keep(calls: list[ToolCall | None]) -> list[ToolCall]:
    """The calls still to make (``ctx.call`` returns None for one already made)."""
    return [c for c in calls if c is not None]


def candidate_letters(ctx: PolicyContext) -> dict[str, str]:
    """letter -> candidate label, from the option texts; when options name no videos, the i-th
    option is taken to be the i-th candidate (stated rule)."""
    mapping = {letter: labels[0] for letter, labels in ctx.option_map.items() if len(labels) == 1}
    mapping = {k: v for k, v in mapping.items() if v in ctx.candidates or v == ctx.reference}
    if not mapping and len(ctx.letters) == len(ctx.candidates):
        mapping = dict(zip(ctx.letters, ctx.candidates))
    return mapping


#: what a decision's reason says when a small change of its evidence would change it (AM, MVR, ART, VS, SEQ: a
#: small lead, see :func:`small_lead` and :func:`lead_mark`; FD, in ``temporal_grounding/policy.py``: close
#: manipulation scores; CNT: one count off; RID: a score near its threshold; SPR: a shared trend read from a
#: rate near the trend threshold; DE, in ``subtitle/de.py``: a count comparison within one), so that a reader
#: of the trace, and ``benchmarks/compare_answers.py``, can tell the answers re-encoding is likely to move
FRAGILE = "fragile:"


#: a second reading's shift (decoded frames; the ``shift_frames`` argument of ``object_tracker`` and
#: ``visual_similarity``), asked for where a first reading is known to err as a whole now and then (CNT: where its
#: answer is fragile; RID: where the subjects were read from their stacks): the lite backends sample a window's frames
#: uniformly (the tracker 24 of a 3-s clip's 30), so one frame later reads frames between the first reading's, and the
#: mean of the two readings moves less with a re-encoding than either
SHIFT_FRAMES = 1


def marked_fragile(reason: str | None) -> bool:
    """Whether a decision's reason (a trace's final step) carries the :data:`FRAGILE` mark."""
    return FRAGILE in (reason or "")


def argmax(scores: dict[str, float]) -> str | None:
    """The highest-scoring key; the first one listed on a tie (scores within :data:`~..rules.TIE_EPS`): a stated rule,
    which :func:`pick` marks in its reason (:func:`~..rules.tie_mark`), so the answer is counted as a rule's."""
    return first_best(scores)


def small_lead(ctx: PolicyContext, scores: dict[str, float], margin: float) -> str:
    """``"; fragile: ..."`` when the best of the candidates :func:`pick` chooses from (those an option
    names) leads the next by less than ``margin``, naming both and the lead; else ``""``."""
    return lead_mark([c for c in candidate_letters(ctx).values() if c in scores], scores, margin)


def lead_mark(keys: list[str], scores: dict[str, float], margin: float) -> str:
    """:func:`small_lead` over the given keys of ``scores`` (candidates, or option letters where a task
    scores the options themselves, as SEQ does)."""
    ranked = sorted(keys, key=lambda c: -scores[c])  # stable: the first listed first on a tie, as pick/argmax
    if len(ranked) < 2 or scores[ranked[0]] - scores[ranked[1]] >= margin:
        return ""
    return (f"; {FRAGILE} {ranked[0]} leads {ranked[1]} by {scores[ranked[0]] - scores[ranked[1]]:.3f} < {margin} "
            "(re-encoding could flip this answer)")


def pick(ctx: PolicyContext, scores: dict[str, float], what: str) -> Decision:
    """The option whose candidate scores highest."""
    letters = candidate_letters(ctx)
    by_letter = {letter: scores[label] for letter, label in letters.items() if label in scores}
    best = argmax(by_letter)
    if best is None:
        return None, f"no {what} evidence for any candidate"
    detail = ", ".join(f"{letters[k]}={v:.3f}" for k, v in by_letter.items())
    return best, f"highest {what}: {letters[best]} ({detail})" + tie_mark(by_letter, what, lambda k: letters[k])


# ----------------------------------------------------------------------------- similarity family

def similarity_calls(ctx: PolicyContext, aspect: str) -> list[ToolCall]:
    """visual_similarity of the reference against every candidate under one aspect."""
    return keep([ctx.call("visual_similarity", video_a=ctx.reference, video_b=c, aspect=aspect)
                 for c in ctx.candidates])


def similarities(ctx: PolicyContext, aspect: str) -> dict[str, float]:
    """Evidence key: visual_similarity data["score"] for (reference, candidate)."""
    out = {}
    for c in ctx.candidates:
        s = ctx.similarity(ctx.reference, c, aspect)
        if s is not None:
            out[c] = s
    return out


def tie_break_calls(ctx: PolicyContext, aspect: str, query: str) -> list[ToolCall]:
    """Reader calls for the reference and the top two candidates when their similarities are
    within TIE_MARGIN of each other."""
    sims = similarities(ctx, aspect)
    if len(sims) < 2 or len(sims) < len(ctx.candidates):
        return []
    top = sorted(sims, key=sims.get, reverse=True)[:2]
    if sims[top[0]] - sims[top[1]] > TIE_MARGIN:
        return []
    return keep([ctx.call("video_reader", video=v, query=query) for v in [ctx.reference, *top]])


def similarity_decision(ctx: PolicyContext, aspect: str, query: str, what: str,
                        fragile_margin: float | None = None) -> Decision:
    """Highest similarity to the reference; reader descriptions break near-ties (their word
    overlap is scaled below TIE_MARGIN so it never overturns a clear similarity gap). With
    ``fragile_margin``, a lead under it (after the tie-break) is marked :data:`FRAGILE` (:func:`small_lead`)."""
    sims = similarities(ctx, aspect)
    if sims and ctx.reader_answer(ctx.reference, query):
        ref = ctx.reader_answer(ctx.reference, query)
        top = sorted(sims, key=sims.get, reverse=True)[:2]
        if len(top) == 2 and sims[top[0]] - sims[top[1]] <= TIE_MARGIN:
            for c in top:
                sims[c] += TIE_MARGIN * text_overlap(ref, ctx.reader_answer(c, query))
    letter, why = pick(ctx, sims, what)
    if letter is not None and fragile_margin is not None:
        why += small_lead(ctx, sims, fragile_margin)
    return letter, why
