"""Which cut-outs the count of moving objects misses, and why: object by object, against the generator's truth.

``count_stability.py`` says how often a count is wrong; this says which object made it wrong. For each CNT video of
a real-footage composite set (``python -m mvx_tasks.real_composite``) the question is planned again from its seed and
index, so every cut-out's centre in every output frame is known (:meth:`CompositeVideo.truth
<mvx_tasks.real_composite.tasks.CompositeVideo.truth>`; read here for scoring only, never by a tool). The lite count
(:func:`~sama_model.backends.lite.movers.count.mover_counts`) runs as the tools run it, and its regions' estimate
(``estimates["regions"]``, the count the tools gave until 2026-12-06, now beside the followed count) is examined: each
moving cut-out is matched to the track of the regions' shown floor that lies within half the cut-out's diameter of its centre in the
most sampled frames. Each moving cut-out then is one of:

- ``own``: its track is counted and no other cut-out's best track;
- ``shared``: its counted track is also another cut-out's (two touching cut-outs read as one region);
- ``short`` / ``in place`` / ``edge``: its track fails that cut of the count
  (:func:`~sama_model.backends.lite.movers.count.track_verdict`);
- ``no track``: no track comes near it.

    python benchmarks/count_misses.py SET [SET ...] [--workers 2] [--json OUT]

It prints, over the undercounted videos, how many cut-outs fall in each class (overall and by plate), how many
undercounted videos hold each kind of loss, and for the ``short`` ones the median sampled frames in which some region
lay on the cut-out against those its best track linked (found but not linked, or not found). Why: the count is exact on about 70 % of videos and under-reads about
twice as often as it over-reads; a change to the count should aim at the loss that dominates. A diagnostic for
choosing a change: the seeds it reads then belong in ``mvx_tasks/fitting_record.yaml``.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: a track lies on a cut-out in a sampled frame when its centroid is within this share of the cut-out's diameter
MATCH_RADIUS = 0.5
CLASSES = ("own", "shared", "short", "in place", "edge", "no track")


def classify(best: list[tuple[int | None, str]]) -> list[str]:
    """Each moving cut-out's class from its best track: (track id or None, the track's
    :func:`~sama_model.backends.lite.movers.count.track_verdict`)."""
    uses = Counter(tid for tid, _ in best if tid is not None)
    out = []
    for tid, verdict in best:
        if tid is None:
            out.append("no track")
        elif verdict != "counted":
            out.append(verdict)
        else:
            out.append("shared" if uses[tid] > 1 else "own")
    return out


def best_track(centres: np.ndarray, diameter: float, tracks: list, frames: np.ndarray) -> tuple[object | None, int, int]:
    """The track whose centroids lie within :data:`MATCH_RADIUS` of the cut-out's diameter of its centre in the most
    sampled frames (``frames``: the output frame of each sampled step), that number, and the sampled frames in which
    any track's region lies on the cut-out; (None, 0, seen) when no track does. Why both: a cut-out seen in most
    frames but linked in few is lost by the tracking; one seen in few, by the foreground."""
    best, hits, seen = None, 0, set()
    for t in tracks:
        steps = np.asarray(t.steps)
        on = np.linalg.norm(t.centroids() - centres[frames[steps]], axis=1) < MATCH_RADIUS * diameter
        seen.update(int(k) for k in steps[on])
        if int(on.sum()) > hits:
            best, hits = t, int(on.sum())
    return best, hits, len(seen)


def _plan(seed: int, index: int, footage: str = "composite") -> dict:
    from mvx_tasks.real_composite.footage import select_footage
    from mvx_tasks.real_composite.tasks import build_cnt
    from mvx_tasks.synth.common import QuestionContext, get_difficulty

    select_footage(footage)  # (the set's footage: its manifest's, the composite's when it names none)
    planned = build_cnt(QuestionContext("CNT", index, seed, get_difficulty("default")))
    return {job.label: job.render.truth() for job in planned.videos}


def _video(args: tuple[str, int, int, dict]) -> list[dict] | str:
    """One question's videos: per video the count and each moving cut-out's class (or why it could not be read)."""
    folder, seed, index, sample = args
    qid = sample["id"]
    import cv2

    from mvx_tasks.real_composite.footage import FPS, T
    from mvx_tasks.video_decoder import VideoDecodeError, load_video
    from sama_model.backends.lite.movers import count as mc
    from sama_model.backends.lite.movers.regions import MOVER_FRAMES, movers

    cv2.setNumThreads(1)
    truth = _plan(seed, index, sample["meta"]["real_composite"].get("footage", "composite"))
    paths = {v["label"]: Path(folder) / v["path"] for v in sample["videos"]}
    out = []
    for label, movers_truth in truth.items():
        try:
            clip = load_video(paths[label])
        except (VideoDecodeError, OSError) as exc:
            return f"{qid} {label}: {type(exc).__name__}: {exc}"
        got = mc.mover_counts(clip)
        regions = int(got["estimates"]["regions"])
        floor = next(f for f in mc.COUNT_FLOORS if got["regions_by_floor"][f"{f:g}"] == regions)
        m = movers(clip, (None, None), MOVER_FRAMES, local=True, floor=floor, core=mc.COUNT_CORE)
        height, width = clip.frames.shape[1:3]
        frames = np.clip(np.rint(m.times * FPS).astype(int), 0, T - 1)  # the output frame of each sampled step
        need = mc.persistence_need(m)
        moving = [mt for mt in movers_truth if mt.moving]
        best, seen = [], []
        for mt in moving:
            t, hits, n_seen = best_track(mt.centres, mt.diameter, m.tracks, frames)
            best.append((None, "") if t is None else (
                t.id, mc.track_verdict(len(t.steps), need, mc.travel(m, t), mc.edge_share(t, width, height))))
            seen.append([n_seen, hits])
        out.append({"question": qid, "video": label, "plate": sample["meta"]["plates"][label], "truth": len(moving),
                    "count": regions, "followed": int(got["count"]), "floor": floor, "frames": len(m.idx), "classes": classify(best),
                    "seen_linked": seen})
    return out


def composite_cnt_jobs(folder: Path) -> list[tuple[str, int, int, dict]]:
    """(folder, seed, index, question) for every real-footage composite CNT question of a set whose videos this code
    renders again (so the generator's truth matches them); another generator version is refused with the command
    that makes the set again. Shared with ``fit_follow_classes.py``, which labels candidates by the same truth."""
    from mvx_tasks.real_composite.generate import GENERATOR_VERSION, SAME_VIDEOS_SINCE

    jobs = []
    for line in (folder / "data.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        rc = (s.get("meta") or {}).get("real_composite")
        if s.get("task") != "CNT" or not rc:
            continue
        if not SAME_VIDEOS_SINCE <= int(rc.get("version", 0)) <= GENERATOR_VERSION:
            raise SystemExit(f"{folder / 'data.jsonl'}: {s['id']} was made by generator version {rc.get('version')}, "
                             f"this code renders the videos of versions {SAME_VIDEOS_SINCE}-{GENERATOR_VERSION}, so its "
                             f"cut-outs' paths would not match the videos; generate the set again (python -m mvx_tasks.real_composite {folder} --seed "
                             f"{rc.get('seed')} --crf {rc.get('crf')} --tasks CNT)")
        jobs.append((str(folder), int(rc["seed"]), int(rc["index"]), s))
    if not jobs:
        raise SystemExit(f"{folder / 'data.jsonl'} has no real-footage composite CNT question")
    return jobs


def measure(folder: Path, workers: int) -> tuple[list[dict], list[str]]:
    """Every CNT video of the set (in question order) and the questions that could not be read."""
    jobs = composite_cnt_jobs(folder)
    if workers <= 1:
        got = [_video(j) for j in jobs]
    else:
        with ProcessPoolExecutor(workers) as pool:
            got = list(pool.map(_video, jobs))
    return [v for g in got if isinstance(g, list) for v in g], [g for g in got if isinstance(g, str)]


def report(videos: list[dict]) -> dict:
    """Counts of the classes: all moving cut-outs, those in undercounted videos (overall and by plate), and the
    undercounted videos by the kinds of loss they hold ("own" only: the tracks are right but not alive at once)."""
    under = [v for v in videos if v["count"] < v["truth"]]
    by_plate: dict[str, Counter] = defaultdict(Counter)
    kinds: Counter = Counter()
    for v in under:
        by_plate[v["plate"]].update(v["classes"])
        lost = sorted({c for c in v["classes"] if c != "own"}, key=CLASSES.index)
        kinds["+".join(lost) or "own only"] += 1
    short = [sl for v in under for c, sl in zip(v["classes"], v["seen_linked"]) if c == "short"]
    every = Counter(c for v in videos for c in v["classes"])
    in_under = Counter(c for v in under for c in v["classes"])
    return {"videos": len(videos), "exact": sum(v["count"] == v["truth"] for v in videos), "under": len(under),
            "over": sum(v["count"] > v["truth"] for v in videos),
            "cutouts": {c: every[c] for c in CLASSES},
            "cutouts_in_undercounted": {c: in_under[c] for c in CLASSES},
            "undercounted_by_plate": {p: {c: n[c] for c in CLASSES if n[c]} for p, n in sorted(by_plate.items())},
            "undercounted_videos_by_loss": dict(kinds.most_common()),
            "short_in_undercounted_median_frames_seen_linked": [float(np.median([a for a, _ in short])),
                                                                 float(np.median([b for _, b in short]))] if short else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", type=Path, help="real-footage composite sets with CNT questions")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="also write every video's classes and the report here")
    args = ap.parse_args(argv)
    videos, failed = [], []
    for folder in args.sets:
        v, f = measure(folder, args.workers)
        videos += v
        failed += f
    out = {**report(videos), "failed": failed}
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"report": out, "videos": videos}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
