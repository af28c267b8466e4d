"""The leaderboard's rows: runs re-aggregated from their records, bootstrap intervals, Delta against
the reproduced paper row, partial-run flags and route-verification marks."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..harness_configs import CONFIG_DIR, PAPER_TABLE, HarnessConfig, load_configs
from ..metrics import mean_of_tasks, summarize, weighted_overall
from ..benchmarks import get_benchmark
from ..registry import BENCH_CODES, all_levels, get_task
from .runs import (PaperRow, Run, find_lmms_runs, find_vlmeval_runs, flagged_paper_rows, load_paper_table,
                   match_paper_row)

# ----------------------------------------------------------------------------- statistics


def bootstrap_ci(records: Sequence[dict], *, n_boot: int = 2000, seed: int = 0,
                 level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals (percent) for each task and the overall figure.

    Questions are resampled within each task, so every replicate keeps the run's task sizes and
    the overall stays question-weighted like the point estimate.
    """
    rng = np.random.default_rng(seed)
    by_task: dict[str, np.ndarray] = {}
    for r in records:
        by_task.setdefault(r["task"], []).append(bool(r["correct"]))  # type: ignore[arg-type]
    if not by_task:
        return {}
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    out: dict[str, tuple[float, float]] = {}
    total_correct = np.zeros(n_boot)
    total = 0
    for task in sorted(by_task):
        c = np.asarray(by_task[task], dtype=float)
        draws = c[rng.integers(0, len(c), size=(n_boot, len(c)))].sum(axis=1)
        total_correct += draws
        total += len(c)
        acc = 100 * draws / len(c)
        out[task] = (float(np.percentile(acc, lo_q)), float(np.percentile(acc, hi_q)))
    overall = 100 * total_correct / total
    out["overall"] = (float(np.percentile(overall, lo_q)), float(np.percentile(overall, hi_q)))
    return out


# ----------------------------------------------------------------------------- the table

@dataclass
class Entry:
    """One leaderboard row (a paper row or one of our runs)."""

    name: str
    kind: str  # "paper" or "run"
    source: str
    benchmark: str
    group: str
    avg: float
    per_task: dict[str, float]
    per_level: dict[str, float]
    answered: int | None = None
    unparsed: int | None = None
    failed: int | None = None
    ci: tuple[float, float] | None = None
    partial: bool = False
    paper_row: str | None = None
    delta: dict[str, float] = field(default_factory=dict)  # "Avg" and task codes, run minus paper
    avg_recomputed: float | None = None
    avg_agrees: bool | None = None
    path: str = ""
    #: why this row's route could not be run end to end offline (``mvx-bench routes``), if it could not
    route_unverified: str | None = None
    #: the row's config names an architecture the route check runs end to end
    route_verified: bool = False
    #: uniform guessing's accuracy (%) on the questions this row answered, aggregated like ``avg``, and per task
    chance: float | None = None
    chance_per_task: dict[str, float] = field(default_factory=dict)
    #: the benchmark's name with the tasks that ran where they are not all of its paper's ("CrossVid CC+NC")
    label: str = ""

    @property
    def route_mark(self) -> str:
        """"route not verified offline" (with why) for rows whose route the route check cannot run; kept
        apart from :attr:`flags`, which are about the figures."""
        return f"route not verified offline ({self.route_unverified})" if self.route_unverified else ""

    @property
    def flags(self) -> list[str]:
        out = []
        if self.kind == "paper" and self.avg_agrees is False:
            out.append(f"Avg != weighted per-task ({self.avg_recomputed:.2f})")
        if self.partial:
            out.append(f"partial run ({self.answered} questions)")
        return out


def _levels(per_task: dict[str, float], counts: dict[str, int]) -> dict[str, float]:
    out = {}
    for level in all_levels():
        tasks = [t for t in per_task if get_task(t).level == level and counts.get(t)]
        if tasks:
            out[level] = weighted_overall({t: per_task[t] for t in tasks}, {t: counts[t] for t in tasks})
    return out


def paper_entry(row: PaperRow) -> Entry:
    counts = {c: get_task(c).n_questions for c in row.per_task}
    chance = {c: 100.0 * get_task(c).chance for c in row.per_task}  # MVX-Bench's fixed options per task
    return Entry(name=row.model, kind="paper", source="paper", benchmark="MVX-Bench", group=row.group,
                 avg=row.avg, per_task=dict(row.per_task), per_level=_levels(row.per_task, counts),
                 avg_recomputed=row.recomputed, avg_agrees=row.agrees, chance_per_task=chance,
                 chance=weighted_overall(chance, counts) if sum(counts.values()) else None, label="MVX-Bench")


def run_entry(run: Run, paper: dict[str, PaperRow], *, n_boot: int, seed: int) -> Entry:
    """Aggregate a run from its records (or, without a samples log, from the harness's figures)."""
    if run.records:
        s = summarize(run.records)
        per_task, counts, avg = s.per_task, s.n_per_task, s.overall
        unparsed, failed = sum(s.unparsed_per_task.values()), sum(s.failed_per_task.values())
        ci = bootstrap_ci(run.records, n_boot=n_boot, seed=seed).get("overall")
        chance_per_task, chance = s.chance_per_task, s.chance_overall
    else:
        per_task, counts = dict(run.reported), dict(run.reported_n)
        avg = weighted_overall(per_task, counts) if sum(counts.values()) else 0.0
        unparsed = sum(run.reported_unparsed.values()) if run.reported_unparsed else None
        failed, ci = None, None
        chance_per_task = {c: run.reported_chance.get(c, 100.0 * get_task(c).chance) for c in per_task}
        chance = weighted_overall(chance_per_task, counts) if sum(counts.values()) else None
    if run.benchmark not in ("MVX-Bench", "MVX-Synth") and per_task and _by_tasks(run.benchmark):
        avg = mean_of_tasks(per_task)  # e.g. CrossVid's O.Avg: the mean of task accuracies
        chance = mean_of_tasks(chance_per_task)
    expected = {t.code: t.n_questions for t in map(get_task, BENCH_CODES)}
    partial = run.benchmark == "MVX-Bench" and any(counts.get(c, 0) < n for c, n in expected.items())
    entry = Entry(name=run.name, kind="run", source=run.source, benchmark=run.benchmark, group="run", avg=avg,
                  per_task=per_task, per_level=_levels(per_task, counts), answered=sum(counts.values()),
                  unparsed=unparsed, failed=failed, ci=ci, partial=partial, paper_row=run.paper_row, path=run.path,
                  chance=chance, chance_per_task=dict(chance_per_task), label=benchmark_label(run.benchmark, per_task))
    ref = paper.get(run.paper_row or "")
    if ref is not None:
        entry.delta = {"Avg": avg - ref.avg,
                       **{c: per_task[c] - ref.per_task[c] for c in per_task if c in ref.per_task}}
    return entry


def benchmark_label(benchmark: str, codes) -> str:
    """What a score covers: a peer's name with the tasks that ran where they are not all of its paper's."""
    try:
        return get_benchmark(benchmark).scope_name(codes)
    except KeyError:
        return benchmark


def _by_tasks(benchmark: str) -> bool:
    """Whether a benchmark's paper averages sub-task accuracies (rather than weighting by questions)."""
    try:
        return get_benchmark(benchmark).aggregation == "tasks"
    except KeyError:
        return False


@dataclass
class Leaderboard:
    entries: list[Entry]
    flagged_paper: list[str]

    def ranked(self) -> list[Entry]:
        return sorted(self.entries, key=lambda e: (-e.avg, e.kind != "run", e.name))

    def runs(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == "run"]


def build_leaderboard(runs: Sequence[str | Path] = (), vlmeval: Sequence[str | Path] = (), *,
                      paper_table: str | Path = PAPER_TABLE, configs: Sequence[str | Path] = (CONFIG_DIR,),
                      mapping: dict[str, str] | None = None, n_boot: int = 2000, seed: int = 0) -> Leaderboard:
    """Merge the paper's rows with lmms-eval and VLMEvalKit runs found under the given paths."""
    rows = load_paper_table(paper_table)
    paper = {r.model: r for r in rows}
    cfgs = load_configs(configs) if configs else []
    found = find_lmms_runs(runs) + find_vlmeval_runs(vlmeval)
    for run in found:
        run.paper_row = match_paper_row(run, cfgs, list(paper), mapping)
    entries = [paper_entry(r) for r in rows] + [run_entry(r, paper, n_boot=n_boot, seed=seed) for r in found]
    mark_unverified_routes(entries, cfgs)
    return Leaderboard(entries=entries, flagged_paper=flagged_paper_rows(rows))


def mark_unverified_routes(entries: Sequence[Entry], cfgs: Sequence[HarnessConfig]) -> None:
    """Flag rows whose config's route the offline route check cannot run (remote code, vLLM, an API):
    a run by config name, a paper row by the config that reproduces it."""
    by_name = {c.name: c for c in cfgs}
    by_row = {c.paper_row: c for c in cfgs if c.paper_row}
    for e in entries:
        cfg = by_name.get(e.name) if e.kind == "run" else None
        cfg = cfg or by_row.get(e.paper_row if e.kind == "run" else e.name)
        if cfg is None or cfg.route == "agent":
            continue
        if cfg.offline_reason:
            e.route_unverified = cfg.offline_reason
        e.route_verified = bool(cfg.architecture) and not cfg.offline_reason
