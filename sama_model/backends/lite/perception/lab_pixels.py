"""Pixel arithmetic of the segmenter in CIELAB: conversion codes, colour distances, edge sharpness, a rim's trim.

Why a module of its own: the segmenter's two passes (:mod:`.segmentation`) call these thousands of times per
real-footage clip, so each is written for OpenCV's fast paths (bit for bit numpy's results).
"""

from __future__ import annotations

import cv2
import numpy as np

from ..shared.order_stats import fast_median

_ONES = np.ones((1, 3), np.float32)
# structuring elements, made once (the per-object steps below use them a few thousand times on a
# real-footage clip's 24 frames; OpenCV only reads them)
K2, K3, K5, K7 = (np.ones((n, n), np.uint8) for n in (2, 3, 5, 7))
CROSS3 = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))
ELLIPSE7 = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))


def pixel_count(mask: np.ndarray) -> int:
    """``mask.sum()`` of a 0/1 uint8 or a bool mask (its non-zero pixels; cv2 counts them in a
    fraction of numpy's reduction's per-call cost, which dominates on object crops)."""
    return cv2.countNonZero(mask if mask.dtype == np.uint8 else mask.view(np.uint8))


def _lab_table() -> np.ndarray:
    """[1, 256, 3] float32 Lab of each 8-bit code per channel: L x 100/255, a - 128, b - 128."""
    code = np.arange(256, dtype=np.float32)
    lum = code.copy()
    lum *= 100.0 / 255.0
    return np.ascontiguousarray(np.stack([lum, code - 128.0, code - 128.0], axis=-1)[None])


LAB_TABLE = _lab_table()


def channel_sum(img: np.ndarray) -> np.ndarray:
    """Sum over the 3 channels of a float32 image (cv2.transform is much faster than numpy here)."""
    return cv2.transform(np.ascontiguousarray(img, np.float32), _ONES)


def lab_dist(lab: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-pixel Euclidean Lab distance to an image or a single colour."""
    return cv2.sqrt(lab_dist2(lab, ref))


def lab_dist2(lab: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """:func:`lab_dist` squared (the nearer of two colours is the smaller of these, and IEEE square
    roots keep order: the square root of the minimum is the minimum of the square roots)."""
    diff = lab - np.asarray(ref, np.float32)
    return channel_sum(diff * diff)


def edge_sharpness(lab: np.ndarray, mask: np.ndarray) -> float:
    """Median over the outline of the strongest local colour step (Lab units per pixel).

    A sharp (in-focus, anti-aliased) edge changes colour within a pixel or two, so this is a
    large share of the object's contrast; a blurred background shape spreads it over many.
    """
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    mag = cv2.sqrt(channel_sum(gx * gx + gy * gy))
    edge = cv2.dilate(mask, K3) & ~cv2.erode(mask, K3) & 1
    if pixel_count(edge) < 4:
        return 0.0
    return float(fast_median(cv2.dilate(mag, K3)[edge > 0])) * 2.0


def trim_rim(lab: np.ndarray, raw: np.ndarray, filled: np.ndarray) -> np.ndarray:
    """Drop outline pixels whose colour is nearer the surrounding background than the object.

    Rare-colour regions include the anti-aliased/blurred rim (mixed colours are rare too); the
    object ends where a pixel is closer to the background than to the object's own colours
    (its darker and lighter halves, so stripes and shading both count as the object).
    """
    core = cv2.erode(filled, K3) & raw
    ring = (cv2.dilate(filled, K5) > 0) & ~(filled > 0)
    if pixel_count(core) < 6 or pixel_count(ring) < 6:
        return raw
    pix = lab[core > 0]
    lum = pix[:, 0]
    mid = fast_median(lum)
    reps = [fast_median(pix[lum <= mid]), fast_median(pix[lum >= mid])]
    d_obj = cv2.sqrt(np.minimum(lab_dist2(lab, reps[0]), lab_dist2(lab, reps[1])))
    d_bg = lab_dist(lab, fast_median(lab[ring]))
    rim = (raw > 0) & ~(core > 0)
    out = raw.copy()
    out[rim & (d_bg < d_obj)] = 0
    return out
