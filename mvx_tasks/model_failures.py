"""Questions a model reports it could not answer, for the ``mvx_agent_failed`` metric.

The task metrics are computed from the model's output string alone, and an agent that could not
answer (every tool failed, planner unreachable, a crash) returns an empty output, exactly like a
baseline whose output is empty. So the signal travels beside the output: the model records the
question id and the cause here (SAMA's runner does, for every question it answers), and
:func:`mvx_tasks.harness.process_results`, which lmms-eval runs in the same process after all
generation, looks it up. A question answered later in the same process clears its entry.
"""
from __future__ import annotations

from .question_notes import QuestionNotes

__all__ = ["record", "cause_of", "clear", "snapshot"]

_FAILED: QuestionNotes[str] = QuestionNotes()


def record(question_id: str, cause: str | None) -> None:
    """Record that ``question_id`` failed with ``cause``, or (``None``) that it was answered."""
    _FAILED.set(question_id, None if cause is None else (str(cause) or "failed"))


def cause_of(question_id: str) -> str | None:
    """The recorded failure cause of a question, or None when it was answered (or never recorded)."""
    return _FAILED.get(question_id)


def snapshot() -> dict[str, str]:
    return _FAILED.snapshot()


def clear() -> None:
    _FAILED.clear()
