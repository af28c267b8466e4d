"""Segmented objects associated across sampled frames into identity-stable tracks.

Each frame's objects (from :mod:`.perception.segmentation`) are matched to existing tracks with the
Hungarian algorithm on a cost mixing predicted-centroid distance (constant-velocity prediction,
so a panning camera does not break tracks), box IoU, size change and colour difference; tracks
survive short gaps (occlusion, a missed detection). :class:`SegmentTracker` reads a window's tracks;
the object tracker counts them, the motion analyzer names their motion, the grounder finds their events,
and the movers' regions (:mod:`.movers.regions`) are associated the same way.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from mvx_tasks.video_decoder import VideoClip

from ..perception.segment import Segment, box_iou
from ..perception.segmentation import Segmenter, segment_indices
from ..shared.query import Query
from ..shared.sampling import TRACK_FRAMES, Window, window_indices

_BIG = 1e6


@dataclass
class Track:
    """One object over time: the frame positions (indices into the sampled frames) and segments."""

    id: int
    steps: list[int] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)

    @property
    def label(self) -> str:
        names = Counter(s.shape for s in self.segments)
        best = names.most_common()
        # a named shape beats "blob" when the outline was ambiguous in many frames: a small,
        # textured or compressed object reads as a clean outline only now and then, and "blob"
        # (no shape) is no vote against the shape seen in those frames
        named = [(name, n) for name, n in best if name != "blob"]
        if named and named[0][1] >= max(2, 0.15 * len(self.segments)):
            return named[0][0]
        return best[0][0]

    @property
    def color(self) -> str:
        return Counter(s.color for s in self.segments).most_common(1)[0][0]

    def centroids(self) -> np.ndarray:
        return np.array([s.centroid for s in self.segments], np.float64)

    def areas(self) -> np.ndarray:
        return np.array([s.area for s in self.segments], np.float64)

    def predict(self, step: int) -> np.ndarray:
        """Centroid expected at ``step`` under constant velocity over the last two observations
        (only those two are read: association asks this for every track and object of every frame)."""
        last = np.array(self.segments[-1].centroid, np.float64)
        if len(self.segments) < 2:
            return last
        dt = max(self.steps[-1] - self.steps[-2], 1)
        v = (last - np.array(self.segments[-2].centroid, np.float64)) / dt
        return last + v * (step - self.steps[-1])


def _cost(track: Track, seg: Segment, step: int, diag: float, gate: float, colour_weight: float = 1.0,
          pred: np.ndarray | None = None) -> float:
    """Association cost: predicted-centroid distance in object sizes, colour, size change, box overlap.
    ``colour_weight`` 0 ignores colour (regions found by motion have no stable dominant colour);
    ``pred``: ``track.predict(step)`` when already computed (one per track, not per pair).

    Why written this way: association asks this for every track and object of every frame (449 pairs
    in one motion_analyzer call on the 224-px clip), so per-call overhead counts. The values are those
    of the plain form (the test's ``_cost_plain``) bit for bit: a vector's length is ``np.linalg.norm``'s own
    ``sqrt(v.dot(v))`` (the same BLAS dot), whole-number colour differences are summed exactly as
    integers, square roots of floats are IEEE's; a pair past a gate returns as soon as that is known.
    """
    last = track.segments[-1]
    size = max(_sqrt(last.area), _sqrt(seg.area), 0.02 * diag)
    pred = track.predict(step) if pred is None else pred
    here = np.asarray(seg.centroid)
    v = pred - here
    d_pred = float(np.sqrt(v.dot(v))) / size
    v = np.asarray(last.centroid) - here
    d_last = float(np.sqrt(v.dot(v))) / size
    d = min(d_pred, d_last + 0.25)
    if d > gate * (1 + 0.5 * (step - track.steps[-1] - 1)):
        return _BIG
    colour = colour_weight * _rgb_distance(last.rgb, seg.rgb) / 100.0
    if colour > 1.2:
        return _BIG
    size_change = abs(float(np.log(max(seg.area, 1.0) / max(last.area, 1.0))))
    if size_change > 1.2:
        return _BIG
    return d + colour + 0.5 * size_change + 0.5 * (1.0 - box_iou(last.box, seg.box))


def _sqrt(x: float) -> float:
    """``np.sqrt(x)``'s value: IEEE's square root of a Python float (numpy's for numpy scalars)."""
    return math.sqrt(x) if type(x) is float else np.sqrt(x)


def _rgb_distance(a: tuple, b: tuple) -> float:
    """``np.linalg.norm(np.subtract(a, b))``: for whole-number colours the squared differences and
    their sum are exact integers, so one float square root gives the same value."""
    if all(type(v) is int for v in a) and all(type(v) is int for v in b) and len(a) == len(b):
        return math.sqrt(float(sum((x - y) * (x - y) for x, y in zip(a, b))))
    return float(np.linalg.norm(np.subtract(a, b)))


def associate(per_frame: list[list[Segment]], diag: float, max_gap: int = 3, gate: float = 2.5,
              colour_weight: float = 1.0, rescue_gate: float | None = None) -> list[Track]:
    """Objects of consecutive sampled frames linked into tracks (Hungarian matching on
    :func:`_cost`; a track survives ``max_gap`` missed frames); ids in order of first appearance.

    ``rescue_gate`` (object sizes, larger than ``gate``): a second matching, only among the tracks and
    objects the first left unmatched in a frame, with this gate. Why: at sparse sampling a fast object
    turning (a bounce's floor) jumps past ``gate`` from where its track predicts it, and would start a
    new track; loosening ``gate`` for every pair instead lets crowded objects swap tracks."""
    active: list[Track] = []
    done: list[Track] = []
    for step, segs in enumerate(per_frame):
        still = []
        for t in active:
            (still if step - t.steps[-1] <= max_gap + 1 else done).append(t)
        active = still
        matched: set[int] = set()
        if active and segs:
            preds = [t.predict(step) for t in active]
            cost = np.array([[_cost(t, s, step, diag, gate, colour_weight, p) for s in segs]
                             for t, p in zip(active, preds)])
            rows, cols = linear_sum_assignment(cost)
            linked = [(int(r), int(c)) for r, c in zip(rows, cols) if cost[r, c] < _BIG]
            if rescue_gate is not None and rescue_gate > gate:
                linked += _rescue(active, segs, linked, preds, step, diag, rescue_gate, colour_weight)
            for r, c in linked:
                active[r].steps.append(step)
                active[r].segments.append(segs[c])
                matched.add(c)
        for j, s in enumerate(segs):
            if j not in matched:
                active.append(Track(id=-1, steps=[step], segments=[s]))
    tracks = done + active
    tracks.sort(key=lambda t: (t.steps[0], t.segments[0].centroid[0], t.segments[0].centroid[1]))
    for i, t in enumerate(tracks, 1):
        t.id = i
    return tracks


def _rescue(active: list[Track], segs: list[Segment], linked: list[tuple[int, int]], preds: list[np.ndarray],
            step: int, diag: float, gate: float, colour_weight: float) -> list[tuple[int, int]]:
    """:func:`associate`'s second matching: (track, object) pairs among those ``linked`` left out,
    within the wider ``gate`` (colour and size limits unchanged)."""
    taken_t, taken_s = {r for r, _ in linked}, {c for _, c in linked}
    free_t = [r for r in range(len(active)) if r not in taken_t]
    free_s = [c for c in range(len(segs)) if c not in taken_s]
    if not free_t or not free_s:
        return []
    cost = np.array([[_cost(active[r], segs[c], step, diag, gate, colour_weight, preds[r]) for c in free_s]
                     for r in free_t])
    rows, cols = linear_sum_assignment(cost)
    return [(free_t[r], free_s[c]) for r, c in zip(rows, cols) if cost[r, c] < _BIG]


class SegmentTracker:
    """A window's segmented objects tracked across its sampled frames (what the object tracker counts, the motion
    analyzer names and the grounder reads events from).

    Options: ``max_frames`` (frames of the window used), ``max_gap`` (frames a track may miss),
    ``min_track_frames`` (shortest track counted), ``gate`` (largest centroid jump, in object
    sizes), ``rescue_gate`` (a wider gate for objects and tracks left unmatched, see :func:`associate`;
    off by default), plus :class:`Segmenter` options prefixed ``seg_`` (e.g. ``seg_fg_delta``)."""
    OPTION_PREFIXES = ("seg_",)  # **options forwarded by prefix; others are rejected at start

    def __init__(
        self,
        max_frames: int = TRACK_FRAMES,
        max_gap: int = 3,
        min_track_frames: int = 3,
        gate: float = 2.5,
        rescue_gate: float | None = None,
        **seg_options: float,
    ) -> None:
        self.max_frames = int(max_frames)
        self.max_gap = int(max_gap)
        self.min_track_frames = int(min_track_frames)
        self.gate = float(gate)
        self.rescue_gate = None if rescue_gate is None else float(rescue_gate)
        self.segmenter = Segmenter(**{k[4:]: v for k, v in seg_options.items() if k.startswith("seg_")})

    def tracks_for(self, clip: VideoClip, window: Window = (None, None)) -> tuple[list[Track], np.ndarray, np.ndarray]:
        """All tracks of the window (no filtering), the sampled frame indices and their times."""
        idx = window_indices(clip, window, self.max_frames)
        per_frame = segment_indices(clip.frames, idx, self.segmenter)
        h, w = clip.frames.shape[1:3]
        tracks = associate(per_frame, float(np.hypot(h, w)), self.max_gap, self.gate, rescue_gate=self.rescue_gate)
        return tracks, idx, clip.timestamps[idx]

    def min_length(self, n_steps: int) -> int:
        return max(1, min(self.min_track_frames, n_steps // 3 if n_steps >= 3 else 1))

    def confirmed(self, tracks: list[Track], n_steps: int, query: Query | None = None) -> list[Track]:
        """Tracks long enough to be real and matching the query's colours/shapes."""
        keep = [t for t in tracks if len(t.steps) >= self.min_length(n_steps)]
        if query is not None:
            keep = [t for t in keep if query.matches(t.color, t.label)]
        return keep
