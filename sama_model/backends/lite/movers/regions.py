"""Foreground by motion: objects that move relative to the camera and the background.

Why: on real footage a background is textured (grass, brick, a globe's clouds) and the camera
moves, so colour rarity splits the background into dozens of "objects". What tells an object
from its background is that it moves on its own. Steps, all on a small greyscale/colour copy
(:data:`.movers.camera.MOVER_SIDE` pixels) of at most ``max_frames`` sampled frames, so the cost is bounded by
the frames a tool needs, not by the clip's length or resolution:

1. **Camera** (:mod:`.movers.camera`): a similarity transform between
   consecutive sampled frames, fitted robustly on corners taken evenly from a grid of cells
   (:func:`.movers.camera.spread_points`: the sharpest corners are often on the objects, the background wins by
   area); chained into a map from every frame to the middle one and corrected there by a
   homography (a hand-held camera over a wall or a lawn). A flat backdrop (a slate: the corners are
   the objects' own) is decided still once for the whole clip (:func:`.movers.camera.flat_backdrop`).
2. **Background subtraction** (:func:`.movers.foreground.foreground_masks`): the per-pixel median of all sampled
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

from ..motion.tracks import Track, associate
from ..perception.colours import dominant_color
from ..perception.segment import Segment
from ..perception.shapes import classify_shape
from ..shared.frame_memo import FRAME_MEMO
from ..shared.sampling import Window, window_indices
from .camera import _small, _to_middle, camera_chain
from .foreground import DIFF_FLOOR, foreground_masks

MOVER_FRAMES = 24  # sampled frames per window: 3 s at 8 fps; a longer window is thinned, never read whole
MIN_AREA_FRAC = 0.002  # smallest region kept, as a fraction of the frame
MAX_AREA_FRAC = 0.4
MIN_THICKNESS = 0.025  # a region's inscribed radius, as a fraction of the frame width (4 px at 160)
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


def _regions(frame: np.ndarray, mask: np.ndarray, small: np.ndarray | None = None) -> list[Segment]:
    """Connected foreground regions as :class:`Segment` objects in the input frame's pixels; ``small``:
    the frame's :func:`.movers.camera._small` copy when already made (the memoised "mover-small": the same pixels)."""
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
