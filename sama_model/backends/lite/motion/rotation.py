"""Rotation of an object between frames from its radial outline signature, and a steady spin rate
that is robust to the aliasing of symmetric shapes (alias-aware: modulo 360/k).
"""

from __future__ import annotations

import numpy as np

from ..perception.segment import Segment


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
    return _harmonic(_spectrum(a), _spectrum(b))


def rotation_harmonics(segments: list[Segment]) -> list[tuple[float, int] | None]:
    """:func:`rotation_harmonic` of each pair of consecutive segments, every outline's signature
    and spectrum computed once (not twice: a track's spin test, a few per cent of a motion call)."""
    spectra = [_spectrum(s) for s in segments]
    return [_harmonic(a, b) for a, b in zip(spectra[:-1], spectra[1:])]


def _spectrum(seg: Segment) -> tuple[np.ndarray, int] | None:
    """The outline signature's Fourier spectrum and its length (None for too short an outline)."""
    sig = _signature(seg)
    return None if sig is None else (np.fft.rfft(sig), len(sig))


def _harmonic(a: tuple[np.ndarray, int] | None, b: tuple[np.ndarray, int] | None) -> tuple[float, int] | None:
    if a is None or b is None:
        return None
    (fa, n), (fb, _) = a, b
    power = np.abs(fa[2:13]) * np.abs(fb[2:13])
    k = int(np.argmax(power)) + 2
    if np.sqrt(power[k - 2]) / n < 0.02:  # no angular structure: a circle
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
