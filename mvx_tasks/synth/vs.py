"""VS (Video Similarity): which candidate is a near-duplicate of the reference.

Appendix A (FIVR-200K): one near-duplicate, three non-duplicates. The near-duplicate is the same
footage re-encoded, cropped, colour-shifted and maybe logo-stamped; the hard negative is the same
scene at another time (the same camera and objects, later); other negatives are other scenes
shot at the same spot with the same camera move but other objects. Every candidate gets an i.i.d. grade, crop, logo and quality, so none of
those edits marks the positive.
"""
from __future__ import annotations

import cv2
import numpy as np

from .camera import View, camera_path
from .common import CANDIDATE_LABELS, Planned, QuestionContext, VideoJob, candidate_options, require_unique
from .scene import BACKGROUNDS, Scene, random_grade, random_palette, render
from .stage import backdrop, busy_scene, moving_objects, random_appearance

T = 24
LOGOS = ("TV5", "NEWS", "HD", "LIVE", "CH7", "REC")


def _footage(scene_seed: int, palette_seed: int, ctx: QuestionContext) -> Scene:
    """A 2T-frame scene; the first T frames are 'the video', the last T the same place later."""
    rng = np.random.default_rng(scene_seed)
    look = np.random.default_rng(palette_seed)  # every scene of a question: the same place
    pal, kind = random_palette(look), str(look.choice(BACKGROUNDS))
    bg = backdrop(look, kind=kind, palette=pal)  # one location: only objects, camera and time differ
    z = look.uniform(0.8, 0.95)  # the same spot and camera move: a model must look at the content
    start = View(160 + look.uniform(-20, 20), 120 + look.uniform(-12, 12), z)
    end = View(start.cx + look.uniform(-40, 40), start.cy + look.uniform(-20, 20), z * look.uniform(0.9, 1.15))
    cam = camera_path(2 * T, start, end, rng=rng, jitter=ctx.difficulty.jitter, ease=False)
    apps = [random_appearance(rng, radius=(10, 16)) for _ in range(int(rng.integers(3, 5)))]
    layers, _ = moving_objects(rng, apps, cam.safe_box(12), 2 * T, motions=("slide", "orbit", "drift", "zigzag"))
    return busy_scene(rng, ctx.difficulty, cam, layers, bg=bg)


def _edit(rng: np.random.Generator) -> dict:
    """Edits any candidate may carry: crop-zoom, colour shift, logo, encoding quality."""
    return {"crop_zoom": round(float(rng.uniform(1.0, 1.25)), 3), "crop_dx": round(float(rng.uniform(-12, 12)), 1),
            "logo": str(rng.choice(LOGOS)) if rng.random() < 0.5 else None,
            "corner": int(rng.integers(4)), "crf": int(rng.integers(20, 33))}


def _render(scene_seed: int, palette_seed: int, segment: int, edit: dict, ctx: QuestionContext, k: int):
    def run() -> np.ndarray:
        rng = ctx.rng(k + 1)
        scene = _footage(scene_seed, palette_seed, ctx)
        z, dx = edit["crop_zoom"], edit["crop_dx"]
        crop = np.array([[1 / z, 0, (1 - 1 / z) * 95.5 + dx], [0, 1 / z, (1 - 1 / z) * 71.5], [0, 0, 1]])
        cam = scene.camera.slice(segment * T, (segment + 1) * T)
        cam.mats = cam.mats @ crop
        for lyr in scene.layers:
            lyr.track = lyr.track.slice(segment * T, (segment + 1) * T)
        scene.camera, scene.grade = cam, random_grade(rng, ctx.difficulty, T, strength=1.5)
        frames = render(scene, rng)
        if edit["logo"]:
            w, h = cam.out_w, cam.out_h
            x = 6 if edit["corner"] % 2 == 0 else w - 10 - 11 * len(edit["logo"])
            y = 18 if edit["corner"] < 2 else h - 8
            for f in frames:
                cv2.putText(f, edit["logo"], (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (250, 250, 250), 1, cv2.LINE_AA)
        return frames
    return run


def build(ctx: QuestionContext) -> Planned:
    rng, d = ctx.rng(0), ctx.difficulty
    pos = ctx.slot(4)
    ref_seed, pal_seed = int(rng.integers(2**31)), int(rng.integers(2**31))
    hard = int(rng.integers(3)) if rng.random() < max(d.similarity, 0.5) else -1
    cands, n_neg = [], 0
    for i in range(4):
        if i == pos:
            cands.append({"kind": "near-duplicate", "scene": ref_seed, "segment": 0})
        else:
            if n_neg == hard:
                cands.append({"kind": "same scene, another time", "scene": ref_seed, "segment": 1})
            else:
                cands.append({"kind": "other scene", "scene": int(rng.integers(2**31)), "segment": 0})
            n_neg += 1
    for c in cands:
        c["edit"] = _edit(rng)
    require_unique([c["scene"] == ref_seed and c["segment"] == 0 for c in cands], pos, f"{ctx.qid} duplicates")
    ref_edit = {"crop_zoom": 1.0, "crop_dx": 0.0, "logo": None, "corner": 0, "crf": 20}
    jobs = [VideoJob("Reference", _render(ref_seed, pal_seed, 0, ref_edit, ctx, 0))]
    for k, (lbl, c) in enumerate(zip(CANDIDATE_LABELS, cands)):
        jobs.append(VideoJob(lbl, _render(c["scene"], pal_seed, c["segment"], c["edit"], ctx, k + 1), crf=c["edit"]["crf"]))
    question = ("Which candidate video is a near-duplicate of the Reference video, i.e. the same footage, possibly "
                "re-encoded, cropped, colour-shifted or with an overlaid logo?")
    meta = {"candidates": dict(zip(CANDIDATE_LABELS, cands))}
    return Planned(question, candidate_options(), "ABCD"[pos], jobs, meta)
