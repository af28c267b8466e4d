"""SEQ (Sequence Reasoning): the chronological order of shuffled clips of one continuous process.

Appendix A (CI-VID): clips of one activity in shuffled order; the model picks the true order.
One continuous video (a tower being built, an object travelling a winding path, a container
filling, a clock hand turning) is cut into 3-4 consecutive clips; each clip gets its own lighting
so brightness does not order them. Options number 2-4 per question (mix 2,2,3,4 per block of
four questions, expected chance 0.396, near the paper's 40.5%).
"""
from __future__ import annotations

import itertools

import numpy as np

from .camera import View, camera_path
from .common import GenerationError, Planned, QuestionContext, VideoJob, rng_for
from .encode import FPS
from .scene import Grade, Layer, Scene, render
from .sprites import COLOURS, Track, make_patch
from .stage import BRIGHT, backdrop, distractor_layers

CLIP = 16  # frames per clip (2 s at 8 fps)
PROCESSES = ("tower", "travel", "fill", "clock")
OPTION_MIX = (2, 2, 3, 4)


def layout(seed: int, index: int) -> tuple[int, int]:
    """(number of options, answer slot) of question ``index``: balanced per block of four questions."""
    block, within = divmod(index, 4)
    ks = rng_for(seed, "SEQ", block, 101).permutation(OPTION_MIX)
    k = int(ks[within])
    nth = int(sum(1 for j in range(within) if ks[j] == k))  # 2-option questions come twice per block
    count = OPTION_MIX.count(k)
    serial = block * count + nth  # running number among this task's k-option questions
    sub_block, pos = divmod(serial, k)
    return k, int(rng_for(seed, "SEQ", sub_block, 200 + k).permutation(k)[pos])


def _layers(process: str, n: int, rng: np.random.Generator) -> list[Layer]:
    """Sprites of the process over ``n`` frames (canvas 320x240)."""
    u = np.linspace(0, 1, n)
    ones = np.ones(n, np.float32)
    col = COLOURS[str(rng.choice(BRIGHT))]
    out = []
    if process == "tower":
        k_blocks = 8
        block = make_patch("square", 9.5, col, rng, texture_kind="stripes", outline_width=1)
        for i in range(k_blocks):
            t_in = (i + 0.5) / k_blocks  # block i drops in during its share of the process
            drop = np.clip((u - t_in + 1 / k_blocks) * k_blocks, 0, 1)
            y = 205 - 20 * i - (1 - drop) * 90
            op = (u >= t_in - 1 / k_blocks).astype(np.float32)
            out.append(Layer(block, Track(np.stack([np.full(n, 160.0), y], 1).astype(np.float32), ones,
                                          np.zeros(n, np.float32), op)))
    elif process == "travel":
        pts = rng.uniform([60, 60], [260, 180], (5, 2))
        s = np.linspace(0, 4, n)
        xy = np.stack([np.interp(s, np.arange(5), pts[:, 0]), np.interp(s, np.arange(5), pts[:, 1])], 1)
        flag = make_patch("triangle", 10, COLOURS["red"], rng, shading="flat")
        home = make_patch("square", 12, COLOURS["white"], rng, texture_kind="checker")
        out += [Layer(home, Track.still(n, *pts[0]), z=-1), Layer(flag, Track.still(n, *pts[-1]), z=-1)]
        obj = make_patch(str(rng.choice(["star", "hexagon", "cross"])), 11, col, rng, texture_kind="dots")
        out.append(Layer(obj, Track(xy.astype(np.float32), ones, (u * 720).astype(np.float32), ones), z=1))
    elif process == "fill":
        glass = make_patch("square", 40, COLOURS["white"], rng, shading="flat", opacity=0.35)
        out.append(Layer(glass, Track.still(n, 160, 140), z=0))
        liquid = make_patch("square", 4.4, col, rng, texture_kind="noise", aspect=8.5)
        for row in range(9):  # liquid rises row by row
            op = np.clip((u * 9.5 - row), 0, 1).astype(np.float32)
            out.append(Layer(liquid, Track(np.tile([160, 176 - row * 8.6], (n, 1)).astype(np.float32), ones,
                                           np.zeros(n, np.float32), op), z=1))
    elif process == "clock":
        face = make_patch("circle", 45, COLOURS["white"], rng, texture_kind="solid", outline_width=3)
        hand = make_patch("bar", 40, COLOURS["black"], rng, shading="flat")
        start = rng.uniform(0, 60)
        ang = -(start + 300 * u)  # clockwise sweep of 300 degrees: no wrap-around ambiguity
        centre = np.array([160.0, 120.0])
        tip = centre + 20 * np.stack([np.sin(np.radians(-ang)), -np.cos(np.radians(-ang))], 1)
        out += [Layer(face, Track.still(n, 160, 120), z=0),
                Layer(hand, Track(tip.astype(np.float32), ones * 0.5, ang.astype(np.float32), ones), z=1)]
    else:
        raise ValueError(f"unknown process {process!r}")
    return out


def _footage(process: str, k: int, ctx: QuestionContext) -> np.ndarray:
    rng = ctx.rng(1)
    n = k * CLIP
    start = View(160 + rng.uniform(-15, 15), 120 + rng.uniform(-10, 10), 0.72)
    cam = camera_path(n, start, View(start.cx + rng.uniform(-20, 20), start.cy, 0.72 * rng.uniform(1.0, 1.15)),
                      rng=rng, jitter=ctx.difficulty.jitter)
    layers = _layers(process, n, rng) + distractor_layers(rng, int(rng.integers(*ctx.difficulty.distractors)), n,
                                                          FPS, cam.safe_box(10), z=-3)
    light = np.concatenate([np.full(CLIP, rng.uniform(0.8, 1.2), np.float32) for _ in range(k)])  # per-clip lighting
    frames = render(Scene(backdrop(rng), layers, cam, Grade(light=light, noise=ctx.difficulty.noise)), rng)
    return frames


def build(ctx: QuestionContext) -> Planned:
    rng = ctx.rng(0)
    n_opts, pos = layout(ctx.seed, ctx.index)
    k = int(rng.choice([3, 4]))
    process = str(rng.choice(PROCESSES))
    shown = [int(v) for v in rng.permutation(k)]  # shown[j] = true segment shown as Clip j+1
    labels = [f"Clip {j + 1}" for j in range(k)]
    truth = [labels[shown.index(seg)] for seg in range(k)]  # clip labels in chronological order
    perms = [list(p) for p in itertools.permutations(labels) if list(p) != truth]
    picks = rng.choice(len(perms), size=n_opts - 1, replace=False)
    wrong = [perms[int(i)] for i in picks]
    orders = wrong[:pos] + [truth] + wrong[pos:]
    if sum(o == truth for o in orders) != 1 or orders.index(truth) != pos:
        raise GenerationError(f"{ctx.qid}: the true order is not exactly one option")
    cache: dict = {}

    def clip(j: int):
        def run() -> np.ndarray:
            if "frames" not in cache:
                cache["frames"] = _footage(process, k, ctx)
            seg = shown[j]
            return cache["frames"][seg * CLIP:(seg + 1) * CLIP]
        return run

    options = {"ABCD"[i]: ", ".join(o) for i, o in enumerate(orders)}
    question = (f"The {k} clips below are consecutive parts of one continuous video, shown in shuffled order. "
                f"Which option lists the clips in their correct chronological order?")
    meta = {"process": process, "n_clips": k, "shown_segments": dict(zip(labels, shown)), "true_order": truth,
            "n_options": n_opts, "chance": round(1 / n_opts, 4)}
    return Planned(question, options, "ABCD"[pos], [VideoJob(lbl, clip(j)) for j, lbl in enumerate(labels)], meta)
