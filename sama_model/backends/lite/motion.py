"""LiteMotionAnalyzer: camera motion trends, object motion patterns, and clip continuity.

Camera conventions (see :mod:`.flow`): ``pan_left`` means the camera turns/moves left, so the
scene content moves RIGHT in the image; ``pan_right`` the opposite; ``tilt_up`` means the
camera turns up so content moves DOWN; ``zoom_in`` means content grows. Rates are per second:
pan in frame widths, tilt in frame heights, zoom in log-scale.

Object patterns come from tracked centroids with the camera's translation removed:
``static``, ``linear`` (straight path), ``bouncing`` (velocity reversals at the frame edges or
at a repeated floor/ceiling level), ``zig-zag`` (regular reversals across a steady direction of
travel), ``orbiting`` (a circular path sweeping >= 180 degrees), ``irregular`` (none of these),
plus shape-level ``spinning`` (radial-signature rotation), ``growing`` and ``shrinking``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from mvx_tasks.video import VideoClip

from .common import FRAME_MEMO, TRACK_FRAMES, Window, grey_small, window_indices, window_span
from .features import content_embedding
from .forensics import manipulation_evidence
from .flow import GlobalMotion, camera_terms, global_motion
from .segmentation import Segment, Segmenter, segment_indices
from .tracker import LiteObjectTracker, Track

_FLOW_SIDE = 160


def _grey(frame: np.ndarray) -> np.ndarray:
    return grey_small(frame, _FLOW_SIDE)


def _object_boxes(frames: np.ndarray, i: int, segmenter: Segmenter | None) -> list[list[float]]:
    """Boxes of frame ``i``'s segmented objects in the greyscale flow frame's pixels."""
    scale = FRAME_MEMO.get(frames, i, "grey160", _grey).shape[1] / frames.shape[2]
    return [[v * scale for v in s.box] for s in segment_indices(frames, [i], segmenter)[0]]


def pair_motion(frames: np.ndarray, i: int, j: int, segmenter: Segmenter | None = None) -> GlobalMotion:
    """Camera-induced content motion from frame ``i`` to ``j`` (memoised per pair), fitted on
    background points only: segmented objects of frame ``i`` are masked out."""

    def fit(_: np.ndarray) -> GlobalMotion:
        return global_motion(
            FRAME_MEMO.get(frames, i, "grey160", _grey),
            FRAME_MEMO.get(frames, j, "grey160", _grey),
            exclude=_object_boxes(frames, i, segmenter),
        )

    key = ("gm", int(j), segmenter.key if segmenter is not None else None)
    return FRAME_MEMO.get(frames, i, key, fit)


def _signature(seg: Segment, bins: int = 90) -> np.ndarray | None:
    """Radius of the outline as a function of angle around the centroid (scale-normalised);
    angles grow clockwise on screen (image y points down)."""
    pts = seg.contour
    if len(pts) < 12:
        return None
    d = pts - np.asarray(seg.centroid, np.float32)
    ang = (np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 360 / (360 / bins)).astype(int) % bins
    rad = np.hypot(d[:, 0], d[:, 1])
    sig = np.zeros(bins)
    np.maximum.at(sig, ang, rad)
    empty = sig == 0
    if empty.all():
        return None
    if empty.any():  # fill gaps from neighbours
        idx = np.arange(bins)
        sig[empty] = np.interp(idx[empty], idx[~empty], sig[~empty], period=bins)
    return sig / sig.mean()


def rotation_step(a: Segment, b: Segment) -> float | None:
    """Rotation (degrees, + = clockwise on screen) from ``a`` to ``b``; None for round shapes.

    Uses the phase of the outline's dominant angular harmonic k (3 for a triangle, 4 for a
    square, 5 for a star): a rotation by d shifts that phase by k*d, which is exact to a
    fraction of a degree and unambiguous within +-180/k degrees (a symmetric shape's turn).
    """
    sa, sb = _signature(a), _signature(b)
    if sa is None or sb is None:
        return None
    fa, fb = np.fft.rfft(sa), np.fft.rfft(sb)
    power = np.abs(fa[2:13]) * np.abs(fb[2:13])
    k = int(np.argmax(power)) + 2
    if np.sqrt(power[k - 2]) / len(sa) < 0.02:  # no angular structure: a circle
        return None
    return float(-np.degrees(np.angle(fb[k] / fa[k])) / k)


def _circle_fit(c: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Algebraic (Kasa) circle fit: centre, radius, rms residual."""
    x, y = c[:, 0], c[:, 1]
    a_mat = np.stack([x, y, np.ones_like(x)], 1)
    sol = np.linalg.lstsq(a_mat, x * x + y * y, rcond=None)[0]
    cx, cy = sol[0] / 2, sol[1] / 2
    r = float(np.sqrt(max(sol[2] + cx * cx + cy * cy, 0.0)))
    res = float(np.sqrt(np.mean((np.hypot(x - cx, y - cy) - r) ** 2)))
    return np.array([cx, cy]), r, res


PULSE_STEP = 0.08  # log-area change per step below which a size change does not count as a swing
PULSE_RANGE = float(np.log(2.2))  # a pulsing object's area varies by more than this factor


def _reversals(v: np.ndarray, noise: float) -> list[int]:
    """Indices where a 1-D velocity changes sign (ignoring |v| below ``noise``)."""
    out, last = [], 0
    for i, x in enumerate(v):
        if abs(x) < noise:
            continue
        s = 1 if x > 0 else -1
        if last and s != last:
            out.append(i)
        last = s
    return out


def classify_track(track: Track, times: np.ndarray, offsets: np.ndarray, frame_wh: tuple[int, int]) -> dict:
    """Motion pattern of one track. ``offsets`` = cumulative camera translation (pixels) per step."""
    steps = np.asarray(track.steps)
    t = times[steps]
    raw = track.centroids()
    c = raw - offsets[steps]
    size = float(np.median(np.sqrt(track.areas())))
    w, h = frame_wh
    out: dict = {
        "id": track.id,
        "label": track.label,
        "color": track.color,
        "size_px": round(float(np.median(np.sqrt(track.areas()))), 1),  # typical side length: who is largest
        "start": [round(float(x), 1) for x in raw[0]],
        "end": [round(float(x), 1) for x in raw[-1]],
    }
    if len(steps) < 4:
        out.update(pattern="unknown", patterns=["unknown"], note="too few observations")
        return out
    duration = max(float(t[-1] - t[0]), 1e-6)
    patterns: list[str] = []
    # size: pulsing (the size swings up and down repeatedly) or a monotonic trend
    log_area = np.log(track.areas())
    slope = float(np.polyfit(t, log_area, 1)[0])
    ratio = float(np.exp(slope * duration))
    swings = _reversals(np.diff(log_area), PULSE_STEP)
    pulsing = len(swings) >= 2 and float(log_area.max() - log_area.min()) > PULSE_RANGE
    if pulsing:
        patterns.append("pulsing")
    elif ratio > 1.3:
        patterns.append("growing")
    elif ratio < 1 / 1.3:
        patterns.append("shrinking")
    # spin
    rots = [rotation_step(a, b) for a, b in zip(track.segments[:-1], track.segments[1:])]
    rots = [(r, float(t[i + 1] - t[i])) for i, r in enumerate(rots) if r is not None]
    spin = 0.0
    if len(rots) >= 3:
        rates = np.array([r / max(dt, 1e-6) for r, dt in rots])
        spin = float(np.median(rates))
        if abs(spin) > 30 and np.mean(np.sign(rates) == np.sign(spin)) >= 0.7:
            patterns.append("spinning")
    # trajectory
    d = np.diff(c, axis=0)
    path = float(np.linalg.norm(d, axis=1).sum())
    net = c[-1] - c[0]
    extent = float(np.linalg.norm(c.max(0) - c.min(0)))
    trajectory = "static"
    if extent > max(0.5 * size, 0.02 * max(w, h)):
        centre, radius, res = _circle_fit(c)
        ang = np.unwrap(np.arctan2(c[:, 1] - centre[1], c[:, 0] - centre[0]))
        dang = np.diff(ang)
        swept = float(abs(ang[-1] - ang[0]))
        noise = 0.15 * path / max(len(d), 1)
        rev_x, rev_y = _reversals(d[:, 0], noise), _reversals(d[:, 1], noise)
        straight = float(np.linalg.norm(net)) / max(path, 1e-6)
        if (
            radius < 2 * max(w, h)
            and res < 0.2 * radius
            and swept > np.pi
            and np.mean(np.sign(dang) == np.sign(ang[-1] - ang[0])) > 0.8
        ):
            trajectory = "orbiting"
        elif straight > 0.9 and not (rev_x or rev_y):
            trajectory = "linear"
        elif pulsing and extent < size:  # a pulsing object's outline moves its centroid a little
            trajectory = "static"
        elif _shaking(d, net, rev_x, rev_y, extent):
            trajectory = "shaking"
        elif rev_x or rev_y:
            trajectory = _reversal_kind(raw, d, rev_x, rev_y, size, (w, h))
        else:
            trajectory = "linear" if straight > 0.75 else "irregular"
        out["direction"] = _direction(net)
        out["speed"] = round(path / duration / max(w, h), 4)  # frame sizes per second
    patterns.insert(0, trajectory)
    primary = trajectory
    if trajectory == "static" and len(patterns) > 1:
        primary = patterns[1]
    out.update(
        pattern=primary,
        patterns=patterns,
        spin_deg_per_s=round(spin, 1),
        size_ratio=round(ratio, 3),
        path_px=round(path, 1),
    )
    return out


def _shaking(d: np.ndarray, net: np.ndarray, rev_x: list[int], rev_y: list[int], extent: float) -> bool:
    """Shaking: rapid back-and-forth along one axis (reversals at least every third step there)
    that goes nowhere (net displacement under half the extent), the other axis nearly still.
    Zig-zag differs: it advances along one axis while reversing along the other."""
    for revs, other in ((rev_x, 1), (rev_y, 0)):
        if len(revs) >= max(3, len(d) // 3) and float(np.linalg.norm(net)) < 0.5 * extent:
            if float(np.abs(d[:, other]).sum()) < 0.5 * float(np.abs(d[:, 1 - other]).sum()):
                return True
    return False


def _reversal_kind(
    raw: np.ndarray, d: np.ndarray, rev_x: list[int], rev_y: list[int], size: float, wh: tuple[int, int]
) -> str:
    """bouncing vs zig-zag vs irregular, from where and how sharply the path turns back.

    Bouncing: turns at the frame edges, or sharp turns on one side only (the floor) with smooth
    ones on the other (the apex of a throw). Zig-zag: sharp turns on both sides.
    """
    w, h = wh
    margin = 1.5 * size + 0.03 * max(w, h)
    at_edge = [raw[i, 0] < margin or raw[i, 0] > w - margin for i in rev_x]
    at_edge += [raw[i, 1] < margin or raw[i, 1] > h - margin for i in rev_y]
    if at_edge and np.mean(at_edge) >= 0.5:
        return "bouncing"
    revs, axis = (rev_x, 0) if len(rev_x) >= len(rev_y) else (rev_y, 1)
    v = d[:, axis]
    typical = float(np.median(np.abs(v[np.abs(v) > 1e-6]))) if np.any(np.abs(v) > 1e-6) else 0.0
    sides: dict[int, list[bool]] = {1: [], -1: []}
    for i in revs:
        before = v[:i][np.abs(v[:i]) > 1e-6]
        if not len(before):
            continue
        sides[int(np.sign(before[-1]))].append(min(abs(v[i - 1]), abs(v[i])) > 0.5 * typical)
    sharp = {k: (np.mean(x) >= 0.5 if x else None) for k, x in sides.items()}
    if True in sharp.values() and False in sharp.values():
        return "bouncing"
    if sharp[1] is not None and sharp[-1] is None and len(sides[1]) >= 2:
        return "bouncing"
    if sharp[-1] is not None and sharp[1] is None and len(sides[-1]) >= 2:
        return "bouncing"
    if len(revs) >= 2 and sharp[1] and sharp[-1]:
        return "zig-zag"
    return "irregular"


def _direction(net: np.ndarray) -> str:
    dx, dy = float(net[0]), float(net[1])
    parts = []
    if abs(dx) > 0.4 * max(abs(dx), abs(dy)):
        parts.append("right" if dx > 0 else "left")
    if abs(dy) > 0.4 * max(abs(dx), abs(dy)):
        parts.insert(0, "down" if dy > 0 else "up")
    return "-".join(parts) or "none"


class LiteMotionAnalyzer:
    """Options: ``max_frames`` (frames of the window analysed), ``segments`` (camera sub-windows),
    ``pan_threshold``/``tilt_threshold`` (frame sizes per second), ``zoom_threshold`` (log-scale
    per second), ``forensics`` (add the ``"manipulation"`` block), ``tracker`` options prefixed ``track_``.

    ``analyze`` also returns ``"manipulation"`` (see :mod:`.forensics`): ``{"score": 0..1 (higher =
    more likely edited after recording; compare two clips' scores), "cues": {"camera_misfit",
    "pinned", "copy_move"}, "raw": {...}, "region_xywh": hint or None, "copy_offset": [dy, dx] or None}``."""

    def __init__(
        self,
        max_frames: int = TRACK_FRAMES,
        segments: int = 3,
        pan_threshold: float = 0.04,
        tilt_threshold: float = 0.04,
        zoom_threshold: float = 0.04,
        forensics: bool = True,
        **track_options: float,
    ) -> None:
        self.forensics = bool(forensics)
        self.max_frames = int(max_frames)
        self.segments = int(segments)
        self.thresholds = {"pan": float(pan_threshold), "tilt": float(tilt_threshold), "zoom": float(zoom_threshold)}
        self.tracker = LiteObjectTracker(
            max_frames=self.max_frames, **{k[6:]: v for k, v in track_options.items() if k.startswith("track_")}
        )

    # -- camera --------------------------------------------------------------------------------
    def _trends(self, terms: dict[str, float], factor: float = 1.0) -> list[str]:
        names = {"pan": ("pan_right", "pan_left"), "tilt": ("tilt_up", "tilt_down"), "zoom": ("zoom_in", "zoom_out")}
        found = []
        for key, (pos, neg) in names.items():
            x = terms[key] / (self.thresholds[key] * factor)
            if abs(x) >= 1:
                found.append((abs(x), pos if x > 0 else neg))
        return [n for _, n in sorted(found, reverse=True)]

    def camera(self, clip: VideoClip, idx: np.ndarray) -> tuple[dict, np.ndarray]:
        """Camera trends of the sampled frames and the cumulative content offset (pixels) per frame."""
        h, w = clip.frames.shape[1:3]
        times = clip.timestamps[idx]
        rows, offsets = [], [np.zeros(2)]
        for a, b, ta, tb in zip(idx[:-1], idx[1:], times[:-1], times[1:]):
            m = pair_motion(clip.frames, int(a), int(b), self.tracker.segmenter)
            rows.append((camera_terms(m, float(tb - ta)), m, float(tb - ta)))
            offsets.append(offsets[-1] + np.array([m.dx * w, m.dy * h]))
        if not rows:
            return {
                "trends": ["static"],
                "pan": 0.0,
                "tilt": 0.0,
                "zoom": 0.0,
                "roll": 0.0,
                "per_segment": [],
                "note": "fewer than two frames",
            }, np.zeros((len(idx), 2))
        overall = {k: float(np.median([r[0][k] for r in rows])) for k in ("pan", "tilt", "zoom", "roll")}
        per_segment = []
        for part in np.array_split(np.arange(len(rows)), min(self.segments, len(rows))):
            seg = {k: float(np.median([rows[i][0][k] for i in part])) for k in ("pan", "tilt", "zoom", "roll")}
            per_segment.append(
                {
                    "start": round(float(times[part[0]]), 3),
                    "end": round(float(times[part[-1] + 1]), 3),
                    **{k: round(v, 4) for k, v in seg.items()},
                    "trends": self._trends(seg) or ["static"],
                }
            )
        trends = self._trends(overall)
        for seg in per_segment:  # a strong move in one part counts too (e.g. a pan then a stop)
            for name in self._trends(seg, factor=2.0):
                if name not in trends:
                    trends.append(name)
        inl = float(np.mean([r[1].inliers for r in rows]))
        cam = {
            "trends": trends or ["static"],
            **{k: round(v, 4) for k, v in overall.items()},
            "per_segment": per_segment,
            "inlier_fraction": round(inl, 3),
            "units": "pan: frame widths/s (+right), tilt: frame heights/s (+up), "
            "zoom: log-scale/s (+in), roll: deg/s (+clockwise)",
        }
        return cam, np.array(offsets)

    def analyze(self, clip: VideoClip, window: Window = (None, None)) -> dict:
        tracks, idx, times = self.tracker.tracks_for(clip, window)
        cam, offsets = self.camera(clip, idx)
        h, w = clip.frames.shape[1:3]
        objects = [classify_track(t, times, offsets, (w, h)) for t in self.tracker.confirmed(tracks, len(idx))]
        out = {"camera": cam, "objects": objects, "frames_used": int(len(idx)), "window": window_span(clip, window)}
        if self.forensics:
            full = clip.window(*(window if window is not None else (None, None)))
            out["manipulation"] = FRAME_MEMO.get(
                clip.frames, int(full[0]) if len(full) else 0, ("forensics", int(len(full))),
                lambda _: manipulation_evidence(clip.frames[full]),
            )
        return out

    # -- continuity ----------------------------------------------------------------------------
    def continuity(self, a: VideoClip, b: VideoClip) -> dict:
        """How well ``b`` continues ``a``: appearance of a's last vs b's first frames, camera motion
        extrapolated across the cut, and objects' extrapolated positions."""
        ia, ib = len(a.frames) - 1, 0

        def emb(clip: VideoClip, i: int) -> np.ndarray:
            return FRAME_MEMO.get(clip.frames, i, ("embed", "content"), content_embedding)

        appearance = float(np.clip(emb(a, ia) @ emb(b, ib), 0.0, 1.0))
        terms = {"appearance": appearance}
        weights = {"appearance": 0.5}
        # camera: the motion across the cut should look like a's own last step
        if len(a.frames) >= 2 and a.frames.shape[1:] == b.frames.shape[1:]:
            last = pair_motion(a.frames, ia - 1, ia, self.tracker.segmenter)
            cross = global_motion(
                FRAME_MEMO.get(a.frames, ia, "grey160", _grey),
                FRAME_MEMO.get(b.frames, ib, "grey160", _grey),
                exclude=_object_boxes(a.frames, ia, self.tracker.segmenter),
            )
            if cross.points >= 12 and cross.inliers > 0.3:
                err = np.hypot(cross.dx - last.dx, cross.dy - last.dy) + abs(
                    np.log(cross.scale / max(last.scale, 1e-6))
                )
                terms["motion"] = float(np.exp(-err / 0.03) * min(1.0, cross.inliers / 0.6))
                weights["motion"] = 0.3
        # objects: a's objects moved on by their last velocity should be where b's objects are
        obj = self._object_continuity(a, b)
        if obj is not None:
            terms["objects"] = obj
            weights["objects"] = 0.3
        total = sum(weights.values())
        score = sum(terms[k] * weights[k] for k in terms) / total
        return {"score": round(float(np.clip(score, 0.0, 1.0)), 4), "terms": {k: round(v, 4) for k, v in terms.items()}}

    def _object_continuity(self, a: VideoClip, b: VideoClip) -> float | None:
        tail = window_indices(a, (None, None))[-4:]
        tracks, _, times = self.tracker.tracks_for(a, (float(a.timestamps[tail[0]]), None))
        ends = [t for t in tracks if t.steps[-1] == len(times) - 1]
        first = segment_indices(b.frames, [0], self.tracker.segmenter)[0]
        if not ends and not first:
            return None
        if not ends or not first:
            return 0.0
        h, w = a.frames.shape[1:3]
        diag = float(np.hypot(h, w))
        cost = np.zeros((len(ends), len(first)))
        for i, t in enumerate(ends):
            pred = t.predict(t.steps[-1] + 1)
            seg = t.segments[-1]
            for j, s in enumerate(first):
                dist = float(np.linalg.norm(pred - np.asarray(s.centroid))) / max(np.sqrt(seg.area), 0.03 * diag)
                cost[i, j] = dist + (0 if s.color == seg.color else 2.0) + (0 if s.shape == seg.shape else 0.5)
        r, c = linear_sum_assignment(cost)
        matched = float(np.mean(np.exp(-cost[r, c] / 1.5)))
        return matched * min(len(ends), len(first)) / max(len(ends), len(first))
