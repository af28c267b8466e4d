"""A run's spending and its budget: ``max_cost_usd=`` and ``max_tokens_run=``.

A paid planner can burn money fast, so a run may carry a budget. Spending is what the run's
traces say (their ``totals.cost_usd`` / ``totals.tokens``), including questions resumed from an
earlier attempt, so a rerun with a higher budget continues where the first stopped instead of
granting the whole budget again. Once spending reaches a limit no new question starts: each is
recorded as failed with the reason ``budget: ...`` (a trace, and the ``mvx_agent_failed``
metric), and a rerun with a higher budget answers exactly those. Questions already running
finish, so a run can end slightly above its budget.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BUDGET_PREFIX = "budget: "


@dataclass
class RunBudget:
    """Run-wide spending (shared by all worker threads) against optional limits."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    spent_usd: float = 0.0
    spent_tokens: int = 0
    questions: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, totals: dict[str, Any] | None) -> None:
        """Count one question's trace totals (answered now or resumed)."""
        totals = totals or {}
        with self._lock:
            self.spent_usd += float(totals.get("cost_usd") or 0.0)
            self.spent_tokens += int(totals.get("tokens") or 0)
            self.questions += 1

    def exhausted(self) -> str | None:
        """The failure reason when a limit is reached, else None."""
        with self._lock:
            if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
                return (f"{BUDGET_PREFIX}the run spent ${self.spent_usd:.4f} of max_cost_usd={self.max_cost_usd:g}; "
                        f"rerun with a higher max_cost_usd to answer this question")
            if self.max_tokens is not None and self.spent_tokens >= self.max_tokens:
                return (f"{BUDGET_PREFIX}the run used {self.spent_tokens} tokens of max_tokens_run={self.max_tokens}; "
                        f"rerun with a higher max_tokens_run to answer this question")
        return None

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"spent_usd": round(self.spent_usd, 6), "spent_tokens": self.spent_tokens,
                    "questions": self.questions, "max_cost_usd": self.max_cost_usd, "max_tokens_run": self.max_tokens}


def stored_totals(path: str | Path | None) -> dict[str, Any]:
    """A saved trace's ``totals`` ({} when unreadable)."""
    if path is None:
        return {}
    from .trace import load_trace

    try:
        data = load_trace(path)
    except (OSError, ValueError):
        return {}
    totals = data.get("totals") if isinstance(data, dict) else None
    return totals if isinstance(totals, dict) else {}
