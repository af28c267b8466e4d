"""Optical flow and the camera's global motion between two frames.

Why: camera moves (pan/tilt/zoom/roll) are one similarity transform of the whole image, while
moving objects are outliers to it. We track corners with pyramidal Lucas-Kanade (forward-
backward checked), fall back to a grid of dense Farneback flow on texture-poor frames, and fit
``x' = s R x + t`` by iteratively re-weighted least squares (deterministic, no RANSAC seed).

Conventions (image coordinates, y down; content motion is what pixels do, camera motion is the
opposite): ``dx > 0`` content moves right <=> the camera pans LEFT; ``dy > 0`` content moves down
<=> the camera tilts UP; ``scale > 1`` content grows <=> the camera zooms IN. :func:`camera_terms`
turns content motion into camera terms with signs: ``pan > 0`` = pan right, ``tilt > 0`` = tilt
up, ``zoom > 0`` = zoom in, ``roll > 0`` = content turns clockwise on screen.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from ..shared.sampling import grey_small


@dataclass(frozen=True)
class GlobalMotion:
    """Content motion between two frames, normalised by the frame size."""

    dx: float  # horizontal translation, fraction of frame width
    dy: float  # vertical translation, fraction of frame height
    scale: float  # >1: content grows
    rotation: float  # degrees, positive = clockwise on screen (y down)
    inliers: float  # fraction of tracked points that follow the fit
    points: int  # number of tracked points used
    residual: float  # median residual of inliers, fraction of frame width

    def to_dict(self) -> dict:
        return {k: round(float(v), 5) if isinstance(v, float) else v for k, v in self.__dict__.items()}


STATIC = GlobalMotion(0.0, 0.0, 1.0, 0.0, 0.0, 0, 0.0)


def dense_flow(g0: np.ndarray, g1: np.ndarray, levels: int = 3) -> np.ndarray:
    """Farneback dense flow [H, W, 2] (pixels) between two greyscale uint8 frames (``levels``: pyramid levels)."""
    return cv2.calcOpticalFlowFarneback(g0, g1, None, 0.5, levels, 15, 3, 5, 1.2, 0)


def track_points(
    g0: np.ndarray, g1: np.ndarray, max_points: int = 150, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Corners of ``g0`` (where ``mask`` is non-zero) and where they are in ``g1``
    (forward-backward consistent)."""
    p0 = cv2.goodFeaturesToTrack(g0, maxCorners=max_points, qualityLevel=0.01, minDistance=5, blockSize=5, mask=mask)
    if p0 is None or len(p0) < 8:
        return np.zeros((0, 2), np.float32), np.zeros((0, 2), np.float32)
    lk = dict(winSize=(15, 15), maxLevel=2, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.03))
    p1, st1, _ = cv2.calcOpticalFlowPyrLK(g0, g1, p0, None, **lk)
    p0r, st2, _ = cv2.calcOpticalFlowPyrLK(g1, g0, p1, None, **lk)
    ok = (st1.ravel() == 1) & (st2.ravel() == 1) & (np.linalg.norm((p0 - p0r).reshape(-1, 2), axis=1) < 1.0)
    return p0.reshape(-1, 2)[ok], p1.reshape(-1, 2)[ok]


def fit_similarity(
    p0: np.ndarray, p1: np.ndarray, center: tuple[float, float], iterations: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """Robust least-squares similarity ``[a, b, tx, ty]`` (x' = a x - b y + tx, y' = b x + a y + ty,
    about ``center``) and the inlier mask."""
    q0 = p0 - np.asarray(center, np.float64)
    q1 = p1 - np.asarray(center, np.float64)
    n = len(q0)
    a_mat = np.zeros((2 * n, 4))
    a_mat[0::2] = np.stack([q0[:, 0], -q0[:, 1], np.ones(n), np.zeros(n)], 1)
    a_mat[1::2] = np.stack([q0[:, 1], q0[:, 0], np.zeros(n), np.ones(n)], 1)
    rhs = q1.reshape(-1)
    inl = np.ones(n, bool)
    params = np.array([1.0, 0.0, 0.0, 0.0])
    for _ in range(iterations):
        rows = np.repeat(inl, 2)
        if rows.sum() < 6:
            break
        params = np.linalg.lstsq(a_mat[rows], rhs[rows], rcond=None)[0]
        res = np.linalg.norm((a_mat @ params - rhs).reshape(-1, 2), axis=1)
        mad = float(np.median(res[inl]))
        new = res < max(1.0, 3.0 * 1.4826 * mad)
        if np.array_equal(new, inl):
            break
        inl = new
    return params, inl


def background_mask(shape: tuple[int, int], boxes: list, scale: float, pad: float = 3.0) -> np.ndarray | None:
    """uint8 mask that is 0 on (padded, scaled) object boxes: points there are not background."""
    if not boxes:
        return None
    mask = np.full(shape, 255, np.uint8)
    for x1, y1, x2, y2 in boxes:
        cv2.rectangle(
            mask,
            (int(x1 * scale - pad), int(y1 * scale - pad)),
            (int(np.ceil(x2 * scale + pad)), int(np.ceil(y2 * scale + pad))),
            0,
            -1,
        )
    return mask if mask.mean() > 255 * 0.2 else None


def global_motion(f0: np.ndarray, f1: np.ndarray, max_side: int = 160, exclude: list | None = None) -> GlobalMotion:
    """Content motion from ``f0`` to ``f1`` (RGB or greyscale frames of equal size).

    ``exclude``: boxes ``[x1, y1, x2, y2]`` in ``f0``'s pixels (moving objects) to leave out; for
    greyscale inputs they must already be in the greyscale frame's pixels.
    """
    g0 = f0 if f0.ndim == 2 else grey_small(f0, max_side)
    g1 = f1 if f1.ndim == 2 else grey_small(f1, max_side)
    h, w = g0.shape
    scale = 1.0 if f0.ndim == 2 else w / f0.shape[1]
    mask = background_mask((h, w), exclude or [], scale)
    p0, p1 = track_points(g0, g1, mask=mask)
    if len(p0) < 12:  # texture-poor: sample dense flow on a grid where the image has gradients
        ys, xs = np.mgrid[4 : h - 4 : 6, 4 : w - 4 : 6]
        grad = cv2.magnitude(cv2.Sobel(g0, cv2.CV_32F, 1, 0), cv2.Sobel(g0, cv2.CV_32F, 0, 1))[ys, xs]
        keep = grad > 8
        if mask is not None:
            keep &= mask[ys, xs] > 0
        if keep.sum() < 12:
            # too few textured grid points to fit on: decided before the dense flow, which a flat
            # backdrop (a slate, a wall) would otherwise pay for in every pair for nothing
            return STATIC
        flow = dense_flow(g0, g1)
        p0 = np.stack([xs[keep], ys[keep]], 1).astype(np.float32)
        p1 = p0 + flow[ys[keep], xs[keep]]
    params, inl = fit_similarity(p0.astype(np.float64), p1.astype(np.float64), ((w - 1) / 2, (h - 1) / 2))
    a, b, tx, ty = (float(v) for v in params)
    res = np.linalg.norm(p1[inl] - p0[inl] - (p1[inl] - p0[inl]).mean(0), axis=1) if inl.any() else np.zeros(1)
    return GlobalMotion(
        dx=tx / w,
        dy=ty / h,
        scale=float(np.hypot(a, b)),
        rotation=float(np.degrees(np.arctan2(b, a))),
        inliers=float(inl.mean()),
        points=int(len(p0)),
        residual=float(np.median(res)) / w,
    )


def camera_terms(m: GlobalMotion, dt: float = 1.0) -> dict[str, float]:
    """Camera motion per second from content motion: pan>0 right, tilt>0 up, zoom>0 in, roll (deg)."""
    dt = max(dt, 1e-6)
    return {
        "pan": -m.dx / dt,
        "tilt": m.dy / dt,
        "zoom": float(np.log(max(m.scale, 1e-6))) / dt,
        "roll": m.rotation / dt,
    }
