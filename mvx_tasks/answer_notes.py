"""What a model knows about each answer beyond its text, kept beside the answer on disk.

The MVX metrics next to ``mvx_acc`` are per answer: what it cost (``mvx_tokens``, ``mvx_cost_usd``,
``mvx_iterations``, ``mvx_tool_calls``: the paper reports 3.8 iterations, 3.6 tool calls and $53 for
350 questions), why the model could not answer (``mvx_agent_failed``) and where the answer came from
(``mvx_src_*``). lmms-eval's ``process_results`` sees only the question's doc and the answer text,
and an answer reaches it three ways: fresh from the model, from lmms-eval's response cache
(``--use_cache``: it stores the text alone; a ``GenerationResult``'s token counts are dropped), or
from a replayed log (:mod:`mvx_tasks.replay`). So the figures cannot ride in memory beside the
model's output: the model writes one :class:`AnswerNote` per answer into a folder for its
configuration, named by the question's content and the answer text (:func:`note_key`), and
``process_results`` reads the note of the (doc, text) it scores, however that text reached it.
A note of another answer to the same question has another name and is never read.

Where: ``$MVX_ANSWER_NOTES`` or ``~/.cache/mvx/answer_notes`` (``$XDG_CACHE_HOME`` honoured), one
sub-folder per model configuration (:func:`use_store`; the adapter names it when it is built, also
on a run served wholly from the cache). A model that writes no notes (lmms-eval's own adapters)
gets zeros and no failure, as before. The notes are plain JSON; nothing here imports the agent.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .answer_sources import METRIC_OF
from .answer_sources import METRICS as SOURCE_METRICS
from .atomic import atomic_write_text

__all__ = [
    "SOURCE_METRICS",
    "USAGE_METRICS",
    "AnswerNote",
    "NoteStore",
    "active_store",
    "note_for",
    "note_key",
    "notes_root",
    "use_store",
]

#: usage metric -> the SAMA trace ``totals`` key it reads (means per question in the results)
USAGE_METRICS: dict[str, str] = {"mvx_tokens": "tokens", "mvx_cost_usd": "cost_usd", "mvx_iterations": "iterations",
                                 "mvx_tool_calls": "tool_calls"}
NOTES_ENV = "MVX_ANSWER_NOTES"


@dataclass(frozen=True)
class AnswerNote:
    """One answer's figures: usage, the failure cause (None: answered) and the answer source."""

    tokens: float = 0.0
    cost_usd: float = 0.0
    iterations: float = 0.0
    tool_calls: float = 0.0
    failure: str | None = None
    source: str | None = None

    @classmethod
    def from_totals(cls, totals: Mapping[str, Any] | None, *, failure: str | None = None,
                    source: str | None = None) -> AnswerNote:
        """From a SAMA trace's ``totals`` (None: nothing was spent)."""
        t = totals or {}
        usage = {key: float(t.get(key) or 0) for key in USAGE_METRICS.values()}
        return cls(**usage, failure=None if failure is None else (str(failure) or "failed"),
                   source=None if source is None else str(source))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerNote:
        usage = {key: float(data.get(key) or 0) for key in USAGE_METRICS.values()}
        failure, source = data.get("failure"), data.get("source")
        return cls(**usage, failure=None if failure is None else str(failure),
                   source=None if source is None else str(source))

    @classmethod
    def from_sample(cls, sample: Mapping[str, Any]) -> AnswerNote:
        """From a line of lmms-eval's samples log of an MVX task (its per-answer metric values)."""
        usage = {key: float(sample.get(metric) or 0) for metric, key in USAGE_METRICS.items()}
        record = sample.get("mvx_acc") if isinstance(sample.get("mvx_acc"), Mapping) else {}
        source = next((name for name, metric in SOURCE_METRICS.items() if sample.get(metric)), None)
        failure = record.get("agent_failed")
        return cls(**usage, failure=None if failure is None else str(failure), source=source)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def metrics(self) -> dict[str, float | int]:
        """The usage means' per-answer values and one 0/1 flag per answer source."""
        usage = {metric: getattr(self, key) for metric, key in USAGE_METRICS.items()}
        counted = METRIC_OF.get(self.source or "")  # a solver's rule answer counts with the first-option rule's
        return {**usage, **{metric: int(counted == metric) for metric in SOURCE_METRICS.values()}}


#: what an answer without a note reports: nothing spent, answered, no source
NO_NOTE = AnswerNote()


def _doc_content(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The doc's scalar fields: what the question is, independent of how lmms-eval stores media."""
    return {str(k): v for k, v in sorted(doc.items(), key=lambda kv: str(kv[0]))
            if v is None or isinstance(v, (str, int, float, bool))}


def note_key(doc: Mapping[str, Any], output: str) -> str:
    """The name of a note: the question's content and the answer text (trimmed, as lmms-eval scores it)."""
    payload = json.dumps({"doc": _doc_content(doc), "output": str(output or "").strip()}, sort_keys=True,
                         ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class NoteStore:
    """One model configuration's notes: ``<folder>/<key[:2]>/<key>.json``, each written atomically."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def write(self, doc: Mapping[str, Any], output: str, note: AnswerNote) -> Path:
        key = note_key(doc, output)
        record = {"key": key, "id": doc.get("id"), "output": str(output or "").strip(), "note": note.to_dict()}
        return atomic_write_text(self.path(key), json.dumps(record, ensure_ascii=False))

    def read(self, doc: Mapping[str, Any], output: str) -> AnswerNote | None:
        """The note of this answer to this question, or None (never written, or unreadable)."""
        try:
            record = json.loads(self.path(note_key(doc, output)).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        note = record.get("note") if isinstance(record, dict) else None
        return AnswerNote.from_dict(note) if isinstance(note, dict) else None


def notes_root() -> Path:
    """``$MVX_ANSWER_NOTES``, else ``$XDG_CACHE_HOME/mvx/answer_notes`` (``~/.cache/mvx/answer_notes``)."""
    explicit = os.environ.get(NOTES_ENV)
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "mvx" / "answer_notes"


_ACTIVE: list[NoteStore] = []  # the notes folder of the model this process evaluates (set when it is built)
_LOCK = threading.Lock()


def use_store(identity: str) -> NoteStore:
    """The notes folder of one model configuration (``identity``: its name and fingerprint), made
    the one ``process_results`` reads in this process. Called by an adapter when it is built."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", str(identity)).strip("._") or "model"
    store = NoteStore(notes_root() / safe[:160])
    with _LOCK:
        _ACTIVE[:] = [store]
    return store


def active_store() -> NoteStore | None:
    with _LOCK:
        return _ACTIVE[0] if _ACTIVE else None


def note_for(doc: Mapping[str, Any], output: str) -> AnswerNote:
    """The note of this answer from the active model's folder; :data:`NO_NOTE` when there is none."""
    store = active_store()
    note = store.read(doc, output) if store is not None else None
    return note if note is not None else NO_NOTE
