"""CLIP backends on a tiny open_clip config registered for the test: contract and the embedding cache."""
from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("open_clip")

from mvx_tasks.video_decoder import load_video  # noqa: E402
from sama_model.backends.models import _runtime  # noqa: E402
from sama_model.backends.models._common import spans_from_scores  # noqa: E402
from sama_model.backends.models.clip_backends import (EMBEDDINGS, ClipTemporalGrounding,  # noqa: E402
                                                      ClipVisualSimilarity)
from sama_model.tools.temporal_grounding import TemporalGroundingBackend  # noqa: E402
from sama_model.tools.visual_similarity import VisualSimilarityBackend  # noqa: E402
from tiny_models import make_test_video, register_tiny_open_clip  # noqa: E402

OPTS = dict(model=register_tiny_open_clip(), device="cpu", frames_per_video=16)


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vid")
    return [load_video(make_test_video(folder / f"v{i}.mp4", n_frames=24 + 8 * i, fps=8)) for i in range(3)]


def test_similarity_contract(clips):
    sim = ClipVisualSimilarity(**OPTS)
    assert isinstance(sim, VisualSimilarityBackend)
    a, b = clips[0], clips[1]
    emb = sim.embed(a)
    assert emb.ndim == 2 and emb.shape[0] == 16 and emb.shape[1] == 32
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4)
    part = sim.embed(a, window=(0.0, 1.0))
    assert 1 <= part.shape[0] < 16
    out = sim.compare(a, b, window_a=(0.0, 1.5), window_b=(1.0, None))
    assert 0.0 <= out["score"] <= 1.0
    assert out["frames_a"] == len(out["frame_scores"]) and all(0.0 <= s <= 1.0 for s in out["frame_scores"])
    assert out["window_a"] == [0.0, 1.5] and out["window_b"][0] == 1.0
    assert sim.compare(a, a)["score"] == pytest.approx(1.0, abs=1e-3)


def test_grounding_contract(clips):
    g = ClipTemporalGrounding(**OPTS, top_k=3)
    assert isinstance(g, TemporalGroundingBackend)
    out = g.ground(clips[2], "a red square moving", window=(0.5, 3.5))
    assert 1 <= len(out["spans"]) <= 3
    scores = [s["score"] for s in out["spans"]]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= x <= 1.0 for x in scores)
    for s in out["spans"]:
        assert 0.5 - 1e-6 <= s["start"] < s["end"] <= 3.5 + 1e-6
    assert isinstance(out["boundaries"], list) and out["window"] == [0.5, 3.5]


def test_each_video_is_embedded_once_per_process(clips, monkeypatch):
    EMBEDDINGS.clear()
    sim = ClipVisualSimilarity(**OPTS)
    model = sim.encoder.loaded()[0]
    calls = []
    real = model.encode_image
    monkeypatch.setattr(model, "encode_image", lambda x, *a, **k: (calls.append(len(x)), real(x, *a, **k))[1])
    grounding = ClipTemporalGrounding(**OPTS)  # another tool, same CLIP: shares the cache
    other = ClipVisualSimilarity(**OPTS)
    assert grounding.encoder is sim.encoder is other.encoder
    for _ in range(3):  # many questions, tools and windows
        sim.compare(clips[0], clips[1], window_a=(0, 1), window_b=(0.5, 2))
        other.embed(clips[0], window=(1.0, 2.0))
        grounding.ground(clips[0], "a square")
        grounding.ground(clips[1], "a blue background", window=(1.0, 3.0))
        sim.compare(clips[1], clips[0])
    assert sum(calls) == 32 and len(calls) == 2  # 16 grid frames for each of the two videos, one batch each
    sim.embed(clips[2])
    assert sum(calls) == 48


def test_spans_from_scores_merges_and_ranks():
    times = np.arange(10, dtype=float)
    sims = np.array([0.1, 0.1, 0.8, 0.9, 0.85, 0.1, 0.1, 0.6, 0.1, 0.1])
    spans = spans_from_scores(times, sims, (0.0, 10.0), smooth=1, rel_threshold=0.5)
    assert [(s["start"], s["end"]) for s in spans] == [(1.5, 4.5), (6.5, 7.5)]
    assert spans[0]["peak"] == 3.0 and spans[0]["score"] == pytest.approx(0.95)


def test_missing_pretrained_weights_fail_fast(clips, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HOME", "/nonexistent-home")
    sim = ClipVisualSimilarity(model="ViT-L-14", tag="openai", device="cpu")
    t0 = time.time()
    with pytest.raises(_runtime.MissingWeightsError) as err:
        sim.embed(clips[0])
    assert time.time() - t0 < 10
    msg = str(err.value)
    assert "ViT-L-14/openai" in msg and "visual_similarity/clip" in msg
    assert "huggingface-cli download timm/vit_large_patch14_clip_224.openai" in msg


def test_motion_aspect_is_the_pixel_activity_profile_not_clip(clips):
    """aspect="motion" (when things move) is answered by the shared activity profile, so the paper
    profile's similarity tool can compare multi-view recordings too; other aspects stay CLIP cosine."""
    from sama_model.backends.lite.motion.activity import N_POINTS, activity_profile

    sim = ClipVisualSimilarity(**OPTS)
    a, b = clips[0], clips[1]
    ea, eb = sim.embed(a, aspect="motion"), sim.embed(b, aspect="motion")
    assert ea.shape == (1, N_POINTS)
    expected = activity_profile(a.frames)
    assert np.allclose(ea[0], expected if expected is not None else 0.0)
    out = sim.compare(a, b, aspect="motion")
    assert set(out) >= {"score", "correlation", "aspect"} and "model" not in out
    assert sim.compare_embeddings(ea, eb, "motion") == {"score": out["score"], "correlation": out["correlation"]}
    content = sim.compare_embeddings(sim.embed(a), sim.embed(b), "content")  # the tool's scoring path too
    assert set(content) >= {"score", "cosine", "frame_scores", "model"}
    assert content["score"] == sim.compare(a, b)["score"]
