"""The MVX-Bench leaderboard: the paper's Table 1 merged with our own runs.

Paper rows are checked against themselves: their ``Avg`` must equal the question-weighted mean
of their per-task figures (registry counts) within 0.1, else they are flagged (two rows are:
they look like runs on fewer questions). Our runs (lmms-eval results + samples logs, VLMEvalKit
record files) are re-aggregated from their per-question records with the one metrics module,
get stratified bootstrap intervals, answered/unparsed counts, a partial-run flag when fewer
questions than the registry's were answered, and a Delta against the paper row they reproduce.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from .harness_configs import CONFIG_DIR, PAPER_TABLE, RUN_SIDECAR, HarnessConfig, load_configs, model_args_string
from .metrics import summarize, weighted_overall
from .benchmarks import PEERS, get_benchmark, task_of_harness_name
from .registry import BENCH_CODES, LEVELS, UnknownTaskError, all_levels, get_task
from .vlmeval.names import META_SUFFIX, RECORDS_SUFFIX

AVG_TOLERANCE = 0.1  # Table 1 prints one decimal; a self-consistent row agrees within this
IDENTITY_KEYS = ("pretrained", "model_version", "model", "model_id_name", "profile", "skills", "conflict",
                 "aggregation", "enable_thinking")
_TASK_NAME = re.compile(r"^mvx_(bench_frames|bench|synth)_([a-z0-9]+)$")


# ----------------------------------------------------------------------------- paper table

@dataclass
class PaperRow:
    """One row of Table 1 as printed."""

    model: str
    group: str
    size_tier: str
    avg: float
    per_task: dict[str, float]

    @property
    def recomputed(self) -> float:
        """Question-weighted mean of the per-task figures over the registry's counts."""
        return weighted_overall(self.per_task)

    @property
    def agrees(self) -> bool:
        return abs(self.recomputed - self.avg) <= AVG_TOLERANCE + 1e-9


def load_paper_table(path: str | Path = PAPER_TABLE) -> list[PaperRow]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [PaperRow(model=r["model"], group=r["group"], size_tier=r["size_tier"], avg=float(r["Avg"]),
                         per_task={c: float(r[c]) for c in BENCH_CODES}) for r in csv.DictReader(fh)]


def flagged_paper_rows(rows: Iterable[PaperRow]) -> list[str]:
    """Rows whose printed Avg does not follow from their per-task figures."""
    return [r.model for r in rows if not r.agrees]


# ----------------------------------------------------------------------------- runs

@dataclass
class Run:
    """One evaluation of one model: per-question records, or per-task figures when no log exists."""

    name: str
    source: str  # "lmms-eval" or "vlmeval"
    benchmark: str  # "MVX-Bench" or "MVX-Synth"
    model: str
    path: str
    records: list[dict] = field(default_factory=list)
    reported: dict[str, float] = field(default_factory=dict)  # per-task accuracy the harness reported
    reported_n: dict[str, int] = field(default_factory=dict)
    reported_unparsed: dict[str, int] = field(default_factory=dict)
    model_args: dict[str, str] = field(default_factory=dict)
    paper_row: str | None = None


def task_code(task_name: str) -> tuple[str, str] | None:
    """(benchmark, code) of a per-task harness name like ``mvx_bench_frames_cnt``; None for groups."""
    m = _TASK_NAME.match(task_name)
    if not m:
        return task_of_harness_name(task_name)  # a peer benchmark's sub-task (cvbench_mv_cor ...)
    try:
        code = get_task(m.group(2)).code
    except UnknownTaskError:
        return None  # a level subgroup such as mvx_bench_perception
    return ("MVX-Synth" if m.group(1) == "synth" else "MVX-Bench"), code


def parse_model_args(text: str | dict | None) -> dict[str, str]:
    if isinstance(text, dict):
        return {str(k): str(v) for k, v in text.items()}
    out = {}
    for part in filter(None, (text or "").split(",")):
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip()
    return out


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _sidecar(start: Path, root: Path) -> dict:
    """The nearest ``mvx_run.json`` between a results file and the folder given on the command line."""
    for folder in [start, *start.parents]:
        side = folder / RUN_SIDECAR
        if side.is_file():
            return json.loads(side.read_text(encoding="utf-8"))
        if folder == root or folder == folder.parent:
            break
    return {}


def load_lmms_run(results_file: str | Path, root: str | Path | None = None) -> Run:
    """One lmms-eval run from ``<ts>_results.json`` and its ``<ts>_samples_<task>.jsonl`` files."""
    rf = Path(results_file)
    data = json.loads(rf.read_text(encoding="utf-8"))
    stamp = rf.name[: -len("_results.json")]
    config = data.get("config") or {}
    model = str(config.get("model", rf.parent.name))
    margs = parse_model_args(config.get("model_args"))
    side = _sidecar(rf.parent, Path(root) if root else rf.parent)
    bench = "MVX-Bench"
    weights = margs.get("pretrained", margs.get("model", rf.parent.name))
    run = Run(name=side.get("config") or f"{model}:{Path(weights).name}",
              source="lmms-eval", benchmark=bench, model=model, path=str(rf), model_args=margs,
              paper_row=side.get("paper_row"))
    n_samples = data.get("n-samples") or {}
    for task, metrics in (data.get("results") or {}).items():
        tc = task_code(task)
        if tc is None or "mvx_acc,none" not in metrics:
            continue
        run.benchmark, code = tc
        run.reported[code] = float(metrics["mvx_acc,none"])
        n = n_samples.get(task, {})
        run.reported_n[code] = int(n.get("effective", n.get("original", 0)) if isinstance(n, dict) else n)
        if "mvx_unparsed,none" in metrics:
            run.reported_unparsed[code] = int(metrics["mvx_unparsed,none"])
        samples = rf.parent / f"{stamp}_samples_{task}.jsonl"
        if samples.is_file():
            run.records.extend(x["mvx_acc"] for x in _read_jsonl(samples) if isinstance(x.get("mvx_acc"), dict))
    return run


def split_by_benchmark(run: Run) -> list[Run]:
    """One run per benchmark: a single lmms-eval call may cover MVX-Bench and its peers."""
    def bench(code: str) -> str:
        try:
            return get_task(code).benchmark
        except UnknownTaskError:
            return run.benchmark
    names = {bench(c) for c in run.reported} | {bench(r["task"]) for r in run.records}
    if len(names) <= 1:
        if names:
            name = names.pop()
            run.benchmark = name if name != "MVX-Bench" else run.benchmark  # keep MVX-Synth
        return [run]
    out = []
    for name in sorted(names):
        keep = [c for c in run.reported if bench(c) == name]
        part = Run(name=run.name, source=run.source, benchmark=name, model=run.model, path=run.path,
                   records=[r for r in run.records if bench(r["task"]) == name],
                   reported={c: run.reported[c] for c in keep},
                   reported_n={c: run.reported_n[c] for c in keep if c in run.reported_n},
                   reported_unparsed={c: run.reported_unparsed[c] for c in keep if c in run.reported_unparsed},
                   model_args=run.model_args, paper_row=run.paper_row if name == "MVX-Bench" else None)
        if name == "MVX-Bench":
            part.benchmark = run.benchmark if run.benchmark in ("MVX-Bench", "MVX-Synth") else "MVX-Bench"
        out.append(part)
    return out


def find_lmms_runs(paths: Iterable[str | Path]) -> list[Run]:
    """The latest results file of every lmms-eval output folder under the given paths."""
    runs = []
    for root in map(Path, paths):
        files = [root] if root.is_file() else sorted(root.rglob("*_results.json"))
        latest: dict[Path, Path] = {}
        for f in files:
            if f.parent not in latest or f.name > latest[f.parent].name:
                latest[f.parent] = f
        for f in latest.values():
            runs.extend(split_by_benchmark(load_lmms_run(f, root if root.is_dir() else None)))
    return runs


def find_vlmeval_runs(paths: Iterable[str | Path]) -> list[Run]:
    """VLMEvalKit runs from the record files the MVX dataset class writes at evaluation."""
    runs = []
    for root in map(Path, paths):
        files = [root] if root.is_file() else sorted(root.rglob(f"*{RECORDS_SUFFIX}"))
        for f in files:
            meta_file = f.with_name(f.name[: -len(RECORDS_SUFFIX)] + META_SUFFIX)
            meta = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.is_file() else {}
            stem = f.name[: -len(RECORDS_SUFFIX)]
            model = meta.get("model", stem)
            runs.append(Run(name=f"{model} ({meta.get('dataset', 'VLMEvalKit')})", source="vlmeval",
                            benchmark=meta.get("benchmark", "MVX-Bench"), model=model, path=str(f),
                            records=_read_jsonl(f), paper_row=meta.get("paper_row")))
    return runs


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower().replace("instruct", ""))


def match_paper_row(run: Run, configs: Sequence[HarnessConfig], rows: Sequence[str],
                    mapping: dict[str, str] | None = None) -> str | None:
    """The Table 1 row a run reproduces: explicit map, sidecar, matching config, then the name."""
    if mapping and (run.name in mapping or run.model in mapping):
        return mapping.get(run.name) or mapping.get(run.model)
    if run.paper_row:
        return run.paper_row
    if run.benchmark != "MVX-Bench":
        return None
    run_ident = {k: v for k, v in run.model_args.items() if k in IDENTITY_KEYS}
    for cfg in configs:
        if cfg.name == run.name:
            return cfg.paper_row
        ident = {k: model_args_string({k: v}).split("=", 1)[1] for k, v in cfg.model_args.items() if k in IDENTITY_KEYS}
        if cfg.model == run.model and ident and ident == run_ident:
            return cfg.paper_row
    by_norm = {_norm(r): r for r in rows}
    return by_norm.get(_norm(run.model))


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
    return Entry(name=row.model, kind="paper", source="paper", benchmark="MVX-Bench", group=row.group,
                 avg=row.avg, per_task=dict(row.per_task), per_level=_levels(row.per_task, counts),
                 avg_recomputed=row.recomputed, avg_agrees=row.agrees)


def run_entry(run: Run, paper: dict[str, PaperRow], *, n_boot: int, seed: int) -> Entry:
    """Aggregate a run from its records (or, without a samples log, from the harness's figures)."""
    if run.records:
        s = summarize(run.records)
        per_task, counts, avg = s.per_task, s.n_per_task, s.overall
        unparsed, failed = sum(s.unparsed_per_task.values()), sum(s.failed_per_task.values())
        ci = bootstrap_ci(run.records, n_boot=n_boot, seed=seed).get("overall")
    else:
        per_task, counts = dict(run.reported), dict(run.reported_n)
        avg = weighted_overall(per_task, counts) if sum(counts.values()) else 0.0
        unparsed = sum(run.reported_unparsed.values()) if run.reported_unparsed else None
        failed, ci = None, None
    if run.benchmark not in ("MVX-Bench", "MVX-Synth") and per_task and _by_tasks(run.benchmark):
        avg = sum(per_task.values()) / len(per_task)  # e.g. CrossVid's O.Avg: the mean of task accuracies
    expected = {t.code: t.n_questions for t in map(get_task, BENCH_CODES)}
    partial = run.benchmark == "MVX-Bench" and any(counts.get(c, 0) < n for c, n in expected.items())
    entry = Entry(name=run.name, kind="run", source=run.source, benchmark=run.benchmark, group="run", avg=avg,
                  per_task=per_task, per_level=_levels(per_task, counts), answered=sum(counts.values()),
                  unparsed=unparsed, failed=failed, ci=ci, partial=partial, paper_row=run.paper_row, path=run.path)
    ref = paper.get(run.paper_row or "")
    if ref is not None:
        entry.delta = {"Avg": avg - ref.avg,
                       **{c: per_task[c] - ref.per_task[c] for c in per_task if c in ref.per_task}}
    return entry


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


# ----------------------------------------------------------------------------- output

LEVEL_TITLES = {"perception": "Perception", "matching": "Matching", "reasoning": "Reasoning"}


def _f(x: float | None, digits: int = 1) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


MVX_BENCHMARKS = ("MVX-Bench", "MVX-Synth")
#: Benchmarks shown side by side, MVX-Bench first; each peer also gets its own per-task table.
SIDE_BY_SIDE = ("MVX-Bench", *(bm.name for bm in PEERS))


def side_by_side(board: Leaderboard) -> list[dict[str, Any]]:
    """One row per model (run name, or paper row): its overall on each benchmark it was run on."""
    rows: dict[str, dict[str, Any]] = {}
    for e in board.entries:
        if e.benchmark not in SIDE_BY_SIDE:
            continue
        row = rows.setdefault(e.name, {"model": e.name, "kind": e.kind})
        row[e.benchmark] = e.avg
        row[f"{e.benchmark} answered"] = e.answered
    return sorted(rows.values(), key=lambda r: (-sum(1 for b in SIDE_BY_SIDE if b in r), r["kind"] != "run", r["model"]))


def _peer_tables(board: Leaderboard) -> list[str]:
    lines: list[str] = []
    for bm in PEERS:
        entries = sorted((e for e in board.runs() if e.benchmark == bm.name), key=lambda e: -e.avg)
        if not entries:
            continue
        codes = [t.code for t in bm.tasks]
        how = "question-weighted" if bm.aggregation == "questions" else "mean of sub-task accuracies"
        head = ["Model", "Source", "Overall", "95% CI", *(lv.title for lv in bm.levels),
                *(bm.suffix(c).upper() for c in codes), "Answered", "Unparsed"]
        lines += ["", f"## {bm.name}", "", f"Accuracy (%); overall {how}, as in the {bm.name} paper "
                  f"({bm.counts_note}).", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for e in entries:
            ci = f"{e.ci[0]:.1f}–{e.ci[1]:.1f}" if e.ci else ""
            lines.append("| " + " | ".join([f"**{e.name}**", e.source, _f(e.avg), ci,
                                            *(_f(e.per_level.get(lv.code)) for lv in bm.levels),
                                            *(_f(e.per_task.get(c)) for c in codes),
                                            "" if e.answered is None else str(e.answered),
                                            "" if e.unparsed is None else str(e.unparsed)]) + " |")
    return lines


def csv_rows(board: Leaderboard) -> list[dict[str, Any]]:
    out = []
    for e in board.ranked():
        row: dict[str, Any] = {"model": e.name, "kind": e.kind, "source": e.source, "benchmark": e.benchmark,
                               "group": e.group, "Avg": _f(e.avg, 2),
                               "ci95_low": _f(e.ci[0], 2) if e.ci else "", "ci95_high": _f(e.ci[1], 2) if e.ci else ""}
        row.update({LEVEL_TITLES[lv]: _f(e.per_level.get(lv), 2) for lv in LEVELS})
        row.update({c: _f(e.per_task.get(c), 2) for c in BENCH_CODES})
        row.update({lv.code: _f(e.per_level.get(lv.code), 2) for bm in PEERS for lv in bm.levels})
        row.update({t.code: _f(e.per_task.get(t.code), 2) for bm in PEERS for t in bm.tasks})
        row.update({"answered": "" if e.answered is None else e.answered,
                    "unparsed": "" if e.unparsed is None else e.unparsed,
                    "failed": "" if e.failed is None else e.failed,
                    "partial": e.partial if e.kind == "run" else "",
                    "paper_row": e.paper_row or "", "delta_Avg": _f(e.delta.get("Avg"), 2),
                    "Avg_recomputed": _f(e.avg_recomputed, 2),
                    "Avg_check": "" if e.avg_agrees is None else ("ok" if e.avg_agrees else "MISMATCH"),
                    "flags": "; ".join(e.flags), "route": e.route_mark or ("verified by route check" if e.route_verified else "")})
        row.update({f"delta_{c}": _f(e.delta.get(c), 2) for c in BENCH_CODES})
        out.append(row)
    return out


def markdown(board: Leaderboard) -> str:
    head = ["#", "Model", "Source", "Avg", "95% CI", *LEVEL_TITLES.values(), *BENCH_CODES, "Answered", "Unparsed",
            "Δ Avg", "Flags"]
    lines = ["# MVX-Bench leaderboard", "",
             "Accuracy (%). `Avg` is question-weighted (total correct / questions answered). Paper rows are "
             "Table 1 as printed; their level columns are derived from the per-task figures with the registry's "
             "question counts. Our runs are re-scored from their per-question records; the 95% CI is a "
             "stratified percentile bootstrap.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, e in enumerate((e for e in board.ranked() if e.benchmark in MVX_BENCHMARKS), 1):
        ci = f"{e.ci[0]:.1f}–{e.ci[1]:.1f}" if e.ci else ""
        name = f"**{e.name}**" if e.kind == "run" else e.name
        cells = [str(i), name, e.source if e.kind == "paper" else f"{e.source} ({e.benchmark})", _f(e.avg), ci,
                 *(_f(e.per_level.get(lv)) for lv in LEVELS), *(_f(e.per_task.get(c)) for c in BENCH_CODES),
                 "" if e.answered is None else str(e.answered), "" if e.unparsed is None else str(e.unparsed),
                 f"{e.delta['Avg']:+.1f} vs {e.paper_row}" if "Avg" in e.delta else "",
                 "; ".join([*e.flags, *([e.route_mark] if e.route_mark else [])])]
        lines.append("| " + " | ".join(cells) + " |")
    repro = [e for e in board.runs() if e.delta]
    if repro:
        lines += ["", "## Reproductions (run minus paper, points)", "",
                  "| Run | Paper row | Avg | " + " | ".join(BENCH_CODES) + " |", "|" + "---|" * (3 + len(BENCH_CODES))]
        for e in repro:
            lines.append(f"| {e.name} | {e.paper_row} | {e.delta['Avg']:+.1f} | "
                         + " | ".join(f"{e.delta[c]:+.1f}" if c in e.delta else "" for c in BENCH_CODES) + " |")
    sbs = side_by_side(board)
    if any(b in r for r in sbs for b in SIDE_BY_SIDE[1:]):
        lines += ["", "## Benchmarks side by side", "",
                  "Overall accuracy (%) per benchmark, each aggregated as its own paper does (questions answered "
                  "in brackets).", "", "| Model | " + " | ".join(SIDE_BY_SIDE) + " |", "|" + "---|" * (1 + len(SIDE_BY_SIDE))]
        for r in sbs:
            cells = [f"{_f(r[b])} ({r[b + ' answered']})" if b in r and r.get(b + " answered") is not None
                     else (_f(r[b]) if b in r else "") for b in SIDE_BY_SIDE]
            name = f"**{r['model']}**" if r["kind"] == "run" else r["model"]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += _peer_tables(board)
    lines += ["", "## Checks", ""]
    for e in board.entries:
        if e.kind == "paper" and not e.avg_agrees:
            lines.append(f"- Paper row **{e.name}**: printed Avg {e.avg:.1f}, question-weighted per-task mean "
                         f"{e.avg_recomputed:.2f}; it does not follow from its per-task figures "
                         "(likely a partial run).")
    for e in board.runs():
        if e.partial:
            lines.append(f"- Run **{e.name}** answered {e.answered} of the registry's questions: a partial run.")
    unverified = sorted({e.paper_row or e.name for e in board.entries if e.route_unverified})
    if unverified:
        lines.append(f"- Route not verified offline (remote code, vLLM or an API; `mvx-bench routes` checks their "
                     f"request messages only): {', '.join(unverified)}.")
    agree = sum(1 for e in board.entries if e.kind == "paper" and e.avg_agrees)
    total = sum(1 for e in board.entries if e.kind == "paper")
    lines.append(f"- {agree} of {total} paper rows reproduce their Avg within {AVG_TOLERANCE}.")
    return "\n".join(lines) + "\n"


def plot(board: Leaderboard, path: str | Path) -> Path:
    """Horizontal bars of Avg; our runs coloured with their interval, flagged paper rows hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranked = [e for e in board.ranked() if e.benchmark in MVX_BENCHMARKS][::-1]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(ranked) + 1.2))
    colors = ["tab:orange" if e.kind == "run" else ("tab:green" if e.group == "agent" else "tab:gray") for e in ranked]
    bars = ax.barh(range(len(ranked)), [e.avg for e in ranked], color=colors)
    for bar, e in zip(bars, ranked):
        if e.flags:
            bar.set_hatch("//")
        if e.ci:
            ax.errorbar(e.avg, bar.get_y() + bar.get_height() / 2, xerr=[[e.avg - e.ci[0]], [e.ci[1] - e.avg]],
                        fmt="none", ecolor="black", capsize=2)
    ax.set_yticks(range(len(ranked)), [e.name for e in ranked], fontsize=7)
    ax.set_xlabel("Avg accuracy (%), question-weighted")
    ax.set_title("MVX-Bench: Table 1 and our runs (hatched: flagged)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_leaderboard(board: Leaderboard, out: str | Path) -> dict[str, Path]:
    """Write leaderboard.md, leaderboard.csv and leaderboard.png into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = csv_rows(board)
    with (out / "leaderboard.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "leaderboard.md").write_text(markdown(board), encoding="utf-8")
    sbs = side_by_side(board)
    cols = ["model", "kind"] + [c for b in SIDE_BY_SIDE for c in (b, f"{b} answered")]
    with (out / "leaderboard_benchmarks.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows({k: (_f(v, 2) if isinstance(v, float) else ("" if v is None else v)) for k, v in r.items()}
                    for r in sbs)
    return {"csv": out / "leaderboard.csv", "benchmarks_csv": out / "leaderboard_benchmarks.csv", "md": out / "leaderboard.md", "png": plot(board, out / "leaderboard.png")}


def add_leaderboard_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``mvx-bench leaderboard``."""
    parser.add_argument("--runs", nargs="*", default=[], help="lmms-eval output folders or results files")
    parser.add_argument("--vlmeval", nargs="*", default=[], help="VLMEvalKit work dirs or *_mvx_records.jsonl files")
    parser.add_argument("--out", required=True, help="folder for leaderboard.md/.csv/.png")
    parser.add_argument("--paper", default=str(PAPER_TABLE), help="Table 1 as CSV")
    parser.add_argument("--configs", nargs="*", default=[str(CONFIG_DIR)], help="harness configs for row matching")
    parser.add_argument("--map", nargs="*", default=[], metavar="RUN=ROW", help="match a run to a paper row by hand")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)


def missing_runs(runs: Sequence[str | Path], vlmeval: Sequence[str | Path]) -> list[str]:
    """Each given path that holds no run (so the leaderboard would silently leave it out)."""
    problems = []
    for paths, pattern, what in ((runs, "*_results.json", "lmms-eval results file"),
                                 (vlmeval, f"*{RECORDS_SUFFIX}", "VLMEvalKit MVX records file")):
        for p in map(Path, paths):
            if not p.exists():
                problems.append(f"{p} does not exist")
            elif p.is_dir() and next(p.rglob(pattern), None) is None:
                problems.append(f"{p} holds no {what} ({pattern}); did that run fail?")
    return problems


def cmd_leaderboard(args: argparse.Namespace) -> int:
    mapping = dict(m.split("=", 1) for m in args.map)
    problems = missing_runs(args.runs, args.vlmeval)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return 1
    board = build_leaderboard(args.runs, args.vlmeval, paper_table=args.paper, configs=args.configs,
                              mapping=mapping, n_boot=args.n_boot, seed=args.seed)
    files = write_leaderboard(board, args.out)
    print(f"{len(board.runs())} run(s), {len(board.entries) - len(board.runs())} paper rows; "
          f"flagged paper rows: {', '.join(board.flagged_paper) or 'none'}")
    for kind, path in files.items():
        print(f"{kind}: {path}")
    return 0
