"""YoloObjectTracker on a random-weight YOLOv8n (from yolov8n.yaml, class-0 bias raised) built in the test."""
from __future__ import annotations

import os
import tempfile
import time

import pytest

os.environ.setdefault("YOLO_CONFIG_DIR", tempfile.mkdtemp(prefix="yolo-cfg-"))
pytest.importorskip("ultralytics")

from mvx_tasks.video_decoder import load_video  # noqa: E402
from sama_model.backends.models import _runtime  # noqa: E402
from sama_model.backends.models.yolo_tracker import YoloObjectTracker  # noqa: E402
from sama_model.tools.object_tracker import ObjectTrackerBackend  # noqa: E402
from tiny_models import build_tiny_yolo, make_test_video  # noqa: E402


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return build_tiny_yolo(tmp_path_factory.mktemp("yolo"))


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return load_video(make_test_video(tmp_path_factory.mktemp("vid") / "v.mp4", n_frames=24, fps=8))


@pytest.mark.parametrize("tracker", ["bytetrack", "botsort"])
def test_track_contract(weights, clip, tracker):
    yt = YoloObjectTracker(model=str(weights), tracker=tracker, device="cpu", imgsz=128, max_frames=6)
    assert isinstance(yt, ObjectTrackerBackend)
    out = yt.track(clip, "how many persons?", window=(0.5, 2.5))
    assert out["window"] == [0.5, 2.5] and out["frames_tracked"] == 6 and out["classes"] == ["person"]
    assert out["tracks"], "the biased head must produce tracks"
    ids = [t["id"] for t in out["tracks"]]
    assert len(ids) == len(set(ids))
    h, w = clip.frames.shape[1:3]
    for t in out["tracks"]:
        assert t["label"] == "person" and len(t["times"]) == len(t["boxes"]) >= 1
        assert all(0.5 - 1e-6 <= x <= 2.5 + 1e-6 for x in t["times"]) and t["times"] == sorted(t["times"])
        for x1, y1, x2, y2 in t["boxes"]:
            assert -1 <= x1 <= x2 <= w + 1 and -1 <= y1 <= y2 <= h + 1
    assert out["counts"] == {"person": len(ids)}
    assert 1 <= out["max_per_frame"]["person"] <= len(ids)
    assert any(len(t["times"]) > 1 for t in out["tracks"]), "ids must persist across frames"


def test_query_selects_classes(weights, clip):
    yt = YoloObjectTracker(model=str(weights), device="cpu", imgsz=128, max_frames=4)
    out = yt.track(clip, "count the cars")
    assert out["classes"] == ["car"] and out["tracks"] == [] and out["counts"] == {}


def test_missing_weight_file_fails_fast(clip, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    t0 = time.time()
    with pytest.raises(_runtime.MissingWeightsError) as err:
        YoloObjectTracker(model="yolov8m.pt", device="cpu").track(clip)
    assert time.time() - t0 < 10
    msg = str(err.value)
    assert "yolov8m.pt" in msg and "object_tracker/yolo" in msg and "releases/download" in msg
    with pytest.raises(_runtime.MissingWeightsError, match="no-such.pt"):
        YoloObjectTracker(model=str(tmp_path / "no-such.pt"), device="cpu").track(clip)
