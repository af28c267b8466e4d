"""RID (Re-Identification): do two clips show the same individual?

Appendix A: positive pairs share identity but differ in viewpoint and scene; negative pairs
are different individuals. An individual is a multi-part figure (body, head, badge, legs with
their own shapes, colours and textures). Positives change viewpoint (squash, tilt), scale,
background, lighting and motion; negatives are look-alikes differing in a few parts (one on hard).
"""
from __future__ import annotations

import numpy as np

from .camera import static_camera
from .common import GenerationError, Planned, QuestionContext, VideoJob
from .encode import FPS
from .scene import Layer, render
from .sprites import COLOURS, Patch, Track, make_patch, paste_patch
from .stage import BRIGHT, busy_scene

T = 24
LABELS = ("Video 1", "Video 2")
PARTS: dict[str, tuple[str, ...]] = {
    "body_shape": ("square", "hexagon", "circle", "triangle"),
    "body_colour": BRIGHT,
    "body_texture": ("solid", "stripes", "dots", "checker", "gradient"),
    "head_shape": ("circle", "square", "star", "triangle"),
    "head_colour": BRIGHT,
    "badge_shape": ("star", "cross", "circle", "ring"),
    "badge_colour": BRIGHT,
    "legs": ("two", "three"),
}
CHANGES = {"easy": (2, 4), "default": (1, 2), "hard": (1, 1)}


def random_identity(rng: np.random.Generator) -> dict:
    return {k: str(rng.choice(v)) for k, v in PARTS.items()}


def look_alike(rng: np.random.Generator, ident: dict, n_change: int) -> dict:
    out = dict(ident)
    for k in rng.choice(list(PARTS), size=n_change, replace=False):
        out[str(k)] = str(rng.choice([v for v in PARTS[str(k)] if v != ident[str(k)]]))
    return out


def figure_patch(ident: dict, rng: np.random.Generator, aspect: float) -> Patch:
    """Compose the figure: legs, then body, head and badge (aspect < 1 = seen from an angle)."""
    body = make_patch(ident["body_shape"], 18, COLOURS[ident["body_colour"]], rng, texture_kind=ident["body_texture"],
                      aspect=aspect, outline_width=1, period=5.0)
    leg = make_patch("bar", 9, COLOURS["black"], rng, shading="flat")
    n_legs = 2 if ident["legs"] == "two" else 3
    fig = Patch(np.zeros((96, 96, 4), np.float32))
    for i in range(n_legs):
        fig = paste_patch(fig, leg, (i - (n_legs - 1) / 2) * 11 * aspect, 24)
    fig = paste_patch(fig, body, 0, 0)
    head = make_patch(ident["head_shape"], 10, COLOURS[ident["head_colour"]], rng, aspect=aspect, outline_width=1)
    fig = paste_patch(fig, head, 0, -28)
    badge = make_patch(ident["badge_shape"], 6, COLOURS[ident["badge_colour"]], rng, shading="flat", aspect=aspect)
    return paste_patch(fig, badge, 5 * aspect, -2)


def _render(ident: dict, ctx: QuestionContext, k: int):
    def run() -> np.ndarray:
        rng = ctx.rng(k + 1)
        aspect, scale = float(rng.uniform(0.7, 1.0)), float(rng.uniform(0.75, 1.2))
        cam = static_camera(T, 320, 240, rng, ctx.difficulty.jitter)
        tt = np.arange(T) / FPS
        x0, y0 = 160 + rng.uniform(-45, 0), 120 + rng.uniform(-10, 15)
        speed, sign = rng.uniform(8, 20), float(rng.choice([-1, 1]))
        xy = np.stack([x0 + sign * speed * tt + (45 if sign < 0 else 0), y0 - 2.5 * np.abs(np.sin(5 * tt))], 1)
        ang = rng.uniform(-12, 12) + 4 * np.sin(5 * tt)
        track = Track(xy.astype(np.float32), np.full(T, scale, np.float32), ang.astype(np.float32), np.ones(T, np.float32))
        scene = busy_scene(rng, ctx.difficulty, cam, [Layer(figure_patch(ident, rng, aspect), track, z=1.0)])
        return render(scene, rng)
    return run


def build(ctx: QuestionContext) -> Planned:
    rng = ctx.rng(0)
    same = ctx.slot(2) == 0
    first = random_identity(rng)
    lo, hi = CHANGES[ctx.difficulty.name]
    second = first if same else look_alike(rng, first, int(rng.integers(lo, hi + 1)))
    if (first == second) != same:
        raise GenerationError(f"{ctx.qid}: identities do not match the intended answer")
    question = ("Video 1 and Video 2 were recorded by different cameras, with different viewpoint, scale, background "
                "and lighting. Do they show the same individual (the multi-part figure)?")
    meta = {"same_identity": same, "identities": {LABELS[0]: first, LABELS[1]: second},
            "differing_parts": [p for p in PARTS if first[p] != second[p]]}
    jobs = [VideoJob(LABELS[0], _render(first, ctx, 0)), VideoJob(LABELS[1], _render(second, ctx, 1))]
    return Planned(question, {"A": "Yes", "B": "No"}, "A" if same else "B", jobs, meta)
