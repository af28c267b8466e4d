"""CNT (counting): which candidate holds the same / more / fewer of the counted object than the
reference."""
from __future__ import annotations

import re

from ...actions import ToolCall
from ...claims import singular
from ..context import PolicyContext
from .common import Decision, keep, pick

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


def plan(ctx: PolicyContext) -> list[ToolCall]:
    target = counting_target(ctx.question.question)
    q = target or ""
    calls: list[ToolCall | None] = []
    for v in [ctx.reference, *ctx.candidates]:
        calls += [ctx.call("scene_graph", video=v, query=q), ctx.call("object_tracker", video=v, query=q),
                  ctx.call("video_reader", video=v, query=count_query(target))]
    return keep(calls)


def decide(ctx: PolicyContext) -> Decision:
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
    letter, why = pick(ctx, scores, f"count match ({rel})")
    return letter, f"target={target}, reference count={ref}, candidate counts={counts}; {why}"
