"""Scripted policies of the subtitle skill, for the reasoning tasks with text (DE, CR): subtitles
are primary evidence (retrieved by relevance, extracted by range), video_reader descriptions
complete them; decisions compare the evidence text with the hypothesis or answer options."""
from __future__ import annotations

import re

from ...actions import ToolCall
from ..context import PolicyContext, mentions, text_overlap

Decision = tuple[str | None, str]

EVENT_QUERY = "Describe what happens in this video: who is present, what they do, and the outcome."
CONTRADICTION = re.compile(r"\b(not|no|never|instead|stops?|fails?|refuses?|without|unable|empty|nobody|nothing)\b")


def _evidence_text(ctx: PolicyContext, video: str) -> str:
    """Evidence keys: video_reader data["answer"] (EVENT_QUERY), subtitle_retriever data["text"]
    (extract) and data["hits"][].text (retrieve)."""
    parts = [ctx.reader_answer(video, EVENT_QUERY)]
    for d in ctx.results("subtitle_retriever", video):
        parts.append(str(d.get("text", "")))
        parts += [str(h.get("text", "")) for h in d.get("hits", [])]
    return " ".join(p for p in parts if p)


def _read_calls(ctx: PolicyContext, videos: list[str], query: str | None = None) -> list[ToolCall]:
    calls = []
    for v in videos:
        calls += [ctx.call("subtitle_retriever", video=v, mode="extract"), ctx.call("video_reader", video=v, query=EVENT_QUERY)]
        if query:
            calls.append(ctx.call("subtitle_retriever", video=v, mode="retrieve", query=query))
    return [c for c in calls if c is not None]


# ----------------------------------------------------------------------------- defeasible entailment

def de_roles(ctx: PolicyContext) -> tuple[str, str]:
    """(premise, update) videos: labels saying so, else the first and the last video."""
    premise = next((v for v in ctx.labels if re.search(r"premise", v, re.I)), ctx.labels[0])
    update = next((v for v in ctx.labels if re.search(r"update|new", v, re.I)), ctx.labels[-1])
    return premise, update


def hypothesis_text(question: str) -> str:
    m = re.search(r"hypothesis\s*[:\-]\s*[\"“]?(.+?)[\"”]?(?:\n|$)", question, re.I)
    if m:
        return m.group(1).strip()
    m = re.search(r"[\"“](.+?)[\"”]", question)
    return m.group(1).strip() if m else question


def plan_de(ctx: PolicyContext) -> list[ToolCall]:
    premise, update = de_roles(ctx)
    return _read_calls(ctx, [premise, update], hypothesis_text(ctx.question.question))


def decide_de(ctx: PolicyContext) -> Decision:
    """Strengthens when the update's evidence overlaps the hypothesis at least as much as the
    premise's and states no contradiction cue; otherwise weakens. No evidence: strengthens
    (stated rule)."""
    premise, update = de_roles(ctx)
    hyp = hypothesis_text(ctx.question.question)
    up_text, pre_text = _evidence_text(ctx, update), _evidence_text(ctx, premise)
    strengthen = ctx.letter_by_keywords("strengthen", "support", "more likely")
    weaken = ctx.letter_by_keywords("weaken", "undermine", "less likely", "contradict")
    if not (strengthen and weaken):
        return None, "options are not strengthen/weaken"
    support, base = text_overlap(up_text, hyp), text_overlap(pre_text, hyp)
    cues = len(CONTRADICTION.findall(up_text.lower())) - len(CONTRADICTION.findall(hyp.lower()))
    if not up_text:
        return strengthen, "no update evidence; rule: strengthens"
    verdict = strengthen if support >= base and cues <= 0 else weaken
    return verdict, f"hypothesis overlap update={support:.3f} premise={base:.3f}, contradiction cues={cues}"


# ----------------------------------------------------------------------------- counterfactual reasoning

_OPT = re.compile(r"(?:option\s*)?\(?([12])\)?\s*[:.)]\s*(.+?)(?=(?:option\s*)?\(?[12]\)?\s*[:.)]|$)", re.I | re.S)


def cr_options(ctx: PolicyContext) -> dict[str, list[str]]:
    """Each video's own two answer options, from the question text segment that names it."""
    text = ctx.question.question
    spans = []
    for label in ctx.labels:
        m = re.search(re.escape(label), text, re.I)
        if m:
            spans.append((m.start(), label))
    spans.sort()
    out = {}
    for i, (pos, label) in enumerate(spans):
        seg = text[pos: spans[i + 1][0] if i + 1 < len(spans) else len(text)]
        opts = {k: v.strip() for k, v in _OPT.findall(seg)}
        if "1" in opts and "2" in opts:
            out[label] = [opts["1"], opts["2"]]
    return out


def plan_cr(ctx: PolicyContext) -> list[ToolCall]:
    return _read_calls(ctx, ctx.labels)


def decide_cr(ctx: PolicyContext) -> Decision:
    """Predict each video's option index as the option its evidence text overlaps most; pick the
    candidate whose index equals the reference's. Fallback (no parsed options or no match): the
    candidate whose evidence overlaps the reference's most (stated rule)."""
    from ..multi_video_comparison.policy import candidate_letters

    letters = candidate_letters(ctx)
    if not letters:
        return None, "options do not identify the candidates"
    opts = cr_options(ctx)
    evidence = {v: _evidence_text(ctx, v) for v in ctx.labels}
    pred = {v: max((0, 1), key=lambda i: (text_overlap(evidence[v], opts[v][i]), -i)) for v in opts}
    ref = pred.get(ctx.reference)
    if ref is not None:
        matches = [k for k, v in letters.items() if pred.get(v) == ref]
        if len(matches) >= 1:
            return matches[0], f"reference option index {ref + 1}; predicted indices {pred}"
    best = max(letters, key=lambda k: text_overlap(evidence[ctx.reference], evidence.get(letters[k], "")))
    return best, f"fallback: most similar evidence to the reference (predicted indices {pred})"


__all__ = ["plan_de", "decide_de", "plan_cr", "decide_cr", "mentions"]
