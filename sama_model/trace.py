"""Typed, serialisable traces: one JSON file per question, crash-safe, secret-free, printable.

A trace records every planner turn (the messages it saw, its raw output, token usage, invalid
outputs), every tool call (arguments, backend, result, timing, cache hit), every conflict with
its re-reads and resolution, memory snapshots and the final answer. Traces are written with a
temp-file-and-rename, so a crash never leaves half a file, and resume can trust any trace
whose status is ``finished``. Secrets (registered API key values, Authorization headers) are
redacted before anything is written.
"""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .atomic import OutputWriteError, atomic_write_text

if TYPE_CHECKING:
    from .resume import ResumeKey

REDACTED = "[REDACTED]"
_SECRET_KEYS = re.compile(r"^(authorization|api[_-]?key|x-api-key|proxy-authorization)$", re.I)
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._\-]+", re.I)
_SECRETS: set[str] = set()
_SECRETS_LOCK = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember a secret value (e.g. an API key) so that no trace ever contains it."""
    if value and len(value) >= 4:
        with _SECRETS_LOCK:
            _SECRETS.add(value)


def redact(obj: Any) -> Any:
    """A copy of ``obj`` with secret values, secret-named fields and bearer tokens replaced."""
    with _SECRETS_LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)

    def walk(x: Any) -> Any:
        if isinstance(x, str):
            for s in secrets:
                if s in x:
                    x = x.replace(s, REDACTED)
            return _BEARER.sub(r"\1" + REDACTED, x)
        if isinstance(x, dict):
            return {k: (REDACTED if isinstance(k, str) and _SECRET_KEYS.match(k) else walk(v)) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [walk(v) for v in x]
        return x

    return walk(obj)


@dataclass
class PlannerStep:
    """One planner turn: what it was shown and what it decided."""

    iteration: int
    planner: str
    context_mode: str  # "memory" (evidence aggregation) or "raw" (raw evidence appended)
    messages: list[dict[str, Any]]
    output: Any
    actions: list[dict[str, Any]]
    final: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    invalid: int = 0
    elapsed: float = 0.0
    forced: bool = False
    note: str = ""
    #: protocol adaptations made in this turn (a rejected parameter, the switch to JSON actions, ...)
    events: list[dict[str, Any]] = field(default_factory=list)
    kind: str = "planner"


@dataclass
class ToolStep:
    """One tool call and its result."""

    iteration: int
    call_id: str
    tool: str
    args: dict[str, Any]
    backend: str
    data: dict[str, Any]
    text: str
    error: str | None
    elapsed: float
    cached: bool
    reread_of: str | None = None
    kind: str = "tool"


@dataclass
class ConflictStep:
    """A disagreement between tools about one video, and how re-reading settled it."""

    iteration: int
    conflict_id: str
    video: str
    attribute: str
    subject: str
    values: dict[str, Any]  # tool -> value as first reported
    window: list[float | None]
    rereads: list[dict[str, Any]]  # rounds: {"window", "n_frames", "calls", "values"}
    status: str  # "resolved" | "unresolved"
    resolution: Any
    rule: str
    kind: str = "conflict"


@dataclass
class MemoryStep:
    iteration: int
    snapshot: dict[str, Any]
    kind: str = "memory"


@dataclass
class FinalStep:
    answer: str
    letter: str | None
    reason: str
    forced: bool
    source: str  # "planner", "planner-forced", "evidence-fallback", "rule" (reason: why), "first-option-rule"
    #: the reason carries the solvers' FRAGILE mark (a small change of the evidence would change the
    #: answer); recorded as data so that readers of traces (the run viewer) need not import the agent
    fragile: bool = False
    kind: str = "final"


@dataclass
class ErrorStep:
    iteration: int
    message: str
    kind: str = "error"


Step = PlannerStep | ToolStep | ConflictStep | MemoryStep | FinalStep | ErrorStep


class QuestionTrace:
    """All steps of one question; thread-safe appends, atomic saves."""

    def __init__(self, question: dict[str, Any], config: dict[str, Any], fingerprint: str,
                 resume_key: dict[str, str] | None = None) -> None:
        self.question = question
        self.config = config
        self.fingerprint = fingerprint
        self.resume_key = resume_key
        self.status = "running"
        self.failure: str | None = None
        self.output: str | None = None
        self.steps: list[Step] = []
        self.started = time.time()
        self.elapsed = 0.0
        #: the run's price table (sama_model.pricing.PriceTable): totals then carry dollars
        self.prices: Any = None
        self._lock = threading.Lock()

    def add(self, step: Step) -> Step:
        with self._lock:
            self.steps.append(step)
        return step

    def of_kind(self, kind: str) -> list[Step]:
        with self._lock:
            return [s for s in self.steps if s.kind == kind]

    def totals(self) -> dict[str, Any]:
        with self._lock:
            steps = list(self.steps)
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0, "cached_tokens": 0}
        for s in steps:
            if isinstance(s, PlannerStep):
                for k in usage:
                    usage[k] += int(s.usage.get(k, 0) or 0)
        from .pricing import PriceTable, question_cost  # planner tokens above; every source, priced, below

        money = question_cost({"config": self.config, "steps": steps}, self.prices or PriceTable())
        tools = [s for s in steps if isinstance(s, ToolStep)]
        return {"iterations": max((s.iteration for s in steps if isinstance(s, PlannerStep)), default=0),
                "planner_turns": sum(isinstance(s, PlannerStep) for s in steps),
                "tool_calls": len(tools), "tool_errors": sum(s.error is not None for s in tools),
                "cached_tool_calls": sum(s.cached for s in tools),
                "conflicts": sum(isinstance(s, ConflictStep) for s in steps),
                "invalid_planner_outputs": sum(s.invalid for s in steps if isinstance(s, PlannerStep)),
                **usage, **money}

    def answer_source(self) -> str | None:
        """Where the answer came from: the final step's ``source``; None without a final step."""
        finals = self.of_kind("final")
        return finals[-1].source if finals else None

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            steps = [asdict(s) for s in self.steps]
        return redact({"question": self.question, "config": self.config, "fingerprint": self.fingerprint,
                       "resume_key": self.resume_key, "status": self.status, "failure": self.failure, "output": self.output,
                       "started": self.started, "elapsed": round(self.elapsed, 4), "totals": self.totals(),
                       "steps": steps})

    def save(self, path: str | Path) -> Path:
        """Write atomically; a failed write (disk full, permissions) raises :class:`OutputWriteError`."""
        text = json.dumps(self.to_dict(), indent=1, ensure_ascii=False, default=_jsonable)
        try:
            return atomic_write_text(path, text)
        except OSError as exc:
            raise OutputWriteError(path, exc, "SAMA traces", "pass trace_dir=<a writable folder with free space> "
                                   "in the model arguments, or free space / fix permissions there") from exc


def _jsonable(x: Any) -> Any:
    try:
        import numpy as np

        if isinstance(x, np.generic):
            return x.item()
        if isinstance(x, np.ndarray):
            return x.tolist()
    except ImportError:  # pragma: no cover
        pass
    return repr(x)


def load_trace(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def stored_answer_source(path: str | Path) -> str | None:
    """The answer source recorded in a saved trace (its last final step); None if unreadable."""
    try:
        data = load_trace(path)
    except (OSError, ValueError):
        return None
    finals = [s for s in (data.get("steps") or []) if isinstance(s, dict) and s.get("kind") == "final"]
    return str(finals[-1].get("source")) if finals and finals[-1].get("source") else None


def trace_filename(question_id: str) -> str:
    """A filesystem-safe, collision-resistant file name for a question id."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", str(question_id))[:120] or "question"
    if safe != str(question_id):
        import hashlib

        safe += "-" + hashlib.sha1(str(question_id).encode()).hexdigest()[:8]
    return f"{safe}.json"


def resumable_output(path: str | Path, key: "ResumeKey") -> tuple[str | None, str]:
    """(stored output, why) for a question's trace file: the output only for a finished trace made
    for the same question content, configuration and code revision. ``why`` is ``resumed``, ``new``
    (no trace), ``unreadable``, ``unfinished`` (killed mid-question), ``failed``, or ``changed:<parts>``
    naming what differs (question, fingerprint, revision)."""
    path = Path(path)
    if not path.exists():
        return None, "new"
    try:
        data = load_trace(path)
    except (OSError, ValueError):
        return None, "unreadable"
    if not isinstance(data, dict):
        return None, "unreadable"
    changed = key.changed(data.get("resume_key"))
    if changed:
        return None, "changed:" + ",".join(changed)
    if data.get("status") == "failed":
        return None, "failed"
    if data.get("status") != "finished":
        return None, "unfinished"
    return str(data.get("output") or ""), "resumed"


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_trace(path: str | Path) -> str:
    """A readable, replay-style rendering of a trace file (``mvx-bench trace <file>``)."""
    t = load_trace(path)
    q = t.get("question", {})
    lines = [f"question {q.get('id')} [{q.get('task') or '?'}] status={t.get('status')}"
             + (f" failure={t['failure']}" if t.get("failure") else ""),
             f"  {q.get('question', '')}"]
    for letter, text in (q.get("options") or {}).items():
        lines.append(f"  {letter}. {text}")
    lines.append("  videos: " + ", ".join(v.get("label", "?") for v in q.get("videos", [])))
    cfg = t.get("config", {})
    lines.append("  config: " + ", ".join(f"{k}={cfg[k]}" for k in ("planner", "skills", "conflict", "aggregation",
                                                                    "motion", "max_iterations") if k in cfg))
    for s in t.get("steps", []):
        kind = s.get("kind")
        if kind == "planner":
            head = f"[{s['iteration']}] planner {s['planner']}" + (" (forced final)" if s.get("forced") else "")
            extra = f" tokens={s['usage']}" if s.get("usage") else ""
            extra += "".join(f" ADAPTED[{e.get('kind')}: {e.get('parameter') or e.get('to') or e.get('reason', '')}]"
                             for e in s.get("events") or [])
            extra += f" invalid={s['invalid']}" if s.get("invalid") else ""
            lines.append(head + extra + (f" note={s['note']}" if s.get("note") else ""))
            for a in s.get("actions", []):
                lines.append(f"      -> {a.get('tool')}({_short(a.get('args', {}), 120)})")
            if s.get("final"):
                lines.append(f"      => {_short(s['final'])}")
        elif kind == "tool":
            flag = " cached" if s.get("cached") else ""
            flag += f" reread-of={s['reread_of']}" if s.get("reread_of") else ""
            body = f"ERROR {s['error']}" if s.get("error") else _short(s.get("text", ""))
            lines.append(f"    {s['tool']}[{s['backend']}]({_short(s['args'], 100)}) {s['elapsed']:.3f}s{flag}: {body}")
        elif kind == "conflict":
            lines.append(f"    CONFLICT {s['conflict_id']} {s['video']} {s['attribute']}({s['subject']}): "
                         f"{_short(s['values'])} -> {s['status']} = {s['resolution']!r} ({s['rule']}, "
                         f"{len(s.get('rereads', []))} re-read rounds)")
        elif kind == "memory":
            lines.append(f"    memory: {_short(s['snapshot'], 200)}")
        elif kind == "final":
            lines.append(f"FINAL {s['answer']} ({s['source']}{', forced' if s.get('forced') else ''}): {_short(s['reason'])}")
        elif kind == "error":
            lines.append(f"    error: {s['message']}")
    tot = t.get("totals", {})
    lines.append("totals: " + ", ".join(f"{k}={v}" for k, v in tot.items()) + f", elapsed={t.get('elapsed')}s")
    return "\n".join(lines)
