"""Fit the stack score of re-identification (``STACK_WEIGHTS`` in ``sama_model/backends/lite/identity/stack.py``).

Every RID pair of the given real-footage composite sets is read the way the identity tool reads it when both cameras
move: each clip's subject view from its aligned stack (:func:`~sama_model.backends.lite.identity.stack.stack_view`),
the two views' texture correlation (:func:`~sama_model.backends.lite.identity.stack.stack_texture`). A logistic fit
(L2, weight 1, as scikit-learn's default) maps it to a same-subject probability; the answers in ``data.jsonl`` are
read here only. ``--by-seed`` scores each seed with weights fitted on the others: right answers at each CRF and
verdicts that flip between a seed's two encodings (the figures to choose settings by). Record the
seeds a fit reads in ``mvx_tasks/fitting_record.yaml`` (both encodings of a seed); check on seeds it does not list with
``identity_stability.py``.

    python benchmarks/fit_stack_score.py SET [SET ...] [--workers 2] [--by-seed] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _pair(job: tuple[str, str, list[str], bool]) -> dict:
    from mvx_tasks.video_decoder import load_video
    from sama_model.backends.lite.identity.stack import stack_texture, stack_view

    folder, qid, paths, same = job
    views = [stack_view(load_video(p)) for p in paths]
    texture = None if any(v is None for v in views) else stack_texture(*views)
    meta = json.loads((Path(folder) / "real_composite.json").read_text())
    return {"set": Path(folder).name, "seed": int(meta["seed"]), "crf": int(meta["crf"]), "id": qid, "same": same,
            "texture": texture}


def read_pairs(folders: list[Path], workers: int) -> list[dict]:
    """One record per RID pair: set, seed, CRF, question id, truth, texture correlation (None: a view missing)."""
    from identity_stability import rid_pairs

    jobs = [(str(f), p["id"], p["paths"], p["same"]) for f in folders for p in rid_pairs(f)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            return list(pool.map(_pair, jobs, chunksize=4))
    return [_pair(j) for j in jobs]


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> tuple[float, float]:
    """(weight, bias) of a one-feature logistic regression with an L2 penalty ``l2 / 2 * weight^2`` (Newton steps)."""
    w = np.zeros(2)
    X = np.stack([x, np.ones_like(x)], axis=1)
    reg = np.diag([l2, 0.0])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-X @ w))
        grad = X.T @ (p - y) + reg @ w
        hess = X.T @ (X * (p * (1 - p))[:, None]) + reg + 1e-9 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return float(w[0]), float(w[1])


def verdicts(pairs: list[dict], weights: tuple[float, float]) -> dict[tuple, bool]:
    """(set, id) -> "same" at the weights (a missing view reads 0.5, "same", as the identity score does)."""
    return {(p["set"], p["id"]): (0.5 if p["texture"] is None else
                                  1 / (1 + np.exp(-(weights[0] * p["texture"] + weights[1])))) >= 0.5 for p in pairs}


def figures(pairs: list[dict], said: dict[tuple, bool]) -> dict:
    """Right answers per CRF and verdicts that flip between a seed's two encodings."""
    right: dict[int, int] = {}
    by_q: dict[tuple, list[bool]] = {}
    for p in pairs:
        ok = said[(p["set"], p["id"])] == p["same"]
        right[p["crf"]] = right.get(p["crf"], 0) + int(ok)
        by_q.setdefault((p["seed"], p["id"]), []).append(said[(p["set"], p["id"])])
    return {"right": dict(sorted(right.items())), "flipped": sum(len(set(v)) > 1 for v in by_q.values()),
            "pairs": len(by_q), "missing": sum(p["texture"] is None for p in pairs)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", type=Path, help="real-footage composite sets with RID questions (record their seeds in mvx_tasks/fitting_record.yaml)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--by-seed", action="store_true", help="also score each seed with weights fitted on the others")
    ap.add_argument("--json", type=Path, default=None, help="write the pairs' texture correlations and the figures here")
    args = ap.parse_args(argv)
    pairs = read_pairs(args.sets, args.workers)
    known = [p for p in pairs if p["texture"] is not None]
    if not known:
        raise SystemExit("no RID pair read: give real-footage composite sets made with --tasks RID (or all tasks)")
    weights = fit(np.array([p["texture"] for p in known]), np.array([float(p["same"]) for p in known]))
    report = {"weights": weights, "in_sample": figures(pairs, verdicts(pairs, weights)), "by_seed": {}}
    print(f"STACK_WEIGHTS = ({weights[0]:.4f}, {weights[1]:.4f})  # even odds at texture {-weights[1] / weights[0]:.3f}; "
          f"{len(known)} of {len(pairs)} pairs read; in sample {report['in_sample']}")
    seeds = sorted({p["seed"] for p in pairs})
    if args.by_seed and len(seeds) < 2:
        print(f"--by-seed needs sets of two seeds or more (these are all seed {seeds[0]}): no seed left out")
    elif args.by_seed:
        said: dict[tuple, bool] = {}
        for s in seeds:
            rest = [p for p in known if p["seed"] != s]
            w = fit(np.array([p["texture"] for p in rest]), np.array([float(p["same"]) for p in rest]))
            mine = [p for p in pairs if p["seed"] == s]
            said.update(verdicts(mine, w))
            report["by_seed"][s] = figures(mine, verdicts(mine, w))
            print(f"seed {s}: fitted on the others {report['by_seed'][s]}")
        report["left_one_seed_out"] = figures(pairs, said)
        print(f"left one seed out, all seeds: {report['left_one_seed_out']}")
    if args.json:
        args.json.write_text(json.dumps({"pairs": pairs, **report}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
