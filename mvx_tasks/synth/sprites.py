"""Sprites: shape masks, textures, shaded and outlined patches, and motion tracks.

A sprite is an RGBA float32 patch (drawn once) plus a :class:`Track` (per-frame position, scale,
angle, opacity). Patches rotate with their texture, so spinning is visible on any shape.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "hexagon", "cross", "ring")
PLURALS = {"circle": "circles", "square": "squares", "triangle": "triangles", "star": "stars",
           "hexagon": "hexagons", "cross": "crosses", "ring": "rings"}
TEXTURES: tuple[str, ...] = ("solid", "stripes", "dots", "checker", "noise", "gradient")
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (214, 48, 49), "orange": (240, 140, 30), "yellow": (236, 208, 50), "green": (60, 170, 75),
    "teal": (30, 160, 160), "blue": (50, 90, 210), "purple": (140, 70, 190), "pink": (236, 120, 170),
    "brown": (130, 85, 50), "white": (235, 235, 230), "grey": (128, 128, 128), "black": (30, 30, 35),
}


def _polygon(shape: str, r: float, c: float) -> list[np.ndarray]:
    """Vertices (pixel coordinates) of a shape of radius r centred at (c, c)."""
    def ring_pts(n: int, rad: float, phase: float) -> np.ndarray:
        a = phase + np.arange(n) * 2 * np.pi / n
        return np.stack([c + rad * np.cos(a), c + rad * np.sin(a)], 1)

    if shape == "square":
        return [ring_pts(4, r * 1.05, np.pi / 4)]
    if shape == "triangle":
        return [ring_pts(3, r * 1.1, -np.pi / 2) + [0, r * 0.15]]
    if shape == "hexagon":
        return [ring_pts(6, r, 0.0)]
    if shape == "star":
        outer, inner = ring_pts(5, r * 1.1, -np.pi / 2), ring_pts(5, r * 0.45, -np.pi / 2 + np.pi / 5)
        return [np.stack([outer, inner], 1).reshape(-1, 2)]
    if shape == "cross":
        w = r * 0.36
        pts = [(-w, -r), (w, -r), (w, -w), (r, -w), (r, w), (w, w), (w, r), (-w, r), (-w, w), (-r, w),
               (-r, -w), (-w, -w)]
        return [np.asarray(pts) + c]
    if shape == "bar":
        return [np.asarray([(-r * 0.25, -r), (r * 0.25, -r), (r * 0.25, r), (-r * 0.25, r)]) + c]
    raise ValueError(f"unknown shape {shape!r}")


def shape_mask(shape: str, radius: float, aspect: float = 1.0) -> np.ndarray:
    """Anti-aliased coverage mask in [0, 1] of a shape, in a square patch with a small border."""
    size = int(np.ceil(2 * radius * max(1.0, aspect))) + 6
    c = (size - 1) / 2
    m = np.zeros((size, size), np.uint8)
    sh = 4  # sub-pixel bits for cv2 drawing
    if shape in ("circle", "ring"):
        axes = (int(radius * aspect * 16), int(radius * 16))
        cv2.ellipse(m, (int(c * 16), int(c * 16)), axes, 0, 0, 360, 255, -1, cv2.LINE_AA, sh)
        if shape == "ring":
            inner = (int(radius * aspect * 0.55 * 16), int(radius * 0.55 * 16))
            cv2.ellipse(m, (int(c * 16), int(c * 16)), inner, 0, 0, 360, 0, -1, cv2.LINE_AA, sh)
    else:
        polys = []
        for p in _polygon(shape, radius, c):
            p = p.copy()
            p[:, 0] = c + (p[:, 0] - c) * aspect
            polys.append(np.round(p * 16).astype(np.int32))
        cv2.fillPoly(m, polys, 255, cv2.LINE_AA, sh)
    return m.astype(np.float32) / 255.0


def value_noise(h: int, w: int, rng: np.random.Generator, cell: float = 8.0, octaves: int = 3) -> np.ndarray:
    """Smooth noise in [0, 1] (sum of upsampled random grids): cheap natural-looking texture."""
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for _ in range(octaves):
        gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
        grid = rng.random((gh, gw), dtype=np.float32)
        out += amp * cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= 0.5
        cell /= 2.0
    out /= total
    lo, hi = float(out.min()), float(out.max())
    return (out - lo) / max(hi - lo, 1e-6)


def texture(kind: str, size: int, colour, colour2, rng: np.random.Generator,
            period: float = 6.0, angle: float = 0.0) -> np.ndarray:
    """An RGB float32 texture tile of ``size`` x ``size`` in the sprite's own coordinates."""
    c1 = np.asarray(colour, np.float32)
    c2 = np.asarray(colour2, np.float32)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    if kind == "solid":
        t = np.zeros((size, size), np.float32)
    elif kind == "stripes":
        u = xx * np.cos(angle) + yy * np.sin(angle)
        t = ((u / period) % 2 < 1).astype(np.float32)
    elif kind == "dots":
        t = ((((xx % period) - period / 2) ** 2 + ((yy % period) - period / 2) ** 2) < (period / 3.2) ** 2)
        t = t.astype(np.float32)
    elif kind == "checker":
        t = (((xx // period) + (yy // period)) % 2).astype(np.float32)
    elif kind == "noise":
        t = value_noise(size, size, rng, cell=max(2.0, period / 2)) * 0.8
    elif kind == "gradient":
        u = xx * np.cos(angle) + yy * np.sin(angle)
        t = (u - u.min()) / max(float(u.max() - u.min()), 1e-6)
    else:
        raise ValueError(f"unknown texture {kind!r}")
    return c1 * (1 - t[..., None]) + c2 * t[..., None]


def shade(rgb: np.ndarray, mask: np.ndarray, kind: str) -> np.ndarray:
    """Lighting on a patch: flat, soft (radial), cel (two-tone) or hatched."""
    if kind == "flat":
        return rgb
    size = mask.shape[0]
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / max(size - 1, 1)
    light = 1.0 - 0.9 * np.sqrt((xx - 0.3) ** 2 + (yy - 0.3) ** 2)
    if kind == "soft":
        f = 0.55 + 0.5 * np.clip(light, 0, 1)
    elif kind == "cel":
        f = np.where(light > 0.45, 1.05, 0.6)
    elif kind == "hatch":
        f = np.where(((xx + yy) * size) % 4 < 1.3, 0.55, 1.0) * np.where(light > 0.4, 1.0, 0.8)
    else:
        raise ValueError(f"unknown shading {kind!r}")
    return np.clip(rgb * f[..., None].astype(np.float32), 0, 255)


def outline(rgb: np.ndarray, mask: np.ndarray, width: int, colour) -> np.ndarray:
    """Paint a contour band of ``width`` pixels just inside the mask's edge."""
    if width <= 0:
        return rgb
    k = np.ones((2 * width + 1, 2 * width + 1), np.uint8)
    inner = cv2.erode((mask > 0.5).astype(np.uint8), k).astype(np.float32)
    band = np.clip(mask - inner, 0, 1)[..., None]
    return rgb * (1 - band) + np.asarray(colour, np.float32) * band


@dataclass
class Patch:
    """An RGBA sprite image, float32, colour in 0..255 and alpha in 0..1."""

    rgba: np.ndarray

    @property
    def size(self) -> int:
        return int(self.rgba.shape[0])


def make_patch(shape: str, radius: float, colour, rng: np.random.Generator, *, texture_kind: str = "solid",
               colour2=None, shading: str = "soft", outline_width: int = 0, outline_colour=(25, 25, 25),
               aspect: float = 1.0, period: float | None = None, opacity: float = 1.0) -> Patch:
    """Draw one sprite: mask, texture, shading and outline, ready to be composited."""
    mask = shape_mask(shape, radius, aspect)
    size = mask.shape[0]
    if colour2 is None:
        colour2 = tuple(int(v * 0.55) for v in colour)
    per = period if period is not None else max(3.0, radius / 2.5)
    rgb = texture(texture_kind, size, colour, colour2, rng, per, float(rng.uniform(0, np.pi)))
    rgb = shade(rgb, mask, shading)
    rgb = outline(rgb, mask, outline_width, outline_colour)
    return Patch(np.dstack([rgb, mask * opacity]).astype(np.float32))


def paste_patch(base: Patch, part: Patch, dx: float, dy: float) -> Patch:
    """Composite ``part`` onto ``base`` with its centre offset by (dx, dy): multi-part sprites."""
    bs, ps = base.size, part.size
    need = int(np.ceil(max(bs, 2 * (max(abs(dx), abs(dy)) + ps / 2 + 1))))
    need += need % 2
    out = np.zeros((need, need, 4), np.float32)
    o = (need - bs) // 2
    out[o:o + bs, o:o + bs] = base.rgba
    cx, cy = need / 2 + dx - ps / 2, need / 2 + dy - ps / 2
    x0, y0 = int(round(cx)), int(round(cy))
    roi = out[y0:y0 + ps, x0:x0 + ps]
    a = part.rgba[..., 3:4]
    roi[..., :3] = roi[..., :3] * (1 - a) + part.rgba[..., :3] * a
    roi[..., 3:4] = roi[..., 3:4] + a * (1 - roi[..., 3:4])
    return Patch(out)


@dataclass
class Track:
    """Per-frame placement of a sprite in canvas coordinates."""

    xy: np.ndarray  # [T, 2]
    scale: np.ndarray  # [T]
    angle: np.ndarray  # [T] degrees
    opacity: np.ndarray  # [T]

    @classmethod
    def still(cls, T: int, x: float, y: float, scale: float = 1.0, angle: float = 0.0) -> "Track":
        return cls(np.tile([x, y], (T, 1)).astype(np.float32), np.full(T, scale, np.float32),
                   np.full(T, angle, np.float32), np.ones(T, np.float32))

    def __len__(self) -> int:
        return len(self.xy)

    def slice(self, start: int, stop: int) -> "Track":
        return Track(self.xy[start:stop], self.scale[start:stop], self.angle[start:stop], self.opacity[start:stop])


MOTIONS: tuple[str, ...] = ("bounce", "spin", "orbit", "zigzag", "pulse", "slide", "shake")
MOTION_WORDS = {"bounce": "bouncing up and down", "spin": "spinning in place", "orbit": "moving in a circle",
                "zigzag": "zig-zagging across", "pulse": "growing and shrinking", "slide": "sliding steadily across",
                "shake": "shaking quickly side to side"}
#: the motion analyzer's pattern name for each motion (a track's "patterns" name it when read right)
MOTION_PATTERNS = {"bounce": "bouncing", "spin": "spinning", "orbit": "orbiting", "zigzag": "zig-zag", "pulse": "pulsing",
                   "slide": "linear", "shake": "shaking"}


def motion_track(pattern: str, T: int, fps: float, centre: tuple[float, float], rng: np.random.Generator,
                 size: float = 20.0, amount: float = 1.0) -> Track:
    """A sprite performing one of :data:`MOTIONS`, with random amplitude, speed, phase and direction.

    ``amount`` scales the spatial amplitude (the room the action has on the canvas).
    """
    t = np.arange(T, dtype=np.float32) / fps
    cx, cy = centre
    sign = float(rng.choice([-1.0, 1.0]))
    phase = float(rng.uniform(0, 2 * np.pi))
    x = np.full(T, cx, np.float32)
    y = np.full(T, cy, np.float32)
    scale = np.ones(T, np.float32)
    angle = np.full(T, float(rng.uniform(-10, 10)), np.float32)
    if pattern == "bounce":
        f = rng.uniform(0.8, 1.2)
        y = cy + amount * size * 1.2 - amount * size * rng.uniform(2.0, 2.6) * np.abs(np.sin(np.pi * f * t + phase))
    elif pattern == "spin":
        angle = angle + sign * rng.uniform(150, 260) * t
    elif pattern == "orbit":
        r, w = amount * size * rng.uniform(1.3, 1.8), sign * 2 * np.pi * rng.uniform(0.35, 0.5)
        x, y = cx + r * np.cos(w * t + phase), cy + r * 0.8 * np.sin(w * t + phase)
    elif pattern == "zigzag":
        span = amount * size * rng.uniform(3.0, 3.8)
        x = cx + sign * span * (t / t[-1] - 0.5)
        tri = 2 * np.abs(((t * rng.uniform(1.2, 1.6) + phase / (2 * np.pi)) % 1.0) - 0.5) * 2 - 1
        y = cy + amount * size * 0.9 * tri
    elif pattern == "pulse":
        scale = 1.0 + 0.4 * np.sin(2 * np.pi * rng.uniform(0.6, 0.9) * t + phase)
    elif pattern == "slide":
        span = amount * size * rng.uniform(3.0, 3.8)
        direction = rng.uniform(-0.35, 0.35)
        x = cx + sign * span * (t / t[-1] - 0.5)
        y = cy + span * np.tan(direction) * (t / t[-1] - 0.5)
    elif pattern == "shake":
        x = cx + amount * size * 0.45 * np.sin(2 * np.pi * rng.uniform(2.6, 3.2) * t + phase)
    elif pattern == "still":
        pass
    elif pattern == "drift":
        v = rng.normal(0, size * 0.25, 2)
        x, y = cx + v[0] * t, cy + v[1] * t
        angle = angle + rng.uniform(-15, 15) * t
    else:
        raise ValueError(f"unknown motion {pattern!r}")
    return Track(np.stack([x, y], 1).astype(np.float32), scale.astype(np.float32), angle.astype(np.float32),
                 np.ones(T, np.float32))
