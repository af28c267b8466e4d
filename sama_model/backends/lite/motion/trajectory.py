"""Object motion patterns from one track: linear, bouncing, zig-zag, shaking, orbiting, spinning,
pulsing, growing, shrinking, static or irregular.

Trajectory shapes are told apart by fitting waveforms to the path minus its constant-velocity line
(see :func:`_oscillation_kind`), which holds at 8 fps where a zig-zag's and a bounce's turns fall
between frames. Camera translation is removed by the caller (:mod:`.motion_analyzer`).
"""

from __future__ import annotations

import numpy as np

from .rotation import SPIN_MIN_RATE, SPIN_SUPPORT, rotation_harmonics, spin_rate
from .tracks import Track


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
    found = rotation_harmonics(track.segments)
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


def _phases(t: np.ndarray) -> np.ndarray:
    """[F, T, P] position within one repetition of every rate and phase tried at times ``t``."""
    u = (t[None, :, None] * OSC_FREQS_HZ[:, None, None]) + (np.arange(OSC_PHASES) / OSC_PHASES)[None, None, :]
    if t.size and float(t.min()) >= 0:
        u -= np.floor(u)  # u % 1.0 bit for bit when u >= 0 (both exact), at a third of the cost
        return u
    return u % 1.0


def _waveform_fit(t: np.ndarray, s: np.ndarray, kind: str, u: np.ndarray | None = None) -> tuple[float, float]:
    """Best fit of ``s`` by a + b * g(F t + phase) over a grid of rates F and phases, where g is a
    triangle wave ("triangle": sharp turns on both sides, a zig-zag), |sin| ("abs_sin": a sharp
    turn at the floor and a rounded apex, a bounce) or a sine ("sine"); b may be negative, so
    either side may be the floor. Returns (fraction of the variance explained, rate in Hz).
    ``u``: :func:`_phases` of ``t`` when already computed (more than half of a fit's time)."""
    u = _phases(t) if u is None else u
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
    u = _phases(t)  # shared by the three fits
    tri, _ = _waveform_fit(t, s, "triangle", u)
    bounce, _ = _waveform_fit(t, s, "abs_sin", u)
    sine, rate = _waveform_fit(t, s, "sine", u)
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
