"""Evidence memory: validated evidence keyed by video label, distilled to a bounded length.

The paper's Evidence Aggregation: instead of an ever-growing transcript, the planner sees one
entry per video holding its verified facts and short distilled observations. Items keep their
structured ``data`` for scripted policies, but only the distilled text is shown to an LLM. With
aggregation off (ablation) the planner is shown the raw results, appended in call order.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from .tools.base import ToolResult

DEFAULT_ITEM_CHARS = 280
DEFAULT_ITEMS_PER_VIDEO = 12


def distill(text: str, limit: int = DEFAULT_ITEM_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters at a sentence or word boundary, marked with …"""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    for sep in (". ", "; ", ", ", " "):
        i = cut.rfind(sep)
        if i > limit // 2:
            cut = cut[: i + (1 if sep != " " else 0)]
            break
    return cut.rstrip() + "…"


@dataclass
class EvidenceItem:
    call_id: str
    tool: str
    args: dict[str, Any]
    text: str  # distilled
    data: dict[str, Any]  # structured result, for scripted policies; not shown to LLMs
    error: str | None
    iteration: int
    reread_of: str | None = None

    def summary(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "tool": self.tool, "text": self.text, "error": self.error,
                "iteration": self.iteration, **({"reread_of": self.reread_of} if self.reread_of else {})}


@dataclass
class Fact:
    """A verified value (from conflict resolution) that overrides individual tool claims."""

    attribute: str
    subject: str
    value: Any
    status: str  # "resolved" | "unresolved"
    detail: str

    def line(self) -> str:
        return f"verified {self.attribute}({self.subject}) = {self.value} [{self.status}: {self.detail}]"


@dataclass
class EvidenceMemory:
    labels: list[str]
    aggregate: bool = True
    item_chars: int = DEFAULT_ITEM_CHARS
    items_per_video: int = DEFAULT_ITEMS_PER_VIDEO
    _items: dict[str, list[EvidenceItem]] = field(default_factory=dict)
    _facts: dict[str, dict[tuple[str, str], Fact]] = field(default_factory=dict)
    raw: list[ToolResult | str] = field(default_factory=list)  # results and verification notes, in order
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for label in self.labels:
            self._items.setdefault(label, [])
            self._facts.setdefault(label, {})

    # -- writing -----------------------------------------------------------------------------
    def add(self, result: ToolResult, iteration: int, reread_of: str | None = None) -> None:
        text = f"ERROR {result.error}" if result.error else result.text
        args = {k: v for k, v in result.args.items() if v is not None}
        with self._lock:
            self.raw.append(result)
            for label in (result.videos or ["(question)"]):
                self._items.setdefault(label, []).append(EvidenceItem(
                    result.call_id, result.tool, args, distill(text, self.item_chars), result.data, result.error,
                    iteration, reread_of))

    def add_fact(self, label: str, attribute: str, subject: str, value: Any, status: str, detail: str) -> None:
        with self._lock:
            fact = Fact(attribute, subject, value, status, distill(detail, self.item_chars))
            self._facts.setdefault(label, {})[(attribute, subject)] = fact
            self.raw.append(f"{label}: {fact.line()}")

    # -- reading -----------------------------------------------------------------------------
    def items(self, label: str | None = None, tool: str | None = None, ok: bool = True) -> list[EvidenceItem]:
        with self._lock:
            pool = self._items.get(label, []) if label else [i for v in self._items.values() for i in v]
            seen, out = set(), []
            for it in pool:
                if (tool and it.tool != tool) or (ok and it.error) or it.call_id in seen:
                    continue
                seen.add(it.call_id)
                out.append(it)
            return out

    def fact(self, label: str, attribute: str, subject: str) -> Fact | None:
        with self._lock:
            return self._facts.get(label, {}).get((attribute, subject))

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {label: {"facts": [f.line() for f in self._facts.get(label, {}).values()],
                            "evidence": [i.summary() for i in self._items.get(label, [])]}
                    for label in self._items}

    def render(self) -> str:
        """What the planner sees: per video, its verified facts then its most recent observations."""
        with self._lock:
            lines = ["Evidence memory (per video):"]
            for label, items in self._items.items():
                facts = list(self._facts.get(label, {}).values())
                lines.append(f"[{label}]" + ("" if items or facts else " (no evidence yet)"))
                lines.extend(f"  * {f.line()}" for f in facts)
                shown = items[-self.items_per_video:]
                if len(items) > len(shown):
                    lines.append(f"  ({len(items) - len(shown)} earlier observations omitted)")
                lines.extend(f"  - {i.tool}: {i.text}" for i in shown)
            return "\n".join(lines)

    def render_raw(self) -> str:
        """The ablation view: every result in call order, with its full structured data."""
        with self._lock:
            lines = ["Raw evidence (in call order):"]
            for r in self.raw:
                if isinstance(r, str):
                    lines.append(f"- note: {r}")
                    continue
                body = f"ERROR {r.error}" if r.error else json.dumps(r.data, ensure_ascii=False, default=str)
                lines.append(f"- {r.tool}({json.dumps(r.args, default=str)}): {body}")
            return "\n".join(lines)

    def context(self) -> str:
        return self.render() if self.aggregate else self.render_raw()
