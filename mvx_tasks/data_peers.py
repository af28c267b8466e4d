"""Peer benchmarks' questions (CVBench, MVU-Eval, CrossVid; see :mod:`.benchmarks`) from a canonical
folder or the authors' own files, read whole as each release ships them (:mod:`.data_release`)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .registry import get_task
from .schema import Sample
from .data import DATA_FILE, DataSourceError
from .data_hub import fetch_hub_dataset
from .data_release import LoadReport, load_canonical, load_release


def load_benchmark_report(bm: Any, root: str | Path | None = None, *,
                          strict: bool | None = None) -> tuple[list[Sample], LoadReport]:
    """A peer benchmark's questions and what the load did (files read, repairs and skips by row id, count
    warnings). From a folder: the canonical layout (``data.jsonl``) when present, else the files of the
    first of ``bm.releases`` found there, mapped by ``bm.map_row``. Without ``root``: ``$<bm.env>``, else
    the hub cache. ``strict`` (default ``$MVX_DATA_STRICT``) makes a row that cannot be mapped an error."""
    root = Path(root) if root else resolve_benchmark_root(bm)[0]
    if (root / DATA_FILE).is_file():
        samples, report = load_canonical(bm.name, root, bm.tasks)
        wrong = sorted({s.task for s in samples if get_task(s.task).benchmark != bm.name})
        if wrong:
            raise DataSourceError(f"{root}/{DATA_FILE} is read as {bm.name}, but holds tasks {wrong} of another "
                                  f"benchmark; {bm.name}'s codes: {', '.join(t.code for t in bm.tasks)}")
        return samples, report
    samples, report = load_release(bm.name, root, bm.releases, bm.map_row, tasks=bm.tasks, strict=strict)
    if not samples:
        raise DataSourceError(f"no {bm.name} questions found under {root} ({report.summary()}). "
                              f"Expected {bm.expected_columns}")
    return samples, report


def load_benchmark(bm: Any, root: str | Path | None = None, *, strict: bool | None = None) -> list[Sample]:
    """A peer benchmark's questions (see :func:`load_benchmark_report`)."""
    return load_benchmark_report(bm, root, strict=strict)[0]


def resolve_benchmark_root(bm: Any) -> tuple[Path, str]:
    """Which copy of a peer benchmark the harness reads: ``$<bm.env>`` or the hub cache."""
    env = os.environ.get(bm.env)
    if env:
        return Path(env), bm.env
    root = fetch_hub_dataset(bm.hub_repo, bm.cache_dir, name=bm.name, env=bm.env, allow_patterns=bm.hub_patterns)
    return root, f"hub {bm.hub_repo}"


def load_benchmark_samples(bm: Any) -> tuple[Path, list[Sample]]:
    root, _ = resolve_benchmark_root(bm)
    return root, load_benchmark(bm, root)
