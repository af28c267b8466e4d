"""Where each answer came from, for the ``mvx_src_*`` metrics next to ``mvx_acc``.

An agent's letter can come from its planner, from a forced final turn at the iteration cap, from
the task's scripted decision on the collected evidence (the planner named no option), from a solver's
stated rule where the evidence did not separate the options (a tie's first listed option, a default, a guess
from a count that cannot tell the asked-for objects from other movers: ``rule``, counted with the next), or from the first-option rule (nothing decided: an explicit
abstention that still has to name a letter). An
accuracy figure means something different in each case, so the count of each travels with the
results. The model names the source of each answer in that answer's note
(:class:`mvx_tasks.answer_notes.AnswerNote`), which :func:`mvx_tasks.harness.process_results`
reads; a model that writes no notes (a baseline) gets zeros.
"""
from __future__ import annotations

__all__ = ["METRICS", "METRIC_OF", "SOURCES"]

#: answer sources, in the order tables show them (the values of a trace's final step ``source``); ``rule``: a
#: solver's stated rule named the letter because the evidence did not separate it (a tie, a default, a count's
#: guess), the trace's reason says which
SOURCES: tuple[str, ...] = ("planner", "planner-forced", "evidence-fallback", "rule", "first-option-rule")
#: source -> lmms-eval metric name (a per-task count, aggregated by sum), one per metric
METRICS: dict[str, str] = {"planner": "mvx_src_planner", "planner-forced": "mvx_src_forced",
                           "evidence-fallback": "mvx_src_fallback", "first-option-rule": "mvx_src_rule"}
#: every source's metric: a solver's rule answer counts as mvx_src_rule, with the first-option rule's
METRIC_OF: dict[str, str] = {**METRICS, "rule": "mvx_src_rule"}
