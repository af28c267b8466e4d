"""Foreground by motion: objects that move relative to the camera and the background.

Why: on real footage a background is textured (grass, brick, a globe's clouds) and the camera
moves, so colour rarity splits the background into dozens of "objects". What tells an object
from its background is that it moves on its own. Steps, all on a small greyscale/colour copy
(:data:`MOVER_SIDE` pixels) of at most ``max_frames`` sampled frames, so the cost is bounded by
the frames a tool needs, not by the clip's length or resolution:

1. **Camera** (:func:`camera_chain`, :func:`_to_middle`): a similarity transform between
   consecutive sampled frames, fitted robustly on corners taken evenly from a grid of cells
   (:func:`spread_points`: the sharpest corners are often on the objects, the background wins by
   area); chained into a map from every frame to the middle one and corrected there by a
   homography (a hand-held camera over a wall or a lawn). A flat backdrop (a slate: the corners are
   the objects' own) is decided still once for the whole clip (:func:`flat_backdrop`, :data:`FLAT_CELLS`).
2. **Background subtraction** (:func:`foreground_masks`): the per-pixel median of all sampled
   frames warped into the middle frame is the background (an object that travels is at any one
   place for less than half of the clip); each frame differs from it where something moves on
   its own. Misregistration is tolerated (smallest difference within 5x5 pixels; the threshold
   rises with the frame's residual and along strong background edges); thin bands are dropped.
3. **Tracks** (:func:`movers`): connected foreground regions, associated across frames by the
   tracker's Hungarian matching; tracks that persist (:data:`MIN_TRACK_SHARE` of the frames) are
   objects moving on their own; :func:`scene_path` gives a track's path in the scene (camera
   removed).

How many objects move (the counts a generic count query gets) is decided on top of this, in
:mod:`.movers.count`; the AM actor (:mod:`.movers.actor`) follows the largest persistent mover.

Colour and shape names are computed for each region (cheaply, from its pixels and outline) and
used only when a query asks for them. Constants of steps 1-3 were fitted on the real-footage
composite set, seed 7 (:mod:`mvx_tasks.real_composite`), seed 1 looked at to diagnose failures; the flat
backdrop rule on seeds 7, 1, 3 and 4.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ..shared.frame_memo import FRAME_MEMO, Window, fast_median, median_u8, order_stats, resize_max, window_indices
from ..motion.flow import fit_similarity
from ..perception.colours import dominant_color
from ..perception.segmentation import Segment
from ..perception.shapes import classify_shape
from ..object_tracker import Track, associate

MOVER_SIDE = 160
MOVER_FRAMES = 24  # sampled frames per window: 3 s at 8 fps; a longer window is thinned, never read whole
#: foreground threshold: max(DIFF_FLOOR, NOISE_FACTOR x the frame's median residual) on the
#: max-channel absolute difference (0-255). Fitted on the real-footage composite set, seed 7.
DIFF_FLOOR = 22.0
NOISE_FACTOR = 4.0
EDGE_WEIGHT = 1.0  # threshold rise per unit of the background's local gradient (grey levels per pixel)
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
MIN_AREA_FRAC = 0.002  # smallest region kept, as a fraction of the frame
MAX_AREA_FRAC = 0.4
MIN_THICKNESS = 0.025  # a region's inscribed radius, as a fraction of the frame width (4 px at 160)
LOCAL_STEPS = (-2, 2, -4, 4)  # near neighbours for actions in place (see foreground_masks)
MIN_TRACK_SHARE = 0.3  # a mover is seen in at least this share of the sampled frames


@dataclass
class Movers:
    """Result of one window: tracks (all, unfiltered), sampled indices and times, the camera's
    cumulative content offset per step (pixels of the input frames), masks and camera maps."""

    tracks: list[Track]
    idx: np.ndarray
    times: np.ndarray
    offsets: np.ndarray
    masks: list[np.ndarray]  # per step, the foreground mask (small-frame pixels)
    chain: list[np.ndarray]  # per step, the camera's 3x3 map to the next sampled frame (small-frame pixels)
    maps: list[np.ndarray]  # per step, the 3x3 map into the middle frame (small-frame pixels), refined
    scale: float  # small-frame pixels per input pixel
    _inverse: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False, compare=False)

    def from_middle(self, step: int) -> np.ndarray:
        """``np.linalg.inv(self.maps[step])`` (the middle frame's pixels into frame ``step``'s), inverted
        once per step: the motion actor asks it for every followed step of every seed."""
        m = self.maps[step]
        hit = self._inverse.get(step)
        if hit is None or hit[0] is not m:
            hit = self._inverse[step] = (m, np.linalg.inv(m))
        return hit[1]

    def independent(self, min_share: float = MIN_TRACK_SHARE) -> list[Track]:
        """Tracks seen long enough to be objects moving on their own."""
        need = max(3, int(np.ceil(min_share * len(self.idx))))
        return [t for t in self.tracks if len(t.steps) >= need]


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


def _absdiff_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Largest per-channel absolute difference of two uint8 colour images (uint8)."""
    d = cv2.absdiff(a, b)
    return np.maximum(np.maximum(d[..., 0], d[..., 1]), d[..., 2])


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


def _background_diff(clip: VideoClip, idx: np.ndarray, maps: list[np.ndarray],
                     floor: float = DIFF_FLOOR) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per sampled frame, where it differs from the median background by more than the threshold with
    ``floor`` (bool, before the local test and the clean-up) and where that background was seen (bool).
    The differences are memoised per clip, sampled frames and maps, so every ``movers`` call on them (the
    count's two floors, the motion actor) shares them."""
    key = ("mover-fg", tuple(int(i) for i in idx), b"".join(np.asarray(m, np.float64).tobytes() for m in maps))
    diffs, noises, rises, oks = FRAME_MEMO.get(clip.frames, int(idx[0]), key,
                                               lambda _f: _background_diff_compute(clip, idx, maps))
    return [d > max(floor, noise) + rise for d, noise, rise in zip(diffs, noises, rises)], oks


def _background_diff_compute(clip: VideoClip, idx: np.ndarray,
                             maps: list[np.ndarray]) -> tuple[list[np.ndarray], list[float], list[np.ndarray], list[np.ndarray]]:
    """Per sampled frame: the difference from the median background (uint8, 0 where it was not seen), the
    noise part of its threshold (NOISE_FACTOR x its median; 255 where nothing was seen), the threshold's rise
    along the background's edges, and where the background was seen (bool)."""
    smalls = [FRAME_MEMO.get(clip.frames, int(i), "mover-small", _small) for i in idx]
    n = len(idx)
    h, w = smalls[0].shape[:2]
    pad_x, pad_y = int(0.25 * w), int(0.25 * h)
    shift = np.array([[1, 0, pad_x], [0, 1, pad_y], [0, 0, 1]], np.float64)
    cw, ch = w + 2 * pad_x, h + 2 * pad_y
    stack = np.empty((n, ch, cw, 3), np.uint8)
    valid = np.zeros((ch, cw), np.int16)
    ones = np.full((h, w), 255, np.uint8)
    for k in range(n):
        m = shift @ maps[k]
        t = _int_shift(m)
        if t is not None and 0 <= t[0] <= cw - w and 0 <= t[1] <= ch - h:  # a whole-pixel move: paste
            stack[k] = 0 if k % 2 == 0 else 255
            stack[k, t[1]:t[1] + h, t[0]:t[0] + w] = smalls[k]
            valid[t[1]:t[1] + h, t[0]:t[0] + w] += 1
            continue
        stack[k] = cv2.warpPerspective(smalls[k], m, (cw, ch), flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        inside = cv2.warpPerspective(ones, m, (cw, ch), flags=cv2.INTER_NEAREST) > 0
        valid += inside
        if k % 2 == 0:  # outside the frame: black or white by turns, which leaves the median alone
            stack[k][~inside] = 0
        else:
            stack[k][~inside] = 255
    mosaic = median_u8(stack)  # (the stack is reordered)
    seen = (valid >= max(3, n // 3)).astype(np.uint8) * 255
    k5 = np.ones((5, 5), np.uint8)
    diffs, noises, rises, oks = [], [], [], []
    seen_maps: dict[bytes, tuple[np.ndarray, np.ndarray, bool, np.ndarray, np.ndarray]] = {}
    for k in range(n):
        key = np.asarray(maps[k], np.float64).tobytes()
        if key not in seen_maps:
            seen_maps[key] = _background_at(mosaic, seen, np.linalg.inv(shift @ maps[k]), (w, h), k5)
        bg, ok, ok_any, ok_neg, rise = seen_maps[key]
        # misregistration by a pixel or two on texture is no motion: the smallest difference within 5x5
        d = cv2.erode(_absdiff_max(smalls[k], bg), k5)
        d[ok_neg] = 0
        diffs.append(d)
        noises.append(NOISE_FACTOR * float(fast_median(d[ok])) if ok_any else 255.0)
        rises.append(rise)
        oks.append(ok.copy())
    return diffs, noises, rises, oks


def _background_at(mosaic: np.ndarray, seen: np.ndarray, back: np.ndarray, size: tuple[int, int],
                   k5: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray, np.ndarray]:
    """The median background taken back into one frame's pixels by ``back`` (w x h): the background, where
    it was seen (bool; its test, its complement) and the threshold's rise along its edges. Depends on
    the frame's map only: frames with the same map (every frame of a still camera) share it. Why: the
    warps, the edge filters and the edge median were a third of the background subtraction on the
    224-px clip (11 -> 7 ms), recomputed for 24 identical maps."""
    bg = _warp(mosaic, back, size, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE)
    ok = cv2.erode(_warp(seen, back, size, cv2.INTER_NEAREST), k5) > 0
    ok_any = bool(ok.any())
    # a strong edge of the background that blurs or shifts a little (a hand-held camera's
    # motion blur) leaves a large difference along it: the threshold rises with the edge
    gb = cv2.cvtColor(bg, cv2.COLOR_RGB2GRAY)
    edge = cv2.dilate(gradient(gb), k5)
    # (above the frame's typical gradient: a uniformly textured background keeps its threshold)
    rise = EDGE_WEIGHT * np.maximum(edge - float(fast_median(edge[ok])) if ok_any else edge, 0)
    return bg, ok, ok_any, ~ok, rise


def _near_diff(clip: VideoClip, idx: np.ndarray, maps: list[np.ndarray],
               oks: list[np.ndarray]) -> list[tuple[np.ndarray, float] | None]:
    """Per sampled frame, the local test's difference from its near frames (:data:`LOCAL_STEPS` away,
    registered through the maps; the lower middle of those differences, 0 where the background was not seen)
    with the noise part of its threshold, or None for a frame with fewer than two near frames. Memoised like
    :func:`_background_diff`, so a count's two floors and the motion actor share one computation."""
    key = ("mover-near", tuple(int(i) for i in idx), b"".join(np.asarray(m, np.float64).tobytes() for m in maps))
    return FRAME_MEMO.get(clip.frames, int(idx[0]), key, lambda _f: _near_diff_compute(clip, idx, maps, oks))


def _near_diff_compute(clip: VideoClip, idx: np.ndarray, maps: list[np.ndarray],
                       oks: list[np.ndarray]) -> list[tuple[np.ndarray, float] | None]:
    smalls = [FRAME_MEMO.get(clip.frames, int(i), "mover-small", _small) for i in idx]
    n = len(idx)
    h, w = smalls[0].shape[:2]
    pad_x, pad_y = int(0.25 * w), int(0.25 * h)
    shift = np.array([[1, 0, pad_x], [0, 1, pad_y], [0, 0, 1]], np.float64)
    k5 = np.ones((5, 5), np.uint8)
    eye = np.eye(3)
    # Two frames whose maps register them exactly (every pair under a still camera) differ by the same
    # pixels either way (the warp is a copy, the absolute difference symmetric): each such pair's
    # difference is made once, not by both frames (half of the ~90 neighbour differences of a still clip:
    # the local test 7 -> 3 ms on the 224-px clip)
    still_pairs: dict[tuple[int, int], np.ndarray] = {}
    out: list[tuple[np.ndarray, float] | None] = []
    for k in range(n):
        ok = oks[k]
        near = []
        back = np.linalg.inv(shift @ maps[k])  # (once per frame, not per neighbour: the same matrix)
        for j in (k + s for s in LOCAL_STEPS if 0 <= k + s < n):
            m = back @ shift @ maps[j]
            if np.array_equal(m, eye):
                pair = (min(j, k), max(j, k))
                if pair not in still_pairs:
                    still_pairs[pair] = cv2.erode(_absdiff_max(smalls[k], smalls[j]), k5)
                near.append(still_pairs[pair].copy())  # (order_stats reorders its rows in place)
                continue
            warped = _warp(smalls[j], m, (w, h), cv2.INTER_LINEAR, cv2.BORDER_REPLICATE)
            near.append(cv2.erode(_absdiff_max(smalls[k], warped), k5))
        if len(near) < 2:
            out.append(None)
            continue
        lo = order_stats(near, (len(near) // 2 - 1 if len(near) > 2 else 0,))[0]
        lo[~ok] = 0
        # (no seen background: a threshold above any difference, as before)
        out.append((lo, NOISE_FACTOR * float(fast_median(lo[ok])) if ok.any() else 256.0))
    return out


def foreground_masks(clip: VideoClip, idx: np.ndarray, maps: list[np.ndarray], local: bool = False,
                     floor: float = DIFF_FLOOR, core: float = 0.0) -> list[np.ndarray]:
    """Per sampled frame, uint8 mask (small-frame pixels) of what moves relative to the background.

    The background is the per-pixel median of every sampled frame warped into the middle frame's
    coordinates (a mosaic a little larger than the frame, so a pan keeps its edges): an object that
    travels is at any one place for less than half of the clip, so the median is its background.
    Each frame is compared with the mosaic warped back into its coordinates. With ``local``, a
    pixel that differs from most of its near neighbours (:data:`LOCAL_STEPS` sampled frames away,
    registered through the mosaic's maps) counts too: an object spinning, pulsing or shaking in
    place is part of the median, but changes from one moment to the next.

    With ``core`` > 1 (hysteresis), a connected part of the foreground is kept only when it holds a
    pixel above ``core`` x ``floor`` (the same test at the higher floor): an object's extent is read
    at the floor, its existence at a higher one (see :data:`.movers.count.COUNT_CORE`).
    """
    fgs, oks = _background_diff(clip, idx, maps, floor)
    strong = _background_diff(clip, idx, maps, core * floor)[0] if core > 1 else [None] * len(idx)
    near = _near_diff(clip, idx, maps, oks) if local else [None] * len(idx)
    k5 = np.ones((5, 5), np.uint8)
    k3 = np.ones((3, 3), np.uint8)
    masks = []
    for fg, st, frame_near in zip(fgs, strong, near):
        if frame_near is not None:
            lo, noise = frame_near
            fg |= lo > max(floor, noise)  # (fg is this call's own array: the memo keeps the differences)
            if st is not None:
                st |= lo > max(core * floor, noise)
        if st is not None:
            fg = _with_core(fg, st)
        fg = cv2.dilate(fg.astype(np.uint8), k5)  # the erosion above shrank every region
        fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, k3)
        masks.append(fg)
    return masks


def _with_core(fg: np.ndarray, strong: np.ndarray) -> np.ndarray:
    """The connected parts (8-connected) of the bool mask ``fg`` that hold a pixel of ``strong`` (bool; a
    strong pixel outside ``fg`` falls on label 0, the outside, which is never kept)."""
    n, lbl = cv2.connectedComponents(fg.astype(np.uint8), connectivity=8)
    if n <= 1:
        return fg
    keep = np.zeros(n, bool)
    keep[lbl[strong]] = True
    keep[0] = False
    return keep[lbl]


def _regions(frame: np.ndarray, mask: np.ndarray, small: np.ndarray | None = None) -> list[Segment]:
    """Connected foreground regions as :class:`Segment` objects in the input frame's pixels; ``small``:
    the frame's :func:`_small` copy when already made (the memoised "mover-small": the same pixels)."""
    h, w = mask.shape
    scale = w / frame.shape[1]
    n, lbl, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    small = _small(frame) if small is None else small
    out = []
    for c in range(1, n):
        area = float(stats[c, cv2.CC_STAT_AREA])
        if area < MIN_AREA_FRAC * h * w or area > MAX_AREA_FRAC * h * w:
            continue
        x, y, bw, bh = (int(v) for v in stats[c, :4])
        comp = (lbl[y:y + bh, x:x + bw] == c).astype(np.uint8)
        # (np.pad(comp, 1) as a border of zeros: the same array, without np.pad's ~50 us of Python)
        if float(cv2.distanceTransform(cv2.copyMakeBorder(comp, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0),
                                       cv2.DIST_L2, 3).max()) < MIN_THICKNESS * w:
            continue  # a thin band along an edge: misregistration, not an object
        cnts, _ = cv2.findContours(comp, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        cnt = max(cnts, key=cv2.contourArea)
        shape, circ, sol, nv, aspect = classify_shape(cnt)
        name, rgb = dominant_color(small[y:y + bh, x:x + bw][comp > 0])
        m = cv2.moments(comp, binaryImage=True)
        cx, cy = (x + m["m10"] / max(m["m00"], 1)) / scale, (y + m["m01"] / max(m["m00"], 1)) / scale
        pts = (cnt.reshape(-1, 2).astype(np.float32) + np.array([x, y], np.float32)) / scale
        out.append(Segment(box=(x / scale, y / scale, (x + bw) / scale, (y + bh) / scale), centroid=(cx, cy),
                           area=area / scale**2, color=name, shape=shape, rgb=rgb, circularity=circ, solidity=sol,
                           vertices=nv, aspect=aspect, contrast=0.0, contour=pts))
    out.sort(key=lambda s: -s.area)
    return out[:12]


def _compute(clip: VideoClip, idx: np.ndarray, local: bool = False, floor: float = DIFF_FLOOR,
             core: float = 0.0) -> Movers:
    chain = camera_chain(clip, idx)
    # the refined maps (a homography fit per frame under a moving camera) are shared by both kinds of call
    maps = FRAME_MEMO.get(clip.frames, int(idx[0]), ("mover-maps", tuple(int(i) for i in idx)),
                          lambda _f: _to_middle(clip, idx, chain))
    masks = foreground_masks(clip, idx, maps, local, floor, core)
    per_frame = [_regions(clip.frames[int(i)], m, FRAME_MEMO.get(clip.frames, int(i), "mover-small", _small))
                 for i, m in zip(idx, masks)]
    h, w = clip.frames.shape[1:3]
    tracks = associate(per_frame, float(np.hypot(h, w)), max_gap=3, gate=3.0, colour_weight=0.0)
    scale = masks[0].shape[1] / w if masks else 1.0
    # cumulative content offset (input pixels) of the frame centre, for camera-relative paths
    offsets = [np.zeros(2)]
    centre = np.array([(masks[0].shape[1] - 1) / 2, (masks[0].shape[0] - 1) / 2, 1.0]) if masks else np.zeros(3)
    for m in chain:
        offsets.append(offsets[-1] + (m @ centre)[:2] / scale - centre[:2] / scale)
    times = clip.timestamps[idx]
    return Movers(tracks, idx, times, np.array(offsets), masks, chain, maps, scale)


def movers(clip: VideoClip, window: Window = (None, None), max_frames: int = MOVER_FRAMES,
           local: bool = False, floor: float = DIFF_FLOOR, core: float = 0.0) -> Movers:
    """Independently moving objects of the window (memoised per clip, sampled frames, ``floor``, the
    foreground threshold's floor, and ``core``, its hysteresis); ``local`` also finds objects acting in place
    (see :func:`foreground_masks`)."""
    idx = window_indices(clip, window, max_frames)
    if len(idx) == 0:
        return Movers([], idx, clip.timestamps[idx], np.zeros((0, 2)), [], [], [], 1.0)
    key = ("movers", tuple(int(i) for i in idx), bool(local), float(floor), float(core))
    return FRAME_MEMO.get(clip.frames, int(idx[0]), key, lambda _f: _compute(clip, idx, local, floor, core))


def scene_path(m: Movers, track: Track) -> np.ndarray:
    """A track's centroids in the middle frame's coordinates (input pixels): where it is in the
    scene, with the camera's pan, zoom and perspective removed by the refined per-frame maps."""
    pts = (track.centroids() * m.scale).astype(np.float64)
    out = [cv2.perspectiveTransform(p.reshape(1, 1, 2), m.maps[st]).reshape(2) for p, st in zip(pts, track.steps)]
    return np.array(out) / m.scale

