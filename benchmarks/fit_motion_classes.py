"""Fit, or check, the flow-read mover's action discriminant (``sama_model/backends/lite/fitted/motion_classes.json``).

The motion analyzer's data["mover"] (:mod:`sama_model.backends.lite.motion.motion_field`) gives measures of
the main mover's motion; a linear discriminant turns them into probabilities of MVX-Synth's seven
actions. This script fits it on AM sets whose ``data.jsonl`` names each video's action (the
real-footage composite's and MVX-Synth's AM: ``reference_action`` and ``actions``; the labels are
read here for fitting and scoring only, never by the tool), and checks it on others:

    python benchmarks/fit_motion_classes.py --fit SET [SET ...] [--out FILE] [--workers 2]
    python benchmarks/fit_motion_classes.py --check SET [SET_REENCODED] [--classes FILE]

``--check`` reports the videos whose likeliest action is the true one and the AM questions answered
right by the probabilities' agreement (:func:`sama_model.skills.multi_video_comparison.am.action_agreement`);
with a second folder holding the same questions in another encoding, also the videos whose
likeliest action changed, the mean change of the probabilities (L1) and the answers that changed.
``--check`` is a held-out figure: a set whose seed the fitting record lists (``mvx_tasks/fitting_record.yaml``) is
refused unless ``--allow-recorded``. Record the seeds of a ``--fit`` there in the commit that ships the fit.
"""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mvx_tasks.fitting_record import (
    ALLOW_HELP,
    ALLOW_OPTION,
    RecordedSeedError,
    guard_folders,
)


def _videos(folder: Path) -> list[tuple[str, str, str, str]]:
    """(question id, video label, true action name, video path) of every AM video of a set."""
    from mvx_tasks.synth.sprites import MOTION_PATTERNS

    rows = []
    for line in (folder / "data.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        meta = s.get("meta") or {}
        if s.get("task") != "AM" or "reference_action" not in meta:
            continue
        acts = {"Reference": meta["reference_action"], **meta["actions"]}
        for v in s["videos"]:
            rows.append((s["id"], v["label"], MOTION_PATTERNS[acts[v["label"]]], str(folder / v["path"])))
    if not rows:
        raise SystemExit(f"{folder / 'data.jsonl'} has no AM question naming its videos' actions")
    return rows


def _measures(path: str) -> dict[str, float] | str:
    """The mover's measures of one video, or the reason it could not be read."""
    import cv2

    from mvx_tasks.video_decoder import VideoDecodeError, load_video
    from sama_model.backends.lite.motion.motion_field import describe, motion_field

    cv2.setNumThreads(1)
    try:
        f = motion_field(load_video(path))
    except (VideoDecodeError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return describe(f) if f is not None else "fewer than 4 frames"


def measure(folder: Path, workers: int) -> list[tuple[tuple[str, str, str, str], dict[str, float] | str]]:
    rows = _videos(folder)
    with ProcessPoolExecutor(workers) as pool:
        return list(zip(rows, pool.map(_measures, [r[3] for r in rows], chunksize=4)))


def _answers(rows, probs: list[dict[str, float] | None]) -> tuple[dict[str, str], dict[str, str]]:
    """Per question: the candidate whose probabilities agree most with the Reference's, and the true one."""
    from sama_model.skills.multi_video_comparison.am import action_agreement

    by_q: dict[str, dict[str, tuple[str, dict[str, float] | None]]] = {}
    for (qid, label, act, _), p in zip(rows, probs):
        by_q.setdefault(qid, {})[label] = (act, p)
    picked, truth = {}, {}
    for qid, vids in by_q.items():
        ref_act, ref_p = vids["Reference"]
        truth[qid] = next(lb for lb, (a, _) in vids.items() if lb != "Reference" and a == ref_act)
        scores = {lb: action_agreement(ref_p, p) for lb, (_, p) in vids.items()
                  if lb != "Reference" and ref_p is not None and p is not None}
        picked[qid] = max(scores, key=scores.get) if scores else ""
    return picked, truth


def _describe_set(folder: Path) -> str:
    """'seed S at CRF C' from a real-footage composite manifest, else the folder's name."""
    man = folder / "real_composite.json"
    if man.exists():
        m = json.loads(man.read_text(encoding="utf-8"))
        return f"real-footage composite seed {m.get('seed')} CRF {m.get('crf')}"
    return folder.name


def check(folders: list[Path], classes, workers: int) -> dict:
    """Videos named right, AM answered right; with two folders, what the re-encoding changed."""
    out: dict = {}
    runs = []
    for folder in folders:
        got = measure(folder, workers)
        probs = [classes.probabilities(m) if isinstance(m, dict) else None for _, m in got]
        rows = [r for r, _ in got]
        names = [max(p, key=p.get) if p else None for p in probs]
        picked, truth = _answers(rows, probs)
        runs.append((rows, probs, names, picked))
        out[str(folder)] = {"videos": len(rows), "videos_right": sum(n == r[2] for n, r in zip(names, rows)),
                            "failed": [f"{r[3]}: {m}" for r, m in got if isinstance(m, str)],
                            "questions": len(truth), "answers_right": sum(picked[q] == truth[q] for q in truth)}
    if len(runs) == 2:
        (ra, pa, na, qa), (rb, pb, nb, qb) = runs
        if [r[:2] for r in ra] != [r[:2] for r in rb]:
            raise SystemExit("the two folders do not hold the same questions and videos")
        both = [(x, y) for x, y in zip(pa, pb) if x and y]
        out["change"] = {"same_action": sum(x == y for x, y in zip(na, nb)),
                         "mean_probability_change": round(float(np.mean([sum(abs(x[k] - y[k]) for k in x)
                                                                          for x, y in both])), 4) if both else None,
                         "answers_changed": sum(qa[q] != qb[q] for q in qa)}
    return out


def main(argv: list[str] | None = None) -> int:
    from sama_model.backends.lite.motion.motion_field import (
        CLASSES_FILE,
        MotionClasses,
        motion_classes,
    )

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", nargs="+", type=Path, help="AM sets to fit on (record their seeds in mvx_tasks/fitting_record.yaml)")
    ap.add_argument("--out", type=Path, default=CLASSES_FILE)
    ap.add_argument("--check", nargs="+", type=Path, help="an AM set, and optionally its re-encoded copy")
    ap.add_argument("--classes", type=Path, default=None, help="discriminant to check (default: the shipped one)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(ALLOW_OPTION, action="store_true", help=ALLOW_HELP)
    args = ap.parse_args(argv)
    if not args.fit and not args.check:
        ap.error("give --fit SETS or --check SET [SET_B]")
    if args.check and len(args.check) > 2:
        ap.error("--check takes one set, or a set and its re-encoded copy")
    standing = []
    if args.check:
        try:
            standing = guard_folders(args.check, args.allow_recorded, "fit_motion_classes.py --check")
        except RecordedSeedError as exc:
            ap.error(str(exc))
    from mvx_tasks.synth.sprites import MOTION_PATTERNS

    if args.fit:
        rows = []
        for folder in args.fit:
            rows += [(m, r[2]) for r, m in measure(folder, args.workers) if isinstance(m, dict)]
        try:
            classes = MotionClasses.fit(rows, tuple(MOTION_PATTERNS.values()),
                                        f"AM sets {', '.join(_describe_set(f) for f in args.fit)} ({len(rows)} videos)")
        except ValueError as exc:
            raise SystemExit(f"cannot fit: {exc}") from None
        classes.save(args.out)
        print(f"fitted on {len(rows)} videos -> {args.out}")
    if args.check:
        classes = MotionClasses.load(args.classes or args.out) if args.classes or args.fit else motion_classes()
        print(json.dumps({**check(args.check, classes, args.workers), "standing": standing}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
