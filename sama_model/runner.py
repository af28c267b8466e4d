"""Answering many questions: a thread pool (API-bound planners mostly wait), a progress bar,
one trace per question, and resume (a question whose finished trace was made with the same
configuration is not recomputed)."""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .agent import AgentResult, SamaAgent
from .question import AgentQuestion
from .trace import finished_output, trace_filename

log = logging.getLogger(__name__)


@dataclass
class RunStats:
    answered: int = 0
    resumed: int = 0
    failed: int = 0
    failures: dict[str, str] = field(default_factory=dict)


def run_questions(agent: SamaAgent, questions: Sequence[AgentQuestion], trace_dir: str | Path | None,
                  workers: int = 1, progress: bool = True, desc: str = "SAMA",
                  stats: RunStats | None = None) -> list[str]:
    """Outputs ("Answer: X", or "" for a failed question) in the order of ``questions``."""
    stats = stats if stats is not None else RunStats()
    tdir = Path(trace_dir) if trace_dir else None
    if tdir is not None:
        tdir.mkdir(parents=True, exist_ok=True)
    outputs: list[str | None] = [None] * len(questions)
    todo = []
    for i, q in enumerate(questions):
        path = tdir / trace_filename(q.id) if tdir else None
        done = finished_output(path, agent.fingerprint) if path and path.exists() else None
        if done is not None:
            outputs[i] = done
            stats.resumed += 1
        else:
            todo.append((i, q, path))

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(questions), initial=stats.resumed, desc=desc, dynamic_ncols=True)

    def one(item: tuple[int, AgentQuestion, Path | None]) -> tuple[int, AgentResult]:
        i, q, path = item
        return i, agent.answer(q, path)

    with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
        futures = [pool.submit(one, item) for item in todo]
        for fut in as_completed(futures):
            i, result = fut.result()
            outputs[i] = result.output
            stats.answered += 1
            if result.status != "finished":
                stats.failed += 1
                stats.failures[result.question_id] = result.failure or ""
                log.warning("SAMA question %s failed: %s", result.question_id, result.failure)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return [o or "" for o in outputs]
