"""Fit, or check, the lite shape namer (``sama_model/backends/lite/fitted/shape_classes.json``).

The namer (:func:`sama_model.backends.lite.perception.shapes.classify_shape`) is a linear classifier over
:func:`~sama_model.backends.lite.perception.shapes.outline_measures`. This script renders labelled clips like
MVX-Synth's CNT videos (6-10 of MVX-Synth's shapes, most 8-12 px in radius on the
canvas, some up to 32 px, a pole, the same camera, backdrops, textures and grades), encodes each at
CRF 20 (MVX-Synth's own encoder) and re-encodes it at CRF 30, segments every frame with the lite
segmenter and labels each segment by the true object whose centre is within 4 px of the segment's,
or "blob" when it is far from every object (the generator's positions are read here, for labels
only; the tool never sees them):

    python benchmarks/fit_shape_classes.py --fit 51 52 [--videos 40] [--out FILE] [--workers 2]
    python benchmarks/fit_shape_classes.py --check 61 62 [--videos 40] [--classes FILE]

``--check`` reports, per CRF, the segments the classifier names right (all, and those of a true
shape), each class's recall, and the true shapes' segments that the running code's segmenter named
right (its whole namer, elongated names included: run it on an older checkout for a before figure). Fit seeds and check seeds must differ; the shipped file's ``fitted_on`` names its
seeds, and ``mvx_tasks/fitting_record.yaml`` (set ``shape_clips``) records them and the check's: ``--check`` refuses a
recorded seed unless ``--allow-recorded``.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mvx_tasks.fitting_record import (
    ALLOW_HELP,
    ALLOW_OPTION,
    RecordedSeedError,
    refuse_recorded,
)

CRFS = (20, 30)
FRAMES = 24
#: MVX-Synth's shapes and "blob" (no shape). No pentagon: with a pentagon class (pentagons drawn into
#: the clips) CRF 30 stars and hexagons read as pentagons, and the tracker's count of the asked shape
#: was exact on 185 of 500 CNT videos at CRF 30 (MVX-Synth seeds 41-44) against 208 without
NAMES = ("blob", "circle", "cross", "hexagon", "ring", "square", "star", "triangle")


def _scene(seed: int, k: int):
    """One CNT-like clip: the frames, each object's shape, radius and image position per frame."""
    from mvx_tasks.synth.camera import View, camera_path
    from mvx_tasks.synth.common import DIFFICULTIES
    from mvx_tasks.synth.encode import FPS
    from mvx_tasks.synth.scene import (
        Layer,
        Scene,
        occluder_layers,
        random_grade,
        render,
    )
    from mvx_tasks.synth.sprites import COLOURS, SHAPES, TEXTURES, Track, make_patch
    from mvx_tasks.synth.stage import BRIGHT, backdrop, place

    rng, diff = np.random.default_rng([seed, k]), DIFFICULTIES["default"]
    cam = camera_path(FRAMES, View(160, 120, rng.uniform(0.8, 0.9)),
                      View(160 + rng.uniform(-12, 12), 120 + rng.uniform(-8, 8), rng.uniform(0.85, 0.95)),
                      rng=rng, jitter=diff.jitter)
    box = cam.safe_box(4)
    shapes = [str(s) for s in rng.choice(SHAPES, size=int(rng.integers(6, 11)))]
    # most as MVX-Synth's CNT draws them; some larger, so that a large crisp outline is inside the fit too
    radii = [float(rng.choice([rng.uniform(8, 12), rng.uniform(12, 20), rng.uniform(20, 32)], p=[0.6, 0.25, 0.15]))
             for _ in shapes]
    pts = place(rng, [r * 1.25 for r in radii], box, gap=2)
    layers, paths = [], []
    tt = np.arange(FRAMES) / FPS
    for shape, r, (x, y) in zip(shapes, radii, pts):
        patch = make_patch(shape, r, COLOURS[str(rng.choice(BRIGHT))], rng, texture_kind=str(rng.choice(TEXTURES)))
        ph = rng.uniform(0, 6.28)
        xy = np.stack([x + 2.5 * np.sin(1.3 * tt + ph), y + 2.0 * np.cos(1.1 * tt + ph)], 1).astype(np.float32)
        ang = (rng.uniform(-15, 15) + 12 * np.sin(0.9 * tt + ph)).astype(np.float32)
        layers.append(Layer(patch, Track(xy, np.ones(FRAMES, np.float32), ang, np.ones(FRAMES, np.float32))))
        paths.append(xy)
    for occ in occluder_layers(rng, 3, FRAMES, box, height=46):
        ox, oy = occ.track.xy[0]
        if all(abs(ox - x) > 9 or abs(oy - y) > 28 for x, y in pts):
            layers.append(occ)
            break
    frames = render(Scene(backdrop(rng), layers, cam, random_grade(rng, diff, FRAMES)), rng)
    zoom = np.array([np.linalg.inv(cam.mats[t]) for t in range(FRAMES)])
    image_xy = np.empty((FRAMES, len(shapes), 2))
    for j, xy in enumerate(paths):
        h = np.einsum("tij,tj->ti", zoom, np.c_[xy, np.ones(FRAMES)])
        image_xy[:, j] = h[:, :2] / h[:, 2:]
    scale = 1.0 / np.sqrt(abs(np.linalg.det(cam.mats[0][:2, :2])))  # canvas px -> image px
    return frames, shapes, [r * scale for r in radii], image_xy


def labelled(args: tuple[int, int, str]) -> list[tuple[int, str, dict[str, float], str]]:
    """(CRF, true label, outline measures, shipped name) of every labelled segment of one clip."""
    import cv2

    from mvx_tasks.reencode import reencode_video
    from mvx_tasks.synth.encode import encode_mp4
    from mvx_tasks.video_decoder import load_video
    from sama_model.backends.lite.perception.segmentation import Segmenter
    from sama_model.backends.lite.perception.shapes import outline_measures

    cv2.setNumThreads(1)
    seed, k, work = args
    frames, shapes, radii, image_xy = _scene(seed, k)
    paths = {20: Path(work) / f"s{seed}_{k}_c20.mp4", 30: Path(work) / f"s{seed}_{k}_c30.mp4"}
    encode_mp4(frames, paths[20])
    reencode_video(paths[20], paths[30], 30)
    out = []
    for crf in CRFS:
        clip = load_video(paths[crf])
        for f, t in zip(clip.frames, clip.indices if clip.indices is not None else range(len(clip.frames))):
            for seg in Segmenter().segment(f):
                dist = np.hypot(*(image_xy[int(t)] - np.asarray(seg.centroid)).T)
                j = int(np.argmin(dist))
                if dist[j] < 4.0:
                    label = shapes[j]
                elif np.all(dist > 1.9 * np.asarray(radii)):
                    label = "blob"
                else:
                    continue  # a piece of an object, or two merged: no label to learn
                m = outline_measures(np.round(seg.contour).astype(np.int32).reshape(-1, 1, 2), seg.hole)
                if m is not None:
                    out.append((crf, label, m, seg.shape))
        paths[crf].unlink()
    return out


def collect(seeds: list[int], videos: int, workers: int) -> list[tuple[int, str, dict[str, float], str]]:
    with tempfile.TemporaryDirectory() as work:
        jobs = [(s, k, work) for s in seeds for k in range(videos)]
        if workers <= 1:
            got = [labelled(j) for j in jobs]
        else:
            with ProcessPoolExecutor(workers) as pool:
                got = list(pool.map(labelled, jobs))
    return [r for g in got for r in g]


def check(rows: list[tuple[int, str, dict[str, float], str]], classes) -> dict:
    out = {}
    for crf in CRFS:
        mine = [(label, classes.likeliest(m)) for c, label, m, _ in rows if c == crf]
        shaped = [(a, b) for a, b in mine if a != "blob"]
        named = [label == name for c, label, _, name in rows if c == crf and label != "blob"]
        out[f"crf{crf}"] = {"segments": len(mine), "right": sum(a == b for a, b in mine),
                            "shape_segments": len(shaped), "shape_right": sum(a == b for a, b in shaped),
                            "segmenter_names_right": sum(named),
                            "recall": {n: round(sum(a == b == n for a, b in mine) / max(1, sum(a == n for a, _ in mine)), 3)
                                       for n in classes.names}}
    return out


def main(argv: list[str] | None = None) -> int:
    from sama_model.backends.lite.fitted.linear_classes import LinearClasses
    from sama_model.backends.lite.perception.shapes import CLASSES_FILE, shape_classes

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", nargs="+", type=int, help="seeds of the labelled clips to fit on")
    ap.add_argument("--check", nargs="+", type=int, help="seeds to check on (none the fitting record lists)")
    ap.add_argument("--videos", type=int, default=40, help="clips per seed")
    ap.add_argument("--out", type=Path, default=CLASSES_FILE)
    ap.add_argument("--classes", type=Path, default=None, help="namer to check (default: the shipped one)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(ALLOW_OPTION, action="store_true", help=ALLOW_HELP)
    args = ap.parse_args(argv)
    if not args.fit and not args.check:
        ap.error("give --fit SEEDS or --check SEEDS")
    if args.fit and args.check and set(args.fit) & set(args.check):
        ap.error(f"check on seeds not fitted on (both name {sorted(set(args.fit) & set(args.check))})")
    if args.check and not args.allow_recorded:
        try:
            refuse_recorded("shape_clips", args.check, "fit_shape_classes.py --check")
        except RecordedSeedError as exc:
            ap.error(f"{exc}\nTo replay a recorded check, pass {ALLOW_OPTION}.")
    if args.fit:
        rows = collect(args.fit, args.videos, args.workers)
        counts = Counter(label for _, label, _, _ in rows)
        try:
            classes = LinearClasses.fit_logistic(
                [(m, label) for _, label, m, _ in rows], NAMES,
                f"labelled CNT-like clips (benchmarks/fit_shape_classes.py), seeds {', '.join(map(str, args.fit))}, "
                f"{args.videos} clips each at CRF {' and '.join(map(str, CRFS))} ({len(rows)} segments: "
                + ", ".join(f"{n} {counts[n]}" for n in NAMES) + ")")
        except ValueError as exc:
            raise SystemExit(f"cannot fit: {exc}") from None
        classes.save(args.out)
        print(f"fitted on {len(rows)} segments -> {args.out}")
    if args.check:
        classes = LinearClasses.load(args.classes or args.out) if args.classes or args.fit else shape_classes()
        print(json.dumps(check(collect(args.check, args.videos, args.workers), classes), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
