"""Shape names of object outlines: a fitted linear classifier over fills, outline harmonics and holes.

Why a module of its own: naming a shape is asked only by questions about shapes, and the motion
foreground (:mod:`.movers.regions`) names shapes without the colour segmenter. Why fitted: MVX-Synth's
shapes are 14-22 px across, and cut-offs on vertex counts and fills named the same square a
square at CRF 20 and a pentagon or a blob at CRF 30 (``benchmarks/fit_shape_classes.py`` fits and
checks the classifier on labelled clips at both qualities).
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from ..fitted import FITTED_DIR
from ..fitted.linear_classes import LinearClasses


def _central_hole(filled: np.ndarray, raw: np.ndarray) -> float:
    """Area share of the largest background hole inside an outline that contains its centroid
    (a ring's hole; scattered texture cells do not count)."""
    holes = ((filled > 0) & (raw == 0)).astype(np.uint8)
    if not holes.any():
        return 0.0
    _n, lbl, stats, _cents = cv2.connectedComponentsWithStats(holes, connectivity=4)
    m = cv2.moments(filled, binaryImage=True)
    cx, cy = m["m10"] / max(m["m00"], 1), m["m01"] / max(m["m00"], 1)
    ix, iy = int(round(cx)), int(round(cy))
    if not (0 <= iy < lbl.shape[0] and 0 <= ix < lbl.shape[1]) or lbl[iy, ix] == 0:
        return 0.0
    return float(stats[lbl[iy, ix], cv2.CC_STAT_AREA]) / max(float(filled.sum()), 1.0)


#: outline harmonics measured: a shape with n-fold symmetry puts its outline's energy at 1 - n and
#: 1 + n (a square at -3 and 5, a triangle at -2 and 4, a star at -4 and 6, a hexagon at -5 and 7)
HARMONICS = (-6, -5, -4, -3, -2, -1, 2, 3, 4, 5, 6, 7)
CLASSES_FILE = FITTED_DIR / "shape_classes.json"
#: a square or circle this elongated (min-area rectangle's sides) is named rectangle or ellipse
ELONGATED = 1.3


def _harmonics(points: np.ndarray, n: int = 64) -> list[float]:
    """|Z_k| / |Z_1| of the closed outline resampled at ``n`` points evenly spaced along its length and
    traversed counter-clockwise (so that Z_1 is its circle): free of position, size, rotation, start
    point and direction, and smooth in the outline (a codec's rounded corner lowers the shape's
    harmonic a little, it does not remove a vertex)."""
    p = points.reshape(-1, 2).astype(np.float64)
    x, y = p[:, 0], p[:, 1]
    if np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1]) + x[-1] * y[0] - x[0] * y[-1] < 0:  # shoelace
        p = p[::-1]
    p = np.concatenate([p, p[:1]])
    step = p[1:] - p[:-1]
    s = np.zeros(len(p))
    np.cumsum(np.sqrt(step[:, 0] ** 2 + step[:, 1] ** 2), out=s[1:])
    if s[-1] <= 0:
        return [0.0] * len(HARMONICS)
    t = np.arange(n) * (s[-1] / n)
    z = np.fft.fft(np.interp(t, s, p[:, 0]) + 1j * np.interp(t, s, p[:, 1])) / n
    mag = np.abs(z) / (abs(z[1]) + 1e-9)
    return mag[np.asarray(HARMONICS) % n].tolist()


def outline_measures(contour: np.ndarray, hole: float = 0.0) -> dict[str, float] | None:
    """What the shape namer reads of one outline (None for an outline without area): circularity,
    solidity, how fully its hull fills its minimal enclosing triangle, rectangle and circle, its
    elongation, the harmonics of the outline (notches) and of its hull (corners), and the share of a
    central hole (``hole``, a ring's)."""
    area = float(cv2.contourArea(contour))
    perim = float(cv2.arcLength(contour, True))
    if area <= 0 or perim <= 0:
        return None
    hull = cv2.convexHull(contour)
    hull_area = float(cv2.contourArea(hull)) or area
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    hull_pts = hull.reshape(-1, 1, 2).astype(np.float32)
    tri_area, _ = cv2.minEnclosingTriangle(hull_pts)
    (_, _), rad = cv2.minEnclosingCircle(hull_pts)
    out = {"circularity": 4 * np.pi * area / (perim * perim), "solidity": area / hull_area,
           "fill_triangle": hull_area / max(float(tri_area), 1e-6), "fill_rectangle": hull_area / max(rw * rh, 1e-6),
           "fill_circle": hull_area / max(np.pi * rad * rad, 1e-6),
           "log_aspect": float(np.log(max(rw, rh) / max(min(rw, rh), 1e-6)))}
    out.update({f"outline_h{k}": v for k, v in zip(HARMONICS, _harmonics(contour))})
    out.update({f"hull_h{k}": v for k, v in zip(HARMONICS, _harmonics(hull))})
    out.update({"hole": float(hole), "hole_root": float(np.sqrt(max(hole, 0.0)))})
    return {k: float(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def shape_classes() -> LinearClasses:
    """The shipped namer (``fitted/shape_classes.json``, fitted by
    ``benchmarks/fit_shape_classes.py``; its ``fitted_on`` says on what)."""
    return LinearClasses.load(CLASSES_FILE)


def classify_shape(contour: np.ndarray, hole: float = 0.0,
                   classes: LinearClasses | None = None) -> tuple[str, float, float, int, float]:
    """(shape name, circularity, solidity, polygon vertices, min-rect aspect) of one outline.

    The name is the likeliest class of a linear classifier over :func:`outline_measures` (``classes``,
    default the shipped one), fitted on small anti-aliased shapes at two codec qualities, where cut-offs
    on vertex counts and fills named a CRF 30 square a pentagon or a blob. "blob" is no shape (a
    fragment, clutter). No "pentagon": MVX-Synth draws none, and a pentagon class took CRF 30 stars and
    hexagons (``benchmarks/fit_shape_classes.py``). Elongated outlines keep the earlier namer's cut-offs
    on their fills (rectangle, ellipse), as no elongated shape was fitted.
    """
    measures = outline_measures(contour, hole)
    if measures is None:
        return "blob", 0.0, 0.0, 0, 1.0
    hull = cv2.convexHull(contour)
    nv = len(cv2.approxPolyDP(hull, 0.04 * cv2.arcLength(hull, True), True))
    aspect = float(np.exp(measures["log_aspect"]))
    name = (classes or shape_classes()).likeliest(measures)
    if aspect >= ELONGATED:
        if measures["fill_rectangle"] > 0.88:
            name = "rectangle"
        elif measures["fill_rectangle"] > 0.72 and measures["circularity"] > 0.7:
            name = "ellipse"
        else:
            name = {"square": "rectangle", "circle": "ellipse"}.get(name, name)
    return name, measures["circularity"], measures["solidity"], nv, aspect
