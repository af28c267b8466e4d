"""CR (Counterfactual Reasoning): whose counterfactual answer has the reference's option number.

Appendix A (ACQUIRED): every video comes with its own counterfactual question and two options;
the positive's correct option index equals the reference's, the negatives' differ. Videos show
simple physics: a ball hitting another ball (which was or was not already moving), or a ball
rolling toward a wall (which did or did not stop it). The correct option depends on what the
video shows, so the question texts alone carry no answer.
"""
from __future__ import annotations

import numpy as np

from .camera import static_camera
from .common import CANDIDATE_LABELS, Planned, QuestionContext, VideoJob, candidate_options, require_unique
from .encode import FPS
from .scene import Layer, Scene, random_grade, render
from .sprites import COLOURS, Track, make_patch
from .stage import BRIGHT, backdrop
from ..subtitles import SubtitleSegment

T = 24
TEMPLATES = ("collision", "blocked")


def _scenario(rng: np.random.Generator, index: int) -> dict:
    """Plan one video's physics and its counterfactual question; ``index`` is the correct option (1 or 2)."""
    c1, c2 = (str(c) for c in rng.choice(BRIGHT, size=2, replace=False))
    template = str(rng.choice(TEMPLATES))
    fact = bool(rng.random() < 0.5)
    side = str(rng.choice(["right", "left"]))
    if template == "collision":  # fact: the second ball was already rolling before the hit
        q = f"If the {c1} ball had not been there, would the {c2} ball have moved?"
        truth = "Yes" if fact else "No"
        opts = ["Yes", "No"]
    else:  # fact: the wall really stopped the ball (it would otherwise have rolled on)
        q = f"If the {c2} wall had been removed, would the {c1} ball have reached the {side} edge?"
        truth = "Yes, it would have rolled past" if fact else "No, it would have stopped at the same place"
        opts = ["Yes, it would have rolled past", "No, it would have stopped at the same place"]
    other = [o for o in opts if o != truth][0]
    options = [truth, other] if index == 1 else [other, truth]
    return {"template": template, "fact": fact, "colours": [c1, c2], "direction": side, "question": q,
            "options": options, "correct_index": options.index(truth) + 1}


def _tracks(sc: dict, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """x positions over time of the moving ball and of the second body (ball or wall), rightward."""
    dt = 1.0 / FPS
    x1, x2 = np.zeros(T), np.zeros(T)
    r = 12.0
    if sc["template"] == "collision":
        a, b = 70.0, 150.0 + rng.uniform(-10, 10)
        v, u = rng.uniform(55, 70), (rng.uniform(12, 20) if sc["fact"] else 0.0)
        for t in range(T):
            x1[t], x2[t] = a, b
            if a + 2 * r >= b and v > u:  # elastic hit of equal masses: velocities swap
                v, u = u, v
            a, b = a + v * dt, b + u * dt
    else:
        a, wall = 70.0, 200.0 + rng.uniform(-10, 10)
        gap = wall - 6 - r - a
        if sc["fact"]:  # would have stopped well past the wall: the wall stops it
            v, dec = rng.uniform(55, 65), 6.0
        else:  # stops by friction short of the wall, with a visible gap
            v = rng.uniform(40, 50)
            dec = v * v / (2 * gap * rng.uniform(0.55, 0.75))
        for t in range(T):
            x1[t], x2[t] = a, wall
            v = max(0.0, v - dec * dt)
            a = a + v * dt
            if a > wall - 6 - r:
                a, v = wall - 6 - r, 0.0
    return x1, x2


def _render(sc: dict, ctx: QuestionContext, k: int):
    def run() -> np.ndarray:
        rng = ctx.rng(k + 1)
        x1, x2 = _tracks(sc, rng)
        if sc["direction"] == "left":
            x1, x2 = 320 - x1, 320 - x2
        y = 130 + rng.uniform(-10, 10)
        ball = make_patch("circle", 12, COLOURS[sc["colours"][0]], rng, texture_kind="stripes")
        ones = np.ones(T, np.float32)
        spin = (np.degrees((x1 - x1[0]) / 12.0) * (-1 if sc["direction"] == "right" else 1)).astype(np.float32)
        layers = [Layer(ball, Track(np.stack([x1, np.full(T, y)], 1).astype(np.float32), ones, spin, ones), z=1)]
        if sc["template"] == "collision":
            other = make_patch("circle", 12, COLOURS[sc["colours"][1]], rng, texture_kind="dots")
            spin2 = (np.degrees((x2 - x2[0]) / 12.0)).astype(np.float32)
            layers.append(Layer(other, Track(np.stack([x2, np.full(T, y)], 1).astype(np.float32), ones, spin2, ones), z=1))
        else:
            wall = make_patch("bar", 24, COLOURS[sc["colours"][1]], rng, texture_kind="noise")
            layers.append(Layer(wall, Track.still(T, float(x2[0]), y - 8), z=1))
        cam = static_camera(T, 320, 240, rng, ctx.difficulty.jitter, zoom=0.62)
        bg = backdrop(rng, kind="floor")
        return render(Scene(bg, layers, cam, random_grade(rng, ctx.difficulty, T)), rng)
    return run


def _narration(sc: dict) -> list[SubtitleSegment]:
    c1, c2 = sc["colours"]
    what = f"the {c2} ball" if sc["template"] == "collision" else f"the {c2} wall"
    return [SubtitleSegment(0.0, 1.5, f"The {c1} ball starts rolling toward {what}.")]


def build(ctx: QuestionContext) -> Planned:
    rng = ctx.rng(0)
    pos = ctx.slot(4)
    ref_index = int(rng.integers(1, 3))
    ref = _scenario(rng, ref_index)
    cands = [_scenario(rng, ref_index if i == pos else 3 - ref_index) for i in range(4)]
    require_unique([c["correct_index"] == ref["correct_index"] for c in cands], pos, f"{ctx.qid} option indices")
    lines = ["Each video below comes with its own counterfactual question and two options."]
    for lbl, sc in zip(("Reference",) + CANDIDATE_LABELS, [ref] + cands):
        lines.append(f"{lbl}: {sc['question']} Option 1: {sc['options'][0]}. Option 2: {sc['options'][1]}.")
    lines.append("Which candidate video's correct option number (Option 1 or Option 2) is the same as the Reference "
                 "video's correct option number?")
    jobs = [VideoJob(lbl, _render(sc, ctx, k), _narration(sc))
            for k, (lbl, sc) in enumerate(zip(("Reference",) + CANDIDATE_LABELS, [ref] + cands))]
    meta = {"reference": ref, "candidates": dict(zip(CANDIDATE_LABELS, cands))}
    return Planned("\n".join(lines), candidate_options(), "ABCD"[pos], jobs, meta)
