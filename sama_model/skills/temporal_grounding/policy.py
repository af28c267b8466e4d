"""Scripted policy of the temporal grounding skill, used for Forensic Detection: localise moments
of abrupt change with temporal_grounding, treat them as hints, verify each hinted span with
video_reader, and score each video's temporal/visual inconsistency."""
from __future__ import annotations

import re

from ...actions import ToolCall
from ..context import PolicyContext
from ..multi_video_comparison.common import FRAGILE
from ..rules import first_best, tie_mark

Decision = tuple[str | None, str]

CHANGE_QUERY = "abrupt visual change, flicker, warping or blending artifact"
ARTIFACT_QUERY = ("Are there visual artifacts such as blurry or warped face regions, flickering, blending "
                  "boundaries or inconsistent lighting? Describe them.")
ARTIFACT_WORDS = ("artifact", "artefact", "blur", "warp", "flicker", "blend", "distort", "inconsistent", "unnatural",
                  "glitch", "seam", "mismatch", "jitter", "smear", "morph")
NEGATION = re.compile(r"\b(no|not|without|none|never|nothing)\b")
SPAN_VERIFY_MIN_SCORE = 0.5  # grounding spans at least this confident are re-read by video_reader
BOUNDARY_WEIGHT = 1.0  # weight of boundaries per second in the inconsistency score
ARTIFACT_WEIGHT = 0.5  # weight of each affirmed artifact sentence
TIE_SCALE = 1e-3  # inconsistency, normalised to [0, 1], times this breaks manipulation-score ties
#: when the manipulation detector decides, an answer whose score is within this of the next video's is marked fragile
#: in its reason. Fitted on MVX-Synth seed 0 (the demo set, 20 FD questions) answered at CRF 20 and at CRF 30: 5 of
#: the 20 marked in either run (4 at CRF 20, 4 at CRF 30), holding the 2 answers that changed (gaps 0.085 and 0.091);
#: any margin from 0.10 to 0.18 marks the same 5 (0.2: 9). The inconsistency scores (no detector) are on another
#: scale and are not marked. Checked on seed 81 (never fitted, CRF 20 vs 30): 9 of 20 marked, holding 4 of 4 changes.
FD_FRAGILE_MARGIN = 0.15


def artifact_mentions(text: str) -> int:
    """Sentences that affirm an artifact (mention one and contain no negation)."""
    n = 0
    for sentence in re.split(r"[.!?;\n]+", text.lower()):
        if any(w in sentence for w in ARTIFACT_WORDS) and not NEGATION.search(sentence):
            n += 1
    return n


def video_letters(ctx: PolicyContext) -> dict[str, str]:
    """letter -> video named by the option; else options follow the video order (stated rule)."""
    mapping = {k: v[0] for k, v in ctx.option_map.items() if len(v) == 1}
    if not mapping and len(ctx.letters) == len(ctx.labels):
        mapping = dict(zip(ctx.letters, ctx.labels))
    return mapping


def _top_span(ctx: PolicyContext, video: str) -> dict | None:
    d = ctx.latest("temporal_grounding", video, query=CHANGE_QUERY)
    spans = (d or {}).get("spans") or []
    return spans[0] if spans and float(spans[0].get("score", 0)) >= SPAN_VERIFY_MIN_SCORE else None


def plan_fd(ctx: PolicyContext) -> list[ToolCall]:
    calls = []
    for v in ctx.labels:
        calls += [ctx.call("temporal_grounding", video=v, query=CHANGE_QUERY),
                  ctx.call("video_reader", video=v, query=ARTIFACT_QUERY), ctx.call("manipulation_detector", video=v)]
        span = _top_span(ctx, v)
        if span is not None:  # hints must be verified by the reader
            calls.append(ctx.call("video_reader", video=v, query=ARTIFACT_QUERY, start=float(span["start"]),
                                  end=float(span["end"])))
    return [c for c in calls if c is not None]


def inconsistency(ctx: PolicyContext, video: str) -> float:
    """Evidence keys: temporal_grounding data["boundaries"] (per second of video) and the
    video_reader data["answer"] artifact sentences (whole video and verified spans)."""
    d = ctx.latest("temporal_grounding", video, query=CHANGE_QUERY) or {}
    duration = max(float(ctx.duration(video)), 1e-3)
    score = BOUNDARY_WEIGHT * len(d.get("boundaries") or []) / duration
    for r in ctx.results("video_reader", video, query=ARTIFACT_QUERY):
        score += ARTIFACT_WEIGHT * artifact_mentions(str(r.get("answer", "")))
    return score


def manipulation_score(ctx: PolicyContext, video: str) -> float | None:
    """Evidence key: manipulation_detector data["score"] (whole video); None without one."""
    d = ctx.latest("manipulation_detector", video)
    return float(d["score"]) if d and d.get("score") is not None else None


def decide_fd(ctx: PolicyContext) -> Decision:
    """The video with the most inconsistency evidence is the manipulated one (the least, when the
    question asks for the real video). When the manipulation detector scores every
    video, that score decides and the grounding/reader inconsistency only breaks exact ties
    (scaled under one unit: the two scores have different scales). Ties go to the first video
    (a stated rule: marked in the reason, :func:`~..rules.tie_mark`, and counted as a rule answer)."""
    letters = video_letters(ctx)
    if not letters:
        return None, "options do not identify the videos"
    scores = {k: inconsistency(ctx, v) for k, v in letters.items()}
    manip = {k: manipulation_score(ctx, v) for k, v in letters.items()}
    if all(v is not None for v in manip.values()):
        top = max(scores.values()) or 1.0
        scores = {k: float(manip[k]) + TIE_SCALE * scores[k] / top for k in scores}
    wants_real = bool(re.search(r"\b(real|authentic|genuine|original|unmanipulated|not (been )?manipulated)\b",
                                ctx.question.question, re.I))
    order = list(scores)
    pick = first_best(scores, highest=not wants_real)
    detail = ", ".join(f"{letters[k]}={v:.3f}" for k, v in scores.items())
    decided_by_detector = all(v is not None for v in manip.values())
    kind = "manipulation scores" if decided_by_detector else "inconsistency scores"
    why = f"{kind} {detail}; asked for the {'real' if wants_real else 'manipulated'} video"
    if decided_by_detector and len(order) > 1:  # the runner-up: the other score nearest the chosen one
        runner = min((k for k in order if k != pick), key=lambda k: abs(scores[k] - scores[pick]))
        gap = abs(scores[pick] - scores[runner])
        if gap < FD_FRAGILE_MARGIN:
            why += (f"; {FRAGILE} the manipulation scores of {letters[pick]} and {letters[runner]} differ by "
                    f"{gap:.3f} < {FD_FRAGILE_MARGIN} (re-encoding could flip this answer)")
    return pick, why + tie_mark(scores, kind[:-1], lambda k: letters[k], highest=not wants_real)
