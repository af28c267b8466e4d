"""CR (counterfactual reasoning): whose counterfactual answer has the reference's option number.

Every video comes with its own counterfactual question and two numbered options. The reader is
asked each video's own question with its options; a video's option is known when the reader's
answer names it ("Option 2", or opens with one option's first word: "No, ..."), else when the
subtitles and the reader's answer share strictly more words with one option than with the other.
The decision needs the reference's option: the one candidate whose option matches it, or, when
every other candidate is known to differ, the one left. Otherwise the policy abstains and says
why (the agent's first-option rule then answers and is counted as such): no option is ever taken
by default.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...actions import ToolCall
from ..context import PolicyContext, text_overlap
from ..multi_video_comparison.common import candidate_letters
from .evidence import EVENT_QUERY

Decision = tuple[str | None, str]

_OPT = re.compile(r"(?:option\s*)?\(?([12])\)?\s*[:.)]\s*(.+?)(?=(?:option\s*)?\(?[12]\)?\s*[:.)]|\n|$)", re.I | re.S)


@dataclass(frozen=True)
class CrItem:
    """One video's counterfactual question and its two options (option 1 first)."""

    question: str
    options: tuple[str, str]


def _entry_start(text: str, label: str) -> re.Match[str] | None:
    """Where a video's entry starts: its label followed by a colon, else the label as a whole
    word (never inside another word: "Video B" does not match "video below")."""
    esc = re.escape(label)
    return (re.search(rf"(?<![A-Za-z0-9]){esc}\s*:", text, re.I)
            or re.search(rf"(?<![A-Za-z0-9]){esc}(?![A-Za-z0-9])", text, re.I))


def cr_items(ctx: PolicyContext) -> dict[str, CrItem]:
    """Each video's own question and two options, from the part of the question text that names
    it (up to the next video's entry; an option's text ends at a line break)."""
    text = ctx.question.question
    starts = sorted((m.start(), m.end(), label) for label in ctx.labels if (m := _entry_start(text, label)))
    out = {}
    for i, (_, end, label) in enumerate(starts):
        seg = text[end: starts[i + 1][0] if i + 1 < len(starts) else len(text)]
        opts: dict[str, str] = {}
        first = None
        for m in _OPT.finditer(seg):
            opts.setdefault(m.group(1), m.group(2).strip().rstrip("."))
            first = m.start() if first is None else first
        if "1" in opts and "2" in opts:
            out[label] = CrItem(seg[:first].strip(" :\n"), (opts["1"], opts["2"]))
    return out


def cr_options(ctx: PolicyContext) -> dict[str, list[str]]:
    """Each video's two options (option 1 first)."""
    return {v: list(item.options) for v, item in cr_items(ctx).items()}


def reader_query(item: CrItem | None) -> str:
    """The question put to the reader for one video: its own counterfactual question and options."""
    if item is None or not item.question:
        return EVENT_QUERY
    return (f"{item.question} Option 1: {item.options[0]}. Option 2: {item.options[1]}. "
            "Which option is correct? Say what the video shows that decides it.")


def _first_word(text: str) -> str:
    m = re.match(r"\s*([A-Za-z]+)", text)
    return m.group(1).lower() if m else ""


def named_option(answer: str, options: tuple[str, str]) -> int | None:
    """The option (0 or 1) an answer names: "option 2", or an opening word that is one option's
    first word and stands alone ("No, ..." but not "No circle found")."""
    low = answer.lower()
    named = {i for i in (0, 1) if re.search(rf"\boption\s*\(?{i + 1}\b", low)}
    if len(named) == 1:
        return named.pop()
    heads = [_first_word(o) for o in options]
    m = re.match(r"\s*([a-z]+)\s*(?:[,.;:!]|$)", low)
    if m and heads[0] != heads[1] and m.group(1) in heads:
        return heads.index(m.group(1))
    return None


def _evidence(ctx: PolicyContext, video: str, item: CrItem) -> tuple[str, str]:
    """(the reader's answer to the video's own question, all evidence text: that answer plus the
    video's subtitles). Evidence keys: video_reader data["answer"], subtitle_retriever data["text"]
    and data["hits"][].text."""
    answer = ctx.reader_answer(video, reader_query(item))
    parts = [answer]
    for d in ctx.results("subtitle_retriever", video):
        parts.append(str(d.get("text", "")))
        parts += [str(h.get("text", "")) for h in d.get("hits", [])]
    return answer, " ".join(p for p in parts if p)


def predicted_option(ctx: PolicyContext, video: str, item: CrItem) -> tuple[int | None, str]:
    """(0 or 1, how it was read) or (None, why not) for one video."""
    answer, text = _evidence(ctx, video, item)
    named = named_option(answer, item.options)
    if named is not None:
        return named, "reader names it"
    o1, o2 = (text_overlap(text, o) for o in item.options)
    if o1 != o2:
        return (0 if o1 > o2 else 1), f"word overlap {o1:.2f} vs {o2:.2f}"
    return None, "evidence does not tell the options apart"


def plan(ctx: PolicyContext) -> list[ToolCall]:
    """Each video's subtitles, and the reader asked that video's own question with its options."""
    items = cr_items(ctx)
    calls = []
    for v in ctx.labels:
        calls += [ctx.call("subtitle_retriever", video=v, mode="extract"),
                  ctx.call("video_reader", video=v, query=reader_query(items.get(v)))]
    return [c for c in calls if c is not None]


def decide(ctx: PolicyContext) -> Decision:
    """The candidate whose option number is the reference's (see the module docstring); None
    (an explicit abstention, with the reason) when the evidence does not settle it."""
    letters = candidate_letters(ctx)
    if not letters:
        return None, "options do not identify the candidates"
    items = cr_items(ctx)
    read = {v: predicted_option(ctx, v, item) for v, item in items.items()}
    pred = {v: idx for v, (idx, _) in read.items()}
    shown = "; ".join(f"{v}: {'?' if i is None else i + 1} ({how})" for v, (i, how) in read.items())
    ref = pred.get(ctx.reference)
    if ctx.reference not in items:
        return None, "abstain: the reference's own options were not found in the question"
    if ref is None:
        return None, f"abstain: no evidence tells the reference's option ({shown})"
    same = [k for k, v in letters.items() if pred.get(v) == ref]
    if len(same) == 1:
        return same[0], f"reference option {ref + 1}; {shown}"
    unknown = [k for k, v in letters.items() if pred.get(v) is None]
    if not same and len(unknown) == 1:
        return unknown[0], f"reference option {ref + 1}; every other candidate differs; {shown}"
    return None, f"abstain: {len(same)} candidates match option {ref + 1}, {len(unknown)} unknown ({shown})"
