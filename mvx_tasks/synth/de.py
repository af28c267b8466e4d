"""DE (Defeasible Entailment): does the update video strengthen or weaken a hypothesis?

Appendix A (DVidE): a premise video, a hypothesis sentence and an update (a video here) that
strengthens or weakens it. Scenarios: an object heading for a zone (the update shows it
arriving, or turning away); a room where one shape seems to outnumber another (the update pans
to the rest of the room); a tower growing toward a rival's height (it overtakes, or collapses).
The premise alone always leans toward the hypothesis, so only the update decides.
"""
from __future__ import annotations

import numpy as np

from .camera import View, camera_path, static_camera
from .common import GenerationError, Planned, QuestionContext, VideoJob
from .scene import Layer, Scene, random_grade, render
from .sprites import COLOURS, PLURALS, Track, make_patch
from .stage import BRIGHT, backdrop, place
from ..subtitles import SubtitleSegment

T = 24
SCENARIOS = ("heading", "majority", "tower")
LABELS = ("Premise", "Update")


def _plan(rng: np.random.Generator, kind: str, strengthen: bool) -> tuple[str, dict]:
    c1, c2 = (str(c) for c in rng.choice(BRIGHT, size=2, replace=False))
    if kind == "heading":
        shape = str(rng.choice(["star", "triangle", "square", "hexagon"]))
        hyp = f"The {c1} {shape} will reach the {c2} zone."
        return hyp, {"colour": c1, "zone": c2, "shape": shape, "outcome": "arrives" if strengthen else
                     str(rng.choice(["turns away", "is stopped by a barrier"]))}
    if kind == "majority":
        a, b = (str(s) for s in rng.choice(["star", "circle", "square", "triangle"], size=2, replace=False))
        left_a = int(rng.integers(3, 5))
        left_b = left_a - int(rng.integers(1, 3))
        if strengthen:
            right_a, right_b = int(rng.integers(1, 4)), int(rng.integers(0, 2))
        else:
            right_b = int(rng.integers(left_a - left_b + 2, left_a - left_b + 4))
            right_a = int(rng.integers(0, 2))
        facts = {"more": a, "fewer": b, "left": {a: left_a, b: left_b}, "right": {a: right_a, b: right_b}}
        if ((left_a + right_a) > (left_b + right_b)) != strengthen:
            raise GenerationError(f"majority counts {facts} contradict the label")
        return f"There are more {PLURALS[a]} than {PLURALS[b]} in the room.", facts
    hyp = f"The {c1} tower will end up taller than the {c2} tower."
    return hyp, {"colour": c1, "rival": c2, "rival_blocks": int(rng.integers(5, 7)), "start_blocks": 2,
                 "outcome": "overtakes" if strengthen else "collapses"}


def _heading(f: dict, part: int, rng: np.random.Generator, ctx: QuestionContext, lay: np.random.Generator) -> Scene:
    bg = backdrop(lay, kind="floor")
    zone = make_patch("square", 26, COLOURS[f["zone"]], lay, texture_kind="stripes", shading="flat", opacity=0.8)
    obj = make_patch(f["shape"], 11, COLOURS[f["colour"]], lay, texture_kind="dots", outline_width=1)
    zx, zy, y0 = 255.0, 120.0 + lay.uniform(-20, 20), 120 + lay.uniform(-40, 40)
    u = (np.arange(T) / (T - 1)) * 0.5 + 0.5 * part  # premise covers the first half of the trip
    path_x, path_y = 60 + (zx - 60) * u, y0 + (zy - y0) * u
    layers = [Layer(zone, Track.still(T, zx, zy), z=-2)]
    if part == 1 and f["outcome"] == "turns away":
        s = np.arange(T) / (T - 1)
        path_x = 60 + (zx - 60) * (0.5 + 0.25 * np.sin(np.pi * s * 0.5)) - 60 * s ** 2
        path_y = y0 + (zy - y0) * 0.5 + 70 * s * np.sign(y0 - zy + 1e-3)
    elif part == 1 and f["outcome"] == "is stopped by a barrier":
        bx = 60 + (zx - 60) * 0.78
        path_x = np.minimum(path_x, bx - 16)
        layers.append(Layer(make_patch("bar", 40, COLOURS["grey"], lay, texture_kind="noise"),
                            Track.still(T, bx, zy + (y0 - zy) * 0.22), z=2))
    track = Track(np.stack([path_x, path_y], 1).astype(np.float32), np.ones(T, np.float32),
                  (np.arange(T) * 6.0).astype(np.float32), np.ones(T, np.float32))
    layers.append(Layer(obj, track, z=1))
    return Scene(bg, layers, static_camera(T, 320, 240, rng, ctx.difficulty.jitter, zoom=0.62),
                 random_grade(rng, ctx.difficulty, T))


def _majority(f: dict, part: int, rng: np.random.Generator, ctx: QuestionContext, lay: np.random.Generator) -> Scene:
    """A wide room (640 px); the premise looks at its left half, the update pans over the right half."""
    layers = []
    bg = backdrop(lay, w=640, h=240)
    for half, x0 in (("left", 20.0), ("right", 340.0)):
        shapes = [s for s, n in f[half].items() for _ in range(n)]
        r_rng = lay
        pts = place(r_rng, [16.0] * len(shapes), (x0, 50.0, x0 + 280, 190.0))
        for s, (x, y) in zip(shapes, pts):
            col = COLOURS[str(r_rng.choice(BRIGHT))]
            p = make_patch(s, 11, col, r_rng, texture_kind=str(r_rng.choice(["solid", "dots", "stripes"])))
            layers.append(Layer(p, Track.still(T, x, y, angle=float(r_rng.uniform(-10, 10)))))
    # premise: a slow look around the left half; update: a pan over to the right half
    start, end = (View(150.0, 120.0, 0.62), View(180.0, 120.0, 0.62)) if part == 0 else \
        (View(200.0, 120.0, 0.62), View(480.0, 120.0, 0.62))
    cam = camera_path(T, start, end, rng=rng, jitter=ctx.difficulty.jitter)
    return Scene(bg, layers, cam, random_grade(rng, ctx.difficulty, T))


def _tower(f: dict, part: int, rng: np.random.Generator, ctx: QuestionContext, lay: np.random.Generator) -> Scene:
    bg = backdrop(lay, kind="floor")
    base_y, size = 200.0, 20.0
    layers = []
    rival = make_patch("square", 9.5, COLOURS[f["rival"]], lay, texture_kind="checker", outline_width=1)
    for i in range(f["rival_blocks"]):
        layers.append(Layer(rival, Track.still(T, 210.0, base_y - i * size)))
    block = make_patch("square", 9.5, COLOURS[f["colour"]], lay, texture_kind="stripes", outline_width=1)
    frames_per = 6
    if part == 0:
        heights = [f["start_blocks"] + min(t // frames_per, 2) for t in range(T)]
    elif f["outcome"] == "overtakes":
        heights = [f["start_blocks"] + 2 + min(t // 4 + 1, f["rival_blocks"] - 1) for t in range(T)]
    else:
        heights = [f["start_blocks"] + 2 for _ in range(T)]
    n_max = max(heights)
    for i in range(n_max):
        xy = np.tile([110.0, base_y - i * size], (T, 1)).astype(np.float32)
        ang = np.zeros(T, np.float32)
        op = np.array([1.0 if i < h else 0.0 for h in heights], np.float32)
        if part == 1 and f["outcome"] == "collapses" and i >= 1:  # the upper blocks topple and fall
            s = np.clip((np.arange(T) - 6) / 10.0, 0, 1)
            xy[:, 0] += 30 * s * i
            xy[:, 1] = np.minimum(base_y, xy[:, 1] + (base_y - xy[:, 1]) * s ** 2)
            ang = (70 * s * i).astype(np.float32)
        layers.append(Layer(block, Track(xy, np.ones(T, np.float32), ang, op)))
    return Scene(bg, layers, static_camera(T, 320, 240, rng, ctx.difficulty.jitter, zoom=0.62),
                 random_grade(rng, ctx.difficulty, T))


def _render(kind: str, facts: dict, part: int, ctx: QuestionContext, room: np.ndarray):
    def run() -> np.ndarray:
        rng = ctx.rng(part + 1)
        lay = np.random.default_rng([int(v) for v in room])  # the same place in premise and update
        builder = {"heading": _heading, "majority": _majority, "tower": _tower}[kind]
        scene = builder(facts, part, rng, ctx, lay)
        return render(scene, rng)
    return run


def build(ctx: QuestionContext) -> Planned:
    rng = ctx.rng(0)
    strengthen = ctx.slot(2) == 0
    kind = str(SCENARIOS[int(rng.integers(len(SCENARIOS)))])
    hypothesis, facts = _plan(rng, kind, strengthen)
    room = rng.integers(0, 2**31, 2)
    question = (f"Hypothesis: \"{hypothesis}\"\nThe Premise video supports the hypothesis at first. Given the "
                f"Update video, which shows what happened next, does the new evidence strengthen or weaken the "
                f"hypothesis?")
    jobs = [VideoJob("Premise", _render(kind, facts, 0, ctx, room),
                     [SubtitleSegment(0.0, 2.0, "Narrator: Here is what we saw first.")]),
            VideoJob("Update", _render(kind, facts, 1, ctx, room))]
    meta = {"scenario": kind, "hypothesis": hypothesis, "label": "strengthens" if strengthen else "weakens",
            "facts": facts}
    return Planned(question, {"A": "Strengthens", "B": "Weakens"}, "A" if strengthen else "B", jobs, meta)
