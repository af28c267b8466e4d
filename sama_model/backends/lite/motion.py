"""LiteMotionAnalyzer: camera motion trends, object motion patterns, and clip continuity.

Camera conventions (see :mod:`.flow`): ``pan_left`` means the camera turns/moves left, so the
scene content moves RIGHT in the image; ``pan_right`` the opposite; ``tilt_up`` means the
camera turns up so content moves DOWN; ``zoom_in`` means content grows. Rates are per second:
pan in frame widths, tilt in frame heights, zoom in log-scale.

Object patterns come from tracked centroids with the camera's translation removed:
``static`` (including wobble or drift of less than about one object size), ``linear``
(straight path), ``bouncing`` (reversals at the frame edges, or a |sin| profile: sharp turn at
a floor, rounded apex), ``zig-zag`` (a triangle wave, sharp turns on both sides, across a
steady direction of travel), ``shaking`` (a fast back-and-forth going nowhere), ``orbiting``
(a circular path sweeping >= 180 degrees), ``irregular`` (none of these), plus shape-level
``spinning`` (radial-signature rotation, alias-aware), ``pulsing`` (a rhythmic size swing),
``growing`` and ``shrinking`` (a steady size trend). Trajectory shapes are told apart by fitting
waveforms to the path minus its constant-velocity line (see :func:`_oscillation_kind`), which
holds at 8 fps where a zig-zag's and a bounce's turns fall between frames.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from mvx_tasks.video_decoder import VideoClip

from .common import FRAME_MEMO, TRACK_FRAMES, Window, grey_small, window_indices, window_span
from .features import content_embedding
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
    found = rotation_harmonic(a, b)
    return None if found is None else found[0]


def rotation_harmonic(a: Segment, b: Segment) -> tuple[float, int] | None:
    """(rotation as in :func:`rotation_step`, the harmonic k it was measured on): the rotation is
    only known modulo 360/k degrees."""
    sa, sb = _signature(a), _signature(b)
    if sa is None or sb is None:
        return None
    fa, fb = np.fft.rfft(sa), np.fft.rfft(sb)
    power = np.abs(fa[2:13]) * np.abs(fb[2:13])
    k = int(np.argmax(power)) + 2
    if np.sqrt(power[k - 2]) / len(sa) < 0.02:  # no angular structure: a circle
        return None
    return float(-np.degrees(np.angle(fb[k] / fa[k])) / k), k


SPIN_RATES = np.arange(-400.0, 401.0, 1.0)  # deg/s tried as the steady spin rate
SPIN_TOL = 6.0  # degrees: a step agrees with a rate when its rotation is this close (modulo 360/k)
SPIN_SUPPORT = 0.7  # fraction of the steps that must agree with one rate
SPIN_MIN_RATE = 30.0  # deg/s: slower steady turns are not called spinning


def spin_rate(rots: list[tuple[float, int, float]]) -> tuple[float, float]:
    """Steady spin rate (deg/s) from per-step (rotation, harmonic k, dt) and the fraction of steps
    agreeing with it.

    A shape with k-fold symmetry shows its rotation only modulo 360/k degrees, so a fast spin
    (a hexagon turning 25-35 degrees a frame) aliases to alternating signs step by step; a
    steady rate explains every step modulo its period. The best-supported rate wins, the slowest
    of equally supported ones; the reported rate is the median of the steps unwrapped by it.
    """
    r = np.array([x[0] for x in rots])
    period = np.array([360.0 / x[1] for x in rots])
    dt = np.array([max(x[2], 1e-6) for x in rots])
    pred = SPIN_RATES[:, None] * dt[None, :]
    res = (r[None, :] - pred + period / 2) % period - period / 2  # [rates, steps]
    support = (np.abs(res) < SPIN_TOL).mean(axis=1)
    best = support.max()
    i = int(np.flatnonzero(support == best)[np.argmin(np.abs(SPIN_RATES[support == best]))])
    unwrapped = (pred[i] + res[i]) / dt
    return float(np.median(unwrapped)), float(best)


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
SIZE_TREND_FIT = 0.7  # growing/shrinking: a steady trend explains this much of the log-area variance
SIZE_TREND_RATIO = 1.5  # ... and the area changes by more than this factor over the track
PULSE_MIN_FIT = 0.5  # a pulse's log-area follows a sine: fraction of its variance explained
PULSE_SWINGS = 3  # size reversals a pulse needs: one dip (an occluder, a merge) makes only two
LINEAR_RESIDUAL = 0.15  # straight path: 80th-percentile distance from a constant-velocity line, in object sizes
LINEAR_MIN_TRAVEL = 0.5  # ... and the line covers at least this many object sizes
EDGE_MARGIN_SIZES = 0.8  # a turn "at the frame edge": centroid within this many sizes ...
EDGE_MARGIN_FRAME = 0.03  # ... plus this fraction of the frame of the border
OSC_FREQS_HZ = np.arange(0.3, 3.82, 0.02)  # repetition rates tried when fitting an oscillation
OSC_PHASES = 48  # phases tried per rate
OSC_MIN_FIT = 0.6  # fraction of the oscillation's variance a waveform must explain to name it
BOUNCE_FIT_GAIN = 0.7  # bouncing when the |sin| (cusp at the floor) fit leaves < this x the triangle's residual
ZIGZAG_MIN_ADVANCE = 1.0  # zig-zag: steady travel across the oscillation of at least this many object sizes
ZIGZAG_TRIANGLE_ADVANCE = 0.5  # ... or half that when the turns are clearly sharp on both sides
SHAKE_MIN_HZ = 2.0  # shaking: a back-and-forth at least this fast that goes nowhere
SMALL_MOTION = 1.2  # paths spanning fewer object sizes than this are still unless they shake (a slight drift too)
ORBIT_PARTIAL_SWEEP = 0.75 * np.pi  # a short track (part of the clip) may show this much of a circle


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
    log_area = _median3(np.log(track.areas()))  # one-frame glitches (occluder, merge) are no size change
    slope, icpt = np.polyfit(t, log_area, 1)
    ratio = float(np.exp(float(slope) * duration))
    spread = float(np.sum((log_area - log_area.mean()) ** 2))
    trend_fit = 1.0 - float(np.sum((log_area - (slope * t + icpt)) ** 2)) / spread if spread > 0 else 0.0
    swings = _reversals(np.diff(log_area), PULSE_STEP)
    pulsing = (
        len(swings) >= PULSE_SWINGS
        and float(log_area.max() - log_area.min()) > PULSE_RANGE
        and _waveform_fit(t, log_area, "sine")[0] >= PULSE_MIN_FIT  # a rhythm, not flicker
    )
    if pulsing:
        patterns.append("pulsing")
    elif trend_fit >= SIZE_TREND_FIT and ratio > SIZE_TREND_RATIO:
        patterns.append("growing")
    elif trend_fit >= SIZE_TREND_FIT and ratio < 1 / SIZE_TREND_RATIO:
        patterns.append("shrinking")
    # spin
    found = [rotation_harmonic(a, b) for a, b in zip(track.segments[:-1], track.segments[1:])]
    rots = [(f[0], f[1], float(t[i + 1] - t[i])) for i, f in enumerate(found) if f is not None]
    spin = 0.0
    if len(rots) >= 3:
        # a steady rate modulo the shape's symmetry (fast spins alias), or else a turn of
        # consistent sign (irregular outlines measure each step loosely)
        steady, agree = spin_rate(rots)
        rates = np.array([r / max(dt, 1e-6) for r, _, dt in rots])
        loose = float(np.median(rates))
        spin = steady if agree >= SPIN_SUPPORT else loose
        if (agree >= SPIN_SUPPORT and abs(steady) > SPIN_MIN_RATE) or (
            abs(loose) > SPIN_MIN_RATE and np.mean(np.sign(rates) == np.sign(loose)) >= SPIN_SUPPORT
        ):
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
        partial = len(steps) < 0.75 * len(times)  # the tracker saw only part of the clip
        if (
            radius < 2 * max(w, h)
            and res < 0.2 * radius
            and (swept > np.pi or (partial and swept > ORBIT_PARTIAL_SWEEP and radius < 4 * size))
            and np.mean(np.sign(dang) == np.sign(ang[-1] - ang[0])) > 0.8
        ):
            trajectory = "orbiting"
        elif extent < SMALL_MOTION * size and len(steps) >= 6:
            # a small movement is an action only when regular (a fast shake); otherwise it is
            # centroid wobble of a still object (an occluder clipping it, a neighbour merging, a
            # pulsing outline) or a slight drift
            trajectory = "shaking" if _oscillation_kind(t, c, size) == "shaking" else "static"
        elif (straight > 0.9 and not (rev_x or rev_y)) or _straight_line(t, c, size):
            trajectory = "linear"
        elif pulsing and extent < size:  # a pulsing object's outline moves its centroid a little
            trajectory = "static"
        elif _at_edges(raw, rev_x, rev_y, size, (w, h)):
            trajectory = "bouncing"
        elif len(steps) >= 6:
            trajectory = _oscillation_kind(t, c, size)
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


def _median3(x: np.ndarray) -> np.ndarray:
    """Running median of 3 (ends kept): removes single-sample spikes, keeps steps and swings."""
    if len(x) < 3:
        return x
    out = x.copy()
    out[1:-1] = np.median(np.stack([x[:-2], x[1:-1], x[2:]]), axis=0)
    return out


def _line_fit(t: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Constant-velocity fit of a 2-D path: (velocity per second, residual per sample)."""
    a_mat = np.stack([np.ones_like(t), t - t.mean()], 1)
    coef = np.linalg.lstsq(a_mat, c, rcond=None)[0]
    return coef[1], c - a_mat @ coef


def _straight_line(t: np.ndarray, c: np.ndarray, size: float) -> bool:
    """A steady slide: the path stays within a fraction of the object's size of a constant-velocity
    line (the 80th percentile, so a few frames disturbed by an occluder do not count) and covers
    some distance. Reversal counting alone reads pixel-level centroid jitter of a slow slide as
    back-and-forth motion."""
    vel, res = _line_fit(t, c)
    travel = float(np.linalg.norm(vel)) * float(t[-1] - t[0])
    return travel > LINEAR_MIN_TRAVEL * size and float(np.percentile(np.linalg.norm(res, axis=1), 80)) < (
        LINEAR_RESIDUAL * size
    )


def _at_edges(raw: np.ndarray, rev_x: list[int], rev_y: list[int], size: float, wh: tuple[int, int]) -> bool:
    """Most turns happen where the object touches the frame border: bouncing off the walls."""
    w, h = wh
    margin = EDGE_MARGIN_SIZES * size + EDGE_MARGIN_FRAME * max(w, h)
    at_edge = [raw[i, 0] < margin or raw[i, 0] > w - margin for i in rev_x]
    at_edge += [raw[i, 1] < margin or raw[i, 1] > h - margin for i in rev_y]
    return bool(at_edge) and float(np.mean(at_edge)) >= 0.5


def _waveform_fit(t: np.ndarray, s: np.ndarray, kind: str) -> tuple[float, float]:
    """Best fit of ``s`` by a + b * g(F t + phase) over a grid of rates F and phases, where g is a
    triangle wave ("triangle": sharp turns on both sides, a zig-zag), |sin| ("abs_sin": a sharp
    turn at the floor and a rounded apex, a bounce) or a sine ("sine"); b may be negative, so
    either side may be the floor. Returns (fraction of the variance explained, rate in Hz)."""
    u = (t[None, :, None] * OSC_FREQS_HZ[:, None, None]) + (np.arange(OSC_PHASES) / OSC_PHASES)[None, None, :]
    u = u % 1.0  # [F, T, P] position within one repetition
    if kind == "triangle":
        g = 1.0 - 2.0 * np.abs(u - 0.5)
    elif kind == "abs_sin":
        g = np.abs(np.sin(np.pi * u))
    else:
        g = np.sin(2 * np.pi * u)
    g = g - g.mean(axis=1, keepdims=True)
    sc = s - s.mean()
    num = np.einsum("ftp,t->fp", g, sc)
    den = np.maximum(np.einsum("ftp,ftp->fp", g, g), 1e-9)
    gain = num * num / den  # variance removed by the best b for each template
    k = np.unravel_index(int(np.argmax(gain)), gain.shape)
    total = max(float(sc @ sc), 1e-9)
    return float(gain[k]) / total, float(OSC_FREQS_HZ[k[0]])


def _oscillation_kind(t: np.ndarray, c: np.ndarray, size: float) -> str:
    """shaking vs bouncing vs zig-zag vs irregular for a path that goes back and forth.

    The path minus its constant-velocity line is an oscillation along its main axis, whose
    waveform is fitted: a fast one that goes nowhere is shaking; a |sin| profile (sharp turn at
    a floor, rounded apex) clearly better than a triangle is bouncing, a triangle clearly better
    than |sin| while travelling is a zig-zag; otherwise one that advances steadily across its
    swings is a zig-zag, and one that stays put is bouncing (back and forth between two levels).
    Poorly fitted paths are irregular.
    """
    vel, res = _line_fit(t, c)
    advance = float(np.linalg.norm(vel)) * float(t[-1] - t[0])
    _, vecs = np.linalg.eigh(res.T @ res)
    s = res @ vecs[:, -1]  # the residual along its main axis
    tri, _ = _waveform_fit(t, s, "triangle")
    bounce, _ = _waveform_fit(t, s, "abs_sin")
    sine, rate = _waveform_fit(t, s, "sine")
    if max(tri, bounce, sine) < OSC_MIN_FIT:
        return "irregular"
    if rate >= SHAKE_MIN_HZ and advance < ZIGZAG_MIN_ADVANCE * size and sine >= max(tri, bounce) - 0.05:
        return "shaking"
    if 1.0 - bounce < BOUNCE_FIT_GAIN * (1.0 - tri):
        return "bouncing"
    if 1.0 - tri < BOUNCE_FIT_GAIN * (1.0 - bounce) and advance >= ZIGZAG_TRIANGLE_ADVANCE * size:
        return "zig-zag"  # sharp turns on both sides, while travelling
    if advance >= ZIGZAG_MIN_ADVANCE * size:
        return "zig-zag"
    return "shaking" if rate >= SHAKE_MIN_HZ else "bouncing"


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
    per second), ``tracker`` options prefixed ``track_``. Forensics is its own tool
    (``manipulation_detector``, :mod:`.forensics`)."""

    def __init__(
        self,
        max_frames: int = TRACK_FRAMES,
        segments: int = 3,
        pan_threshold: float = 0.04,
        tilt_threshold: float = 0.04,
        zoom_threshold: float = 0.04,
        **track_options: float,
    ) -> None:
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
        out = {"camera": cam, "objects": objects, "frames_used": int(len(idx)),
               "frame_times": [round(float(t), 3) for t in times], "window": window_span(clip, window)}
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
