"""Naive global-statistic baseline on MVX-Synth: it should score near chance on every task.

If a single global frame statistic (mean colour, brightness) answered a task, the synthetic
benchmark would be measuring that shortcut instead of the task. This script generates the
default set (or reads ``--data DIR``), times generation, and scores:
  * candidate tasks: the candidate whose first-frame mean colour is closest to the reference's;
  * FD: the brighter video; DE: "Strengthens" when the update is brighter than the premise;
  * RID: "Yes" when the two clips' mean colours are closer than the median RID pair;
  * SEQ: the option closest (Kendall distance) to ordering the clips by mean brightness.

Usage: python benchmarks/naive_baseline.py [--data DIR] [--per-task 20] [--seed 0] [--difficulty default]
       [--tasks CNT,VS]
"""
from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mvx_tasks.metrics import score_output, summarize  # noqa: E402
from mvx_tasks.registry import get_task  # noqa: E402
from mvx_tasks.schema import Sample, read_jsonl  # noqa: E402
from mvx_tasks.synth import generate  # noqa: E402
from mvx_tasks.video_decoder import load_video  # noqa: E402


def first_frame_mean(root: Path, path: str) -> np.ndarray:
    return load_video(root / path, max_frames=4).frames[0].reshape(-1, 3).mean(0)


def kendall(a: list[str], b: list[str]) -> int:
    pos = {x: i for i, x in enumerate(b)}
    r = [pos[x] for x in a]
    return sum(1 for i in range(len(r)) for j in range(i + 1, len(r)) if r[i] > r[j])


def predict(s: Sample, root: Path, rid_threshold: float) -> str:
    stats = {v.label: first_frame_mean(root, v.path) for v in s.videos}
    if s.task == "FD":
        return "A" if stats["Video A"].mean() >= stats["Video B"].mean() else "B"
    if s.task == "DE":
        return "A" if stats["Update"].mean() >= stats["Premise"].mean() else "B"
    if s.task == "RID":
        return "A" if np.linalg.norm(stats["Video 1"] - stats["Video 2"]) < rid_threshold else "B"
    if s.task == "SEQ":
        order = sorted(stats, key=lambda lbl: stats[lbl].mean())
        return min(s.options, key=lambda k: kendall([c.strip() for c in s.options[k].split(",")], order))
    ref = stats["Reference"]
    return min(s.options, key=lambda k: np.linalg.norm(stats[s.options[k]] - ref))


def chance(samples: list[Sample]) -> float:
    return float(np.mean([1.0 / len(s.options) for s in samples]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path)
    ap.add_argument("--per-task", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--difficulty", default="default")
    ap.add_argument("--tasks", default=None, help="comma-separated task codes (default: all 11)")
    ap.add_argument("--keep", action="store_true", help="keep the generated folder (default: delete it)")
    args = ap.parse_args()
    root = args.data
    made = root is None
    if made:
        root = Path(tempfile.mkdtemp(prefix="mvx-synth-"))
        t0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        generate(root, per_task=args.per_task, seed=args.seed, difficulty=args.difficulty, tasks=args.tasks,
                 progress=False)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
        print(f"generated {root}: {time.perf_counter() - t0:.1f} s wall, {cpu:.1f} s CPU in workers")
    samples = read_jsonl(root / "data.jsonl")
    rid = [s for s in samples if s.task == "RID"]
    dists = [np.linalg.norm(first_frame_mean(root, s.videos[0].path) - first_frame_mean(root, s.videos[1].path)) for s in rid]
    threshold = float(np.median(dists)) if dists else 0.0
    records, by_task = [], defaultdict(list)
    for s in samples:
        pred = predict(s, root, threshold)
        records.append(score_output(s.id, s.task, pred, s.options, s.answer))
        by_task[s.task].append(s)
    summary = summarize(records)
    print(f"{'task':5} {'n':>4} {'naive %':>8} {'chance %':>9}")
    for code, ss in by_task.items():
        print(f"{code:5} {len(ss):4d} {summary.per_task[code]:8.1f} {100 * chance(ss):9.1f}")
    print(f"{'all':5} {summary.n_total:4d} {summary.overall:8.1f} {100 * chance(samples):9.1f}")
    for code in by_task:
        get_task(code)  # every task is a registered MVX task
    if made and not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
