"""The render loop: textured backgrounds, sprite layers, camera warp, modality, grading, noise.

Every generator builds a :class:`Scene` (background + layers + camera + grade) and calls
:func:`render`. Grades (global gain, tint, lighting drift) are drawn i.i.d. per video whatever
the video's role, so a global colour or brightness statistic carries no answer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import cv2
import numpy as np

from .camera import Camera
from .common import Difficulty
from .sprites import COLOURS, Patch, Track, make_patch, value_noise

BACKGROUNDS: tuple[str, ...] = ("noise", "tiles", "stripes", "floor", "blobs")
MODES: tuple[str, ...] = ("rgb", "depth", "edges", "thermal")


def random_palette(rng: np.random.Generator, n: int = 3) -> list[tuple[int, int, int]]:
    """Muted background colours (so foreground sprites stand out but not by one colour)."""
    base = rng.uniform(60, 190, 3)
    return [tuple(int(v) for v in np.clip(base + rng.normal(0, 35, 3), 25, 230)) for _ in range(n)]


def background(kind: str, w: int, h: int, palette: list, rng: np.random.Generator, clutter: int = 6) -> np.ndarray:
    """A float32 RGB canvas: textured, with low-contrast static clutter so no region is flat."""
    c = [np.asarray(p, np.float32) for p in palette]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    n = value_noise(h, w, rng, cell=rng.uniform(24, 60))[..., None]
    if kind == "noise":
        img = c[0] * (1 - n) + c[1] * n
    elif kind == "tiles":
        s = rng.uniform(18, 34)
        t = (((xx // s) + (yy // s)) % 2)[..., None]
        img = (c[0] * (1 - t) + c[1] * t) * (0.85 + 0.3 * n)
    elif kind == "stripes":
        a = rng.uniform(0, np.pi)
        u = xx * np.cos(a) + yy * np.sin(a)
        t = (0.5 + 0.5 * np.sin(u / rng.uniform(6, 14)))[..., None]
        img = (c[0] * (1 - t) + c[1] * t) * (0.8 + 0.4 * n)
    elif kind == "floor":
        horizon = h * rng.uniform(0.3, 0.5)
        sky = c[2] * (0.9 + 0.2 * n)
        ground = (c[0] * (1 - n) + c[1] * n) * (0.75 + 0.35 * (yy / h))[..., None]
        t = np.clip((yy - horizon) / 3.0, 0, 1)[..., None]
        img = sky * (1 - t) + ground * t
    elif kind == "blobs":
        img = c[0] * (0.8 + 0.4 * n)
        for _ in range(int(rng.integers(6, 12))):
            col = c[int(rng.integers(1, len(c)))]
            cv2.circle(img, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), int(rng.uniform(15, 50)),
                       [float(v) for v in col * rng.uniform(0.85, 1.15)], -1, cv2.LINE_AA)
        img = cv2.GaussianBlur(img, (0, 0), 3)
    else:
        raise ValueError(f"unknown background {kind!r}")
    img = np.ascontiguousarray(img, dtype=np.float32)
    for _ in range(clutter):  # faint static marks: texture a model must see past
        col = [float(v) for v in np.clip(img[int(rng.uniform(0, h)), int(rng.uniform(0, w))] + rng.normal(0, 25, 3), 0, 255)]
        p = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
        if rng.random() < 0.5:
            cv2.line(img, p, (p[0] + int(rng.normal(0, 30)), p[1] + int(rng.normal(0, 30))), col, 2, cv2.LINE_AA)
        else:
            cv2.ellipse(img, p, (int(rng.uniform(4, 14)), int(rng.uniform(3, 9))), float(rng.uniform(0, 180)),
                        0, 360, col, -1, cv2.LINE_AA)
    return np.clip(img, 0, 255)


@dataclass
class Layer:
    """A sprite on the canvas; ``depth`` (0 far .. 1 near) and ``heat`` feed the other modalities."""

    patch: Patch
    track: Track
    z: float = 0.0
    depth: float | None = None
    heat: float = 0.8


@dataclass
class Grade:
    """Global colour grading of one video: gain, tint, lighting drift over time, sensor noise."""

    gain: float = 1.0
    tint: tuple[float, float, float] = (0.0, 0.0, 0.0)
    light: np.ndarray | None = None  # [T] multiplicative lighting curve
    noise: float = 0.0


def random_grade(rng: np.random.Generator, diff: Difficulty, T: int, strength: float = 1.0) -> Grade:
    """A role-independent grade: the same distribution for every video of every task."""
    kind = int(rng.integers(0, 3))
    u = np.linspace(0, 1, T)
    amp = diff.light * rng.uniform(0.5, 1.0) * strength
    curve = {0: 1 + amp * (u - 0.5), 1: 1 - amp * (u - 0.5), 2: 1 - amp * np.sin(np.pi * u) + amp / 2}[kind]
    return Grade(gain=float(rng.uniform(0.8, 1.2) ** strength), tint=tuple(rng.normal(0, 10 * strength, 3)),
                 light=curve.astype(np.float32), noise=diff.noise)


@dataclass
class Scene:
    """What :func:`render` draws: a background, sprite layers and a camera."""

    background: np.ndarray  # float32 [H, W, 3] canvas
    layers: list[Layer]
    camera: Camera
    grade: Grade = field(default_factory=Grade)


def distractor_layers(rng: np.random.Generator, n: int, T: int, fps: float, box: tuple[float, float, float, float],
                      size: tuple[float, float] = (6, 12), shapes: tuple[str, ...] | None = None,
                      z: float = -1.0) -> list[Layer]:
    """Small drifting objects in a box: clutter that moves but performs no task-relevant action."""
    from .sprites import SHAPES, TEXTURES, motion_track

    out = []
    names = list(COLOURS)
    for _ in range(n):
        shape = str(rng.choice(shapes or SHAPES))
        col = COLOURS[names[int(rng.integers(len(names)))]]
        r = float(rng.uniform(*size))
        patch = make_patch(shape, r, col, rng, texture_kind=str(rng.choice(TEXTURES)))
        x, y = rng.uniform(box[0], box[2]), rng.uniform(box[1], box[3])
        out.append(Layer(patch, motion_track("drift", T, fps, (x, y), rng, size=r), z=z + rng.uniform(-0.1, 0.1)))
    return out


def occluder_layers(rng: np.random.Generator, n: int, T: int, box: tuple[float, float, float, float],
                    height: float = 60.0) -> list[Layer]:
    """Thin foreground poles that hide part of whatever passes behind them (never all of it)."""
    out = []
    for _ in range(n):
        col = tuple(int(v) for v in rng.uniform(40, 200, 3))
        patch = make_patch("bar", height / 2, col, rng, texture_kind="noise", shading="soft")
        x, y = rng.uniform(box[0], box[2]), rng.uniform(box[1], box[3])
        out.append(Layer(patch, Track.still(T, x, y, angle=float(rng.uniform(-12, 12))), z=10.0, heat=0.3))
    return out


def _blend(canvas: np.ndarray, rgba: np.ndarray, x: float, y: float, scale: float, angle: float,
           opacity: float) -> None:
    """Rotate/scale the patch about its centre and alpha-blend it at (x, y), clipped to the canvas."""
    ps = rgba.shape[0]
    half = int(np.ceil(ps * scale * 0.75)) + 2
    x0, y0 = int(np.floor(x)) - half, int(np.floor(y)) - half
    m = cv2.getRotationMatrix2D(((ps - 1) / 2, (ps - 1) / 2), float(angle), float(scale))
    m[0, 2] += x - x0 - (ps - 1) / 2
    m[1, 2] += y - y0 - (ps - 1) / 2
    warped = cv2.warpAffine(rgba, m, (2 * half, 2 * half), flags=cv2.INTER_LINEAR, borderValue=0)
    H, W = canvas.shape[:2]
    cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x0 + 2 * half, W), min(y0 + 2 * half, H)
    if cx1 <= cx0 or cy1 <= cy0:
        return
    w = warped[cy0 - y0:cy1 - y0, cx0 - x0:cx1 - x0]
    a = w[..., 3:4] * opacity
    roi = canvas[cy0:cy1, cx0:cx1]
    roi *= 1 - a
    roi += w[..., :3] * a


def _scalar_patch(patch: Patch, value: float) -> np.ndarray:
    rgba = patch.rgba.copy()
    rgba[..., :3] = value * 255.0
    return rgba


def compose(scene: Scene, t: int, mode: str = "rgb") -> np.ndarray:
    """One canvas frame (before the camera) in the given modality."""
    bg = scene.background
    if mode in ("depth", "thermal"):
        H, W = bg.shape[:2]
        if mode == "depth":  # ground plane: far at the top, near at the bottom
            base = np.linspace(0.15, 0.55, H, dtype=np.float32)[:, None].repeat(W, 1)
        else:  # temperature follows the scene's luminance, dimly
            base = 0.15 + 0.35 * cv2.cvtColor(bg.astype(np.float32), cv2.COLOR_RGB2GRAY) / 255.0
        canvas = np.repeat(base[..., None] * 255.0, 3, axis=2).astype(np.float32)
    else:
        canvas = bg.copy()
    H = canvas.shape[0]
    for layer in sorted(scene.layers, key=lambda lyr: lyr.z):
        tr = layer.track
        x, y = float(tr.xy[t, 0]), float(tr.xy[t, 1])
        if tr.opacity[t] <= 0:
            continue
        rgba = layer.patch.rgba
        if mode == "depth":
            d = layer.depth if layer.depth is not None else 0.4 + 0.5 * np.clip(y / H, 0, 1)
            rgba = _scalar_patch(layer.patch, 0.25 + 0.75 * float(d))
        elif mode == "thermal":
            rgba = _scalar_patch(layer.patch, layer.heat)
        _blend(canvas, rgba, x, y, float(tr.scale[t]), float(tr.angle[t]), float(tr.opacity[t]))
    return canvas


def _to_modality(frame: np.ndarray, mode: str) -> np.ndarray:
    if mode == "edges":
        g = cv2.cvtColor(np.clip(frame, 0, 255).astype(np.uint8), cv2.COLOR_RGB2GRAY)
        e = cv2.Canny(cv2.GaussianBlur(g, (3, 3), 0), 40, 110)
        return np.repeat(e[..., None], 3, axis=2).astype(np.float32) * 0.9 + 12.0
    if mode == "thermal":
        g = cv2.GaussianBlur(np.clip(frame[..., 0], 0, 255).astype(np.uint8), (0, 0), 1.5)
        return cv2.cvtColor(cv2.applyColorMap(g, cv2.COLORMAP_INFERNO), cv2.COLOR_BGR2RGB).astype(np.float32)
    return frame


def render(scene: Scene, rng: np.random.Generator, *, mode: str = "rgb",
           post: Callable[[np.ndarray, int], np.ndarray] | None = None) -> np.ndarray:
    """Draw every frame: compose, camera warp, modality, grade, optional per-frame hook, noise."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; one of {MODES}")
    cam, g = scene.camera, scene.grade
    T = len(cam)
    out = np.empty((T, cam.out_h, cam.out_w, 3), np.uint8)
    tint = np.asarray(g.tint, np.float32)
    pad = 24  # sensor noise: one random field, shifted and sign-flipped per frame (cheap, still i.i.d.-looking)
    noise = (rng.standard_normal((cam.out_h + pad, cam.out_w + pad, 3), dtype=np.float32) * g.noise
             if g.noise > 0 else None)
    for t in range(T):
        canvas = compose(scene, t, mode)
        frame = cv2.warpPerspective(canvas, cam.mats[t], (cam.out_w, cam.out_h),
                                    flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REFLECT101)
        frame = _to_modality(frame, mode)
        light = float(g.light[t]) if g.light is not None else 1.0
        frame = frame * (g.gain * light) + (tint if mode in ("rgb", "edges") else 0.0)
        if post is not None:
            frame = post(frame, t)
        if noise is not None:
            oy, ox = rng.integers(0, pad, 2)
            frame = frame + noise[oy:oy + cam.out_h, ox:ox + cam.out_w] * (1.0 if rng.random() < 0.5 else -1.0)
        out[t] = np.clip(frame, 0, 255).astype(np.uint8)
    return out
