"""Activity profile: *when* things move in a clip, as a time series robust to viewpoint and sensor.

Synchronised recordings of one event (another camera, or a depth, edge or thermal rendering) see
the same motions at the same moments, while their pixels, colours and layouts differ. The profile
is the per-step amount of change: mean absolute difference of consecutive blurred grey frames,
after subtracting each step's median change (the sensor-noise and lighting-drift floor, which
moves every pixel a little) and clipping at 0, so only localised motion counts. It is resampled
to a fixed number of points over the window (clips of different frame rates compare point for
point) and standardised, so the dot product of two profiles divided by their length is Pearson's
correlation: the scale of motion (a closer camera, a fainter sensor) cancels, its timing stays.
"""

from __future__ import annotations

import cv2
import numpy as np

N_POINTS = 32
#: a profile whose spread is under this fraction of its level is flat (nothing moves: only the
#: noise floor's residue, e.g. std 0.005 on 0.43 grey levels for a still noisy clip)
MIN_RELATIVE_STD = 0.05


def activity_profile(frames: np.ndarray, n_points: int = N_POINTS, max_side: int = 160) -> np.ndarray | None:
    """[n_points] standardised activity over the frames, or None when fewer than 3 frames or
    nothing moves."""
    if len(frames) < 3:
        return None
    h, w = frames.shape[1:3]
    f = min(1.0, max_side / max(h, w))
    grey = []
    for x in frames:
        g = cv2.cvtColor(x, cv2.COLOR_RGB2GRAY) if x.ndim == 3 else x
        if f < 1:
            g = cv2.resize(g, (int(w * f), int(h * f)), interpolation=cv2.INTER_AREA)
        grey.append(cv2.GaussianBlur(g, (5, 5), 0))
    diff = np.abs(np.diff(np.stack(grey).astype(np.float32), axis=0))
    diff -= np.median(diff, axis=(1, 2), keepdims=True)
    energy = np.clip(diff, 0, None).mean(axis=(1, 2))
    steps = np.linspace(0.0, 1.0, len(energy))
    profile = np.interp(np.linspace(0.0, 1.0, n_points), steps, energy)
    std = float(profile.std())
    if std <= 1e-6 or std < MIN_RELATIVE_STD * float(profile.mean()):
        return None
    return ((profile - profile.mean()) / std).astype(np.float32)


def profile_correlation(a: np.ndarray | None, b: np.ndarray | None) -> float | None:
    """Pearson correlation of two standardised profiles of equal length; None if either is missing."""
    if a is None or b is None:
        return None
    a, b = np.asarray(a, np.float64).reshape(-1), np.asarray(b, np.float64).reshape(-1)
    if len(a) != len(b) or not a.any() or not b.any():
        return None
    return float(np.clip(a @ b / len(a), -1.0, 1.0))
