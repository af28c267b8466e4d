"""Identity descriptor: the appearance of a clip's main moving object, for re-identification.

The background is the per-pixel temporal median of the (static or near-static camera) clip;
pixels that differ strongly from it are foreground; per sampled frame the largest connected
foreground component is the main object. Its pixels are described by a lighting-robust colour
histogram: hue (18 bins) of chromatic pixels and value (4 bins) of achromatic ones, so a gain
or brightness change and a different background do not change the descriptor while a part of
another colour does. Frames are averaged; two descriptors compare by Bhattacharyya coefficient.
"""

from __future__ import annotations

import cv2
import numpy as np

IDENTITY_DIM = 18 + 4
MAX_SIDE = 256


def identity_descriptor(frames: np.ndarray, n: int = 8, diff: int = 35, min_area: int = 120) -> np.ndarray | None:
    """[IDENTITY_DIM] histogram (sums to 1) of the main moving object's pixels, or None if no
    foreground object is found (e.g. a single frame or nothing moves)."""
    if len(frames) < 3:
        return None
    h, w = frames.shape[1:3]
    f = min(1.0, MAX_SIDE / max(h, w))
    small = [cv2.resize(x, (int(w * f), int(h * f)), interpolation=cv2.INTER_AREA) if f < 1 else x for x in frames]
    sm = np.stack([cv2.GaussianBlur(x, (5, 5), 0) for x in small]).astype(np.int16)
    bg = np.median(sm, axis=0)
    area_min = max(20, int(min_area * f * f))
    hists = []
    for i in np.unique(np.linspace(0, len(small) - 1, n).astype(int)):
        m = (np.abs(sm[i] - bg).max(-1) > diff).astype(np.uint8)
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        k, lab, st, _ = cv2.connectedComponentsWithStats(m)
        if k < 2:
            continue
        j = 1 + int(np.argmax(st[1:, cv2.CC_STAT_AREA]))
        if st[j, cv2.CC_STAT_AREA] < area_min:
            continue
        hsv = cv2.cvtColor(small[i], cv2.COLOR_RGB2HSV)[lab == j].astype(np.float32)
        chrom = hsv[:, 1] > 70
        hue = np.bincount((hsv[chrom, 0] / 10).astype(int).clip(0, 17), minlength=18).astype(np.float32)
        ach = np.bincount((hsv[~chrom, 2] / 64).astype(int).clip(0, 3), minlength=4).astype(np.float32)
        x = np.concatenate([hue, ach])
        hists.append(x / max(float(x.sum()), 1.0))
    return np.mean(hists, 0).astype(np.float32) if hists else None


def identity_similarity(a: np.ndarray | None, b: np.ndarray | None) -> float | None:
    """Bhattacharyya coefficient in [0, 1]; None when either side has no object."""
    if a is None or b is None:
        return None
    return float(np.sqrt(np.clip(a, 0, None) * np.clip(b, 0, None)).sum())


def identity_score(sim: float | None, centre: float = 0.72, width: float = 0.05) -> float:
    """Calibrated probability-like score: 0.5 at the same/different decision point."""
    if sim is None:
        return 0.5
    return float(1.0 / (1.0 + np.exp(-(sim - centre) / width)))
