"""LanguageBind grounding: a clear error without the package; its preprocessing and segment grid."""
from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest

from mvx_tasks.video_decoder import load_video
from sama_model.backends.models import _runtime
from sama_model.backends.models.languagebind import frames_to_pixel_values, segment_grid
from sama_model.tools.backends import create_backend
from sama_model.tools.temporal_grounding import TemporalGroundingBackend
from tiny_models import make_test_video


@pytest.mark.skipif(importlib.util.find_spec("languagebind") is not None, reason="languagebind is installed")
def test_without_package_fails_fast_and_names_the_fix(tmp_path):
    clip = load_video(make_test_video(tmp_path / "v.mp4"))
    backend = create_backend("temporal_grounding", "languagebind", shared=False, device="cpu")
    assert isinstance(backend, TemporalGroundingBackend)
    t0 = time.time()
    with pytest.raises(_runtime.MissingPackageError) as err:
        backend.ground(clip, "a red square")
    assert time.time() - t0 < 5
    msg = str(err.value)
    assert "temporal_grounding/languagebind" in msg and "pip install 'languagebind[video]'" in msg
    assert "`clip` temporal_grounding backend" in msg


def test_pixel_values_follow_languagebind_eval_transform():
    frames = np.zeros((8, 90, 160, 3), np.uint8)
    frames[..., 0] = 255
    px = frames_to_pixel_values(frames)
    assert tuple(px.shape) == (3, 8, 224, 224)
    assert float(px[0].mean()) == pytest.approx((1 - 0.48145466) / 0.26862954, rel=1e-4)
    assert float(px[1].mean()) == pytest.approx(-0.4578275 / 0.26130258, rel=1e-4)


def test_segment_grid_tiles_the_video():
    segs = segment_grid(5.0, 2.0)
    assert segs[0] == (0.0, 2.0) and segs[-1][1] == 5.0
    assert all(b - a == pytest.approx(2.0) for a, b in segs)
    assert all(segs[i + 1][0] - segs[i][0] <= 1.0 + 1e-9 for i in range(len(segs) - 1))
    assert segment_grid(1.5, 2.0) == [(0.0, 1.5)]

