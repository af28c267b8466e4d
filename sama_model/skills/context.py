"""What a scripted skill policy reads: the question's public text, the evidence memory, the
available tools; and helpers shared by the policies (label mapping, evidence look-ups).

Policies decide only from tool outputs (through :class:`PolicyContext`) and the question and
option text; they never see an answer or metadata because :class:`AgentQuestion` has none.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

from ..actions import ToolCall
from ..claims import singular, text_claims
from ..memory import EvidenceMemory
from ..question import AgentQuestion

_WORDS = re.compile(r"[a-z]+")
STOPWORDS = set("""a an the and or of in on at to from with by for is are was were be been being this that these
those it its there here which what who whom whose how when where why does do did has have had as into onto over under
video videos clip clips reference candidate option same one two three four describe shows show shown visible""".split())


def content_words(text: str) -> set[str]:
    return {singular(w) for w in _WORDS.findall(str(text).lower()) if w not in STOPWORDS and len(w) > 2}


def text_overlap(a: str, b: str) -> float:
    """Jaccard overlap of content words (0 when either side is empty)."""
    x, y = content_words(a), content_words(b)
    return len(x & y) / len(x | y) if x and y else 0.0


def _label_tokens(label: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9]+", label)


def mentions(text: str, labels: list[str]) -> list[str]:
    """Labels named in ``text`` in order of appearance: full labels ("Video B"), else a label's
    distinctive last token standing alone ("B", "2") when it is unique among the labels."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for label in sorted(labels, key=len, reverse=True):
        for m in re.finditer(rf"(?<![A-Za-z0-9]){re.escape(label)}(?![A-Za-z0-9])", text, re.I):
            if not any(a <= m.start() < b for a, b in taken):
                found.append((m.start(), label))
                taken.append((m.start(), m.end()))
    if not found:
        tails = {}
        for label in labels:
            toks = _label_tokens(label)
            if toks:
                tails.setdefault(toks[-1].lower(), []).append(label)
        for m in re.finditer(r"(?<![A-Za-z0-9])([A-Za-z0-9]+)(?![A-Za-z0-9])", text):
            tok = m.group(1)
            same = tails.get(tok.lower(), [])
            # a lone capital letter or a number only: "A" the article is ruled out by requiring
            # that the token is upper-case or numeric in the text
            if len(same) == 1 and (tok.isdigit() or (tok.isupper() and len(tok) <= 2)):
                found.append((m.start(), same[0]))
    return [label for _, label in sorted(found)]


def reference_label(labels: list[str]) -> str | None:
    for label in labels:
        if re.search(r"\bref(erence)?\b", label, re.I):
            return label
    return None


@dataclass
class PolicyContext:
    """A policy's view of one question."""

    question: AgentQuestion
    task: str
    task_source: str
    memory: EvidenceMemory
    tools: set[str]
    duration: Callable[[str], float]
    option_map: dict[str, list[str]] = field(default_factory=dict)  # letter -> labels the option names

    @property
    def labels(self) -> list[str]:
        return self.question.labels

    @property
    def reference(self) -> str:
        """The reference video: a label saying so, else the first video."""
        return reference_label(self.labels) or self.labels[0]

    @property
    def candidates(self) -> list[str]:
        return [label for label in self.labels if label != self.reference]

    @property
    def letters(self) -> list[str]:
        return list(self.question.options)

    # -- building calls ----------------------------------------------------------------------
    def call(self, tool: str, **args: Any) -> ToolCall | None:
        """A call to ``tool`` if it is switched on (policies skip None)."""
        return ToolCall(tool, args) if tool in self.tools else None

    # -- reading evidence --------------------------------------------------------------------
    def results(self, tool: str, video: str, shifted: bool = False, **match: Any) -> list[dict[str, Any]]:
        """Structured data of successful ``tool`` results about ``video`` whose arguments match: first readings, or
        with ``shifted`` only the second readings on shifted frames (``shift_frames``, asked for by a skill that
        weighs both)."""
        out = []
        for it in self.memory.items(video, tool):
            if bool(it.args.get("shift_frames")) == shifted and all(it.args.get(k) == v for k, v in match.items()):
                out.append(it.data)
        return out

    def latest(self, tool: str, video: str, shifted: bool = False, **match: Any) -> dict[str, Any] | None:
        found = self.results(tool, video, shifted, **match)
        return found[-1] if found else None

    def similarity_result(self, a: str, b: str, aspect: str = "content",
                          shifted: bool = False) -> dict[str, Any] | None:
        """The latest visual_similarity data with a score for the pair (either order); with ``shifted``, of its second
        reading on shifted frames."""
        for x, y in ((a, b), (b, a)):
            d = self.latest("visual_similarity", x, shifted, video_a=x, video_b=y, aspect=aspect)
            if d is not None and "score" in d:
                return d
        return None

    def similarity(self, a: str, b: str, aspect: str = "content") -> float | None:
        """Evidence key: visual_similarity data["score"] for the pair (either order)."""
        d = self.similarity_result(a, b, aspect)
        return float(d["score"]) if d is not None else None

    def reader_answer(self, video: str, query: str) -> str:
        """Evidence key: video_reader data["answer"] for this exact query."""
        d = self.latest("video_reader", video, query=query)
        return str(d.get("answer", "")) if d else ""

    def count(self, video: str, target: str | None) -> float | None:
        """The object count for ``video``: a verified fact first, else the median over scene_graph
        data["counts"], object_tracker data["counts"] and the video_reader's stated number."""
        subject = singular(target) if target else None
        if subject:
            fact = self.memory.fact(video, "count", subject)
            if fact is not None:
                return float(fact.value)
        values = []
        for tool in ("scene_graph", "object_tracker"):
            d = self.latest(tool, video)
            if d is not None:
                v = count_lookup(d.get("counts") or {}, subject)
                if v is not None:
                    values.append(v)
        d = self.latest("video_reader", video)
        if d is not None:
            v = reader_count(str(d.get("answer", "")), subject)
            if v is not None:
                values.append(v)
        return float(statistics.median(values)) if values else None

    # -- options -----------------------------------------------------------------------------
    def letter_for(self, label: str) -> str | None:
        """The option letter that names exactly this video."""
        hits = [k for k, v in self.option_map.items() if v == [label]]
        return hits[0] if len(hits) == 1 else None

    def letter_by_keywords(self, *words: str) -> str | None:
        """The single option whose text contains one of ``words``."""
        hits = [k for k, v in self.question.options.items()
                if any(re.search(rf"\b{re.escape(w)}", v, re.I) for w in words)]
        return hits[0] if len(hits) == 1 else None


def count_lookup(counts: dict[str, Any], subject: str | None) -> float | None:
    """A label's count: exact (singular) match, else a label containing the subject or vice versa,
    else the only label's count, else the total over all labels (subject unknown to the detector)."""
    norm = {}
    for k, v in counts.items():
        try:
            norm[singular(str(k))] = float(v)
        except (TypeError, ValueError):
            continue
    if not norm:
        return None
    if subject:
        if subject in norm:
            return norm[subject]
        part = [v for k, v in norm.items() if subject in k or k in subject]
        if part:
            return sum(part)
    if len(norm) == 1:
        return next(iter(norm.values()))
    return sum(norm.values())


def reader_count(answer: str, subject: str | None) -> float | None:
    """A number a reader's answer states for the subject, else its only number."""
    counts = text_claims(answer)["count"]
    if subject and subject in counts:
        return float(counts[subject])
    nums = re.findall(r"\b\d+\b", answer)
    if len(set(nums)) == 1:
        return float(nums[0])
    if len(counts) == 1:
        return float(next(iter(counts.values())))
    return None
