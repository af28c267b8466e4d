"""The texture correlation of two subject views: what the moving-camera score (:func:`.compare.texture_features`)
and the stack score (:func:`.stack.stack_texture`) both read."""

from __future__ import annotations

import numpy as np

#: a pixel of a view is the subject's (blurred with its own pixels only: normalised convolution) where the
#: view covers more than this share of it; a texture correlation counts the pixels both views cover so
TEXTURE_COVER = 0.5
TEXTURE_MIN_PIXELS = 20  # fewer shared pixels: the pair of views correlates 0


def texture_correlations(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[len(a), len(b)] correlation of every pair of texture views ([k, VIEW_H, VIEW_W, 4]): per CIELAB
    channel the Pearson correlation over the pixels both views cover (:data:`TEXTURE_COVER`), L weighted
    1 and a, b 1/2 each, the sum halved (1 for the same texture in the same place)."""
    ca, cb = a[:, None, ..., 3], b[None, ..., 3]
    w = np.minimum(ca, cb)
    w = w * (w > TEXTURE_COVER)
    total = w.sum(axis=(2, 3))
    out = np.zeros(total.shape, np.float64)
    for ch, weight in ((0, 1.0), (1, 0.5), (2, 0.5)):
        x, y = a[:, None, ..., ch], b[None, ..., ch]
        mx = (w * x).sum(axis=(2, 3)) / np.maximum(total, 1e-9)
        my = (w * y).sum(axis=(2, 3)) / np.maximum(total, 1e-9)
        dx, dy = x - mx[..., None, None], y - my[..., None, None]
        num = (w * dx * dy).sum(axis=(2, 3))
        den = np.sqrt((w * dx * dx).sum(axis=(2, 3)) * (w * dy * dy).sum(axis=(2, 3))) + 1e-6
        out += weight * num / den
    out = out / 2.0
    out[total < TEXTURE_MIN_PIXELS] = 0.0
    return out
