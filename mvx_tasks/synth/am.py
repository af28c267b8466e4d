"""AM (Action Matching): which candidate shows the reference's action, by a different-looking actor.

Appendix A: one positive with the same action label, three negatives with different labels.
Here an action is a motion pattern (bouncing, spinning, orbiting, zig-zag, pulsing, sliding,
shaking) with random amplitude, speed, phase and direction; the actor is the largest object.
Hard negatives reuse the reference actor's exact look, so matching appearance fails.
"""
from __future__ import annotations

import numpy as np

from .camera import static_camera
from .common import CANDIDATE_LABELS, Planned, QuestionContext, VideoJob, candidate_options, require_unique
from .encode import FPS
from .scene import Layer, render
from .sprites import MOTIONS, motion_track
from .stage import busy_scene, patch_of, random_appearance

T = 24
ACTOR_SHAPES = ("square", "triangle", "star", "hexagon", "cross")  # rotation is visible on every one
ACTOR_TEXTURES = ("stripes", "dots", "checker", "noise", "gradient")


def _actor(rng: np.random.Generator, avoid: dict | None = None) -> dict:
    while True:
        app = random_appearance(rng, shapes=ACTOR_SHAPES, textures=ACTOR_TEXTURES, radius=(17, 22))
        if avoid is None or (app["shape"] != avoid["shape"] and app["colour"] != avoid["colour"]):
            return app


def _render(actor: dict, motion: str, ctx: QuestionContext, k: int):
    def run() -> np.ndarray:
        rng = ctx.rng(k + 1)
        cam = static_camera(T, 320, 240, rng, ctx.difficulty.jitter)
        centre = (160 + rng.uniform(-10, 10), 120 + rng.uniform(-8, 8))
        layer = Layer(patch_of(actor, rng), motion_track(motion, T, FPS, centre, rng, size=actor["radius"]), z=1.0)
        scene = busy_scene(rng, ctx.difficulty, cam, [layer])
        for lyr in scene.layers:  # clutter stays smaller than the actor
            if lyr.z < 0:
                lyr.track.scale[:] = np.minimum(lyr.track.scale, 0.8)
        return render(scene, rng)
    return run


def build(ctx: QuestionContext) -> Planned:
    rng, d = ctx.rng(0), ctx.difficulty
    pos = ctx.slot(4)
    ref_motion = str(rng.choice(MOTIONS))
    others = [str(m) for m in rng.permutation([m for m in MOTIONS if m != ref_motion])[:3]]
    ref_actor = _actor(rng)
    motions, actors, neg = [], [], iter(others)
    lure = int(rng.integers(3)) if rng.random() < d.similarity else -1  # negative wearing the reference's look
    n_neg = 0
    for i in range(4):
        if i == pos:
            motions.append(ref_motion)
            actors.append(_actor(rng, avoid=ref_actor))
        else:
            motions.append(next(neg))
            actors.append(dict(ref_actor) if n_neg == lure else _actor(rng))
            n_neg += 1
    require_unique([m == ref_motion for m in motions], pos, f"{ctx.qid} motions {motions}")
    jobs = [VideoJob("Reference", _render(ref_actor, ref_motion, ctx, 0))]
    jobs += [VideoJob(lbl, _render(a, m, ctx, k + 1)) for k, (lbl, a, m) in enumerate(zip(CANDIDATE_LABELS, actors, motions))]
    question = ("The Reference video shows an actor (the largest object) performing an action. Which candidate video "
                "shows the same action, possibly performed by a different-looking actor?")
    meta = {"reference_action": ref_motion, "actions": dict(zip(CANDIDATE_LABELS, motions)),
            "reference_actor": ref_actor, "actors": dict(zip(CANDIDATE_LABELS, actors)),
            "appearance_lure": CANDIDATE_LABELS[[i for i in range(4) if i != pos][lure]] if lure >= 0 else None}
    return Planned(question, candidate_options(), "ABCD"[pos], jobs, meta)
