"""Every task's scripted policy picks the option its evidence supports (tool doubles), and the
meta planner identifies question types and option-video mappings."""
from __future__ import annotations

import pytest

import test_sama_doubles as D
from sama_model.agent import SamaAgent
from sama_model.profiles import build_config
from sama_model.question import AgentQuestion
from sama_model.skills.meta_planner.policy import identify_task, option_video_map
from sama_model.skills.multi_video_comparison.policy import counting_relation, counting_target
from sama_model.trace import load_trace

FOUR = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}
REF4 = {"Reference": "ref", "Video A": "a", "Video B": "b", "Video C": "c", "Video D": "d"}


def solve(tmp_path, script, task, question, options, stems, subtitles=None, **args):
    D.reset(script)
    q = D.make_question(tmp_path, "q", task, question, options, stems, subtitles)
    result = SamaAgent(build_config(**{**D.DOUBLE_ARGS, **args})).answer(q, tmp_path / "t.json")
    trace = load_trace(tmp_path / "t.json")
    tools = [(s["tool"], s["args"]) for s in trace["steps"] if s["kind"] == "tool"]
    return result.letter, tools, trace


def test_cnt_more_than_reference(tmp_path):
    script = {"ref": {"sg": 2}, "a": {"sg": 1}, "b": {"sg": 2}, "c": {"sg": 4}, "d": {"sg": 0}}
    letter, tools, _ = solve(tmp_path, script, "CNT", "Which video shows more cups than the reference?", FOUR, REF4)
    assert letter == "C"
    assert {t for t, _ in tools} == {"scene_graph", "object_tracker", "video_reader"}


@pytest.mark.parametrize("question,expected", [("Which video has been manipulated?", "B"),
                                               ("Which video is real?", "A")])
def test_fd_inconsistency(tmp_path, question, expected):
    script = {"v1": {"reader": "No artifacts are visible. The face looks natural."},
              "v2": {"reader": "There is flickering around the face and a blending boundary.",
                     "boundaries": [0.5, 1.0, 1.5], "spans": [{"start": 0.4, "end": 1.2, "score": 0.9}]}}
    letter, tools, _ = solve(tmp_path, script, "FD", question, {"A": "Video 1", "B": "Video 2"},
                             {"Video 1": "v1", "Video 2": "v2"})
    assert letter == expected
    # the grounded span is a hint, verified by the reader on that window
    assert ("video_reader", {"video": "Video 2", "query": D_ARTIFACT(), "start": 0.4, "end": 1.2, "n_frames": 8}) in tools


def D_ARTIFACT():
    from sama_model.skills.temporal_grounding.policy import ARTIFACT_QUERY

    return ARTIFACT_QUERY


def test_am_uses_similarity_motion_and_reader(tmp_path):
    script = {"ref": {"patterns": ["bouncing"], "reader": "a ball bouncing"},
              "a": {"patterns": ["spinning"], "reader": "a top spinning"},
              "b": {"patterns": ["bouncing"], "reader": "a ball bouncing high"},
              "c": {"patterns": ["sliding"]}, "d": {"patterns": []}}
    letter, tools, _ = solve(tmp_path, script, "AM", "Which candidate shows the same action as the reference?",
                             FOUR, REF4)
    assert letter == "B"
    assert {t for t, _ in tools} == {"visual_similarity", "motion_analyzer", "video_reader"}


def test_art_style_similarity(tmp_path):
    script = {"ref": {"emb_style": [1, 0, 0]}, "a": {"emb_style": [0, 1, 0]}, "b": {"emb_style": [0.9, 0.1, 0]},
              "c": {"emb_style": [0.5, 0.5, 0]}, "d": {"emb_style": [0, 0, 1]}}
    letter, tools, _ = solve(tmp_path, script, "ART", "Which candidate shares the reference's art style?", FOUR, REF4)
    assert letter == "B"
    assert {a["aspect"] for t, a in tools if t == "visual_similarity"} == {"style"}
    assert {t for t, _ in tools} == {"visual_similarity"}  # no near-tie: no reader call


def test_art_near_tie_is_broken_by_reader_descriptions(tmp_path):
    script = {"ref": {"emb_style": [1, 0, 0], "reader": "watercolor pastel soft lines"},
              "a": {"emb_style": [0.9, 0.1, 0], "reader": "thick black ink lines"},
              "b": {"emb_style": [0.9, 0.1, 0], "reader": "soft watercolor pastel palette"},
              "c": {"emb_style": [0, 1, 0]}, "d": {"emb_style": [0, 0, 1]}}
    letter, tools, _ = solve(tmp_path, script, "ART", "Which candidate shares the reference's art style?", FOUR, REF4)
    assert letter == "B"
    assert sorted(a["video"] for t, a in tools if t == "video_reader") == ["Reference", "Video A", "Video B"]


def test_vs_and_mvr(tmp_path):
    script = {"ref": {"emb": [1, 0, 0], "reader": "a street market with fruit stalls"},
              "a": {"emb": [0.7, 0.7, 0], "reader": "a beach"}, "b": {"emb": [0.2, 0.9, 0], "reader": "a forest"},
              "c": {"emb": [0.6, 0.8, 0], "reader": "fruit stalls in a street market seen from above"},
              "d": {"emb": [0, 0, 1], "reader": "a kitchen"}}
    assert solve(tmp_path, script, "VS", "Which candidate is a near-duplicate of the reference?", FOUR, REF4)[0] == "A"
    assert solve(tmp_path, script, "MVR", "Which candidate shows the same event from another viewpoint?",
                 FOUR, REF4)[0] == "C"


@pytest.mark.parametrize("emb,expected", [([0.95, 0.31, 0], "A"), ([0.2, 0.98, 0], "B")])
def test_rid_yes_no(tmp_path, emb, expected):
    script = {"v1": {"emb": [1, 0, 0]}, "v2": {"emb": emb}}
    letter, _, trace = solve(tmp_path, script, "RID", "Do the two clips show the same person?",
                             {"A": "Yes, the same person", "B": "No, different people"}, {"Video 1": "v1", "Video 2": "v2"})
    assert letter == expected
    assert "threshold 0.8" in [s for s in trace["steps"] if s["kind"] == "final"][0]["reason"]


def test_cr_matches_the_reference_option_index(tmp_path):
    q = ("Reference: What if the ball were lighter? Option 1: it would float away. Option 2: it would sink. "
         "Video A: What if the glass fell? Option 1: it would shatter. Option 2: it would bounce. "
         "Video B: What if the dog stopped? Option 1: the cat would stay asleep. Option 2: the cat would run. "
         "Which candidate's correct option number matches the reference's?")
    script = {"ref": {"reader": "a light balloon ball would float away in the wind"},
              "a": {"reader": "a rubber glass would bounce on the floor"},
              "b": {"reader": "the cat would stay asleep on the sofa"}}
    letter, tools, _ = solve(tmp_path, script, "CR", q, {"A": "Video A", "B": "Video B"},
                             {"Reference": "ref", "Video A": "a", "Video B": "b"})
    assert letter == "B"
    assert {t for t, _ in tools} == {"video_reader", "subtitle_retriever"}


@pytest.mark.parametrize("update,expected", [("The man stirs a pot, cooking dinner on the stove.", "A"),
                                             ("The man leaves the kitchen without cooking; the stove is empty.", "B")])
def test_de_strengthen_or_weaken(tmp_path, update, expected):
    script = {"p": {"reader": "A man walks into a kitchen."}, "u": {"reader": update}}
    subs = {"Update": "1\n00:00:00,000 --> 00:00:01,000\ntime to cook dinner\n"}
    letter, tools, _ = solve(tmp_path, script, "DE", "Hypothesis: a man is cooking dinner.\nDoes the update "
                             "video strengthen or weaken the hypothesis?", {"A": "Strengthens", "B": "Weakens"},
                             {"Premise": "p", "Update": "u"}, subtitles=subs)
    assert letter == expected
    assert ("subtitle_retriever", {"video": "Update", "mode": "retrieve", "query": "a man is cooking dinner.",
                                   "start": None, "end": None, "top_k": 3}) in tools


def test_seq_orders_by_continuity(tmp_path):
    script = {"c1": {"next": {"c2": 0.9, "c3": 0.2}}, "c2": {"next": {"c3": 0.8, "c1": 0.1}},
              "c3": {"next": {"c2": 0.3}}}
    opts = {"A": "Clip 2, Clip 1, Clip 3", "B": "Clip 1, Clip 2, Clip 3", "C": "Clip 3, Clip 2, Clip 1"}
    letter, tools, _ = solve(tmp_path, script, "SEQ", "What is the correct chronological order of the clips?", opts,
                             {"Clip 1": "c1", "Clip 2": "c2", "Clip 3": "c3"})
    assert letter == "B"
    pairs = [(a["video"], a["next_video"]) for t, a in tools]
    assert pairs == [("Clip 2", "Clip 1"), ("Clip 1", "Clip 3"), ("Clip 1", "Clip 2"), ("Clip 2", "Clip 3"),
                     ("Clip 3", "Clip 2")]


def test_spr_shared_camera_trend(tmp_path):
    script = {"ref": {"trends": ["pan_left", "zoom_in"]}, "a": {"trends": ["tilt_up"]}, "b": {"trends": ["static"]},
              "c": {"trends": ["zoom_in"]}, "d": {"trends": ["pan_right"]}}
    q = "Which candidate shares at least one camera motion trend with the reference?"
    letter, tools, _ = solve(tmp_path, script, "SPR", q, FOUR, REF4)
    assert letter == "C" and {t for t, _ in tools} == {"motion_analyzer"}
    # motion analyser off: camera trends come from the reader's descriptions
    script = {"ref": {"reader": "The camera pans left slowly."}, "a": {"reader": "The camera zooms in."},
              "b": {"reader": "The camera pans left along the street."}, "c": {"reader": "A static camera."},
              "d": {"reader": "The camera tilts up."}}
    letter, tools, _ = solve(tmp_path, script, "SPR", q, FOUR, REF4, motion="off")
    assert letter == "B" and {t for t, _ in tools} == {"video_reader"}


def test_task_identified_from_question_text_when_no_code(tmp_path):
    script = {"ref": {"sg": 3}, "a": {"sg": 3}, "b": {"sg": 1}, "c": {"sg": 5}, "d": {"sg": 2}}
    letter, _, trace = solve(tmp_path, script, None, "How many birds? Which video has the same number of birds "
                             "as the reference?", FOUR, REF4)
    assert letter == "A"
    assert [s for s in trace["steps"] if s["kind"] == "planner"][0]["note"] == "policy skill:CNT"


@pytest.mark.parametrize("text,code", [
    ("Which candidate video has the same number of apples as the reference?", "CNT"),
    ("Which of the two videos has been manipulated?", "FD"),
    ("Which candidate shows the same action as the reference video?", "AM"),
    ("Which candidate shares the reference's art style?", "ART"),
    ("Do these clips show the same person?", "RID"),
    ("Which candidate shows the same event from a different viewpoint?", "MVR"),
    ("Which candidate is a near-duplicate of the reference?", "VS"),
    ("Which candidate's counterfactual answer matches the reference's?", "CR"),
    ("Does the update video strengthen or weaken the hypothesis?", "DE"),
    ("What is the correct chronological order of the clips?", "SEQ"),
    ("Which candidate shares a camera motion trend with the reference?", "SPR"),
])
def test_identify_task_from_text(text, code):
    q = AgentQuestion("x", text, {"A": "a", "B": "b"}, ())
    assert identify_task(q) == (code, "question text")
    assert identify_task(AgentQuestion("x", text, {"A": "a", "B": "b"}, (), task="vs")) == ("VS", "registry")


def test_option_video_map_and_counting_parse():
    labels = ["Reference", "Video A", "Video B", "Video AB"]
    assert option_video_map({"A": "Video A", "B": "video b", "C": "Video AB", "D": "None"}, labels) == {
        "A": ["Video A"], "B": ["Video B"], "C": ["Video AB"], "D": []}
    assert option_video_map({"A": "2, 1, 3", "B": "B then A"}, ["Clip 1", "Clip 2", "Clip 3"]) == {
        "A": ["Clip 2", "Clip 1", "Clip 3"], "B": []}
    assert counting_target("Which video has fewer red cars than the reference?") == "car"
    assert counting_target("How many people are dancing?") == "person"
    assert [counting_relation(x) for x in ("same number of", "more dogs", "fewer dogs")] == ["eq", "gt", "lt"]
