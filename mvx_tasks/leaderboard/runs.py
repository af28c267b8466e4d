"""The leaderboard's inputs: Table 1 as printed (self-checked) and our runs (lmms-eval results and
samples logs, VLMEvalKit records), matched to the paper row they reproduce."""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence


from ..harness_configs import PAPER_TABLE, RUN_SIDECAR, HarnessConfig, model_args_string
from ..metrics import weighted_overall
from ..benchmarks import task_of_harness_name
from ..registry import BENCH_CODES, UnknownTaskError, get_task
from ..vlmeval.names import META_SUFFIX, RECORDS_SUFFIX

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
    reported_chance: dict[str, float] = field(default_factory=dict)  # per-task chance (%) the harness reported
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
        if isinstance(metrics.get("mvx_chance,none"), (int, float)):
            run.reported_chance[code] = float(metrics["mvx_chance,none"])
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
                   reported_chance={c: run.reported_chance[c] for c in keep if c in run.reported_chance},
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
