"""SPR (Spatial Relation): which candidate shares at least one camera-motion trend with the reference.

Appendix A (SpatialVID): the positive shares at least one motion label with the reference, the
negatives share none. Trends are pan left/right, tilt up/down, zoom in/out (or a static camera),
alone or combined across axes; negatives prefer the opposite directions of the reference's
trends, and objects that move on their own make subject motion a distractor.
"""
from __future__ import annotations

import numpy as np

from .camera import View, camera_path
from .common import CANDIDATE_LABELS, GenerationError, Planned, QuestionContext, VideoJob, candidate_options, require_unique
from .scene import render
from .stage import backdrop, busy_scene, moving_objects, random_appearance

T = 24
AXES = {"pan": ("pan left", "pan right"), "tilt": ("tilt up", "tilt down"), "zoom": ("zoom in", "zoom out")}
TRENDS = tuple(t for pair in AXES.values() for t in pair) + ("static",)
OPPOSITE = {a: b for pair in AXES.values() for a, b in (pair, pair[::-1])}
AXIS_OF = {t: ax for ax, pair in AXES.items() for t in pair}


def valid(trends: frozenset) -> bool:
    """A set is one static label, or one trend per axis (no pan left *and* right)."""
    if "static" in trends:
        return trends == {"static"}
    return len(trends) > 0 and len({AXIS_OF[t] for t in trends}) == len(trends)


def _random_set(rng: np.random.Generator, allowed: list[str], size: int) -> frozenset | None:
    movers = [t for t in allowed if t != "static"]
    for _ in range(50):
        pick = frozenset(str(t) for t in rng.choice(movers, size=min(size, len(movers)), replace=False))
        if valid(pick):
            return pick
    return None


def _sets(rng: np.random.Generator, pos: int, similarity: float) -> tuple[frozenset, list[frozenset]]:
    r = rng.random()
    ref = frozenset({"static"}) if r < 0.12 else _random_set(rng, list(TRENDS), 1 if r < 0.55 else 2)
    cands: list[frozenset] = []
    for i in range(4):
        if i == pos:
            if ref == {"static"}:
                s = ref
            else:
                keep = str(rng.choice(sorted(ref)))
                extra = [t for t in TRENDS if t != "static" and AXIS_OF[t] != AXIS_OF[keep]]
                s = frozenset({keep, str(rng.choice(extra))}) if rng.random() < 0.5 else frozenset({keep})
        else:
            allowed = [t for t in TRENDS if t not in ref]
            opposite = [OPPOSITE[t] for t in sorted(ref) if t in OPPOSITE]
            if opposite and rng.random() < similarity:
                s = frozenset({str(rng.choice(opposite))})
                if rng.random() < 0.5:
                    more = _random_set(rng, [t for t in allowed if AXIS_OF.get(t) not in {AXIS_OF[x] for x in s}], 1)
                    s = s | more if more else s
            elif "static" in allowed and rng.random() < 0.2:
                s = frozenset({"static"})
            else:
                s = _random_set(rng, allowed, int(rng.integers(1, 3)))
            if s is None or not valid(s):
                raise GenerationError(f"cannot draw a negative trend set disjoint from {sorted(ref)}")
        cands.append(s)
    return ref, cands


def camera_for(trends: frozenset, rng: np.random.Generator, jitter: float):
    """Camera path realising the trends on a 480x360 canvas (pan right = view moves right)."""
    cx, cy, z = 240.0 + rng.uniform(-20, 20), 180.0 + rng.uniform(-15, 15), 0.9
    dx = {"pan left": -1, "pan right": 1}
    dy = {"tilt up": -1, "tilt down": 1}
    ex = cx + sum(dx.get(t, 0) for t in trends) * rng.uniform(60, 80)
    ey = cy + sum(dy.get(t, 0) for t in trends) * rng.uniform(45, 60)
    zs = z * 1.25 if "zoom out" in trends else z  # start tighter so zooming out stays inside the canvas
    ez = zs * rng.uniform(1.45, 1.6) if "zoom in" in trends else zs / rng.uniform(1.35, 1.45) if "zoom out" in trends else zs
    return camera_path(T, View(cx, cy, zs), View(ex, ey, ez), rng=rng, jitter=jitter, ease=False)


def _render(trends: frozenset, ctx: QuestionContext, k: int):
    def run() -> np.ndarray:
        rng = ctx.rng(k + 1)
        cam = camera_for(trends, rng, ctx.difficulty.jitter)
        bg = backdrop(rng, w=480, h=360)
        apps = [random_appearance(rng, radius=(9, 15)) for _ in range(int(rng.integers(5, 8)))]
        box = (40.0, 40.0, 440.0, 320.0)
        layers, _ = moving_objects(rng, apps, box, T, motions=("still", "still", "slide", "drift"))
        scene = busy_scene(rng, ctx.difficulty, cam, layers, bg=bg, occluders=0)
        return render(scene, rng)
    return run


def build(ctx: QuestionContext) -> Planned:
    rng = ctx.rng(0)
    pos = ctx.slot(4)
    ref, cands = _sets(rng, pos, ctx.difficulty.similarity)
    require_unique([bool(c & ref) for c in cands], pos, f"{ctx.qid} trends {[sorted(c) for c in cands]} vs {sorted(ref)}")
    jobs = [VideoJob("Reference", _render(ref, ctx, 0))]
    jobs += [VideoJob(lbl, _render(c, ctx, k + 1)) for k, (lbl, c) in enumerate(zip(CANDIDATE_LABELS, cands))]
    question = ("Look at how the camera moves in each video (pan left/right, tilt up/down, zoom in/out, or a static "
                "camera). Which candidate video shares at least one camera-motion trend with the Reference video?")
    meta = {"reference_trends": sorted(ref), "trends": {lbl: sorted(c) for lbl, c in zip(CANDIDATE_LABELS, cands)},
            "convention": "pan right = the view turns right, so the scene slides left in the frame"}
    return Planned(question, candidate_options(), "ABCD"[pos], jobs, meta)
