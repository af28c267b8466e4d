"""Tool interface: schemas from signatures, validation, label resolution, similarity caching,
subtitles, path confinement; plus traces' redaction and memory distillation."""
from __future__ import annotations

import json

import numpy as np
import pytest

import test_sama_doubles as D
from sama_model.cache import ToolCache
from sama_model.memory import EvidenceMemory, distill
from sama_model.tools import TOOL_CLASSES
from sama_model.tools.backends import create_backend
from sama_model.tools.toolkit import BackendSpec, build_tools
from sama_model.trace import REDACTED, redact, register_secret
from sama_model.question_videos import PathOutsideRootError, QuestionVideos

VIDEOS = {"Reference": "ref", "Video A": "a", "Video B": "b", "Video C": "c", "Video D": "d"}


def tools_for(question, cache=None):
    specs = {name: BackendSpec("double") for name in TOOL_CLASSES}
    return build_tools(QuestionVideos(question), specs, cache)


@pytest.fixture()
def question(tmp_path):
    D.reset({"ref": {"emb": [1, 0, 0], "emb_style": [0, 1, 0]}, "a": {"emb": [0.6, 0.8, 0]},
             "b": {"emb": [0, 1, 0], "emb_style": [0, 1, 0]}, "c": {"emb": [0.8, 0.6, 0]}, "d": {"emb": [-1, 0, 0]}})
    subs = {"Video A": "1\n00:00:00,000 --> 00:00:01,000\nthe dog runs\n\n2\n00:00:01,000 --> 00:00:02,000\n"
                       "a cat sleeps on the sofa\n"}
    return D.make_question(tmp_path, "q", "VS", "Which is a near-duplicate?", {"A": "Video A", "B": "Video B"},
                           VIDEOS, subtitles=subs)


def test_video_reader_schema_is_derived_from_the_signature():
    assert TOOL_CLASSES["video_reader"].parameters() == {
        "type": "object",
        "properties": {
            "video": {"type": "string", "description": 'Label of the video to read, e.g. "Reference" or "Video B".'},
            "query": {"type": "string", "description": 'The question to answer from the frames, e.g. "How many cups '
                                                       'are on the table?".'},
            "start": {"type": ["number", "null"], "description": "Window start in seconds; null for the beginning of "
                                                                 "the video.", "default": None},
            "end": {"type": ["number", "null"], "description": "Window end in seconds; null for the end of the video.",
                    "default": None},
            "n_frames": {"type": "integer", "description": "How many frames to sample uniformly from the window "
                                                           "(more frames read finer detail).", "default": 8},
        },
        "required": ["video", "query"],
        "additionalProperties": False,
    }
    spec = TOOL_CLASSES["visual_similarity"].spec()["function"]
    assert spec["name"] == "visual_similarity"
    assert spec["parameters"]["properties"]["aspect"]["enum"] == ["content", "style", "identity", "motion"]
    assert spec["description"].startswith("Score how visually similar two videos are")


def test_every_tool_has_a_complete_schema():
    for name, cls in TOOL_CLASSES.items():
        schema = cls.parameters()
        assert schema["required"][0] in cls.video_args, name
        assert all(p["description"] for p in schema["properties"].values()), name


def test_arguments_are_validated_coerced_and_labels_resolved(question):
    reader = tools_for(question)["video_reader"]
    D.SCRIPT["b"] = {"reader": "a red cup"}
    r = reader(video="video b", query="what?", n_frames="4", start=1)
    assert r.ok and r.args == {"video": "Video B", "query": "what?", "start": 1.0, "end": None, "n_frames": 4}
    sampling = r.data.pop("sampling")  # how the video was decoded, recorded with every reading
    assert r.data == {"answer": "a red cup", "window": [1.0, None], "frames_used": 4}
    assert sampling["frames"] == sampling["of"] and sampling["policy"]["max_side"] == 448
    assert r.text == "Video B (1-ends, 4 frames) 'what?': a red cup"
    assert reader(video="B", query="q").args["video"] == "Video B"
    assert "unknown argument(s) ['frames']" in reader(video="Video B", query="q", frames=3).error
    assert "missing required argument(s) ['query']" in reader(video="Video B").error
    assert "must be of type integer" in reader(video="Video B", query="q", n_frames=2.5).error
    bad = reader(video="Video Z", query="q")
    assert "no video labelled 'Video Z'" in bad.error and "Reference" in bad.error
    assert "window end 1.0 is before its start 2.0" in reader(video="Video B", query="q", start=2, end=1).error
    sim = tools_for(question)["visual_similarity"]
    assert "must be one of ['content', 'style', 'identity', 'motion']" in sim(video_a="Reference", video_b="Video A", aspect="colour").error


def test_similarity_embeds_each_video_once_and_scores_cosine(question):
    sim = tools_for(question)["visual_similarity"]
    scores = {c: sim(video_a="Reference", video_b=c).data["score"] for c in ["Video A", "Video B", "Video C", "Video D"]}
    assert scores == {"Video A": 0.6, "Video B": 0.0, "Video C": 0.8, "Video D": 0.0}
    assert D.CALLS["embed"] == 5  # reference once, each candidate once
    again = tools_for(question)["visual_similarity"]  # another question object: process-wide cache
    assert again(video_a="Video C", video_b="Reference").data["frame_scores"] == [0.8, 0.8]
    assert D.CALLS["embed"] == 5
    assert again(video_a="Reference", video_b="Video B", aspect="style").data["score"] == 1.0
    assert D.CALLS["embed"] == 7


def test_reread_pair_asks_again_until_nothing_new_is_asked():
    """A backend's ``pair_aspects`` sees each round's new embeddings: a side is embedded once per aspect, an empty
    read keeps the last embedding, and a request for an aspect that side was already read under ends the rounds."""
    from sama_model.backends.similarity_scoring import MAX_REREAD_ROUNDS, reread_pair

    seen, embeds = [], []

    def pair(ea, eb, aspect):
        seen.append((float(ea[0, 0]), float(eb[0, 0])))
        if ea[0, 0] == 1 and eb[0, 0] == 1:
            return "x-stack", "x-stack"  # round 1: both sides
        if ea[0, 0] == 2:
            return "x-moving", "x"  # round 2: side a again (its read is empty: a keeps 2)
        return aspect, aspect

    def embed(side, values):
        return lambda asp: embeds.append((side, asp)) or np.array([[values[asp]]], float)

    got = reread_pair(np.ones((1, 1)), np.ones((1, 1)), pair, "x", embed("a", {"x-stack": 2, "x-moving": 0}),
                      embed("b", {"x-stack": 3}))
    assert [float(v[0, 0]) for v in got] == [2.0, 3.0]
    assert embeds == [("a", "x-stack"), ("b", "x-stack"), ("a", "x-moving")]
    assert seen == [(1.0, 1.0), (2.0, 3.0), (2.0, 3.0)]  # the third round asks only what a was read under
    looping = []
    reread_pair(np.ones((1, 1)), np.ones((1, 1)), lambda ea, eb, asp: (f"r{len(looping)}", asp), "x",
                lambda asp: looping.append(asp) or np.ones((1, 1)), lambda asp: np.ones((1, 1)))
    assert looping == [f"r{i}" for i in range(MAX_REREAD_ROUNDS)]


def test_subtitle_retrieve_extract_and_missing(question):
    sub = tools_for(question)["subtitle_retriever"]
    r = sub(video="Video A", query="cat sofa")
    assert r.data["hits"][0]["text"] == "a cat sleeps on the sofa"
    e = sub(video="Video A", mode="extract", start=0.0, end=0.5)
    assert e.data["text"] == "the dog runs" and e.text == "Video A subtitles: the dog runs"
    assert sub(video="Video B", query="x").data == {"available": False, "hits": [], "text": "", "segments": []}
    assert "needs a non-empty query" in sub(video="Video A").error


def test_motion_continuity_and_tool_cache(question, tmp_path):
    D.SCRIPT["a"] = {"next": {"b": 0.9}}
    cache = ToolCache(tmp_path / "cache")
    motion = tools_for(question, cache)["motion_analyzer"]
    r = motion(video="Video A", next_video="Video B")
    assert r.data == {"continuity": {"score": 0.9}} and r.videos == ["Video A", "Video B"] and not r.cached
    r2 = tools_for(question, cache)["motion_analyzer"](video="Video A", next_video="Video B")
    assert r2.cached and r2.data == r.data and D.CALLS["continuity"] == 1
    assert cache.stats() == {"hits": 1, "misses": 1, "corrupt": 0, "write_errors": 0}
    # results cached by a release whose backends answered differently are not reused
    import sama_model.cache as cache_module

    old_revision = cache_module.CACHE_REVISION
    try:
        cache_module.CACHE_REVISION = old_revision + 1
        r3 = tools_for(question, cache)["motion_analyzer"](video="Video A", next_video="Video B")
    finally:
        cache_module.CACHE_REVISION = old_revision
    assert not r3.cached and D.CALLS["continuity"] == 2


def test_paths_must_stay_inside_the_root(tmp_path):
    from sama_model.question import AgentQuestion, VideoRef

    (tmp_path / "root").mkdir()
    outside = AgentQuestion("x", "q", {"A": "a", "B": "b"}, (VideoRef("V", "../secret.mp4"),), root=str(tmp_path / "root"))
    with pytest.raises(PathOutsideRootError, match="outside the dataset folder"):
        QuestionVideos(outside)
    absolute = AgentQuestion("x", "q", {"A": "a", "B": "b"}, (VideoRef("V", "/etc/passwd"),), root=str(tmp_path / "root"))
    with pytest.raises(PathOutsideRootError):
        QuestionVideos(absolute)


def test_backend_registry_builds_doubles_once_per_process():
    assert create_backend("video_reader", "double") is create_backend("video_reader", "double")


def test_redaction_of_secrets_and_auth_headers():
    register_secret("sk-very-secret-value")
    obj = {"msg": "key sk-very-secret-value used", "headers": {"Authorization": "Bearer abc"},
           "api_key": "zzz", "note": "Bearer tok.en-1 sent"}
    assert redact(obj) == {"msg": f"key {REDACTED} used", "headers": {"Authorization": REDACTED},
                           "api_key": REDACTED, "note": f"Bearer {REDACTED} sent"}


def test_memory_distills_and_bounds_items():
    text = "First sentence is here. " + "word " * 100
    short = distill(text, 60)
    assert len(short) <= 60 and short == "First sentence is here. word word word word word word word…"
    assert distill("One. Two three four five six seven eight nine ten eleven twelve.", 40) == "One. Two three four five six seven…"
    from sama_model.tools.base import ToolResult

    mem = EvidenceMemory(["V"], items_per_video=2)
    for i in range(4):
        mem.add(ToolResult("video_reader", {"video": "V"}, {"answer": str(i)}, f"answer {i}", videos=["V"],
                           call_id=f"t{i}"), 1)
    mem.add_fact("V", "count", "cup", 2, "resolved", "tools agree")
    assert mem.render().splitlines() == ["Evidence memory (per video):", "[V]",
                                         "  * verified count(cup) = 2 [resolved: tools agree]",
                                         "  (2 earlier observations omitted)", "  - video_reader: answer 2",
                                         "  - video_reader: answer 3"]
    assert json.loads(json.dumps(mem.snapshot()))["V"]["facts"] == ["verified count(cup) = 2 [resolved: tools agree]"]


def test_object_tracker_second_reading_on_shifted_frames(question):
    """``shift_frames`` n reads the window from its (n+1)-th decoded frame: the backend gets that window (the double
    answers its second reading there), the text says so, the reading makes no claim for the verifier, and a window
    holding no more frames than the shift is read whole; a negative shift is refused."""
    from mvx_tasks.video_decoder import VideoClip
    from sama_model.claims import result_claims

    D.SCRIPT["a"] = {"sg": 2, "probs": [1.0, 0.7], "probs_shifted": [1.0, 0.9]}
    tracker = tools_for(question)["object_tracker"]
    first, second = tracker(video="Video A", query="cup"), tracker(video="Video A", query="cup", shift_frames=1)
    assert first.args["shift_frames"] == 0 and second.args["shift_frames"] == 1
    assert first.data["count_probabilities"] == [1.0, 0.7] and second.data["count_probabilities"] == [1.0, 0.9]
    assert second.text.startswith("Video A (whole video, frames shifted by 1): unique tracks {cup: 2}")
    assert [c.value for c in result_claims(first)] == [2, True] and result_claims(second) == []
    assert "shift_frames must be 0 or more, got -1" in tracker(video="Video A", query="cup", shift_frames=-1).error
    clip = VideoClip("c.mp4", np.zeros((6, 4, 4, 3), np.uint8), np.arange(6) / 10.0, 10.0, 0.6, (4, 4))
    assert clip.shifted_window((None, None), 1) == (0.1, None)
    assert clip.shifted_window((0.2, 0.4), 2) == (0.4, 0.4)
    assert clip.shifted_window((0.3, 0.4), 2) == (0.3, 0.4)  # two frames: nothing to shift to
    assert clip.shifted_window((0.2, None), 0) == (0.2, None)
    with pytest.raises(ValueError, match="shift_frames must be 0 or more, got -1"):
        clip.shifted_window((None, None), -1)


def test_visual_similarity_second_reading_on_shifted_frames(question):
    """``shift_frames`` reads both videos' windows from a frame later: the backend embeds those windows (the double
    answers its second reading there), the text says so, the first reading's embeddings are kept apart, the reading
    makes no claim for the verifier, and a negative shift is refused."""
    from sama_model.claims import result_claims

    D.SCRIPT["ref"] = {"emb_identity": [1, 0, 0]}
    D.SCRIPT["a"] = {"emb_identity": [0.6, 0.8, 0], "emb_identity_shifted": [0.3, 0.9539, 0]}
    sim = tools_for(question)["visual_similarity"]
    first = sim(video_a="Reference", video_b="Video A", aspect="identity")
    second = sim(video_a="Reference", video_b="Video A", aspect="identity", shift_frames=1)
    assert first.data["score"] == pytest.approx(0.6) and second.data["score"] == pytest.approx(0.3, abs=1e-4)
    assert second.text.startswith("similarity(Reference, Video A, identity, whole video, frames shifted by 1) = 0.300")
    assert sim(video_a="Reference", video_b="Video A", aspect="identity").data["score"] == pytest.approx(0.6)
    assert result_claims(second) == []
    assert "shift_frames must be 0 or more, got -2" in sim(video_a="Reference", video_b="Video A", shift_frames=-2).error
