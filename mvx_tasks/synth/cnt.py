"""CNT (Counting): which candidate's count of a target shape stands in a relation to the reference's.

Appendix A: a target object and a relation (same / greater / less); four candidates, filtered so
exactly one satisfies the relation against the reference count. Distractor objects of other
shapes (one of them a look-alike), random colours and an occluding pole make counting necessary.
"""
from __future__ import annotations

import numpy as np

from .camera import View, camera_path
from .common import CANDIDATE_LABELS, Planned, QuestionContext, VideoJob, candidate_options, require_unique
from .encode import FPS
from .scene import Layer, Scene, occluder_layers, random_grade, render
from .sprites import COLOURS, PLURALS, SHAPES, TEXTURES, Track, make_patch
from .stage import BRIGHT, backdrop, place

T = 24
RELATIONS = ("same", "greater", "less")
MAX_COUNT = {"easy": 5, "default": 6, "hard": 7}
LOOKALIKE = {"circle": "ring", "ring": "circle", "square": "hexagon", "hexagon": "square", "star": "cross",
             "cross": "star", "triangle": "star"}


def satisfies(relation: str, count: int, ref: int) -> bool:
    return {"same": count == ref, "greater": count > ref, "less": count < ref}[relation]


def _counts(rng: np.random.Generator, relation: str, ref: int, top: int, pos: int, similarity: float) -> list[int]:
    """Candidate counts: the answer slot satisfies the relation, the others violate it."""
    good = [c for c in range(1, top + 1) if satisfies(relation, c, ref)]
    bad = [c for c in range(1, top + 1) if not satisfies(relation, c, ref)]
    near = [c for c in bad if abs(c - ref) <= 1]
    out = []
    for i in range(4):
        if i == pos:
            out.append(int(rng.choice(good)))
        else:
            pool = near if near and rng.random() < similarity else bad
            out.append(int(rng.choice(pool)))
    return out


def _render(count: int, target: str, others: dict[str, int], seed_rng: np.random.Generator, ctx: QuestionContext):
    def run() -> np.ndarray:
        rng, d = seed_rng, ctx.difficulty
        cam = camera_path(T, View(160, 120, rng.uniform(0.8, 0.9)), View(160 + rng.uniform(-12, 12), 120 + rng.uniform(-8, 8),
                          rng.uniform(0.85, 0.95)), rng=rng, jitter=d.jitter)
        box = cam.safe_box(4)
        shapes = [target] * count + [s for s, n in others.items() for _ in range(n)]
        radii = [float(rng.uniform(8, 12)) for _ in shapes]
        pts = place(rng, [r * 1.25 for r in radii], box, gap=2)
        layers = []
        for shape, r, (x, y) in zip(shapes, radii, pts):
            col = COLOURS[str(rng.choice(BRIGHT))]
            patch = make_patch(shape, r, col, rng, texture_kind=str(rng.choice(TEXTURES)))
            tt = np.arange(T) / FPS
            ph = rng.uniform(0, 6.28)
            xy = np.stack([x + 2.5 * np.sin(1.3 * tt + ph), y + 2.0 * np.cos(1.1 * tt + ph)], 1).astype(np.float32)
            ang = (rng.uniform(-15, 15) + 12 * np.sin(0.9 * tt + ph)).astype(np.float32)
            layers.append(Layer(patch, Track(xy, np.ones(T, np.float32), ang, np.ones(T, np.float32))))
        # occluding poles never cover an object's centre: every object stays countable
        for occ in occluder_layers(rng, d.occluders * 3, T, box, height=46):
            ox, oy = occ.track.xy[0]
            if all(abs(ox - x) > 9 or abs(oy - y) > 28 for x, y in pts):
                layers.append(occ)
            if sum(lyr.z == 10.0 for lyr in layers) >= d.occluders:
                break
        scene = Scene(backdrop(rng), layers, cam, random_grade(rng, d, T))
        return render(scene, rng)
    return run


def build(ctx: QuestionContext) -> Planned:
    rng, d = ctx.rng(0), ctx.difficulty
    top = MAX_COUNT[d.name]
    target = str(rng.choice(SHAPES))
    relation = str(rng.choice(RELATIONS))
    ref = int(rng.integers(2, top))  # 2..top-1: both 'greater' and 'less' stay possible
    pos = ctx.slot(4)
    counts = _counts(rng, relation, ref, top, pos, d.similarity)
    require_unique([satisfies(relation, c, ref) for c in counts], pos, f"{ctx.qid} counts {counts} vs {ref}")
    other_shapes = [s for s in SHAPES if s != target]
    labels = ("Reference",) + CANDIDATE_LABELS
    distract, jobs = {}, []
    for k, (label, n) in enumerate(zip(labels, [ref] + counts)):
        n_dis = int(rng.integers(d.distractors[0], d.distractors[1] + 1)) + 1
        others: dict[str, int] = {}
        pool = [LOOKALIKE[target]] + [str(s) for s in rng.choice(other_shapes, size=n_dis, replace=True)]
        for s in pool[:n_dis]:
            others[s] = others.get(s, 0) + 1
        distract[label] = others
        jobs.append(VideoJob(label, _render(n, target, others, ctx.rng(k + 1), ctx)))
    phrase = {"same": f"the same number of {PLURALS[target]} as", "greater": f"more {PLURALS[target]} than",
              "less": f"fewer {PLURALS[target]} than"}[relation]
    question = (f"Count the {PLURALS[target]} in each video (ignore objects of other shapes). "
                f"Which candidate video contains {phrase} the Reference video?")
    meta = {"target": target, "relation": relation, "reference_count": ref,
            "counts": dict(zip(CANDIDATE_LABELS, counts)), "distractors": distract,
            "render_streams": {lbl: [ctx.seed, ctx.code, ctx.index, k + 1] for k, lbl in enumerate(labels)}}
    return Planned(question, candidate_options(), "ABCD"[pos], jobs, meta)
