"""Does the RID identity verdict survive a codec change? The same questions at two CRFs, scored alike.

Each pair of folders holds the same RID questions (real-footage composite, one seed) encoded at two
CRFs (e.g. 20 and 30). Every RID pair is scored by the lite tool's own path,
``LiteVisualSimilarity().compare(clip_1, clip_2, aspect="identity")``, in both encodings. Printed
per set: AUC and right answers (score >= RID_IDENTITY_THRESHOLD means "same") at each CRF, verdicts
that flip between the encodings, the verdicts the policy marks fragile in either encoding (a score
within RID_NEAR_MARGIN of the threshold) and how many of the flips they hold, the mean |score change|
and seconds per video. The answers in ``data.jsonl`` are read here for scoring only; the tool never
sees them.

    python benchmarks/identity_stability.py SET_CRF20 SET_CRF30 [SET_CRF20 SET_CRF30 ...] [--json OUT]

A set whose seed the fitting record lists (``mvx_tasks/fitting_record.yaml``) is refused unless ``--allow-recorded``
(fitting or choosing on it); the output then says per set that it is not held out.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mvx_tasks.fitting_record import (
    ALLOW_HELP,
    ALLOW_OPTION,
    RecordedSeedError,
    guard_folders,
)

cv2.setNumThreads(1)


def rid_pairs(folder: Path) -> list[dict]:
    """The RID yes/no questions of a dataset folder: id, the two video paths, truth (True = same)."""
    out = []
    for line in (folder / "data.jsonl").read_text().splitlines():
        q = json.loads(line) if line.strip() else {}
        if q.get("task") != "RID" or len(q.get("videos", [])) != 2:
            continue
        same = q["options"][q["answer"]].strip().lower().startswith("yes")
        out.append({"id": q["id"], "paths": [str(folder / v["path"]) for v in q["videos"]], "same": same})
    return out


def auc(scores: list[float], truth: list[bool]) -> float:
    """Probability that a same pair outscores a different pair (ties count half)."""
    pos = [s for s, t in zip(scores, truth) if t]
    neg = [s for s, t in zip(scores, truth) if not t]
    if not pos or not neg:
        return float("nan")
    return float(np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg]))


def pair_figures(a: list[float], b: list[float], same: list[bool], threshold: float, margin: float) -> dict:
    """Right verdicts in each encoding, flips, marked verdicts (a score within ``margin`` of ``threshold``
    in either encoding, as the RID policy marks them fragile) and flips among the marked."""
    flips = [(x >= threshold) != (z >= threshold) for x, z in zip(a, b)]
    marked = [abs(x - threshold) < margin or abs(z - threshold) < margin for x, z in zip(a, b)]
    return {"right_a": sum((x >= threshold) == t for x, t in zip(a, same)),
            "right_b": sum((z >= threshold) == t for z, t in zip(b, same)),
            "flipped": sum(flips), "marked": sum(marked), "flipped_marked": sum(f and m for f, m in zip(flips, marked))}


def score_set(folder: Path) -> tuple[dict[str, float], float]:
    """{question id: identity score}, seconds per video (decode excluded)."""
    from mvx_tasks.video_decoder import load_video
    from sama_model.backends.lite.visual_similarity import LiteVisualSimilarity

    scores, spent, n = {}, 0.0, 0
    for p in rid_pairs(folder):
        clips = [load_video(x) for x in p["paths"]]
        t = time.perf_counter()
        scores[p["id"]] = float(LiteVisualSimilarity().compare(*clips, aspect="identity")["score"])
        spent, n = spent + time.perf_counter() - t, n + 2
    return scores, spent / max(n, 1)


def main(argv: list[str] | None = None) -> int:
    from sama_model.skills.multi_video_comparison.rid import (
        RID_IDENTITY_THRESHOLD as THR,
    )
    from sama_model.skills.multi_video_comparison.rid import RID_NEAR_MARGIN as MARGIN

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="folder pairs: SET_CRF_A SET_CRF_B ...")
    ap.add_argument("--json", help="write per-pair scores and per-set figures here")
    ap.add_argument(ALLOW_OPTION, action="store_true", help=ALLOW_HELP)
    args = ap.parse_args(argv)
    if len(args.sets) % 2:
        ap.error("give folders in pairs (same questions at two CRFs)")
    try:
        standing = guard_folders(args.sets, args.allow_recorded, "identity_stability.py's figures")
    except RecordedSeedError as exc:
        ap.error(str(exc))
    print("\n".join(standing))
    report, total = [], {"n": 0, "right_a": 0, "right_b": 0, "flipped": 0, "marked": 0, "flipped_marked": 0}
    print(f"{'set':<12} {'AUC a/b':>13} {'right a/b':>11} {'flipped':>8} {'marked':>7} {'|d|':>6} {'s/video':>8}")
    for fa, fb in zip(args.sets[::2], args.sets[1::2]):
        fa, fb = Path(fa), Path(fb)
        truth = {p["id"]: p["same"] for p in rid_pairs(fa)}
        (sa, ta), (sb, tb) = score_set(fa), score_set(fb)
        ids = [i for i in truth if i in sb]
        y = [truth[i] for i in ids]
        a, b = [sa[i] for i in ids], [sb[i] for i in ids]
        row = {"set": fa.name, "n": len(ids), "auc_a": auc(a, y), "auc_b": auc(b, y),
               **pair_figures(a, b, y, THR, MARGIN),
               "mean_abs_change": float(np.mean(np.abs(np.subtract(a, b)))) if ids else float("nan"),
               "s_per_video": (ta + tb) / 2, "scores": {i: [sa[i], sb[i], truth[i]] for i in ids}}
        report.append(row)
        for k in total:
            total[k] += row[k]
        print(f"{fa.name:<12} {row['auc_a']:6.3f}/{row['auc_b']:.3f} {row['right_a']:4d}/{row['right_b']:<2d} of {len(ids):<2d}"
              f" {row['flipped']:5d} {row['marked']:7d} {row['mean_abs_change']:6.3f} {row['s_per_video']:8.3f}")
    print(f"{'total':<12} {'':>13} {total['right_a']:4d}/{total['right_b']:<2d} of {total['n']:<3d}{total['flipped']:4d}"
          f" {total['marked']:7d}   (flips among the marked: {total['flipped_marked']})")
    if args.json:
        Path(args.json).write_text(json.dumps({"sets": report, "total": total, "standing": standing}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
