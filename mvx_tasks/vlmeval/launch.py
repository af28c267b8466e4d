"""``mvx-bench vlmeval``: register the MVX datasets and SAMA, then run VLMEvalKit's runner in-process.

Registration only lives in this process, so the runner cannot be started as a separate
``python -m vlmeval.run``. Success is judged by the record files the dataset writes at
evaluation (one per model and dataset), not by the runner, which logs and skips failures.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from .names import DATASET_ENV, RECORDS_SUFFIX, base_name


def expected_outputs(data: Sequence[str], model: Sequence[str], work_dir: str | Path, mode: str) -> list[Path]:
    """The files a successful run leaves: records (mode all/eval) or predictions (mode infer)."""
    wd = Path(work_dir)
    if mode == "infer":
        from vlmeval.smp import get_pred_file_path

        return [Path(get_pred_file_path(str(wd / m), m, d)) for m in model for d in data]
    return [wd / m / f"{m}_{d}{RECORDS_SUFFIX}" for m in model for d in data]


def run_vlmeval(data: Sequence[str], model: Sequence[str], work_dir: str | Path = "outputs/vlmeval", *,
                limit: int | None = None, mode: str = "all", data_root: str | Path | None = None,
                extra_args: Sequence[str] = ()) -> int:
    """Run VLMEvalKit on MVX datasets; 0 when every (model, dataset) pair left its output."""
    from .register import register

    register()
    if data_root is not None:
        for name in data:
            os.environ[DATASET_ENV[base_name(name)][0]] = str(Path(data_root).resolve())
    from vlmeval import run as vrun

    argv = ["vlmeval.run", "--data", *data, "--model", *model, "--work-dir", str(work_dir), "--mode", mode]
    if limit is not None:
        argv += ["--limit", str(int(limit))]  # the MVX dataset applies it per task
    old = sys.argv
    sys.argv = argv + list(extra_args)
    try:
        args = vrun.parse_args()
    finally:
        sys.argv = old
    expected = expected_outputs(data, model, work_dir, mode)
    before = {p: p.stat().st_mtime_ns for p in expected if p.is_file()}
    try:
        vrun.run_task(args)
    except Exception as exc:  # report, then judge by what was written like any other failure
        print(f"error: VLMEvalKit stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
    # an output left by an earlier run in the same work dir does not count for this one
    missing = [p for p in expected if not p.is_file() or before.get(p) == p.stat().st_mtime_ns]
    for p in missing:
        print(f"error: this run did not write {p}; see the log under {Path(work_dir) / 'logs'}", file=sys.stderr)
    return 1 if missing else 0


def add_vlmeval_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``mvx-bench vlmeval``."""
    parser.add_argument("--data", nargs="+", required=True, help="e.g. MVX_Bench_8frame MVX_Synth_16frame")
    parser.add_argument("--model", nargs="+", required=True, help="VLMEvalKit model names, or SAMA / SAMA_offline")
    parser.add_argument("--work-dir", default="outputs/vlmeval")
    parser.add_argument("--limit", type=int, default=None, help="questions per task")
    parser.add_argument("--mode", choices=("all", "infer", "eval"), default="all")
    parser.add_argument("--data-root", default=None, help="canonical folder (else MVX_BENCH_DATA / MVX_SYNTH_DATA)")


def cmd_vlmeval(args: argparse.Namespace) -> int:
    return run_vlmeval(args.data, args.model, args.work_dir, limit=args.limit, mode=args.mode,
                       data_root=args.data_root, extra_args=list(getattr(args, "extra", None) or []))
