"""Scene-building helpers shared by the generators: random objects, placement, busy scenes."""
from __future__ import annotations

import numpy as np

from .camera import Camera
from .common import Difficulty, GenerationError
from .encode import FPS
from .scene import (BACKGROUNDS, Layer, Scene, background, distractor_layers, occluder_layers, random_grade,
                    random_palette)
from .sprites import COLOURS, SHAPES, TEXTURES, make_patch, motion_track

BRIGHT = tuple(c for c in COLOURS if c not in ("grey", "black", "brown"))


def random_appearance(rng: np.random.Generator, *, shapes=SHAPES, textures=TEXTURES, colours=BRIGHT,
                      radius: tuple[float, float] = (9, 15)) -> dict:
    """A JSON-able description of an object's look (shape, colour name, texture, radius)."""
    return {"shape": str(rng.choice(shapes)), "colour": str(rng.choice(colours)),
            "texture": str(rng.choice(textures)), "radius": round(float(rng.uniform(*radius)), 2)}


def patch_of(app: dict, rng: np.random.Generator, **kw):
    return make_patch(app["shape"], app["radius"], COLOURS[app["colour"]], rng, texture_kind=app["texture"], **kw)


def place(rng: np.random.Generator, radii: list[float], box: tuple[float, float, float, float],
          existing: list[tuple[float, float, float]] | None = None, gap: float = 3.0,
          tries: int = 200, restarts: int = 30) -> list[tuple[float, float]]:
    """Non-overlapping centres for discs of the given radii inside ``box`` (rejection sampling).

    Greedy placement can paint itself into a corner, so it restarts; after ten restarts the
    required clearance shrinks a little each time (objects may then touch, never stack).
    """
    x0, y0, x1, y1 = box
    for attempt in range(restarts):
        shrink = 1.0 if attempt < 10 else 0.93 ** (attempt - 9)
        placed = list(existing or [])
        out: list[tuple[float, float]] = []
        for r in radii:
            rr = r * shrink
            for _ in range(tries):
                x, y = rng.uniform(x0 + rr, x1 - rr), rng.uniform(y0 + rr, y1 - rr)
                if all((x - px) ** 2 + (y - py) ** 2 >= (rr + pr * shrink + gap) ** 2 for px, py, pr in placed):
                    placed.append((x, y, r))
                    out.append((float(x), float(y)))
                    break
            else:
                break
        if len(out) == len(radii):
            return out
    raise GenerationError(f"cannot place {len(radii)} objects without overlap in box {box}")


def backdrop(rng: np.random.Generator, w: int = 320, h: int = 240, kind: str | None = None,
             palette: list | None = None) -> np.ndarray:
    return background(kind or str(rng.choice(BACKGROUNDS)), w, h, palette or random_palette(rng), rng)


def busy_scene(rng: np.random.Generator, diff: Difficulty, camera: Camera, objects: list[Layer],
               bg: np.ndarray | None = None, n_distractors: int | None = None, occluders: int | None = None) -> Scene:
    """Add a background, drifting distractors and occluders around the task's own objects."""
    T = len(camera)
    bg = backdrop(rng) if bg is None else bg
    box = camera.safe_box(8)
    n = int(rng.integers(diff.distractors[0], diff.distractors[1] + 1)) if n_distractors is None else n_distractors
    layers = list(objects) + distractor_layers(rng, n, T, FPS, box)
    layers += occluder_layers(rng, diff.occluders if occluders is None else occluders, T, box)
    return Scene(bg, layers, camera, random_grade(rng, diff, T))


def moving_objects(rng: np.random.Generator, apps: list[dict], box, T: int,
                   motions: tuple[str, ...] = ("drift", "slide", "bounce", "still", "orbit")) -> tuple[list[Layer], list[dict]]:
    """Layers for described objects with random motions; returns the layers and their facts."""
    pts = place(rng, [a["radius"] * 1.4 for a in apps], box)
    layers, facts = [], []
    for app, (x, y) in zip(apps, pts):
        m = str(rng.choice(motions))
        layers.append(Layer(patch_of(app, rng), motion_track(m, T, FPS, (x, y), rng, size=app["radius"], amount=0.6)))
        facts.append({**app, "motion": m, "start": [round(x, 1), round(y, 1)]})
    return layers, facts
