"""Shape names of object outlines: circularity, polygon vertices, solidity, holes and concavities.

Why a module of its own: naming a shape is asked only by questions about shapes, and the motion
foreground (:mod:`.movers`) names shapes without the colour segmenter.
"""

from __future__ import annotations

import cv2
import numpy as np


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


def _concave_shape(contour: np.ndarray, hull_area: float) -> str:
    """star (5 deep notches), cross (4), or blob, from the convexity defects of the outline."""
    try:
        hull_idx = cv2.convexHull(contour, returnPoints=False)
        defects = cv2.convexityDefects(contour, hull_idx)
    except cv2.error:  # self-intersecting outline
        return "blob"
    if defects is None:
        return "blob"
    depth = defects.reshape(-1, 4)[:, 3] / 256.0
    deep = int(np.sum(depth > 0.12 * np.sqrt(hull_area)))
    return {4: "cross", 5: "star", 6: "star"}.get(deep, "blob")


def classify_shape(contour: np.ndarray) -> tuple[str, float, float, int, float]:
    """(shape name, circularity, solidity, polygon vertices, min-rect aspect) of one outline.

    Uses how completely the outline fills its minimal enclosing triangle, rectangle and circle
    (1.0 for the matching shape), which is steadier on small anti-aliased shapes than vertex
    counts alone; vertex counts separate pentagons and hexagons.
    """
    area = float(cv2.contourArea(contour))
    perim = float(cv2.arcLength(contour, True))
    if area <= 0 or perim <= 0:
        return "blob", 0.0, 0.0, 0, 1.0
    circ = float(4 * np.pi * area / (perim * perim))
    hull = cv2.convexHull(contour)
    hull_area = float(cv2.contourArea(hull)) or area
    solidity = area / hull_area
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    aspect = float(max(rw, rh) / max(min(rw, rh), 1e-6))
    nv = int(len(cv2.approxPolyDP(hull, 0.04 * cv2.arcLength(hull, True), True)))
    if solidity < 0.9:  # notches survive small scales better than solidity does (blurred tips)
        notched = _concave_shape(contour, hull_area)
        if notched != "blob" or solidity < 0.8:
            return notched, circ, solidity, nv, aspect
    hull_pts = hull.reshape(-1, 1, 2).astype(np.float32)
    tri_area, _ = cv2.minEnclosingTriangle(hull_pts)
    fill_tri = hull_area / max(float(tri_area), 1e-6)
    fill_rect = hull_area / max(rw * rh, 1e-6)
    (_, _), rad = cv2.minEnclosingCircle(hull_pts)
    fill_circle = hull_area / max(np.pi * rad * rad, 1e-6)
    if fill_tri > 0.86:
        name = "triangle"
    elif fill_rect > 0.88:
        name = "square" if aspect < 1.3 else "rectangle"
    elif fill_circle > 0.88:
        name = "circle"
    elif len(contour) >= 5 and fill_rect > 0.72 and aspect >= 1.3 and circ > 0.7:
        name = "ellipse"
    elif nv == 6 and fill_circle > 0.75:
        name = "hexagon"
    elif nv == 5 and fill_circle > 0.65:
        name = "pentagon"
    elif fill_circle > 0.8 and circ > 0.8:
        name = "hexagon" if nv >= 6 else "circle"
    else:
        name = "blob"
    return name, circ, solidity, nv, aspect
