"""Counts of moving objects under re-encoding: per video and per CNT answer, at the backend level.

For every video of a set's CNT questions it runs the lite tools' count of independently moving
objects (:func:`sama_model.backends.lite.mover_count.mover_counts`, what ``scene_graph``,
``object_tracker`` and ``video_reader`` all answer for a generic target such as "moving cut-outs"), and
the tracker's second reading on shifted frames that the CNT policy asks for (``shift_frames``)
and answers each question from those readings with the CNT policy's own rule (the match probability of
the followed objects, :func:`sama_model.skills.multi_video_comparison.cnt.match_scores`; the counts,
:func:`~sama_model.skills.multi_video_comparison.cnt.count_scores`, for a reading without them). The true counts in
``data.jsonl`` (the real-footage composite's ``reference_count`` and ``counts``) are read here for
scoring only, never by the tool.

    python benchmarks/count_stability.py SET [SET_REENCODED] [--workers 2] [--json OUT]

It reports, per set, the videos counted exactly (and under / over), each of the two estimates beside
the count (the regions' and the points', see ``mover_counts``) exactly, the CNT answers right, and the answers the policy marks fragile (one count off in
some video would change them; how many of those are right); with a second folder holding the same
questions in another encoding (the composite generated at another ``--crf``, or ``mvx-bench
reencode``), the videos whose count moved, the mean absolute change, how often each estimate moved,
the answers that changed and how many of those were marked fragile in either encoding. Why at the
backend level: a count rule or constant can be tried on six fitting seeds at both CRFs (1200 videos)
in about five minutes on two cores, where the agent takes about four times as long.
A set whose seed the fitting record lists (``mvx_tasks/fitting_record.yaml``) is refused unless ``--allow-recorded``
(fitting or choosing on it); its figures are then not held out, and the report says so per set.
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

Row = tuple[str, str, int, str]  # question id, video label, true count, video path


def _questions(folder: Path) -> list[dict]:
    out = []
    for line in (folder / "data.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        meta = s.get("meta") or {}
        if s.get("task") == "CNT" and "reference_count" in meta and "counts" in meta:
            out.append(s)
    if not out:
        raise SystemExit(f"{folder / 'data.jsonl'} has no CNT question naming its videos' counts")
    return out


def _rows(folder: Path, questions: list[dict]) -> list[Row]:
    rows = []
    for s in questions:
        truth = {"Reference": s["meta"]["reference_count"], **s["meta"]["counts"]}
        rows += [(s["id"], v["label"], int(truth[v["label"]]), str(folder / v["path"])) for v in s["videos"]]
    return rows


def _count(path: str) -> dict | str:
    """The tool's count of one video with its two estimates and every foreground floor's reading (``floors``,
    in :data:`~sama_model.backends.lite.mover_count.COUNT_FLOORS` order: a count rule can be replayed on
    them from the ``--json`` file without reading the videos again), or why it could not be read."""
    import cv2

    from mvx_tasks.video_decoder import VideoDecodeError, load_video
    from sama_model.backends.lite.movers.count import mover_counts
    from sama_model.skills.multi_video_comparison.cnt import SHIFT_FRAMES

    cv2.setNumThreads(1)
    try:
        clip = load_video(path)
        got = mover_counts(clip)
        # every video's second reading, though the policy asks it only where the first readings' answer is fragile:
        # a rule can then be replayed either way from the --json file (this doubles the benchmark's reading time)
        second = mover_counts(clip, clip.shifted_window((None, None), SHIFT_FRAMES))
    except (VideoDecodeError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return {"count": int(got["count"]), **{k: int(v) for k, v in got["estimates"].items()},
            "graded": float(got["graded_count"]), "near": bool(got["near_threshold"]),
            "floors": [int(n) for n in got["regions_by_floor"].values()],
            "probabilities": [float(p) for p in got.get("probabilities", [])],
            "shifted_probabilities": [float(p) for p in second.get("probabilities", [])]}


def measure(folder: Path, workers: int) -> tuple[list[dict], list[Row], list[dict | str]]:
    questions = _questions(folder)
    rows = _rows(folder, questions)
    paths = [r[3] for r in rows]
    if workers <= 1:
        got = [_count(p) for p in paths]
    else:
        with ProcessPoolExecutor(workers) as pool:
            got = list(pool.map(_count, paths, chunksize=4))
    return questions, rows, got


def decisions(questions: list[dict], rows: list[Row], got: list[dict | str]) -> dict[str, tuple[str, bool]]:
    """Per question the option letter the CNT rule picks from the tool's readings ("" when the reference
    or every candidate failed), the policy's relation parse and scores, the first listed on a tie; and
    whether the policy marks it fragile. As the policy: where every video's reading lists its followed
    objects' ``probabilities``, the match probability of those, and where that answer is marked fragile, of those and
    the second readings on shifted frames (``shifted_probabilities``;
    :func:`~sama_model.skills.multi_video_comparison.cnt.match_scores`, marked by
    :func:`~sama_model.skills.multi_video_comparison.cnt.doubt_marks`); otherwise the counts
    (:func:`~sama_model.skills.multi_video_comparison.cnt.count_scores`, marked by
    :func:`~sama_model.skills.multi_video_comparison.cnt.one_off_changes`: one count off in some video
    changes it)."""
    from sama_model.skills.multi_video_comparison.cnt import (
        count_scores,
        counting_relation,
        doubt_marks,
        first_readings_fragile,
        match_scores,
        one_off_changes,
    )
    from sama_model.skills.multi_video_comparison.common import argmax

    by_video = {(r[0], r[1]): g for r, g in zip(rows, got)}
    out = {}
    for s in questions:
        labels = {v: k for k, v in s["options"].items()}  # "Video A" -> "A"
        counts = {lb: float(g["count"]) for lb in labels if isinstance(g := by_video.get((s["id"], lb)), dict)}
        evidence = {lb: float(by_video[(s["id"], lb)]["regions"] + by_video[(s["id"], lb)]["points"]) for lb in counts}
        ref = by_video.get((s["id"], "Reference"))
        grades = {lb: float(g["graded"]) for lb in [*counts, "Reference"]
                  if isinstance(g := by_video.get((s["id"], lb)), dict) and "graded" in g}
        rel = counting_relation(s["question"])
        if not counts or (rel == "eq" and not isinstance(ref, dict)):
            out[s["id"]] = ("", False)
            continue

        def choose(scores: dict[str, float], labels: dict[str, str] = labels) -> str:
            return argmax({labels[lb]: scores[lb] for lb in sorted(scores, key=lambda lb: labels[lb])}) or ""

        probs = {lb: [[float(p) for p in g[k]] for k in ("probabilities", "shifted_probabilities") if k in g]
                 for lb in ["Reference", *counts]
                 if isinstance(g := by_video.get((s["id"], lb)), dict) and "probabilities" in g}
        if isinstance(ref, dict) and len(probs) == len(counts) + 1:
            if any(len(p) < 2 for p in probs.values()) or not first_readings_fragile(rel, "Reference", probs, choose):
                probs = {lb: p[:1] for lb, p in probs.items()}  # (as the policy: second readings only where marked)
            best = choose(match_scores(rel, probs["Reference"], {lb: probs[lb] for lb in counts}))
            out[s["id"]] = (best, bool(doubt_marks(rel, "Reference", probs, choose)))
            continue
        every = {"Reference": float(ref["count"]), **counts} if isinstance(ref, dict) else counts
        reference = "Reference" if isinstance(ref, dict) else None
        best = choose(count_scores(rel, every.get("Reference"), counts, evidence, grades, grades.get("Reference")))
        out[s["id"]] = (best, bool(one_off_changes(rel, reference, every, evidence, choose, grades)))
    return out


def answers(questions: list[dict], rows: list[Row], got: list[dict | str]) -> dict[str, str]:
    """Per question the option letter the CNT rule picks (see :func:`decisions`)."""
    return {q: letter for q, (letter, _) in decisions(questions, rows, got).items()}


def summary(questions: list[dict], rows: list[Row], got: list[dict | str]) -> dict:
    ok = [(r, g) for r, g in zip(rows, got) if isinstance(g, dict)]
    made = decisions(questions, rows, got)
    picked = {q: letter for q, (letter, _) in made.items()}
    return {"videos": len(rows), "failed": [f"{r[3]}: {g}" for r, g in zip(rows, got) if isinstance(g, str)],
            "exact": sum(g["count"] == r[2] for r, g in ok), "under": sum(g["count"] < r[2] for r, g in ok),
            "over": sum(g["count"] > r[2] for r, g in ok),
            "regions_exact": sum(g["regions"] == r[2] for r, g in ok),
            "points_exact": sum(g["points"] == r[2] for r, g in ok),
            "near_threshold": sum(g["near"] for _, g in ok),
            "questions": len(questions), "answers_right": sum(picked[s["id"]] == s["answer"] for s in questions),
            "answers_fragile": sum(made[s["id"]][1] for s in questions),
            "fragile_right": sum(made[s["id"]][1] and picked[s["id"]] == s["answer"] for s in questions)}


def change(a: tuple[list[dict], list[Row], list[dict | str]], b: tuple[list[dict], list[Row], list[dict | str]]) -> dict:
    """What a re-encoding moved: counts, each estimate, and the answers."""
    (qa, ra, ga), (qb, rb, gb) = a, b
    if [r[:3] for r in ra] != [r[:3] for r in rb]:
        raise SystemExit("the two folders do not hold the same CNT questions and videos")
    both = [(x, y) for x, y in zip(ga, gb) if isinstance(x, dict) and isinstance(y, dict)]
    da, db = decisions(qa, ra, ga), decisions(qb, rb, gb)
    pa, pb = {q: d[0] for q, d in da.items()}, {q: d[0] for q, d in db.items()}
    changed = [q for q in pa if pa[q] != pb[q]]
    return {"videos_compared": len(both), "counts_moved": sum(x["count"] != y["count"] for x, y in both),
            "mean_abs_change": round(float(np.mean([abs(x["count"] - y["count"]) for x, y in both])), 4) if both else None,
            "regions_moved": sum(x["regions"] != y["regions"] for x, y in both),
            "points_moved": sum(x["points"] != y["points"] for x, y in both),
            "answers_changed": len(changed),
            "changed_marked_fragile": sum(da[q][1] or db[q][1] for q in changed),
            "changed_questions": sorted(changed)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", type=Path, help="a set with CNT questions, and optionally its re-encoded copy")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="also write the per-video counts and the report here")
    ap.add_argument(ALLOW_OPTION, action="store_true", help=ALLOW_HELP)
    args = ap.parse_args(argv)
    if len(args.sets) > 2:
        ap.error("give one set, or a set and its re-encoded copy")
    try:
        standing = guard_folders(args.sets, args.allow_recorded, "count_stability.py's figures")
    except RecordedSeedError as exc:
        ap.error(str(exc))
    runs = [measure(folder, args.workers) for folder in args.sets]
    report: dict = {str(f): summary(*run) for f, run in zip(args.sets, runs)}
    report["standing"] = standing
    if len(runs) == 2:
        report["change"] = change(*runs)
    print(json.dumps(report, indent=1))
    if args.json:
        per_video = {str(f): [{"question": r[0], "video": r[1], "truth": r[2], "got": g} for r, g in zip(run[1], run[2])]
                     for f, run in zip(args.sets, runs)}
        args.json.write_text(json.dumps({"report": report, "videos": per_video}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
