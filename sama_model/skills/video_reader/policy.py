"""Scripted policy of the video reader skill: clear, self-contained descriptive queries; when the
first answer is empty or non-committal, scan the video chunk by chunk. Also the generic
procedure used when skills are switched off (ablation): the question itself asked of every
video, and a decision from text overlap only."""
from __future__ import annotations

import re

from ...actions import ToolCall
from ..context import PolicyContext, content_words, mentions, reference_label, text_overlap
from ..rules import first_best, tie_mark

Decision = tuple[str | None, str]

N_CHUNKS = 3  # chunks scanned when a whole-video answer is insufficient
_INSUFFICIENT = re.compile(r"^\s*$|\b(unknown|cannot|can't|unable|not sure|unclear)\b", re.I)


def chunk_windows(duration: float, n: int = N_CHUNKS) -> list[tuple[float, float]]:
    step = duration / n
    return [(round(i * step, 3), round((i + 1) * step, 3)) for i in range(n)]


def generic_query(ctx: PolicyContext) -> str:
    """Multiple choice: the question plus a request for the relevant description (compared with the
    options). Open-ended: the question itself, whose answer is the answer."""
    if ctx.question.open_ended:
        return ctx.question.question
    return f"{ctx.question.question} Describe what in this video is relevant to that question."


def read_with_scan(ctx: PolicyContext, video: str, query: str) -> list[ToolCall]:
    """The whole-video read; plus chunk reads once the whole-video answer proved insufficient."""
    calls = [ctx.call("video_reader", video=video, query=query)]
    d = ctx.latest("video_reader", video, query=query)
    if d is not None and _INSUFFICIENT.search(str(d.get("answer", ""))):
        calls += [ctx.call("video_reader", video=video, query=query, start=s, end=e)
                  for s, e in chunk_windows(float(ctx.duration(video)))]
    return [c for c in calls if c is not None]


_NEGATED = re.compile(r"\b(no|not|none|nothing|without|cannot|can't)\b", re.I)


def affirmed(text: str) -> str:
    """``text`` without its negated sentences ("No green square segmented in this video.")."""
    return " ".join(s for s in re.split(r"(?<=[.;!?])\s+", text) if not _NEGATED.search(s))


def evidence(ctx: PolicyContext, video: str, query: str) -> str:
    """Evidence key: video_reader data["answer"] for ``query`` (whole video and chunks)."""
    return " ".join(str(d.get("answer", "")) for d in ctx.results("video_reader", video, query=query))


def asked_videos(ctx: PolicyContext) -> list[str]:
    """The videos the evidence must come from: the one the question names when its options are
    not videos ("What is the background colour of Video 4? A. Orange ..."), else every video."""
    named = mentions(ctx.question.question, ctx.labels)
    if len(named) == 1 and not any(ctx.option_map.values()):
        return named
    return list(ctx.labels)


def plan_generic(ctx: PolicyContext) -> list[ToolCall]:
    q = generic_query(ctx)
    return [c for v in asked_videos(ctx) for c in read_with_scan(ctx, v, q)]


def decide_generic(ctx: PolicyContext) -> Decision:
    """With a reference and options naming candidates: the candidate described most like the
    reference. Otherwise the option whose text the descriptions overlap most."""
    from ..multi_video_comparison.common import candidate_letters

    q = generic_query(ctx)
    if ctx.question.open_ended:  # the reader's answers to the question, per video when there are several
        answers = [(v, " ".join(d.get("answer", "") for d in ctx.results("video_reader", v, query=q)[:1]).strip())
                   for v in asked_videos(ctx)]
        answers = [(v, a) for v, a in answers if a and not _INSUFFICIENT.search(a)]
        if not answers:
            return None, "the video reader gave no answer"
        text = answers[0][1] if len(answers) == 1 else "; ".join(f"{v}: {a}" for v, a in answers)
        return text, "the video reader's answer to the question"
    letters = candidate_letters(ctx)
    named = {k: v[0] for k, v in ctx.option_map.items() if len(v) == 1}
    every_option_names_one = len(named) == len(ctx.question.options) >= 2
    focus = asked_videos(ctx)
    if len(focus) < len(ctx.labels):  # the question is about one named video: its evidence against the options
        allt = " ".join(evidence(ctx, v, q) for v in focus)
        scores = {k: text_overlap(allt, t) for k, t in ctx.question.options.items()}
    elif letters and len(ctx.labels) > 2 and (reference_label(ctx.labels) or not every_option_names_one):
        ref = evidence(ctx, ctx.reference, q)
        scores = {k: text_overlap(ref, evidence(ctx, v, q)) for k, v in letters.items()}
    elif every_option_names_one and not reference_label(ctx.labels):
        # options name videos and none is a reference ("Which clip shows ...? A. Clip 1 B. Clip 2"):
        # the video whose description shares most with the question
        asked = content_words(ctx.question.question)
        scores = {k: len(asked & content_words(affirmed(evidence(ctx, v, q)))) / max(1, len(asked))
                  for k, v in named.items()}
    else:
        allt = " ".join(evidence(ctx, v, q) for v in ctx.labels)
        scores = {k: text_overlap(allt, t) for k, t in ctx.question.options.items()}
    if not scores or max(scores.values()) <= 0:
        return None, "descriptions do not discriminate the options"
    best = first_best(scores)
    return best, ("description overlap: " + ", ".join(f"{k}={v:.3f}" for k, v in scores.items())
                  + tie_mark(scores, "description overlap"))
