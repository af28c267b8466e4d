"""Answering many questions: a thread pool (API-bound planners mostly wait), a progress bar,
one trace per question, and resume.

A question is resumed from its trace only when the trace is finished and its resume key
(question content, configuration fingerprint, code revision: :mod:`sama_model.resume`) matches;
everything else is recomputed, and the run says how many were resumed and how many were
recomputed because they changed. Traces are written atomically after each question, so a run
killed at any moment (SIGKILL included) leaves only complete traces, and rerunning the same
command finishes the remaining questions.
"""
from __future__ import annotations

import logging
import sys
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from mvx_tasks.answer_notes import AnswerNote

from .agent import AgentResult, SamaAgent
from .atomic import check_writable
from .budget import BUDGET_PREFIX, stored_totals
from .heap import limit_arenas, release_free_heap
from .question import AgentQuestion
from .resume import ResumeKey
from .tools.toolkit import warm_up
from .trace import resumable_output, stored_answer_source, trace_filename

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answered:
    """One question's output ("Answer: X", or "" when it failed) and its note: what it cost, why it
    failed, where the answer came from (read by the harness's ``mvx_*`` metrics, however the answer
    reaches them: :mod:`mvx_tasks.answer_notes`)."""

    output: str
    note: AnswerNote
    #: planner tokens (prompt, completion, reasoning) for lmms-eval's own token counts
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def of(cls, output: str | None, totals: dict | None, *, failure: str | None = None,
           source: str | None = None) -> Answered:
        t = totals or {}
        return cls(output or "", AnswerNote.from_totals(totals, failure=failure, source=source),
                   int(t.get("prompt_tokens") or 0), int(t.get("completion_tokens") or 0),
                   int(t.get("reasoning_tokens") or 0))


@dataclass
class RunStats:
    answered: int = 0
    resumed: int = 0
    failed: int = 0
    #: questions whose earlier trace was for another question content / configuration / code revision
    changed: int = 0
    #: questions whose earlier trace failed or was cut off (retried)
    retried: int = 0
    failures: dict[str, str] = field(default_factory=dict)
    #: why each recomputed question had no usable trace ("new", "failed", "changed:question", ...)
    reasons: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        """One line for the log: what was reused, what was recomputed and why."""
        parts = [f"{self.resumed} resumed from finished traces", f"{self.answered} answered"]
        if self.changed:
            detail = ", ".join(f"{k[len('changed:'):]}: {n}" for k, n in sorted(self.reasons.items())
                               if k.startswith("changed:"))
            parts.append(f"{self.changed} recomputed because they changed ({detail})")
        if self.retried:
            parts.append(f"{self.retried} retried after a failed or interrupted attempt")
        if self.failed:
            by_cause = Counter(failure_cause(f) for f in self.failures.values())
            parts.append(f"{self.failed} failed (" + ", ".join(f"{c}: {n}" for c, n in by_cause.most_common()) + ")")
        return "SAMA: " + "; ".join(parts)


def failure_cause(failure: str) -> str:
    """The kind of a question's failure, for grouping: ``all tools failed``, ``planner unavailable``,
    ``tool budget spent``, ``budget`` (the run's max_cost_usd / max_tokens_run was reached), or the
    exception type that stopped the question."""
    text = (failure or "").strip()
    if text.startswith("every tool call failed"):
        return "all tools failed"
    if text.startswith("planner unavailable"):
        return "planner unavailable"
    if text.startswith(BUDGET_PREFIX):
        return "budget"
    if "budget" in text.lower():
        return "tool budget spent"
    head = text.split(":", 1)[0].strip()
    return head if head and " " not in head else "other"


def _plan(agent: SamaAgent, questions: Sequence[AgentQuestion], tdir: Path | None, stats: RunStats,
          outputs: list[Answered | None]) -> list[tuple[int, AgentQuestion, Path | None, dict | None]]:
    """Resume what can be resumed; return the questions to answer, each with its trace path and key."""
    todo = []
    for i, q in enumerate(questions):
        key = ResumeKey.of(q, agent.fingerprint)
        path = tdir / trace_filename(q.id) if tdir else None
        done, why = resumable_output(path, key) if path is not None else (None, "new")
        if done is not None:
            stats.resumed += 1
            totals = stored_totals(path)
            agent.budget.add(totals)  # earlier attempts' spending counts against the budget
            outputs[i] = Answered.of(done, totals, source=stored_answer_source(path))
            continue
        stats.reasons[why] += 1
        if why.startswith("changed:"):
            stats.changed += 1
        elif why != "new":
            stats.retried += 1
        todo.append((i, q, path, key.to_dict()))
    return todo


def interleaved(groups: Sequence[str]) -> list[int]:
    """Indices that take one item of each group in turn (groups in order of first appearance, items in
    their order): the order a long run answers questions in.

    Why: lmms-eval hands a model its requests task by task, so answering them in that order warms each
    task's tools (models, frame cache, memos) only when the task comes up: memory steps up through the
    whole run and a run stopped half way has answered half of the tasks and none of the others. In turns,
    most tools are warm after the first few percent, memory grows early rather than step by step through the run,
    and a partial run covers every task. Answers do not depend on the order (caches are keyed by content).
    """
    queues: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        queues.setdefault(g, []).append(i)
    order: list[int] = []
    depth = 0
    while len(order) < len(groups):
        order.extend(q[depth] for q in queues.values() if depth < len(q))
        depth += 1
    return order


def run_questions(agent: SamaAgent, questions: Sequence[AgentQuestion], trace_dir: str | Path | None,
                  workers: int = 1, progress: bool = True, desc: str = "SAMA",
                  stats: RunStats | None = None) -> list[str]:
    """Outputs ("Answer: X", or "" for a failed question) in the order of ``questions``
    (:func:`answer_questions` without the notes)."""
    return [a.output for a in answer_questions(agent, questions, trace_dir, workers=workers, progress=progress,
                                               desc=desc, stats=stats)]


def answer_questions(agent: SamaAgent, questions: Sequence[AgentQuestion], trace_dir: str | Path | None,
                     workers: int = 1, progress: bool = True, desc: str = "SAMA",
                     stats: RunStats | None = None) -> list[Answered]:
    """Each question's output and note, in the order of ``questions``.

    A failed question's output is empty, never a string that looks like an answer, so lmms-eval's
    response cache (``--use_cache``) never stores it and a later run recomputes it; its note says why.
    """
    stats = stats if stats is not None else RunStats()
    tdir = Path(trace_dir) if trace_dir else None
    if tdir is not None:
        check_writable(tdir, "SAMA traces", "pass trace_dir=<a writable folder with free space> in the model "
                                            "arguments, or free space / fix permissions there")
    outputs: list[Answered | None] = [None] * len(questions)
    todo = _plan(agent, questions, tdir, stats, outputs)
    if todo:  # models load now, not at the first question that happens to need one
        limit_arenas()  # once per process: workers share two malloc arenas (sama_model/heap.py)
        warm_up(agent.config.active_backends(), [q for _, q, _, _ in todo])

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(questions), initial=stats.resumed, desc=desc, dynamic_ncols=True)

    def one(item: tuple[int, AgentQuestion, Path | None, dict | None]) -> tuple[int, AgentResult, dict | None]:
        i, q, path, key = item
        over = agent.budget.exhausted()
        if over:  # no new question once the run's budget is spent
            return i, agent.refuse(q, over, path, resume_key=key), None
        result = agent.answer(q, path, resume_key=key)
        totals = result.trace.totals() if result.trace is not None else None
        agent.budget.add(totals)
        return i, result, totals

    pool = ThreadPoolExecutor(max_workers=max(1, int(workers)))
    try:
        pending = {pool.submit(one, item) for item in todo}
        while pending:
            # each question as it finishes: its result is dropped, the bar moves and the heap is trimmed now,
            # not after the whole run (FIRST_EXCEPTION waits for all of them unless one raises; measured at paper
            # scale: every finished question's trace stayed in memory until the end)
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                i, result, totals = fut.result()  # an unwritable trace stops the run here, with the path and the fix
                failed = result.status != "finished"
                outputs[i] = Answered.of(result.output, totals, failure=(result.failure or "failed") if failed else None,
                                         source=result.source)
                stats.answered += 1
                if failed:
                    stats.failed += 1
                    stats.failures[result.question_id] = result.failure or ""
                    log.warning("SAMA question %s failed: %s", result.question_id, result.failure)
                if bar is not None:
                    bar.update(1)
                release_free_heap()  # freed pages back to the OS between questions (sama_model/heap.py)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # after an error, queued questions are not started
        if bar is not None:
            bar.close()
    if progress and questions:
        print(stats.summary(), file=sys.stderr, flush=True)
    return [a if a is not None else Answered.of("", None, failure="not answered") for a in outputs]
