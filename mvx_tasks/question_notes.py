"""A thread-safe note per question id, for signals that travel beside a model's output string.

lmms-eval scores each question from the output string alone; what a model knows beyond it (why it
could not answer, where its answer came from, what it cost: :mod:`.model_failures`,
:mod:`.answer_sources`, :mod:`.model_usage`) is noted by question id while it generates and
read by :func:`mvx_tasks.harness.process_results`, which runs in the same process afterwards.
"""
from __future__ import annotations

import threading
from typing import Generic, TypeVar

T = TypeVar("T")


class QuestionNotes(Generic[T]):
    """question id -> one note; ``set(qid, None)`` forgets the question."""

    def __init__(self) -> None:
        self._notes: dict[str, T] = {}
        self._lock = threading.Lock()

    def set(self, question_id: str, note: T | None) -> None:
        with self._lock:
            if note is None:
                self._notes.pop(str(question_id), None)
            else:
                self._notes[str(question_id)] = note

    def get(self, question_id: str) -> T | None:
        with self._lock:
            return self._notes.get(str(question_id))

    def snapshot(self) -> dict[str, T]:
        with self._lock:
            return dict(self._notes)

    def clear(self) -> None:
        with self._lock:
            self._notes.clear()
