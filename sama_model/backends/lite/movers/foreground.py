"""What moves on its own in each sampled frame: the difference from the window's median background.

Step 2 of :mod:`.movers.regions` (:func:`foreground_masks`): the per-pixel median of all sampled frames warped into
the middle frame (:mod:`.movers.camera`) is the background (an object that travels is at any one place for less
than half of the clip); each frame differs from it where something moves on its own. Misregistration is tolerated
(smallest difference within 5x5 pixels; the threshold rises with the frame's residual and along strong background
edges). Fitted on the real-footage composite set, seed 7 (:mod:`mvx_tasks.real_composite`).
"""

from __future__ import annotations

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ..shared.frame_memo import FRAME_MEMO
from ..shared.order_stats import fast_median, median_u8, order_stats
from .camera import _int_shift, _small, _warp, gradient

#: foreground threshold: max(DIFF_FLOOR, NOISE_FACTOR x the frame's median residual) on the
#: max-channel absolute difference (0-255). Fitted on the real-footage composite set, seed 7.
DIFF_FLOOR = 22.0
NOISE_FACTOR = 4.0
EDGE_WEIGHT = 1.0  # threshold rise per unit of the background's local gradient (grey levels per pixel)
LOCAL_STEPS = (-2, 2, -4, 4)  # near neighbours for actions in place (see foreground_masks)


def _absdiff_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Largest per-channel absolute difference of two uint8 colour images (uint8)."""
    d = cv2.absdiff(a, b)
    return np.maximum(np.maximum(d[..., 0], d[..., 1]), d[..., 2])


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
