"""Colour names: a 12-word palette over hue, saturation and value.

Why a module of its own: colour naming serves the segmenter, the reader's palette, the identity
features and the motion foreground alike; none of them needs the others.
"""

from __future__ import annotations

import cv2
import numpy as np

from ..shared.order_stats import fast_median

_PALETTE: tuple[str, ...] = (
    "black",
    "white",
    "grey",
    "red",
    "pink",
    "brown",
    "orange",
    "yellow",
    "green",
    "cyan",
    "blue",
    "purple",
)


#: hue bucket edges (degrees) of :func:`color_codes`; per bucket, the code when the value is below
#: ``_DARK_BELOW`` (second column) and otherwise (first)
_HUE_EDGES = np.array([42.0, 70.0, 165.0, 200.0, 255.0, 295.0])
_DARK_BELOW = np.array([0.62, 0.45, 0, 0, 0, 0, 0], np.float32)
_BUCKET_CODE = np.array([[6, 5], [7, 5], [8, 8], [9, 9], [10, 10], [11, 11], [4, 4]], np.int8)


def _reds_greys_dark(code: np.ndarray, h: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The rules that override a hue bucket, in order (both forms of :func:`color_codes` end with
    them): reds split into pink, brown and red; low saturation is white, grey or black; low value
    is black. Whole-array selections, no boolean gathers and scatters (the segmenter and the movers
    name a few hundred pixels per object, where the number of array operations is the cost);
    returns new int8 codes."""
    code = np.where((h < 15) | (h >= 340), np.where((s < 0.55) & (v > 0.75), 4, np.where(v < 0.5, 5, 3)), code)
    code = np.where(s < 0.2, np.where(v > 0.8, 1, np.where(v < 0.3, 0, 2)), code)
    code[v < 0.22] = 0
    return code.astype(np.int8, copy=False)


def color_codes(rgb: np.ndarray) -> np.ndarray:
    """Palette index (into ``_PALETTE``) of each RGB colour (uint8 or float 0-255, shape [..., 3]).

    Rules on hue/saturation/value: low value is black, low saturation is white/grey/black,
    otherwise hue buckets, with dark oranges/reds as brown and pale reds/magentas as pink.
    (The hue buckets are one sorted look-up and every rule a whole-array selection: the same
    codes as :func:`_color_codes_plain` for every 8-bit colour, checked exhaustively.)
    """
    x = np.asarray(rgb, np.float32).reshape(-1, 3) / 255.0
    r, g, b = x[:, 0], x[:, 1], x[:, 2]
    v = np.maximum(np.maximum(r, g), b)
    c = v - np.minimum(np.minimum(r, g), b)
    s = np.where(v > 0, c / np.maximum(v, 1e-6), 0)
    cc = np.maximum(c, 1e-6)
    h = np.where(v == r, ((g - b) / cc) % 6, np.where(v == g, (b - r) / cc + 2, (r - g) / cc + 4))
    h *= 60.0
    if np.isnan(h).any():  # (not a number: the plain rules' own fall-through)
        return _color_codes_plain(rgb)
    bucket = np.searchsorted(_HUE_EDGES, h, side="right")
    code = _BUCKET_CODE[bucket, (v < _DARK_BELOW[bucket]).view(np.uint8)]
    return _reds_greys_dark(code, h, s, v).reshape(np.asarray(rgb).shape[:-1])


def _color_codes_plain(rgb: np.ndarray) -> np.ndarray:
    """:func:`color_codes` written rule by rule (the reference its faster form is checked against)."""
    x = np.asarray(rgb, np.float32).reshape(-1, 3) / 255.0
    v = x.max(1)
    c = v - x.min(1)
    s = np.where(v > 0, c / np.maximum(v, 1e-6), 0)
    r, g, b = x[:, 0], x[:, 1], x[:, 2]
    cc = np.maximum(c, 1e-6)
    h = np.where(v == r, ((g - b) / cc) % 6, np.where(v == g, (b - r) / cc + 2, (r - g) / cc + 4)) * 60.0
    code = np.full(len(x), 11, np.int8)  # purple by default, refined below
    code[(h >= 295)] = 4
    code[(h < 295)] = 11
    code[(h < 255)] = 10
    code[(h < 200)] = 9
    code[(h < 165)] = 8
    code[(h < 70)] = np.where(v[h < 70] < 0.45, 5, 7)
    code[(h < 42)] = np.where(v[h < 42] < 0.62, 5, 6)
    return _reds_greys_dark(code, h, s, v).reshape(np.asarray(rgb).shape[:-1])


def color_name(rgb: tuple[float, float, float] | np.ndarray) -> str:
    """Name an RGB colour (0-255) from the 12-word palette."""
    return _PALETTE[int(color_codes(np.asarray(rgb, np.float32).reshape(1, 3))[0])]


def palette(frame: np.ndarray, top: int = 4, min_share: float = 0.03) -> list[tuple[str, float]]:
    """The frame's main colour names with their pixel shares (largest first)."""
    small = cv2.resize(frame, (64, 64), interpolation=cv2.INTER_AREA)
    counts = np.bincount(color_codes(small).ravel(), minlength=len(_PALETTE)) / (64 * 64)
    order = np.argsort(-counts, kind="stable")[:top]
    return [(_PALETTE[i], round(float(counts[i]), 3)) for i in order if counts[i] >= min_share]


def dominant_color(pixels: np.ndarray) -> tuple[str, tuple[int, int, int]]:
    """Colour name of an object's pixels by majority vote (a chromatic colour covering a quarter
    of a striped/checkered object beats its black or white cells) and its median RGB."""
    codes = color_codes(pixels)
    counts = np.bincount(codes.ravel(), minlength=len(_PALETTE))
    chroma = counts.copy()
    chroma[:3] = 0  # black, white, grey
    best = int(np.argmax(chroma)) if chroma.max() >= 0.25 * max(len(codes), 1) else int(np.argmax(counts))
    rgb = tuple(int(c) for c in fast_median(pixels[codes == best]))
    return _PALETTE[best], rgb


def dominant_colors(pixel_sets: list[np.ndarray]) -> list[tuple[str, tuple[int, int, int]]]:
    """:func:`dominant_color` of each pixel set, the same results, in one pass over all of them.

    Why: the segmenter names a handful of objects a frame of a few hundred pixels each, where the
    ~45 array operations of :func:`color_codes` cost more than the pixels (~65 us a call); codes are
    per pixel, so coding the concatenated sets at once and voting per set with one bincount gives the
    same names and median colours. (Sets that are not (N, 3) uint8 with N > 0 are named one by one.)
    """
    sets = [np.asarray(p) for p in pixel_sets]
    if len(sets) < 2 or not all(p.dtype == np.uint8 and p.ndim == 2 and p.shape[1] == 3 and len(p) for p in sets):
        return [dominant_color(p) for p in sets]
    sizes = np.array([len(p) for p in sets])
    codes = color_codes(np.concatenate(sets))
    k = len(_PALETTE)
    counts = np.bincount(codes + k * np.repeat(np.arange(len(sets)), sizes), minlength=k * len(sets)).reshape(-1, k)
    chroma = counts.copy()
    chroma[:, :3] = 0  # black, white, grey
    best = np.where(chroma.max(1) >= 0.25 * sizes, chroma.argmax(1), counts.argmax(1))
    out = []
    start = 0
    for p, n, b in zip(sets, sizes.tolist(), best.tolist()):
        own = codes[start : start + n]
        start += n
        out.append((_PALETTE[b], tuple(int(c) for c in fast_median(p[own == b]))))
    return out
