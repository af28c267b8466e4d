"""Activity profiles: synchronised recordings of one event correlate across viewpoint and sensor;
another event (other timing) does not."""

import cv2
import numpy as np
import pytest

from sama_model.backends.lite.motion.activity import N_POINTS, activity_profile, profile_correlation
from scenes import background, make_clip
from sama_model.backends.lite.visual_similarity import LiteVisualSimilarity

T = 24


def _event(moves: list[range], *, seed: int = 0, offset: tuple[int, int] = (0, 0), size: int = 14,
           sensor: str = "rgb", noise: float = 2.0) -> np.ndarray:
    """A ball that moves 6 px per frame during the frames in ``moves`` and rests otherwise, seen
    through a camera ``offset`` and a sensor ("rgb", "edges": Canny edges, "inverted": 255 - grey)."""
    rng = np.random.default_rng(seed)
    bg = background(144, 192, "noise", seed=seed)
    x, frames = 40.0, []
    for t in range(T):
        if any(t in r for r in moves):
            x += 6.0
        f = bg.copy()
        cv2.circle(f, (int(x) + offset[0], 72 + offset[1]), size, (200, 40, 40), -1)
        f = np.clip(f + rng.normal(0, noise, f.shape), 0, 255).astype(np.uint8)
        if sensor == "edges":
            f = np.repeat(cv2.Canny(cv2.cvtColor(f, cv2.COLOR_RGB2GRAY), 60, 120)[..., None], 3, axis=2)
        elif sensor == "inverted":
            f = np.repeat((255 - cv2.cvtColor(f, cv2.COLOR_RGB2GRAY))[..., None], 3, axis=2)
        frames.append(f)
    return np.stack(frames)


EVENT = [range(4, 9), range(15, 19)]
OTHER = [range(9, 15), range(20, 23)]


def test_profile_peaks_when_the_object_moves():
    p = activity_profile(_event(EVENT))
    assert p.shape == (N_POINTS,) and p.mean() == pytest.approx(0.0, abs=1e-5) and p.std() == pytest.approx(1.0, abs=1e-4)
    # the ball moves into frames 4-8 (steps 3-7) and 15-18 (steps 14-17); 23 steps resampled to
    # 32 points put step k at point 31k/22: moving points ~4.2-9.9 and ~19.7-24, resting ~11-18
    assert p[5:10].min() > 0 > p[12:18].max()
    assert p[20:24].min() > 0


def test_nothing_moving_has_no_profile():
    still = _event([])
    assert activity_profile(still) is None
    assert activity_profile(still[:2]) is None
    assert profile_correlation(None, activity_profile(_event(EVENT))) is None


@pytest.mark.parametrize("view", [dict(offset=(20, -15), size=11, seed=3), dict(sensor="edges", seed=4),
                                  dict(sensor="inverted", offset=(-10, 10), seed=5)])
def test_same_event_other_camera_or_sensor_correlates(view):
    ref = activity_profile(_event(EVENT))
    same = profile_correlation(ref, activity_profile(_event(EVENT, **view)))
    other = profile_correlation(ref, activity_profile(_event(OTHER, **view)))
    assert same > 0.8 and other < 0.1


def test_backend_motion_aspect_scores_and_reports_the_correlation():
    sim = LiteVisualSimilarity()
    ref, same, other = (make_clip(_event(m, seed=s)) for m, s in ((EVENT, 0), (EVENT, 7), (OTHER, 8)))
    hit, miss = sim.compare(ref, same, aspect="motion"), sim.compare(ref, other, aspect="motion")
    assert hit["score"] == hit["correlation"] > 0.8
    assert miss["score"] == max(0.0, miss["correlation"]) < 0.1
    # the tool layer's path (cached embeddings) gives the same numbers
    ea, eb = sim.embed(ref, aspect="motion"), sim.embed(same, aspect="motion")
    assert ea.shape == (1, N_POINTS)
    assert sim.compare_embeddings(ea, eb, "motion") == {"score": hit["score"], "correlation": hit["correlation"]}
    still = make_clip(_event([]))
    assert sim.compare(ref, still, aspect="motion")["correlation"] is None
