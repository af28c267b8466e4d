"""MVR (Multi-View Reasoning): which candidate shows the reference's event from another view or sensor.

Appendix A: the positive records the same event from another of 12 synchronised cameras (or as
depth); negatives are other events. Here an event is a set of objects with their motions on a
backdrop; views differ by window, roll and a perspective warp, and each candidate's modality
(RGB, depth, edges, thermal) is drawn i.i.d., so the odd modality out is not the answer. Hard
negatives are the same place with another event, or the same objects doing something else.
"""
from __future__ import annotations

import numpy as np

from .camera import View, camera_path, keystone
from .common import CANDIDATE_LABELS, Planned, QuestionContext, VideoJob, candidate_options, require_unique
from .encode import FPS
from .scene import MODES, Scene, random_grade, render
from .sprites import motion_track
from .stage import backdrop, moving_objects, random_appearance

T = 24
MOTIONS = ("slide", "bounce", "orbit", "zigzag", "still", "spin")


def _event(rng: np.random.Generator, objects: list[dict] | None = None) -> dict:
    """An event: which objects, their motions and a seed for their exact paths and the backdrop."""
    objs = objects or [random_appearance(rng, radius=(11, 17)) for _ in range(int(rng.integers(3, 5)))]
    return {"objects": objs, "motions": [str(rng.choice(MOTIONS)) for _ in objs],
            "layout_seed": int(rng.integers(2**31)), "place_seed": int(rng.integers(2**31))}


def _render(event: dict, view: dict, ctx: QuestionContext, k: int):
    def run() -> np.ndarray:
        rng = ctx.rng(k + 1)
        place_rng = np.random.default_rng(event["place_seed"])  # same event => same backdrop and paths
        bg = backdrop(np.random.default_rng(event["layout_seed"]))
        box = (85.0, 65.0, 235.0, 175.0)  # in view for every candidate camera
        layers, _ = moving_objects(place_rng, event["objects"], box, T, motions=("still",))
        for lyr, m, app in zip(layers, event["motions"], event["objects"]):
            lyr.track = motion_track(m, T, FPS, tuple(lyr.track.xy[0]), place_rng, size=app["radius"], amount=0.6)
            lyr.heat = 0.65 + 0.3 * place_rng.random()
        tilt = keystone(rng, view["tilt"]) if view["tilt"] > 0 else None
        v = View(160 + view["dx"], 120 + view["dy"], view["zoom"], view["roll"])
        cam = camera_path(T, v, rng=rng, jitter=ctx.difficulty.jitter, tilt=tilt)
        scene = Scene(bg, layers, cam, random_grade(rng, ctx.difficulty, T))
        return render(scene, rng, mode=view["mode"])
    return run


def _other_view(rng: np.random.Generator, similarity: float) -> dict:
    mode = "rgb" if rng.random() < 0.4 else str(rng.choice(MODES[1:]))
    return {"mode": mode, "dx": round(float(rng.uniform(-25, 25)), 1), "dy": round(float(rng.uniform(-15, 15)), 1),
            "zoom": round(float(rng.uniform(0.85, 1.15)), 3), "roll": round(float(rng.uniform(-12, 12)), 1),
            "tilt": round(float(rng.uniform(0.04, 0.06 + 0.08 * similarity)), 3)}


def build(ctx: QuestionContext) -> Planned:
    rng, d = ctx.rng(0), ctx.difficulty
    pos = ctx.slot(4)
    ref = _event(rng)
    ref_view = {"mode": "rgb", "dx": 0.0, "dy": 0.0, "zoom": 1.0, "roll": 0.0, "tilt": 0.0}
    events, kinds = [], []
    for i in range(4):
        if i == pos:
            events.append(ref)
            kinds.append("same event")
            continue
        r = rng.random()
        if r < d.similarity / 2:  # same place, another event
            ev = {**_event(rng), "layout_seed": ref["layout_seed"]}
            kinds.append("same place, other event")
        elif r < d.similarity:  # same objects, other arrangement and motions
            ev = _event(rng, objects=ref["objects"])
            kinds.append("same objects, other event")
        else:
            ev = _event(rng)
            kinds.append("other event")
        events.append(ev)
    same = [ev["place_seed"] == ref["place_seed"] and ev["motions"] == ref["motions"] for ev in events]
    require_unique(same, pos, f"{ctx.qid} events")
    views = [_other_view(rng, d.similarity) for _ in range(4)]
    jobs = [VideoJob("Reference", _render(ref, ref_view, ctx, 0))]
    jobs += [VideoJob(lbl, _render(ev, vw, ctx, k + 1)) for k, (lbl, ev, vw) in enumerate(zip(CANDIDATE_LABELS, events, views))]
    question = ("Which candidate video shows the same event as the Reference video, recorded by another camera "
                "(different viewpoint) or another sensor (for example a depth, edge or thermal rendering)?")
    meta = {"candidates": {lbl: {"kind": kd, "view": vw} for lbl, kd, vw in zip(CANDIDATE_LABELS, kinds, views)},
            "reference_event": {"objects": ref["objects"], "motions": ref["motions"]}}
    return Planned(question, candidate_options(), "ABCD"[pos], jobs, meta)
