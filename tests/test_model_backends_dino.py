"""GroundingDinoSceneGraph on a tiny random GroundingDINO (tiny Swin + tiny BERT) built in the test."""
from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("transformers")

from mvx_tasks.video_decoder import load_video  # noqa: E402
from sama_model.backends.models import _runtime  # noqa: E402
from sama_model.backends.models._common import color_name, query_nouns  # noqa: E402
from sama_model.backends.models.grounding_dino import GroundingDinoSceneGraph, box_relation  # noqa: E402
from sama_model.tools.scene_graph import SceneGraphBackend  # noqa: E402
from tiny_models import build_tiny_grounding_dino, make_test_video  # noqa: E402


@pytest.fixture(scope="module")
def tiny_dino(tmp_path_factory):
    return build_tiny_grounding_dino(tmp_path_factory.mktemp("gd") / "tiny-grounding-dino")


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return load_video(make_test_video(tmp_path_factory.mktemp("vid") / "v.mp4", n_frames=24, fps=8))


def test_graph_contract(tiny_dino, clip):
    sg = GroundingDinoSceneGraph(model=str(tiny_dino), device="cpu", box_threshold=0.0, batch_size=3, max_objects=4)
    assert isinstance(sg, SceneGraphBackend)
    out = sg.graph(clip, "Is the red ball left of the dog?", window=(0.5, 2.5), n_frames=5)
    assert out["labels"] == ["ball", "dog"] and out["window"] == [0.5, 2.5]
    assert len(out["frames"]) == 5
    h, w = clip.frames.shape[1:3]
    ids = []
    for fr in out["frames"]:
        assert 0.5 - 1e-6 <= fr["t"] <= 2.5 + 1e-6
        assert 1 <= len(fr["objects"]) <= 4  # threshold 0 keeps boxes; NMS and the cap bound them
        for o in fr["objects"]:
            x1, y1, x2, y2 = o["box"]
            assert 0 <= x1 <= x2 <= w and 0 <= y1 <= y2 <= h
            assert o["label"] in {"ball", "dog"} and 0.0 <= o["score"] <= 1.0 and isinstance(o["color"], str)
            ids.append(o["id"])
        n = len(fr["objects"])
        assert len(fr["relations"]) == n * (n - 1) // 2
        own = {o["id"] for o in fr["objects"]}
        assert all(r["subject"] in own and r["object"] in own for r in fr["relations"])
    assert len(ids) == len(set(ids))
    assert set(out["counts"]) <= {"ball", "dog"} and all(isinstance(v, int) and v >= 1 for v in out["counts"].values())


def test_empty_query_uses_fallback_vocabulary(tiny_dino, clip):
    sg = GroundingDinoSceneGraph(model=str(tiny_dino), device="cpu", box_threshold=1.01,
                                 vocabulary=["person", "car"])
    out = sg.graph(clip, "", n_frames=2)
    assert out["labels"] == ["person", "car"]
    assert [len(f["objects"]) for f in out["frames"]] == [0, 0] and out["counts"] == {}


def test_helpers():
    assert query_nouns("How many cars and buses pass the red boxes?") == ["car", "bus", "pass", "box"]
    assert query_nouns("Which people ride horses near the benches?") == ["person", "ride", "horse", "bench"]
    assert query_nouns("count the persons", vocabulary=["person", "traffic light"]) == ["person"]
    assert box_relation([0, 0, 10, 10], [20, 0, 30, 10]) == "left of"
    assert box_relation([0, 30, 10, 40], [0, 0, 10, 10]) == "below"
    assert box_relation([2, 2, 4, 4], [0, 0, 10, 10]) == "inside"
    red = np.zeros((8, 8, 3), np.uint8)
    red[..., 0] = 220
    assert color_name(red) == "red"
    assert color_name(np.full((4, 4, 3), 250, np.uint8)) == "white"
    blue = np.zeros((4, 4, 3), np.uint8)
    blue[..., 2] = 200
    assert color_name(blue) == "blue"


def test_missing_weight_fails_fast(monkeypatch, clip):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t0 = time.time()
    with pytest.raises(_runtime.MissingWeightsError) as err:
        GroundingDinoSceneGraph(model="IDEA-Research/grounding-dino-base", device="cpu").graph(clip, "a dog")
    assert time.time() - t0 < 10
    assert "IDEA-Research/grounding-dino-base" in str(err.value) and "scene_graph/grounding_dino" in str(err.value)
