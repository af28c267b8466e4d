"""Does the RID identity verdict survive a codec change? The same questions at two CRFs, scored alike.

Each pair of folders holds the same RID questions (real-footage composite, one seed) encoded at two
CRFs (e.g. 20 and 30). Every RID pair is scored by the lite tool's own path,
``LiteVisualSimilarity().compare(clip_1, clip_2, aspect="identity")``, in both encodings. Printed
per set: AUC and right answers (score >= RID_IDENTITY_THRESHOLD means "same") at each CRF, verdicts
that flip between the encodings, the mean |score change| and seconds per video. The answers in
``data.jsonl`` are read here for scoring only; the tool never sees them.

    python benchmarks/identity_stability.py SET_CRF20 SET_CRF30 [SET_CRF20 SET_CRF30 ...] [--json OUT]
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


def score_set(folder: Path) -> tuple[dict[str, float], float]:
    """{question id: identity score}, seconds per video (decode excluded)."""
    from mvx_tasks.video_decoder import load_video
    from sama_model.backends.lite.similarity import LiteVisualSimilarity

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

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="folder pairs: SET_CRF_A SET_CRF_B ...")
    ap.add_argument("--json", help="write per-pair scores and per-set figures here")
    args = ap.parse_args(argv)
    if len(args.sets) % 2:
        ap.error("give folders in pairs (same questions at two CRFs)")
    report, total = [], {"n": 0, "right_a": 0, "right_b": 0, "flipped": 0}
    print(f"{'set':<12} {'AUC a/b':>13} {'right a/b':>11} {'flipped':>8} {'|d|':>6} {'s/video':>8}")
    for fa, fb in zip(args.sets[::2], args.sets[1::2]):
        fa, fb = Path(fa), Path(fb)
        truth = {p["id"]: p["same"] for p in rid_pairs(fa)}
        (sa, ta), (sb, tb) = score_set(fa), score_set(fb)
        ids = [i for i in truth if i in sb]
        y = [truth[i] for i in ids]
        a, b = [sa[i] for i in ids], [sb[i] for i in ids]
        row = {"set": fa.name, "n": len(ids), "auc_a": auc(a, y), "auc_b": auc(b, y),
               "right_a": sum((s >= THR) == t for s, t in zip(a, y)),
               "right_b": sum((s >= THR) == t for s, t in zip(b, y)),
               "flipped": sum((x >= THR) != (z >= THR) for x, z in zip(a, b)),
               "mean_abs_change": float(np.mean(np.abs(np.subtract(a, b)))) if ids else float("nan"),
               "s_per_video": (ta + tb) / 2, "scores": {i: [sa[i], sb[i], truth[i]] for i in ids}}
        report.append(row)
        for k in total:
            total[k] += row[k]
        print(f"{fa.name:<12} {row['auc_a']:6.3f}/{row['auc_b']:.3f} {row['right_a']:4d}/{row['right_b']:<2d} of {len(ids):<2d}"
              f" {row['flipped']:5d} {row['mean_abs_change']:6.3f} {row['s_per_video']:8.3f}")
    print(f"{'total':<12} {'':>13} {total['right_a']:4d}/{total['right_b']:<2d} of {total['n']:<3d}{total['flipped']:4d}")
    if args.json:
        Path(args.json).write_text(json.dumps({"sets": report, "total": total}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
