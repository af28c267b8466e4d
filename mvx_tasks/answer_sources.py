"""Where each answer came from, for the ``mvx_src_*`` metrics next to ``mvx_acc``.

An agent's letter can come from its planner, from a forced final turn at the iteration cap, from
the task's scripted decision on the collected evidence (the planner named no option), from a solver's
stated rule where the evidence did not separate the options (a tie's first listed option, a default:
``rule``, counted with the next), or from the first-option rule (nothing decided: an explicit
abstention that still has to name a letter). An
accuracy figure means something different in each case, so the count of each travels with the
results. Like :mod:`.model_failures`, the model records the source per question id here (SAMA's
runner does) and :func:`mvx_tasks.harness.process_results`, which lmms-eval runs in the same
process after generation, reads it; a model that records nothing (a baseline) gets zeros.
"""
from __future__ import annotations

from .question_notes import QuestionNotes

__all__ = ["SOURCES", "METRICS", "METRIC_OF", "record", "source_of", "flags", "clear"]

#: answer sources, in the order tables show them (the values of a trace's final step ``source``); ``rule``: a
#: solver's stated rule named the letter because the evidence did not separate it (a tie, a default), the trace's
#: reason says which
SOURCES: tuple[str, ...] = ("planner", "planner-forced", "evidence-fallback", "rule", "first-option-rule")
#: source -> lmms-eval metric name (a per-task count, aggregated by sum), one per metric
METRICS: dict[str, str] = {"planner": "mvx_src_planner", "planner-forced": "mvx_src_forced",
                           "evidence-fallback": "mvx_src_fallback", "first-option-rule": "mvx_src_rule"}
#: every source's metric: a solver's rule answer counts as mvx_src_rule, with the first-option rule's
METRIC_OF: dict[str, str] = {**METRICS, "rule": "mvx_src_rule"}

_SOURCE: QuestionNotes[str] = QuestionNotes()


def record(question_id: str, source: str | None) -> None:
    """Record the source of ``question_id``'s answer; ``None`` forgets it (a failed question)."""
    _SOURCE.set(question_id, None if source is None else str(source))


def source_of(question_id: str) -> str | None:
    return _SOURCE.get(question_id)


def flags(question_id: str) -> dict[str, int]:
    """One 0/1 flag per ``mvx_src_*`` metric for a question (all 0 when nothing was recorded)."""
    metric_of = METRIC_OF.get(source_of(question_id) or "")
    return {metric: int(metric_of == metric) for metric in METRICS.values()}


def clear() -> None:
    _SOURCE.clear()
