"""Peer benchmarks' questions (CVBench, MVU-Eval, CrossVid; see :mod:`.benchmarks`) from a canonical
folder or the authors' own files, with video paths found by file name."""
from __future__ import annotations

import logging
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .registry import get_task
from .schema import Sample, validate_sample
from .data import DATA_FILE, DataSourceError, load_local
from .data_hub import fetch_hub_dataset

log = logging.getLogger(__name__)
# ----------------------------------------------------------------------------- peer benchmarks


def _video_index(root: Path) -> dict[str, list[Path]]:
    """Every video file under ``root`` by file name (one walk; hub layouts move videos into folders)."""
    from .schema import VIDEO_EXTENSIONS

    index: dict[str, list[Path]] = defaultdict(list)
    for p in root.rglob("*"):
        if p.suffix.lower() in VIDEO_EXTENSIONS and p.is_file():
            index[p.name].append(p)
    return index


def load_benchmark(bm: Any, root: str | Path | None = None) -> list[Sample]:
    """A peer benchmark's questions (see :mod:`.benchmarks`) from a folder: the canonical layout
    (``data.jsonl``) when present, else the authors' files mapped by ``bm.map_row``. Without
    ``root``: ``$<bm.env>``, else the hub cache. Video paths that are not where a row says are
    looked up by file name under the folder (the authors' archives unpack flat or into folders)."""
    root = Path(root) if root else resolve_benchmark_root(bm)[0]
    if (root / DATA_FILE).is_file():
        samples = load_local(root)
        wrong = sorted({s.task for s in samples if get_task(s.task).benchmark != bm.name})
        if wrong:
            raise DataSourceError(f"{root}/{DATA_FILE} is read as {bm.name}, but holds tasks {wrong} of another "
                                  f"benchmark; {bm.name}'s codes: {', '.join(t.code for t in bm.tasks)}")
        return samples
    index: dict[str, list[Path]] | None = None
    samples, skipped = [], Counter()
    for where, row in bm.rows(root):
        raw = bm.map_row(row, where)
        if raw is None:
            skipped[str(row.get("_qa_file") or "?")] += 1
            continue
        for v in raw["videos"]:
            if (root / v["path"]).exists():
                continue
            if index is None:
                index = _video_index(root)
            hits = index.get(Path(v["path"]).name, [])
            if len(hits) == 1:
                v["path"] = hits[0].relative_to(root).as_posix()
        samples.append(validate_sample(raw, where=where))
    if skipped:
        log.warning("%s at %s: skipped %s (formats the multiple-choice schema cannot hold; see "
                    "mvx_tasks/benchmarks.py)", bm.name, root, ", ".join(f"{k}: {n}" for k, n in sorted(skipped.items())))
    if not samples:
        raise DataSourceError(f"no {bm.name} questions found under {root}. Expected {bm.expected_columns}")
    return samples


def resolve_benchmark_root(bm: Any) -> tuple[Path, str]:
    """Which copy of a peer benchmark the harness reads: ``$<bm.env>`` or the hub cache."""
    env = os.environ.get(bm.env)
    if env:
        return Path(env), bm.env
    return fetch_hub_dataset(bm.hub_repo, bm.cache_dir, name=bm.name, env=bm.env), f"hub {bm.hub_repo}"


def load_benchmark_samples(bm: Any) -> tuple[Path, list[Sample]]:
    root, _ = resolve_benchmark_root(bm)
    return root, load_benchmark(bm, root)
