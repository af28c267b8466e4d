"""Conflict detection across tools and adaptive re-reading (the paper's Verification Layer).

After each step the new tool results' claims (counts, colours, presence, camera motion) are
compared with every earlier claim about the same video, attribute and subject from a *different*
tool whose time window overlaps. A disagreement is a conflict: the tools involved are re-run on
a narrower window (around where the detector saw the subject, else the central half, halving
again each round) with denser frames, until their latest values agree or the round budget is
spent. An unresolved conflict falls back to a stated priority (detectors over the VLM for
counts, colours and presence; the motion analyser for camera motion). Every conflict, re-read
and resolution is recorded.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from .actions import ToolCall
from .claims import Claim, result_claims
from .tools.base import ToolResult

#: which tool wins an unresolved conflict, per attribute (first available wins)
PRIORITY: dict[str, tuple[str, ...]] = {
    "count": ("scene_graph", "object_tracker", "video_reader"),
    "color": ("scene_graph", "video_reader"),
    "presence": ("scene_graph", "object_tracker", "video_reader"),
    "motion": ("motion_analyzer", "video_reader"),
}
REREADABLE = {"video_reader", "scene_graph", "object_tracker", "motion_analyzer"}
DENSE_ARGS = {"video_reader", "scene_graph"}  # tools with an n_frames argument
MAX_FRAMES = 64


def _overlap(a: tuple, b: tuple) -> bool:
    a0, a1 = (float("-inf") if a[0] is None else a[0]), (float("inf") if a[1] is None else a[1])
    b0, b1 = (float("-inf") if b[0] is None else b[0]), (float("inf") if b[1] is None else b[1])
    return a0 <= b1 and b0 <= a1


def agree(attribute: str, x: Any, y: Any) -> bool:
    """Whether two values of an attribute are consistent (camera trends: sharing one trend)."""
    if attribute == "motion":
        return bool(set(x) & set(y))
    return x == y


@dataclass
class Conflict:
    id: str
    video: str
    attribute: str
    subject: str
    claims: dict[str, Claim]  # tool -> its latest claim
    iteration: int
    rounds: list[dict[str, Any]] = field(default_factory=list)
    status: str = "open"
    resolution: Any = None
    rule: str = ""
    initial: dict[str, Any] = field(default_factory=dict)  # tool -> value as detected, before re-reads
    initial_window: list[float | None] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.video, self.attribute, self.subject)

    def values(self) -> dict[str, Any]:
        return {t: _plain(c.value) for t, c in self.claims.items()}

    def window(self) -> list[float | None]:
        """The window the conflicting claims were made on (before any re-read)."""
        if self.initial_window:
            return list(self.initial_window)
        c = next(iter(self.claims.values()))
        return list(c.window)

    def detail(self) -> str:
        first = ", ".join(f"{t} said {v}" for t, v in (self.initial or self.values()).items())
        rr = "; ".join(f"re-read {r['window'][0]:g}-{r['window'][1]:g}s x{r['n_frames']} frames -> {r['values']}"
                       for r in self.rounds)
        return f"{first}" + (f"; {rr}" if rr else "") + f"; {self.rule}"


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


class Verifier:
    """Keeps every claim of a question and turns disagreements into resolved conflicts."""

    def __init__(self, duration_of: Callable[[str], float], rounds: int = 2, max_conflicts: int = 8) -> None:
        self.duration_of = duration_of
        self.rounds = max(0, int(rounds))
        self.max_conflicts = max_conflicts
        self.claims: list[Claim] = []
        self.results: dict[str, ToolResult] = {}
        self.conflicts: list[Conflict] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def observe(self, results: list[ToolResult]) -> None:
        """Record results without checking them (used for re-read results)."""
        for r in results:
            self.results[r.call_id] = r
            self.claims.extend(result_claims(r))

    def detect(self, results: list[ToolResult], iteration: int) -> list[Conflict]:
        """New conflicts raised by ``results`` against everything seen so far."""
        settled = {c.key for c in self.conflicts}
        found: dict[tuple, Conflict] = {}
        before = list(self.claims)
        self.observe(results)
        new = [c for r in results for c in result_claims(r)]
        for c in new:
            key = (c.video, c.attribute, c.subject)
            if key in settled or len(self.conflicts) + len(found) >= self.max_conflicts and key not in found:
                continue
            others = [o for o in before + new if o is not c and o.tool != c.tool and
                      (o.video, o.attribute, o.subject) == key and _overlap(o.window, c.window)]
            clash = [o for o in others if not agree(c.attribute, o.value, c.value)]
            if not clash:
                continue
            conflict = found.get(key)
            if conflict is None:
                conflict = found[key] = Conflict(f"c{next(self._ids)}", c.video, c.attribute, c.subject, {}, iteration)
            for o in clash + [c]:
                prev = conflict.claims.get(o.tool)
                if prev is None or o in new:
                    conflict.claims[o.tool] = o
        # a presence clash is the same disagreement as a count clash on that subject
        for key in [k for k in found if k[1] == "presence" and (k[0], "count", k[2]) in found]:
            del found[key]
        for conflict in found.values():
            conflict.initial = conflict.values()
            conflict.initial_window = conflict.window()
        self.conflicts.extend(found.values())
        return list(found.values())

    # -- adaptive re-reading -----------------------------------------------------------------
    def _hint_times(self, conflict: Conflict) -> list[float]:
        times: list[float] = []
        for claim in conflict.claims.values():
            data = self.results[claim.call_id].data
            if claim.tool == "scene_graph":
                times += [float(f["t"]) for f in data.get("frames", [])
                          if any(_same(o.get("label"), conflict.subject) for o in f.get("objects", []))]
            elif claim.tool == "object_tracker":
                for tr in data.get("tracks", []):
                    if _same(tr.get("label"), conflict.subject):
                        times += [float(t) for t in tr.get("times", [])]
        return times

    def narrowed_window(self, conflict: Conflict, round_no: int) -> tuple[float, float]:
        """Round 1: where a detector saw the subject (if narrower), else the central half; later
        rounds halve again around the same centre."""
        duration = float(self.duration_of(conflict.video))
        s, e = conflict.window()
        s, e = (0.0 if s is None else float(s)), (duration if e is None else float(e))
        width = max(e - s, 1e-3)
        hints = [t for t in self._hint_times(conflict) if s - 1e-6 <= t <= e + 1e-6]
        if hints:
            lo, hi = max(s, min(hints) - 0.5), min(e, max(hints) + 0.5)
            if hi - lo < 0.8 * width:
                s, e, width = lo, hi, hi - lo
                round_no -= 1
        centre = (s + e) / 2
        half = width / 2 ** (round_no + 1)
        return (round(max(s, centre - half), 3), round(min(e, centre + half), 3))

    def reread_calls(self, conflict: Conflict, round_no: int, available: set[str]) -> tuple[list[ToolCall], dict]:
        window = self.narrowed_window(conflict, round_no)
        calls, n_frames = [], 0
        for tool, claim in conflict.claims.items():
            if tool not in REREADABLE or tool not in available:
                continue
            prev = self.results[claim.call_id].args
            args: dict[str, Any] = {"video": conflict.video, "start": window[0], "end": window[1]}
            if tool in ("video_reader", "scene_graph", "object_tracker"):
                args["query"] = prev.get("query", "")
            if tool in DENSE_ARGS:
                args["n_frames"] = min(MAX_FRAMES, int(prev.get("n_frames") or 8) * 2 ** round_no)
                n_frames = max(n_frames, args["n_frames"])
            calls.append(ToolCall(tool, args))
        return calls, {"window": list(window), "n_frames": n_frames}

    def judge(self, conflict: Conflict, results: list[ToolResult]) -> bool:
        """Fold re-read values into the conflict; True when the tools' latest values agree."""
        self.observe(results)
        values = {}
        for r in results:
            for c in result_claims(r):
                if (c.video, c.attribute, c.subject) == conflict.key:
                    values[c.tool] = c.value
                    conflict.claims[c.tool] = c
        conflict.rounds[-1]["values"] = {t: _plain(v) for t, v in values.items()}
        latest = [c.value for c in conflict.claims.values()]
        if all(agree(conflict.attribute, latest[0], v) for v in latest[1:]):
            conflict.status, conflict.rule = "resolved", "tools agree after re-reading"
            conflict.resolution = _plain(_common(conflict.attribute, latest))
            return True
        return False

    def settle(self, conflict: Conflict) -> None:
        """Budget spent: take the latest value of the highest-priority tool."""
        for tool in PRIORITY[conflict.attribute]:
            if tool in conflict.claims:
                conflict.status = "unresolved"
                conflict.resolution = _plain(conflict.claims[tool].value)
                conflict.rule = f"re-read budget spent; priority to {tool}"
                return
        tool, claim = next(iter(conflict.claims.items()))
        conflict.status, conflict.resolution, conflict.rule = "unresolved", _plain(claim.value), f"first report ({tool})"

    def resolve(self, conflict: Conflict, execute: Callable[[list[ToolCall], str], list[ToolResult]],
                available: set[str]) -> Conflict:
        """Re-read until the tools agree or ``self.rounds`` rounds are spent."""
        for round_no in range(1, self.rounds + 1):
            calls, info = self.reread_calls(conflict, round_no, available)
            if not calls:
                break
            results = execute(calls, conflict.id)
            conflict.rounds.append({**info, "calls": [r.call_id for r in results], "values": {}})
            if self.judge(conflict, [r for r in results if r.ok]):
                return conflict
        self.settle(conflict)
        return conflict


def _same(label: Any, subject: str) -> bool:
    from .claims import singular

    return label is not None and singular(str(label)) == subject


def _common(attribute: str, values: list[Any]) -> Any:
    if attribute == "motion":
        common = set(values[0])
        for v in values[1:]:
            common &= set(v)
        return tuple(sorted(common))
    return values[0]
