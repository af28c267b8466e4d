"""Where each answer came from, for the ``mvx_src_*`` metrics next to ``mvx_acc``.

An agent's letter can come from its planner, from a forced final turn at the iteration cap, from
the task's scripted decision on the collected evidence (the planner named no option), or from the
first-option rule (nothing decided: an explicit abstention that still has to name a letter). An
accuracy figure means something different in each case, so the count of each travels with the
results. The model names the source of each answer in that answer's note
(:class:`mvx_tasks.answer_notes.AnswerNote`), which :func:`mvx_tasks.harness.process_results`
reads; a model that writes no notes (a baseline) gets zeros.
"""
from __future__ import annotations

__all__ = ["METRICS", "SOURCES"]

#: answer sources, in the order tables show them (the values of a trace's final step ``source``)
SOURCES: tuple[str, ...] = ("planner", "planner-forced", "evidence-fallback", "first-option-rule")
#: source -> lmms-eval metric name (a per-task count, aggregated by sum)
METRICS: dict[str, str] = {"planner": "mvx_src_planner", "planner-forced": "mvx_src_forced",
                           "evidence-fallback": "mvx_src_fallback", "first-option-rule": "mvx_src_rule"}
