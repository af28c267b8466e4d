"""The MVX-Bench leaderboard: the paper's Table 1 merged with our own runs.

Paper rows are checked against themselves: their ``Avg`` must equal the question-weighted mean
of their per-task figures (registry counts) within 0.1, else they are flagged (two rows are:
they look like runs on fewer questions). Our runs (lmms-eval results + samples logs, VLMEvalKit
record files) are re-aggregated from their per-question records with the one metrics module,
get stratified bootstrap intervals, answered/unparsed counts, a partial-run flag when fewer
questions than the registry's were answered, and a Delta against the paper row they reproduce.

The package: :mod:`.runs` reads the paper table and the runs, :mod:`.table` builds the rows
(aggregation, bootstrap, Delta, route marks), :mod:`.output` writes the Markdown, CSV and plot;
this module is the ``mvx-bench leaderboard`` command.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from ..harness_configs import CONFIG_DIR, PAPER_TABLE
from ..vlmeval.names import RECORDS_SUFFIX
from .output import write_leaderboard
from .table import build_leaderboard


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
