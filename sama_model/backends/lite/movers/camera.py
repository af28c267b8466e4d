"""The camera under the movers: every sampled frame registered to the window's middle frame.

Step 1 of :mod:`.movers.regions`: a similarity transform between consecutive sampled frames, fitted robustly on
corners taken evenly from a grid of cells (:func:`spread_points`: the sharpest corners are often on the objects,
the background wins by area), chained into a map from every frame to the middle one and corrected there by a
homography (a hand-held camera over a wall or a lawn, :func:`_to_middle`). A flat backdrop (a slate: the corners
are the objects' own) is decided still once for the whole clip (:func:`flat_backdrop`, :data:`FLAT_CELLS`). All on
a small copy (:data:`MOVER_SIDE` pixels) of the sampled frames.
"""

from __future__ import annotations

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ..motion.flow import fit_similarity
from ..shared.frame_memo import FRAME_MEMO
from ..shared.sampling import resize_max

MOVER_SIDE = 160
GRID_CELLS = 4  # camera fits take corners from each cell of this grid (see spread_points)
SPREAD_MIN = 0.35  # camera fit: inlier corners span at least this share of the frame on one axis
#: a clip is a flat backdrop (taken as still, see camera_chain) when the typical pair's inlier corners lie
#: in fewer grid cells than this. Real-footage composite seeds 3, 4: the slate's pairs 0-5 of 16 cells
#: (median 5), every textured plate 7-16 (median 13-16).
FLAT_CELLS = 6
#: ... or when under FLAT_TEXTURE of a sampled frame's pixels (the small grey copy, the median over up to
#: FLAT_SAMPLES frames) have a gradient above FLAT_GRADIENT grey levels per pixel (see :func:`texture_share`).
#: Why both: three to five textured cut-outs spread over a slate put the pair fits' inliers in six cells or
#: more, so the cell rule took the objects' own motion for the camera's (25-32 % of the composite's slate
#: videos; in one, maps that scaled the frame by 0.84 and turned it by 12 degrees). Real-footage composite
#: seeds 1, 3, 4 and 59 (generator version 4, CRF 20 and 30, 30 frames of 320 x 240): the slate's frames
#: 0.02-0.11, the weakest textured plate (the hand-held pavement) 0.23-0.38, the others 0.49-0.97; a flat grey
#: frame with sensor noise of standard deviation 4 grey levels reads 0.04 (the 160-px copy and its blur
#: average the noise).
FLAT_TEXTURE = 0.16
FLAT_GRADIENT = 1.0
FLAT_SAMPLES = 6


def _small(frame: np.ndarray) -> np.ndarray:
    return cv2.GaussianBlur(resize_max(frame, MOVER_SIDE)[0], (3, 3), 0)


def small_grey(frame: np.ndarray) -> np.ndarray:
    """The small greyscale copy the camera fit and the point tracks work on (memo key "mover-grey")."""
    return cv2.cvtColor(_small(frame), cv2.COLOR_RGB2GRAY)


def spread_points(g0: np.ndarray, g1: np.ndarray, cells: int = GRID_CELLS) -> tuple[np.ndarray, np.ndarray]:
    """Corners tracked from g0 to g1, an equal number from each cell of a ``cells`` x ``cells`` grid:
    the strongest corners of a frame are often on the objects (a photograph is sharper than a
    blurred, hand-held background), and the camera fit must be decided by the background's area."""
    h, w = g0.shape
    a0 = []
    for i in range(cells):
        for j in range(cells):
            y0, x0 = i * h // cells, j * w // cells
            cell = np.ascontiguousarray(g0[y0:(i + 1) * h // cells, x0:(j + 1) * w // cells])
            p0 = cv2.goodFeaturesToTrack(cell, maxCorners=8, qualityLevel=0.01, minDistance=4, blockSize=5)
            if p0 is not None:
                a0.append(p0 + np.array([x0, y0], np.float32))
    if not a0:
        return np.zeros((0, 2), np.float32), np.zeros((0, 2), np.float32)
    p0 = np.concatenate(a0)
    lk = dict(winSize=(15, 15), maxLevel=2, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.03))
    p1, st1, _ = cv2.calcOpticalFlowPyrLK(g0, g1, p0, None, **lk)
    p0r, st2, _ = cv2.calcOpticalFlowPyrLK(g1, g0, p1, None, **lk)
    ok = (st1.ravel() == 1) & (st2.ravel() == 1) & (np.linalg.norm((p0 - p0r).reshape(-1, 2), axis=1) < 1.0)
    return p0.reshape(-1, 2)[ok], p1.reshape(-1, 2)[ok]


def _cells(q: np.ndarray, w: int, h: int) -> int:
    """Number of :data:`GRID_CELLS` x :data:`GRID_CELLS` cells of a ``w`` x ``h`` frame that the points
    ``q`` (float32 x, y) lie in: the same float32 products and floor divisions as
    the per-point rule (its test's ``_cells_plain``), as arrays (a tenth of its ~0.2 ms per pair on ~100 inliers)."""
    rows = (q[:, 1] * GRID_CELLS // h).astype(np.int64)
    cols = (q[:, 0] * GRID_CELLS // w).astype(np.int64)
    return len(np.unique(rows * (1 << 20) + cols))


def _pair(g0: np.ndarray, g1: np.ndarray) -> tuple[np.ndarray, float, int]:
    """3x3 similarity mapping g0's pixels to g1's (identity when too few points), inlier share and the
    number of :data:`GRID_CELLS` x :data:`GRID_CELLS` cells the inliers lie in (see :func:`camera_chain`)."""
    p0, p1 = spread_points(g0, g1)
    if len(p0) < 8:
        return np.eye(3), 0.0, 0
    h, w = g0.shape
    c = ((w - 1) / 2, (h - 1) / 2)
    (a, b, tx, ty), inl = fit_similarity(p0.astype(np.float64), p1.astype(np.float64), c)
    # the background's motion is supported across the frame; points on one or two objects only
    # (a flat backdrop has no corners of its own) say nothing about the camera: keep it still
    q = p0[inl]
    cells = _cells(q, w, h)
    spread = np.ptp(np.percentile(q, [5, 95], axis=0), axis=0) / np.array([w, h]) if len(q) >= 8 else np.zeros(2)
    if float(spread.max()) < SPREAD_MIN:
        return np.eye(3), 0.0, cells
    m = np.array([[a, -b, tx + c[0] - a * c[0] + b * c[1]], [b, a, ty + c[1] - b * c[0] - a * c[1]], [0, 0, 1]])
    return m, float(inl.mean()), cells


def gradient(grey: np.ndarray) -> np.ndarray:
    """Gradient magnitude of a grey image in grey levels per pixel (3x3 Sobel over its weight 8; float32)."""
    return cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8.0


def texture_share(grey: np.ndarray) -> float:
    """Share of a frame's pixels (its :func:`small_grey` copy, ``grey``) whose gradient exceeds
    :data:`FLAT_GRADIENT` grey levels per pixel: what of the picture a camera fit could register on."""
    mag = gradient(grey)
    return float(np.count_nonzero(mag > FLAT_GRADIENT)) / mag.size


def flat_backdrop(clip: VideoClip, idx: np.ndarray) -> bool:
    """Whether the clip's typical frame (the median over up to :data:`FLAT_SAMPLES` evenly spaced sampled
    frames) has texture on under :data:`FLAT_TEXTURE` of its pixels: a uniform backdrop, whose only corners
    are the objects' own (memoised per frame)."""
    if len(idx) == 0:
        return False
    pick = idx[np.linspace(0, len(idx) - 1, min(FLAT_SAMPLES, len(idx))).round().astype(int)]
    shares = [FRAME_MEMO.get(clip.frames, int(i), "mover-texture", lambda _f, i=i: texture_share(
        FRAME_MEMO.get(clip.frames, int(i), "mover-grey", small_grey))) for i in pick]
    return float(np.median(shares)) < FLAT_TEXTURE


def camera_chain(clip: VideoClip, idx: np.ndarray) -> list[np.ndarray]:
    """3x3 maps from sampled frame k to k+1 (small-frame pixels), pair fits memoised.

    A uniform backdrop (:func:`flat_backdrop`) is a still camera before any pair is fitted: nothing in it
    moves with the camera, so no fit can tell the camera's motion from the objects'.

    Otherwise the camera is decided once per clip for a flat backdrop: when the inliers of the typical pair
    (the median over pairs) lie in fewer than :data:`FLAT_CELLS` grid cells, the corners are the
    objects' own (a slate or a wall has almost none), and a fit on them jumps from pair to pair by
    the objects' motion; the whole clip is then taken as still. Pair by pair, the same backdrop was
    "still" in some pairs and followed an object in others, 5-18 px jumps in every scene path.

    The pairs are fitted in order and the flat decision is taken as soon as it is certain: once more
    than half of all the pairs lie in fewer than :data:`FLAT_CELLS` cells, the median (the middle
    value, or the mean of the two middle values) is below it whatever the other pairs give, and the
    result (all identities) does not depend on them. Why: a slate clip's pairs all lay in 3-5 cells, and
    11 of its 23 pair fits (corners and Lucas-Kanade) were computed only to be thrown away: 45 -> 23 ms
    on the 224-px composite clip (which the texture rule now decides before any fit)."""
    pairs = list(zip(idx[:-1], idx[1:]))
    if flat_backdrop(clip, idx):
        return [np.eye(3) for _ in pairs]
    decided = len(pairs) // 2 + 1  # pairs below FLAT_CELLS that put the median below it
    fits, few = [], 0
    for a, b in pairs:
        fit = FRAME_MEMO.get(clip.frames, int(a), ("mover-cam", int(b)), lambda _f, a=a, b=b: _pair(
            FRAME_MEMO.get(clip.frames, int(a), "mover-grey", small_grey),
            FRAME_MEMO.get(clip.frames, int(b), "mover-grey", small_grey)))
        fits.append(fit)
        few += fit[2] < FLAT_CELLS
        if few >= decided:
            return [np.eye(3) for _ in pairs]
    if fits and float(np.median([f[2] for f in fits])) < FLAT_CELLS:
        return [np.eye(3) for _ in fits]
    return [f[0] for f in fits]


def _map(chain: list[np.ndarray], j: int, k: int) -> np.ndarray:
    """3x3 map from frame j's pixels to frame k's."""
    m = np.eye(3)
    if j < k:
        for s in range(j, k):
            m = chain[s] @ m
        return m
    for s in range(k, j):
        m = chain[s] @ m
    return np.linalg.inv(m)


def _homography_fix(g0: np.ndarray, g1: np.ndarray) -> np.ndarray:
    """Residual plane-to-plane map between two nearly aligned frames (a hand-held camera over a
    wall or a lawn is a homography, not a similarity); identity when it cannot be fitted."""
    p0, p1 = spread_points(g0, g1)
    if len(p0) < 12:
        return np.eye(3)
    cv2.setRNGSeed(7)
    hmat, inl = cv2.findHomography(p0, p1, cv2.RANSAC, 1.0, maxIters=200, confidence=0.99)
    if hmat is None or inl is None or inl.mean() < 0.5:
        return np.eye(3)
    q = p0[inl.ravel() > 0]
    h, w = g0.shape
    if len(q) < 12 or float((np.ptp(q, axis=0) / np.array([w, h])).max()) < SPREAD_MIN:
        return np.eye(3)
    return hmat


def _to_middle(clip: VideoClip, idx: np.ndarray, chain: list[np.ndarray]) -> list[np.ndarray]:
    """3x3 maps from each sampled frame to the middle one: chained steps, each corrected by a fit
    between the middle frame and the frame warped by the chained guess (chaining accumulates error;
    the residual is small enough for Lucas-Kanade). A still camera (identity chain) skips the fits."""
    n = len(idx)
    mid = n // 2
    maps = [np.eye(3) for _ in range(n)]
    gm = FRAME_MEMO.get(clip.frames, int(idx[mid]), "mover-grey", small_grey)
    h, w = gm.shape
    still = all(np.allclose(m, np.eye(3), atol=1e-3) for m in chain)
    for k in range(n):
        guess = _map(chain, k, mid)
        if not still and k != mid:
            gk = FRAME_MEMO.get(clip.frames, int(idx[k]), "mover-grey", small_grey)
            warped = cv2.warpAffine(gk, guess[:2], (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            guess = _homography_fix(warped, gm) @ guess
        maps[k] = guess
    return maps


def _int_shift(m: np.ndarray) -> tuple[int, int] | None:
    """(dx, dy) when a 3x3 map is exactly a translation by whole pixels (a still camera's maps), else None."""
    if (m[0, 0] == 1 and m[1, 1] == 1 and m[0, 1] == 0 and m[1, 0] == 0 and m[2, 0] == 0 and m[2, 1] == 0
            and m[2, 2] == 1 and float(m[0, 2]).is_integer() and float(m[1, 2]).is_integer()):
        return int(m[0, 2]), int(m[1, 2])
    return None


def _warp(src: np.ndarray, m: np.ndarray, size: tuple[int, int], flags: int, border: int = cv2.BORDER_CONSTANT) -> np.ndarray:
    """``cv2.warpPerspective(src, m, size, flags=flags, borderMode=border)`` (border value 0), the same
    pixels; a map that moves by whole pixels is a copy of the overlap (an exact-integer sample point
    takes the pixel itself, whatever the interpolation): a still camera's maps cost no resampling."""
    t = _int_shift(m)
    w, h = size
    sh, sw = src.shape[:2]
    if t is not None:
        dx, dy = t
        if 0 <= dx and 0 <= dy and dx + sw <= w and dy + sh <= h and border == cv2.BORDER_CONSTANT:
            out = np.zeros((h, w) + src.shape[2:], src.dtype)
            out[dy:dy + sh, dx:dx + sw] = src
            return out
        if dx <= 0 and dy <= 0 and w - dx <= sw and h - dy <= sh:  # the source covers the output
            return src[-dy:h - dy, -dx:w - dx].copy()
    return cv2.warpPerspective(src, m, size, flags=flags, borderMode=border, borderValue=0)
