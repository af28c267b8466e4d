"""Frame descriptors: perceptual hashes, colour/texture statistics, rendering marks.

Two families, because "same content" and "same style" are different questions:

* content (what is shown, where): a zero-mean greyscale thumbnail, a gradient-magnitude layout
  and a pHash. These survive re-encoding, mild crops and colour shifts (they ignore hue and are
  invariant to global brightness/contrast), but change with the scene's layout.
* style (how it is rendered, independent of layout): palette (saturation-weighted hue),
  saturation and value histograms, edge density, gradient-strength and LBP texture histograms,
  flatness and posterisation (how few colours cover the frame).

Each block is L2-normalised and weighted, so a cosine between two embeddings is a weighted
average of per-block cosines.
"""

from __future__ import annotations

import cv2
import numpy as np

from ..shared.sampling import resize_max

_SIDE = 128


def _grey(frame: np.ndarray) -> np.ndarray:
    small, _ = resize_max(frame, _SIDE)
    return cv2.cvtColor(small, cv2.COLOR_RGB2GRAY) if small.ndim == 3 else small


def dhash(frame: np.ndarray, size: int = 8) -> np.ndarray:
    """Difference hash: ``size*size`` bits of horizontal brightness gradients (bool array)."""
    g = cv2.resize(_grey(frame), (size + 1, size), interpolation=cv2.INTER_AREA).astype(np.int16)
    return (g[:, 1:] > g[:, :-1]).ravel()


def phash(frame: np.ndarray, size: int = 8) -> np.ndarray:
    """DCT perceptual hash: low-frequency coefficients above their median (bool, size*size-1)."""
    g = cv2.resize(_grey(frame), (32, 32), interpolation=cv2.INTER_AREA).astype(np.float32)
    low = cv2.dct(g)[:size, :size].ravel()[1:]
    return low > np.median(low)


def hamming_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 - normalised Hamming distance between two bit arrays."""
    return 1.0 - float(np.count_nonzero(a != b)) / max(len(a), 1)


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, np.float32).ravel()
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-9 else v


def _zscore(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, np.float32).ravel()
    return _unit(v - v.mean())


def soft_bins(x: float, lo: float, hi: float, n: int = 8, width: float = 0.8) -> np.ndarray:
    """A scalar as a smooth one-hot over ``n`` bins (so cosines compare scalars gradually)."""
    centers = np.linspace(lo, hi, n)
    step = (hi - lo) / max(n - 1, 1)
    return np.exp(-0.5 * ((np.clip(x, lo, hi) - centers) / (width * step)) ** 2).astype(np.float32)


def gradients(grey: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.magnitude(gx, gy), np.arctan2(gy, gx)


def edge_density(frame: np.ndarray) -> float:
    """Fraction of pixels on Canny edges (line work, detail)."""
    g = _grey(frame)
    return float(np.count_nonzero(cv2.Canny(g, 60, 150))) / g.size


def lbp_hist(grey: np.ndarray) -> np.ndarray:
    """Rotation-invariant uniform LBP histogram (10 bins: 0-8 set bits if uniform, else 9)."""
    g = grey.astype(np.int16)
    c = g[1:-1, 1:-1]
    offs = [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0)]
    bits = np.stack([(g[dy : dy + c.shape[0], dx : dx + c.shape[1]] >= c + 3) for dy, dx in offs]).astype(np.int8)
    ones = bits.sum(0)
    transitions = np.abs(np.diff(np.concatenate([bits, bits[:1]], 0), axis=0)).sum(0)
    code = np.where(transitions <= 2, ones, 9)
    return np.bincount(code.ravel(), minlength=10).astype(np.float32) / code.size


def style_stats(frame: np.ndarray) -> dict[str, float]:
    """Human-readable style statistics of one frame (all in [0, 1])."""
    small, _ = resize_max(frame, _SIDE)
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV).reshape(-1, 3).astype(np.float32)
    g = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)
    mag, _ = gradients(g)
    q = (small >> 5).reshape(-1, 3).astype(np.int32)
    codes = np.bincount(q[:, 0] * 64 + q[:, 1] * 8 + q[:, 2], minlength=512)
    top = np.sort(codes)[::-1]
    return {
        "brightness": float(hsv[:, 2].mean() / 255),
        "saturation": float(hsv[:, 1].mean() / 255),
        "contrast": float(g.std() / 128),
        "edge_density": float(np.count_nonzero(cv2.Canny(g, 60, 150)) / g.size),
        "flatness": float((mag < 8).mean()),
        "posterization": float(top[:8].sum() / max(codes.sum(), 1)),
        "colorfulness": float(np.count_nonzero(codes > 0.002 * codes.sum()) / 512),
    }


CONTENT_DIM = 16 * 16 + 8 * 8 + 63 + 32
STYLE_DIM = 12 + 8 + 8 + 8 + 8 + 10 + 4 * 8 + 6


def content_embedding(frame: np.ndarray) -> np.ndarray:
    """Layout-bearing, colour-shift-robust frame descriptor (L2-normalised, CONTENT_DIM)."""
    small, _ = resize_max(frame, _SIDE)
    g = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)
    g = cv2.GaussianBlur(g, (5, 5), 0)
    thumb = cv2.resize(g, (16, 16), interpolation=cv2.INTER_AREA).astype(np.float32)
    mag, _ = gradients(g)
    layout = cv2.resize(mag, (8, 8), interpolation=cv2.INTER_AREA)
    bits = phash(small).astype(np.float32) * 2 - 1
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    hs = cv2.calcHist([hsv], [0, 1], None, [8, 4], [0, 180, 0, 256]).ravel()
    blocks = [
        (_zscore(thumb), 1.0),
        (_zscore(np.sqrt(layout)), 0.6),
        (_unit(bits), 0.6),
        (_zscore(np.sqrt(hs / max(hs.sum(), 1))), 0.3),
    ]
    return _unit(np.concatenate([b * w for b, w in blocks]))


def style_embedding(frame: np.ndarray) -> np.ndarray:
    """Layout-free rendering descriptor: palette, saturation, texture, lines (L2-normalised, STYLE_DIM)."""
    small, _ = resize_max(frame, _SIDE)
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    h, s, v = (hsv[..., i].ravel().astype(np.float32) for i in range(3))
    hue = np.bincount((h / 15).astype(int).clip(0, 11), weights=s / 255, minlength=12)
    sat = np.histogram(s, bins=8, range=(0, 256))[0].astype(np.float32)
    val = np.histogram(v, bins=8, range=(0, 256))[0].astype(np.float32)
    g = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)
    mag, ang = gradients(g)
    strong = mag > 20
    mag_hist = np.histogram(np.log1p(mag), bins=8, range=(0, 7))[0].astype(np.float32)
    ori = np.bincount(((ang[strong] % np.pi) / np.pi * 8).astype(int).clip(0, 7), minlength=8).astype(np.float32)
    lbp = lbp_hist(g)
    st = style_stats(frame)
    scalars = np.concatenate(
        [
            soft_bins(st[k], 0.0, hi)
            for k, hi in (("edge_density", 0.3), ("flatness", 1.0), ("posterization", 1.0), ("saturation", 0.8))
        ]
    )
    lab = cv2.cvtColor(small, cv2.COLOR_RGB2LAB).reshape(-1, 3).astype(np.float32)
    moments = np.concatenate([lab.mean(0) / 255, lab.std(0) / 128])
    blocks = [
        (_unit(np.sqrt(hue)), 1.0),
        (_unit(np.sqrt(sat)), 0.8),
        (_unit(np.sqrt(val)), 0.6),
        (_unit(np.sqrt(mag_hist)), 0.8),
        (_unit(np.sqrt(ori + 1e-3)), 0.3),
        (_unit(np.sqrt(lbp)), 0.8),
        (_unit(scalars), 1.0),
        (_unit(moments), 0.5),
    ]
    return _unit(np.concatenate([b * w for b, w in blocks]))


#: names of :func:`rendering_marks`, and each mark's spread over MVX-Synth ART videos (seeds 5 and
#: 11, 500 videos): the unit in which style distances add up
MARK_NAMES = ("scanlines", "halftone", "grain", "posterization", "dark_outline", "light_outline", "soft_shading",
              "edge_density")
MARK_SCALE = np.array([4.17, 3.04, 3.61, 0.945, 0.275, 0.59, 0.606, 2.30], np.float32)
_MARK_SIDE = 640  # periodic overlays (3-5 px) need the frame near its native resolution
#: Fitted to MVX-Synth's ART renderer (mvx_tasks/synth/art.py), not general: the scanline period
#: (3 px rows), the halftone period (5 px) and the posterisation levels (64 steps) are the ones
#: that generator draws; a real style with another period or palette depth reads as "no mark".
_SCANLINE_PERIOD, _HALFTONE_PERIOD = 3, 5
_LEVELS = np.array([0, 64, 128, 192, 255])


def rendering_marks(frame: np.ndarray) -> np.ndarray:
    """How a frame was rendered, independent of what it shows ([len(MARK_NAMES)] floats): the
    power of a 3-pixel row period (scanlines) and of a 5-pixel 2-D period (halftone dots) in the
    high-passed image over the spectrum's median (log ratios); grain (median high-pass amplitude in
    the flattest 40 %, per grey level); posterization (share of channel values within 5 of the
    64-step levels); the share of very dark / very light pixels along edges (outline styles); soft
    shading (share of gentle gradients); edge density. Computed at near-native resolution."""
    small, _ = resize_max(frame, _MARK_SIDE)
    g = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.float32)
    hp = g - cv2.GaussianBlur(g, (0, 0), 1.5)
    H, W = g.shape
    row = hp.mean(axis=1)
    rows = np.abs(np.fft.rfft(row - row.mean())) ** 2
    k3 = max(1, int(round(H / _SCANLINE_PERIOD)))
    scan = np.log((rows[k3 - 1:k3 + 2].max() + 1e-6) / (np.median(rows[1:]) + 1e-6))
    spec = np.abs(np.fft.fft2(hp)) ** 2
    ky, kx = max(1, int(round(H / _HALFTONE_PERIOD))), max(1, int(round(W / _HALFTONE_PERIOD)))
    peak = max(spec[ky - 1:ky + 2, 0:2].max(), spec[0:2, kx - 1:kx + 2].max(), spec[ky - 1:ky + 2, kx - 1:kx + 2].max())
    half = np.log((peak + 1e-6) / (np.median(spec) + 1e-6))
    blur = cv2.GaussianBlur(g, (0, 0), 2)
    mag = np.hypot(cv2.Sobel(blur, cv2.CV_32F, 1, 0), cv2.Sobel(blur, cv2.CV_32F, 0, 1))
    flat = mag < np.percentile(mag, 40)
    grain = float(np.median(np.abs(hp[flat]))) / (float(g.mean()) + 10.0) * 100.0 if flat.any() else 0.0
    post = float(np.mean(np.min(np.abs(small.astype(np.int32)[..., None] - _LEVELS), axis=-1) <= 5))
    edges = cv2.Canny(g.astype(np.uint8), 50, 120) > 0
    band = cv2.dilate(edges.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    dark = hsv[..., 2] < 45
    light = (hsv[..., 2] > 225) & (hsv[..., 1] < 40)
    od, ol = (float(x[band].mean()) if band.any() else 0.0 for x in (dark, light))
    soft = float(np.mean((mag > 1.5) & (mag < 12)))
    return np.array([scan, half, grain, post * 4, od * 4, ol * 4, soft * 3, float(edges.mean()) * 20], np.float32)
