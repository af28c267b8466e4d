"""Virtual cameras: a moving, zooming, slightly rotating window over a larger canvas.

A camera is one 3x3 matrix per frame mapping output pixels to canvas pixels, so pans, tilts,
zooms, shake and a perspective (viewpoint) change are all the same warp in the render loop.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

OUT_W, OUT_H = 192, 144


@dataclass(frozen=True)
class View:
    """Camera state: window centre on the canvas, zoom (>1 magnifies) and roll in degrees."""

    cx: float
    cy: float
    zoom: float = 1.0
    roll: float = 0.0


def window_matrix(v: View, out_w: int = OUT_W, out_h: int = OUT_H) -> np.ndarray:
    """Output pixel -> canvas pixel for one camera state."""
    a = np.deg2rad(v.roll)
    c, s = np.cos(a) / v.zoom, np.sin(a) / v.zoom
    ox, oy = (out_w - 1) / 2, (out_h - 1) / 2
    return np.array([[c, -s, v.cx - c * ox + s * oy],
                     [s, c, v.cy - s * ox - c * oy],
                     [0, 0, 1]], np.float64)


def keystone(rng: np.random.Generator, strength: float, out_w: int = OUT_W, out_h: int = OUT_H) -> np.ndarray:
    """A random perspective distortion of the output plane (a camera looking from another angle)."""
    src = np.float32([[0, 0], [out_w - 1, 0], [out_w - 1, out_h - 1], [0, out_h - 1]])
    d = rng.uniform(-strength, strength, (4, 2)).astype(np.float32) * [out_w, out_h]
    return cv2.getPerspectiveTransform(src, (src + d).astype(np.float32)).astype(np.float64)


def smooth_noise(T: int, rng: np.random.Generator, knots: int = 4) -> np.ndarray:
    """Low-frequency noise in roughly [-1, 1] over T frames (hand-held camera shake)."""
    pts = rng.uniform(-1, 1, knots + 1)
    return np.interp(np.linspace(0, knots, T), np.arange(knots + 1), pts)


@dataclass
class Camera:
    """Per-frame output->canvas matrices and the output size."""

    mats: np.ndarray  # [T, 3, 3]
    out_w: int = OUT_W
    out_h: int = OUT_H

    def __len__(self) -> int:
        return len(self.mats)

    def slice(self, start: int, stop: int) -> "Camera":
        return Camera(self.mats[start:stop], self.out_w, self.out_h)

    def corners(self, margin: float = 0.0) -> np.ndarray:
        """Canvas coordinates [T, 4, 2] of the output rectangle shrunk by ``margin`` pixels."""
        m = margin
        pts = np.array([[m, m, 1], [self.out_w - 1 - m, m, 1], [self.out_w - 1 - m, self.out_h - 1 - m, 1],
                        [m, self.out_h - 1 - m, 1]], np.float64)
        q = np.einsum("tij,kj->tki", self.mats, pts)
        return q[..., :2] / q[..., 2:3]

    def safe_box(self, margin: float = 0.0) -> tuple[float, float, float, float]:
        """An axis-aligned canvas box (x0, y0, x1, y1) that is in view in every frame."""
        c = self.corners(margin)
        xs, ys = np.sort(c[..., 0], axis=1), np.sort(c[..., 1], axis=1)
        x0, x1 = float(xs[:, 1].max()), float(xs[:, 2].min())
        y0, y1 = float(ys[:, 1].max()), float(ys[:, 2].min())
        if x1 <= x0 or y1 <= y0:
            raise ValueError("the camera has no region that stays in view")
        return x0, y0, x1, y1


def camera_path(T: int, start: View, end: View | None = None, *, rng: np.random.Generator | None = None,
                jitter: float = 0.0, tilt: np.ndarray | None = None, ease: bool = True,
                out_w: int = OUT_W, out_h: int = OUT_H) -> Camera:
    """A camera moving from ``start`` to ``end`` with optional shake and a fixed perspective tilt."""
    end = end or start
    u = np.linspace(0.0, 1.0, T)
    if ease:
        u = u * u * (3 - 2 * u)
    jx = jy = np.zeros(T)
    if jitter > 0 and rng is not None:
        jx, jy = jitter * smooth_noise(T, rng, 6), jitter * smooth_noise(T, rng, 6)
    mats = []
    for i in range(T):
        z = start.zoom * (end.zoom / start.zoom) ** u[i]  # geometric: constant-rate zoom
        v = View(start.cx + (end.cx - start.cx) * u[i] + jx[i] / z, start.cy + (end.cy - start.cy) * u[i] + jy[i] / z,
                 z, start.roll + (end.roll - start.roll) * u[i])
        m = window_matrix(v, out_w, out_h)
        mats.append(m @ tilt if tilt is not None else m)
    return Camera(np.stack(mats), out_w, out_h)


def static_camera(T: int, canvas_w: int, canvas_h: int, rng: np.random.Generator | None = None,
                  jitter: float = 0.0, zoom: float | None = None) -> Camera:
    """A camera centred on the canvas, zoomed so the output shows its middle, with shake."""
    z = zoom if zoom is not None else max(OUT_W / canvas_w, OUT_H / canvas_h) * 1.25
    return camera_path(T, View(canvas_w / 2, canvas_h / 2, z), rng=rng, jitter=jitter)
