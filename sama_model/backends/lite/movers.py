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
   the objects' own) is decided still once for the whole clip (:data:`FLAT_CELLS`).
2. **Background subtraction** (:func:`foreground_masks`): the per-pixel median of all sampled
   frames warped into the middle frame is the background (an object that travels is at any one
   place for less than half of the clip); each frame differs from it where something moves on
   its own. Misregistration is tolerated (smallest difference within 5x5 pixels; the threshold
   rises with the frame's residual and along strong background edges); thin bands are dropped.
3. **Tracks** (:func:`movers`): connected foreground regions, associated across frames by the
   tracker's Hungarian matching; tracks that persist (:data:`MIN_TRACK_SHARE` of the frames) are
   objects moving on their own, and those whose path *in the scene* (camera removed,
   :func:`scene_path`) spans :data:`MIN_TRAVEL_SIZES` of their size are what a count of moving
   objects counts (a rotating globe or waving grass moves in place); the count is the most such
   tracks alive at once (:func:`most_at_once`: an object lost and found again is one object).
4. **Rigid point groups** (:func:`point_tracks`, :func:`rigid_groups`): corners followed through
   the sampled frames and mapped into the scene; those that move on their own and keep a constant
   offset from each other are one rigid object. A second, independent count: the background model
   loses an object that dwells (the top of a bounce sits in the median) and merges touching ones,
   corners miss a flat object and see a hand-held camera's parallax. A group counts when its
   points lie on the background model's foreground often enough (:data:`POINT_ON_FG`: a rotating
   globe's lights move against the camera fit, yet belong to the median background).
   :func:`mover_counts` joins the two by :func:`combined_count` (the larger unless they differ by 3+).

Colour and shape names are computed for each region (cheaply, from its pixels and outline) and
used only when a query asks for them. Constants of steps 1-3 were fitted on the real-footage
composite set, seed 7 (:mod:`mvx_tasks.real_composite`), seed 1 looked at to diagnose failures; those
of step 4 and the counting on seeds 7, 1, 3 and 4.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from .common import FRAME_MEMO, Query, Window, resize_max, window_indices
from .flow import fit_similarity
from .colours import dominant_color
from .segmentation import Segment
from .shapes import classify_shape
from .tracker import Track, associate

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

    def independent(self, min_share: float = MIN_TRACK_SHARE) -> list[Track]:
        """Tracks seen long enough to be objects moving on their own."""
        need = max(3, int(np.ceil(min_share * len(self.idx))))
        return [t for t in self.tracks if len(t.steps) >= need]


def _small(frame: np.ndarray) -> np.ndarray:
    return cv2.GaussianBlur(resize_max(frame, MOVER_SIDE)[0], (3, 3), 0)


def _grey(frame: np.ndarray) -> np.ndarray:
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
    cells = len({(int(y * GRID_CELLS // h), int(x * GRID_CELLS // w)) for x, y in q})
    spread = np.ptp(np.percentile(q, [5, 95], axis=0), axis=0) / np.array([w, h]) if len(q) >= 8 else np.zeros(2)
    if float(spread.max()) < SPREAD_MIN:
        return np.eye(3), 0.0, cells
    m = np.array([[a, -b, tx + c[0] - a * c[0] + b * c[1]], [b, a, ty + c[1] - b * c[0] - a * c[1]], [0, 0, 1]])
    return m, float(inl.mean()), cells


def camera_chain(clip: VideoClip, idx: np.ndarray) -> list[np.ndarray]:
    """3x3 maps from sampled frame k to k+1 (small-frame pixels), pair fits memoised.

    The camera is decided once per clip for a flat backdrop: when the inliers of the typical pair
    (the median over pairs) lie in fewer than :data:`FLAT_CELLS` grid cells, the corners are the
    objects' own (a slate or a wall has almost none), and a fit on them jumps from pair to pair by
    the objects' motion; the whole clip is then taken as still. Pair by pair, the same backdrop was
    "still" in some pairs and followed an object in others, 5-18 px jumps in every scene path."""
    fits = [FRAME_MEMO.get(clip.frames, int(a), ("mover-cam", int(b)), lambda _f, a=a, b=b: _pair(
        FRAME_MEMO.get(clip.frames, int(a), "mover-grey", _grey),
        FRAME_MEMO.get(clip.frames, int(b), "mover-grey", _grey))) for a, b in zip(idx[:-1], idx[1:])]
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
    gm = FRAME_MEMO.get(clip.frames, int(idx[mid]), "mover-grey", _grey)
    h, w = gm.shape
    still = all(np.allclose(m, np.eye(3), atol=1e-3) for m in chain)
    for k in range(n):
        guess = _map(chain, k, mid)
        if not still and k != mid:
            gk = FRAME_MEMO.get(clip.frames, int(idx[k]), "mover-grey", _grey)
            warped = cv2.warpAffine(gk, guess[:2], (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            guess = _homography_fix(warped, gm) @ guess
        maps[k] = guess
    return maps


def foreground_masks(clip: VideoClip, idx: np.ndarray, maps: list[np.ndarray], local: bool = False) -> list[np.ndarray]:
    """Per sampled frame, uint8 mask (small-frame pixels) of what moves relative to the background.

    The background is the per-pixel median of every sampled frame warped into the middle frame's
    coordinates (a mosaic a little larger than the frame, so a pan keeps its edges): an object that
    travels is at any one place for less than half of the clip, so the median is its background.
    Each frame is compared with the mosaic warped back into its coordinates. With ``local``, a
    pixel that differs from most of its near neighbours (:data:`LOCAL_STEPS` sampled frames away,
    registered through the mosaic's maps) counts too: an object spinning, pulsing or shaking in
    place is part of the median, but changes from one moment to the next.
    """
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
        stack[k] = cv2.warpPerspective(smalls[k], m, (cw, ch), flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        inside = cv2.warpPerspective(ones, m, (cw, ch), flags=cv2.INTER_NEAREST) > 0
        valid += inside
        if k % 2 == 0:  # outside the frame: black or white by turns, which leaves the median alone
            stack[k][~inside] = 0
        else:
            stack[k][~inside] = 255
    mosaic = np.median(stack, axis=0).astype(np.uint8)
    seen = (valid >= max(3, n // 3)).astype(np.uint8) * 255
    k5 = np.ones((5, 5), np.uint8)
    k3 = np.ones((3, 3), np.uint8)
    masks = []
    for k in range(n):
        back = np.linalg.inv(shift @ maps[k])
        bg = cv2.warpPerspective(mosaic, back, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        ok = cv2.erode(cv2.warpPerspective(seen, back, (w, h), flags=cv2.INTER_NEAREST), k5) > 0
        # misregistration by a pixel or two on texture is no motion: the smallest difference within 5x5
        d = cv2.erode(np.abs(smalls[k].astype(np.int16) - bg.astype(np.int16)).max(-1).astype(np.uint8), k5)
        d[~ok] = 0
        thr = max(DIFF_FLOOR, NOISE_FACTOR * float(np.median(d[ok]))) if ok.any() else 255.0
        # a strong edge of the background that blurs or shifts a little (a hand-held camera's
        # motion blur) leaves a large difference along it: the threshold rises with the edge
        gb = cv2.cvtColor(bg, cv2.COLOR_RGB2GRAY)
        edge = cv2.dilate(cv2.magnitude(cv2.Sobel(gb, cv2.CV_32F, 1, 0, ksize=3),
                                        cv2.Sobel(gb, cv2.CV_32F, 0, 1, ksize=3)) / 8.0, k5)
        # (above the frame's typical gradient: a uniformly textured background keeps its threshold)
        fg = d > thr + EDGE_WEIGHT * np.maximum(edge - float(np.median(edge[ok])) if ok.any() else edge, 0)
        if local:
            near = []
            for j in (k + s for s in LOCAL_STEPS if 0 <= k + s < n):
                m = np.linalg.inv(shift @ maps[k]) @ shift @ maps[j]
                warped = cv2.warpPerspective(smalls[j], m, (w, h), flags=cv2.INTER_LINEAR,
                                             borderMode=cv2.BORDER_REPLICATE)
                near.append(cv2.erode(np.abs(smalls[k].astype(np.int16) - warped.astype(np.int16)).max(-1)
                                      .astype(np.uint8), k5))
            if len(near) >= 2:
                lo = np.sort(np.stack(near), axis=0)[len(near) // 2 - 1 if len(near) > 2 else 0]
                lo[~ok] = 0
                fg |= lo > max(DIFF_FLOOR, NOISE_FACTOR * float(np.median(lo[ok]))) if ok.any() else False
        fg = cv2.dilate(fg.astype(np.uint8), k5)  # the erosion above shrank every region
        fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, k3)
        masks.append(fg)
    return masks


def _regions(frame: np.ndarray, mask: np.ndarray) -> list[Segment]:
    """Connected foreground regions as :class:`Segment` objects in the input frame's pixels."""
    h, w = mask.shape
    scale = w / frame.shape[1]
    n, lbl, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    small = _small(frame)
    out = []
    for c in range(1, n):
        area = float(stats[c, cv2.CC_STAT_AREA])
        if area < MIN_AREA_FRAC * h * w or area > MAX_AREA_FRAC * h * w:
            continue
        x, y, bw, bh = (int(v) for v in stats[c, :4])
        comp = (lbl[y:y + bh, x:x + bw] == c).astype(np.uint8)
        if float(cv2.distanceTransform(np.pad(comp, 1), cv2.DIST_L2, 3).max()) < MIN_THICKNESS * w:
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


def _compute(clip: VideoClip, idx: np.ndarray, local: bool = False) -> Movers:
    chain = camera_chain(clip, idx)
    maps = _to_middle(clip, idx, chain)
    masks = foreground_masks(clip, idx, maps, local)
    per_frame = [_regions(clip.frames[int(i)], m) for i, m in zip(idx, masks)]
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
           local: bool = False) -> Movers:
    """Independently moving objects of the window (memoised per clip and sampled frames); ``local``
    also finds objects acting in place (see :func:`foreground_masks`)."""
    idx = window_indices(clip, window, max_frames)
    if len(idx) == 0:
        return Movers([], idx, clip.timestamps[idx], np.zeros((0, 2)), [], [], [], 1.0)
    key = ("movers", tuple(int(i) for i in idx), bool(local))
    return FRAME_MEMO.get(clip.frames, int(idx[0]), key, lambda _f: _compute(clip, idx, local))


#: a counted mover's camera-compensated centroid path spans at least this many of its own sizes
#: (a rotating globe's or waving grass's texture moves in place; a travelling object does not)
MIN_TRAVEL_SIZES = 0.6


def scene_path(m: Movers, track: Track) -> np.ndarray:
    """A track's centroids in the middle frame's coordinates (input pixels): where it is in the
    scene, with the camera's pan, zoom and perspective removed by the refined per-frame maps."""
    pts = (track.centroids() * m.scale).astype(np.float64)
    out = [cv2.perspectiveTransform(p.reshape(1, 1, 2), m.maps[st]).reshape(2) for p, st in zip(pts, track.steps)]
    return np.array(out) / m.scale


def travel(m: Movers, track: Track) -> float:
    """Extent of a track's camera-compensated centroid path, in its own (median) sizes."""
    c = scene_path(m, track) if m.maps else track.centroids()
    size = float(np.median(np.sqrt(track.areas())))
    return float(np.linalg.norm(c.max(0) - c.min(0))) / max(size, 1.0)


def translating(m: Movers) -> list[Track]:
    """Persistent tracks that travel across the background: what a count of moving objects counts."""
    return [t for t in m.independent() if travel(m, t) >= MIN_TRAVEL_SIZES]


def is_generic(q: Query) -> bool:
    """A query that names things without a colour or shape ("moving objects", "people", "cut-outs"):
    answered with independently moving objects. An empty query keeps the segmentation tools' meaning."""
    return bool(q.words) and not (q.colors or q.shapes)


#: point trajectories (see :func:`point_tracks`): corners re-seeded every POINT_RESEED sampled frames,
#: kept while the forward-backward Lucas-Kanade check holds (POINT_FB pixels at MOVER_SIDE), and used
#: when they last POINT_MIN_LEN sampled frames. Fitted on the real-footage composite seeds 7, 1, 3, 4.
POINT_RESEED = 4
POINT_FB = 0.5
POINT_MIN_LEN = 6
#: a point moves on its own when its scene path spans at least this many small-frame pixels (a cut-out
#: 17-25 px across at MOVER_SIDE travels 15-30 px; registration noise and parallax stay below)
POINT_MOVE = 5.0
POINT_REST_STEPS = 4  # ... and never rests (spans under POINT_REST pixels) this many steps (see _moves)
POINT_REST = 0.5
#: two moving points belong to one rigid object when, over at least POINT_SHARED common frames, their
#: scene offset stays within POINT_LINK pixels, starting less than POINT_NEAR pixels apart
POINT_LINK = 2.5
POINT_NEAR = 30.0
POINT_SHARED = 5
POINT_GROUP = 4  # points an object needs (fewer: a corner on a boundary, an occlusion edge)
POINT_NEST = 3.0  # pixels around a group's extent within which a smaller group is part of it (_inside)
POINT_RING = 15.0  # pixels around a group in which surrounding points are asked whether they move with it
#: a group counts when at least this share of its points' positions lie on the background model's
#: foreground (dilated 5x5): a rotating globe's lights move against the camera fit but are part of the
#: median background, while a cut-out is foreground in most frames even when it dwells. Real-footage
#: composite seeds 7, 1, 3, 4: the globe's light groups 0.00-0.12, cut-outs 0.2-1.0.
POINT_ON_FG = 0.15
_LK = dict(winSize=(9, 9), maxLevel=2, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.03))


@dataclass
class PointTrack:
    """One corner followed through consecutive sampled frames: ``start`` step, small-frame positions and
    the same positions in the middle frame's coordinates (camera removed)."""

    start: int
    image: np.ndarray  # [L, 2]
    scene: np.ndarray  # [L, 2]

    @property
    def end(self) -> int:
        return self.start + len(self.image)


def point_tracks(clip: VideoClip, m: Movers) -> list[PointTrack]:
    """Corners tracked through the window's sampled frames (memoised). Why: a pasted photograph or a
    walking person moves as one rigid piece, so all its corners share one path in the scene, while
    the background's corners stay put once the camera is removed. This is evidence independent of
    the background model, which misses an object that dwells (a bounce's top, a slow slide)."""
    if len(m.idx) < POINT_MIN_LEN or not m.maps:
        return []
    key = ("mover-points", tuple(int(i) for i in m.idx))
    return FRAME_MEMO.get(clip.frames, int(m.idx[0]), key, lambda _f: _point_tracks(clip, m))


def _point_tracks(clip: VideoClip, m: Movers) -> list[PointTrack]:
    greys = [FRAME_MEMO.get(clip.frames, int(i), "mover-grey", _grey) for i in m.idx]
    n = len(greys)
    h, w = greys[0].shape
    done: list[tuple[int, list[np.ndarray]]] = []
    active: list[tuple[int, list[np.ndarray]]] = []
    for k in range(n):
        if k > 0 and active:
            p0 = np.array([pts[-1] for _, pts in active], np.float32).reshape(-1, 1, 2)
            p1, s1, _ = cv2.calcOpticalFlowPyrLK(greys[k - 1], greys[k], p0, None, **_LK)
            pb, s2, _ = cv2.calcOpticalFlowPyrLK(greys[k], greys[k - 1], p1, None, **_LK)
            q = p1.reshape(-1, 2)
            ok = (s1.ravel() == 1) & (s2.ravel() == 1) & (np.linalg.norm((p0 - pb).reshape(-1, 2), axis=1) < POINT_FB)
            ok &= (q[:, 0] >= 0) & (q[:, 0] < w) & (q[:, 1] >= 0) & (q[:, 1] < h)
            keep = []
            for (st, pts), good, p in zip(active, ok, q):
                if good:
                    pts.append(p.copy())
                    keep.append((st, pts))
                else:
                    done.append((st, pts))
            active = keep
        if k % POINT_RESEED == 0 and k <= n - POINT_MIN_LEN:
            free = np.full((h, w), 255, np.uint8)
            for _, pts in active:
                cv2.circle(free, (int(pts[-1][0]), int(pts[-1][1])), 3, 0, -1)
            c = cv2.goodFeaturesToTrack(greys[k], maxCorners=400, qualityLevel=0.02, minDistance=3, blockSize=5, mask=free)
            if c is not None:
                active += [(k, [p]) for p in c.reshape(-1, 2).astype(np.float32)]
    out = []
    for st, pts in done + active:
        if len(pts) < POINT_MIN_LEN:
            continue
        img = np.array(pts, np.float64)
        scene = np.array([cv2.perspectiveTransform(p.reshape(1, 1, 2), m.maps[st + i]).reshape(2)
                          for i, p in enumerate(img)])
        out.append(PointTrack(st, img, scene))
    return out


def _offset(a: PointTrack, b: PointTrack) -> np.ndarray | None:
    """Scene offset a - b over their common frames (None when they share fewer than POINT_SHARED)."""
    lo, hi = max(a.start, b.start), min(a.end, b.end)
    if hi - lo < POINT_SHARED:
        return None
    return a.scene[lo - a.start:hi - a.start] - b.scene[lo - b.start:hi - b.start]


def _moves(p: PointTrack) -> bool:
    """A point moving on its own: its scene path spans POINT_MOVE pixels and never rests for
    POINT_REST_STEPS sampled frames (within POINT_REST pixels). Why: a background corner that an
    object passes over is followed on the object once covered (still, then moving), and one the
    object uncovers the other way round; a cut-out sliding, orbiting or bouncing never rests half a
    second (a bounce's top still moves about 5 px at MOVER_SIDE in that time)."""
    if float(np.linalg.norm(np.ptp(p.scene, axis=0))) < POINT_MOVE:
        return False
    k = POINT_REST_STEPS
    return all(float(np.linalg.norm(np.ptp(p.scene[i:i + k], axis=0))) >= POINT_REST for i in range(len(p.scene) - k + 1))


def rigid_groups(points: list[PointTrack]) -> list[list[PointTrack]]:
    """Moving points grouped into rigid objects: linked when their scene offset stays constant
    (:data:`POINT_LINK`), objects with :data:`POINT_GROUP` points kept, except those that move with
    most of the points around them (a rotating globe's lights, a swaying tree's leaves: the
    background moving, not an object on it)."""
    mov = [p for p in points if _moves(p)]
    parent = list(range(len(mov)))

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, a in enumerate(mov):
        for j in range(i + 1, len(mov)):
            off = _offset(a, mov[j])
            if off is not None and np.linalg.norm(off[0]) <= POINT_NEAR and np.abs(off - off[0]).max() <= POINT_LINK:
                parent[root(i)] = root(j)
    groups: dict[int, list[PointTrack]] = {}
    for i, p in enumerate(mov):
        groups.setdefault(root(i), []).append(p)
    out = []
    for g in groups.values():
        if len(g) < POINT_GROUP:
            continue
        members = {id(p) for p in g}
        centre = np.mean([p.scene.mean(0) for p in g], axis=0)
        radius = max(float(np.linalg.norm(p.scene.mean(0) - centre)) for p in g)
        same = other = 0
        for t in points:
            if id(t) in members or np.linalg.norm(t.scene.mean(0) - centre) > radius + POINT_RING:
                continue
            votes = [np.abs(off - off[0]).max() <= POINT_MOVE for off in (_offset(p, t) for p in g) if off is not None]
            if votes:
                same, other = (same + 1, other) if np.mean(votes) >= 0.5 else (same, other + 1)
        if same + other >= 3 and same > 0.5 * (same + other):
            continue
        out.append(g)
    out.sort(key=len, reverse=True)
    return [g for i, g in enumerate(out) if not any(_inside(g, big) for big in out[:i])]


def _inside(small: list[PointTrack], big: list[PointTrack]) -> bool:
    """Whether a group's points lie within a larger group's extent (POINT_NEST pixels around it) at
    most (3/4) of its frames: corners on the larger object's edge, sliding along it (the aperture
    problem), not another object; two objects that cross overlap only while crossing."""
    steps = range(min(p.start for p in small), max(p.end for p in small))
    hits = total = 0
    for k in steps:
        a = [p.image[k - p.start] for p in small if p.start <= k < p.end]
        b = [p.image[k - p.start] for p in big if p.start <= k < p.end]
        if not a or len(b) < 2:
            continue
        lo, hi = np.min(b, axis=0) - POINT_NEST, np.max(b, axis=0) + POINT_NEST
        total += 1
        hits += bool(np.all((np.array(a) >= lo) & (np.array(a) <= hi)))
    return total > 0 and hits >= 0.75 * total


def foreground_share(group: list[PointTrack], masks: list[np.ndarray]) -> float:
    """Share of a group's point positions (all its points, all their frames) on the dilated foreground."""
    k5 = np.ones((5, 5), np.uint8)
    grown: dict[int, np.ndarray] = {}
    hit = total = 0
    for p in group:
        for i, (x, y) in enumerate(np.rint(p.image).astype(int)):
            k = p.start + i
            if k not in grown:
                grown[k] = cv2.dilate(masks[k], k5)
            mk = grown[k]
            if 0 <= y < mk.shape[0] and 0 <= x < mk.shape[1]:
                hit += int(mk[y, x] > 0)
                total += 1
    return hit / total if total else 0.0


def most_at_once(n: int, spans: list[tuple[int, int]]) -> int:
    """Most spans [first, last) alive at one sampled frame: an object seen as one track, lost, then
    found as another is counted once; two objects seen together are two."""
    alive = np.zeros(max(n, 1), int)
    for a, b in spans:
        alive[a:b] += 1
    return int(alive.max()) if spans else 0


def combined_count(a: int, b: int) -> int:
    """The two estimates joined: ceil((2 x larger + smaller) / 3), i.e. the larger when they differ by one
    or two, one less when by three, and so on. Why: each estimate mostly misses objects (the background
    model merges touching ones and loses dwelling ones, corners miss flat ones) more than it invents
    them, and the rounded mean of round 1 moved with every one-track change of either. On the
    real-footage composite seeds 7, 1, 3, 4 (with the flat-backdrop and foreground-share rules): 161/300
    videos exact (mean, rounded up: 171), CNT questions 47/60 (48/60), and CRF 20 vs 30 on seed 3 changed
    18/100 per-video counts and 2/20 answers (26/100 and 6/20): a little less exact, far steadier."""
    hi, lo = max(a, b), min(a, b)
    return int(np.ceil((2 * hi + lo) / 3 - 1e-9))


def mover_counts(clip: VideoClip, window: Window = (None, None), max_frames: int = MOVER_FRAMES) -> dict:
    """Count of objects moving on their own, with the tracks behind it (the tools' shared answer to a
    generic count). Two independent estimates, joined by :func:`combined_count`: regions of the background
    model (persistent tracks that travel, most of them alive at once) and rigid groups of corner
    trajectories (:func:`rigid_groups`). Each misses differently: the background model merges
    touching objects and loses one that dwells, corners miss a flat object and see parallax; on the
    real-footage composite seeds 7, 1, 3, 4 the join is exact for 54 % of 300 videos, and CNT questions
    47/60 (see :func:`combined_count`). ``near_threshold`` lists the tracks within 25 % of a cut-off,
    "foreground share" when a group's share is within 25 % of :data:`POINT_ON_FG`, and "estimates" when
    the two estimates differ (the joined count could be one off)."""
    m = movers(clip, window, max_frames)
    need = max(3, int(np.ceil(MIN_TRACK_SHARE * len(m.idx))))
    counted, near = [], []
    for t in m.tracks:
        trav, steps = travel(m, t), len(t.steps)
        if steps >= need and trav >= MIN_TRAVEL_SIZES:
            counted.append(t)
        if (abs(trav - MIN_TRAVEL_SIZES) < 0.25 * MIN_TRAVEL_SIZES and steps >= need) or (
                abs(steps - need) <= max(1, need // 4) and trav >= MIN_TRAVEL_SIZES):
            near.append(t.id)
    by_regions = most_at_once(len(m.idx), [(t.steps[0], t.steps[-1] + 1) for t in counted])
    shares = [(g, foreground_share(g, m.masks)) for g in rigid_groups(point_tracks(clip, m))]
    groups = [g for g, share in shares if share >= POINT_ON_FG]
    if any(abs(share - POINT_ON_FG) < 0.25 * POINT_ON_FG for _, share in shares):
        near.append("foreground share")
    by_points = most_at_once(len(m.idx), [(min(p.start for p in g), max(p.end for p in g)) for g in groups])
    count = combined_count(by_regions, by_points)
    if by_regions != by_points:
        near.append("estimates")
    tracks = []
    for t in counted:
        c = t.centroids()
        tracks.append({"id": t.id, "label": "moving object", "color": t.color,
                       "times": [round(float(m.times[s]), 3) for s in t.steps],
                       "boxes": [[round(v, 1) for v in s.box] for s in t.segments],
                       "centroids": [[round(float(x), 1), round(float(y), 1)] for x, y in c],
                       "travel_sizes": round(travel(m, t), 2)})
    return {"count": count, "tracks": tracks, "near_threshold": near, "frames_used": int(len(m.idx)),
            "frame_times": [round(float(t), 3) for t in m.times],
            "estimates": {"regions": by_regions, "points": by_points}}
