"""FD (Forensic Detection): which of two videos has been manipulated.

Appendix A pairs one authentic and one manipulated video. Both videos here are independent
scenes from the same distribution; one receives a local forgery: a region spliced in from
another video, a region frozen in time, a cloned (copy-moved) object, or a semi-transparent
object blended in that does not follow the camera.
"""
from __future__ import annotations

import numpy as np

from .camera import OUT_H, OUT_W, View, camera_path
from .common import Planned, QuestionContext, VideoJob, require_unique
from .scene import Scene, render
from .sprites import COLOURS, make_patch
from .stage import busy_scene, moving_objects, random_appearance

T = 24
MANIPULATIONS = ("splice", "freeze", "clone", "blend")
LABELS = ("Video A", "Video B")


def _scene(rng: np.random.Generator, ctx: QuestionContext) -> Scene:
    d = ctx.difficulty
    z = rng.uniform(0.8, 1.0)
    start = View(160 + rng.uniform(-20, 20), 120 + rng.uniform(-15, 15), z)
    end = View(start.cx + rng.uniform(-30, 30), start.cy + rng.uniform(-20, 20), z * rng.uniform(0.95, 1.15))
    cam = camera_path(T, start, end, rng=rng, jitter=d.jitter)
    box = cam.safe_box(10)
    apps = [random_appearance(rng, radius=(10, 16)) for _ in range(int(rng.integers(2, 4)))]
    layers, _ = moving_objects(rng, apps, box, T)
    return busy_scene(rng, d, cam, layers)


def plan_forgery(kind: str, rng: np.random.Generator, difficulty: str, w: int = 192, h: int = 144) -> dict:
    """Where and when the forgery happens (decided at planning time, recorded in meta)."""
    scale = {"easy": 1.2, "default": 1.0, "hard": 0.8}[difficulty]
    rw, rh = int(rng.uniform(36, 60) * scale), int(rng.uniform(30, 48) * scale)
    x, y = int(rng.uniform(8, w - rw - 8)), int(rng.uniform(8, h - rh - 8))
    facts = {"type": kind, "region_xywh": [x, y, rw, rh], "from_frame": int(rng.integers(0, T // 3))}
    if kind == "clone":
        dx = int(rng.choice([-1, 1]) * rng.uniform(rw * 0.8, rw * 1.4))
        dy = int(rng.uniform(-rh * 0.5, rh * 0.5))
        facts["target_xy"] = [int(np.clip(x + dx, 0, w - rw)), int(np.clip(y + dy, 0, h - rh))]
    elif kind == "blend":
        facts["object"] = random_appearance(rng, radius=(12, 18))
        facts["opacity"] = round(float(rng.uniform(0.45, 0.65) * min(scale, 1.0)), 3)
    return facts


def _manipulator(facts: dict, rng: np.random.Generator, ctx: QuestionContext):
    """A per-frame hook that applies the planned forgery to a rendered frame (before sensor noise)."""
    x, y, rw, rh = facts["region_xywh"]
    t0, kind = facts["from_frame"], facts["type"]
    if kind == "splice":  # the region comes from another, independently rendered scene
        donor = render(_scene(rng, ctx), rng).astype(np.float32)
        sx, sy = int(rng.uniform(0, OUT_W - rw)), int(rng.uniform(0, OUT_H - rh))

        def hook(frame, t):
            if t >= t0:
                frame[y:y + rh, x:x + rw] = donor[t, sy:sy + rh, sx:sx + rw]
            return frame
    elif kind == "freeze":  # the region stops in time while the rest moves on
        held: dict = {}

        def hook(frame, t):
            if t == t0:
                held["patch"] = frame[y:y + rh, x:x + rw].copy()
            if t > t0:
                frame[y:y + rh, x:x + rw] = held["patch"]
            return frame
    elif kind == "clone":  # copy-move: the same moving content twice in one frame
        tx, ty = facts["target_xy"]

        def hook(frame, t):
            if t >= t0:
                frame[ty:ty + rh, tx:tx + rw] = frame[y:y + rh, x:x + rw].copy()
            return frame
    elif kind == "blend":  # a ghost object pinned to the screen while the camera moves
        app = facts["object"]
        patch = make_patch(app["shape"], app["radius"], COLOURS[app["colour"]], rng, texture_kind=app["texture"],
                           shading="flat").rgba
        alpha = patch[..., 3:4] * facts["opacity"]
        ps = patch.shape[0]
        px, py = int(np.clip(x, 0, OUT_W - ps)), int(np.clip(y, 0, OUT_H - ps))

        def hook(frame, t):
            if t >= t0:
                roi = frame[py:py + ps, px:px + ps]
                frame[py:py + ps, px:px + ps] = roi * (1 - alpha) + patch[..., :3] * alpha
            return frame
    else:
        raise ValueError(f"unknown manipulation {kind!r}")
    return hook


def build(ctx: QuestionContext) -> Planned:
    rng = ctx.rng(0)
    fake = ctx.slot(2)
    kind = str(MANIPULATIONS[int(rng.integers(len(MANIPULATIONS)))])
    forgery = plan_forgery(kind, rng, ctx.difficulty.name)

    def job(k: int):
        def run() -> np.ndarray:
            r = ctx.rng(k + 1)
            scene = _scene(r, ctx)
            if k != fake:
                return render(scene, r)
            return render(scene, r, post=_manipulator(forgery, r, ctx))
        return run

    manipulated = [k == fake for k in range(2)]
    require_unique(manipulated, fake, f"{ctx.qid} manipulated flags")
    question = ("One of these two videos has been digitally manipulated: part of it was edited after recording "
                "(for example a spliced, frozen, cloned or blended-in region). Which video is manipulated?")
    meta = {"manipulated": LABELS[fake], "manipulation": forgery, "authentic": LABELS[1 - fake],
            "render_streams": {lbl: [ctx.seed, ctx.code, ctx.index, k + 1] for k, lbl in enumerate(LABELS)}}
    return Planned(question, {"A": "Video A", "B": "Video B"}, "AB"[fake],
                   [VideoJob(lbl, job(k)) for k, lbl in enumerate(LABELS)], meta)
