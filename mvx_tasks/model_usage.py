"""What each answer cost, for the ``mvx_tokens`` / ``mvx_cost_usd`` / ``mvx_iterations`` /
``mvx_tool_calls`` metrics next to ``mvx_acc``.

The paper reports cost in these terms (3.8 iterations and 3.6 tool calls per question, $53 for 350
questions), so lmms-eval's results carry them per task as means per question. Like
:mod:`.model_failures`, the model records a question's figures by id here (SAMA's runner does, from
the question's trace totals, resumed questions included) and
:func:`mvx_tasks.harness.process_results`, run in the same process after generation, reads them; a
model that records nothing (a baseline) gets zeros.
"""
from __future__ import annotations

from typing import Any

from .question_notes import QuestionNotes

__all__ = ["METRICS", "record", "figures", "clear"]

#: metric name -> the trace ``totals`` key it reads
METRICS: dict[str, str] = {"mvx_tokens": "tokens", "mvx_cost_usd": "cost_usd", "mvx_iterations": "iterations",
                           "mvx_tool_calls": "tool_calls"}

_FIGURES: QuestionNotes[dict[str, float]] = QuestionNotes()


def record(question_id: str, totals: dict[str, Any] | None) -> None:
    """Record a question's trace totals (``None`` forgets them: nothing was spent)."""
    _FIGURES.set(question_id, {m: float(totals.get(k) or 0) for m, k in METRICS.items()} if totals else None)


def figures(question_id: str) -> dict[str, float]:
    """One value per metric for a question (zeros when nothing was recorded)."""
    got = _FIGURES.get(question_id) or {}
    return {m: got.get(m, 0.0) for m in METRICS}


def clear() -> None:
    _FIGURES.clear()
