"""Every task's scripted policy picks the option its evidence supports (tool doubles), and the
meta planner identifies question types and option-video mappings."""
from __future__ import annotations

import pytest

import test_sama_doubles as D
from sama_model.agent import SamaAgent
from sama_model.profiles import build_config
from sama_model.question import AgentQuestion, VideoRef
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


@pytest.mark.parametrize("question,expected", [("Which video has been manipulated?", "A"),
                                               ("Which video is real?", "B")])
def test_fd_manipulation_score_decides_when_every_video_has_one(question, expected):
    """The analyser's manipulation score outranks the reader/grounding inconsistency (which
    favours Video 2 here); the inconsistency only breaks exact ties."""
    from sama_model.memory import EvidenceMemory
    from sama_model.skills.context import PolicyContext
    from sama_model.skills.temporal_grounding.policy import ARTIFACT_QUERY, CHANGE_QUERY, decide_fd

    labels = ["Video 1", "Video 2"]
    opts = {"A": "Video 1", "B": "Video 2"}

    def ctx_with(manip: dict[str, float]) -> PolicyContext:
        from sama_model.tools.base import ToolResult

        mem = EvidenceMemory(labels)
        mem.add(ToolResult("temporal_grounding", {"video": "Video 2", "query": CHANGE_QUERY},
                           data={"boundaries": [0.5, 1.0, 1.5], "spans": []}, videos=["Video 2"], call_id="g"), 1)
        mem.add(ToolResult("video_reader", {"video": "Video 2", "query": ARTIFACT_QUERY},
                           data={"answer": "There is flickering."}, videos=["Video 2"], call_id="r"), 1)
        for i, (v, score) in enumerate(manip.items()):
            mem.add(ToolResult("motion_analyzer", {"video": v, "next_video": None},
                               data={"manipulation": {"score": score}}, videos=[v], call_id=f"m{i}"), 1)
        q = AgentQuestion("q", question, opts, tuple(VideoRef(v, f"/{v}.mp4") for v in labels))
        return PolicyContext(q, "FD", "registry", mem, set(), lambda _: 3.0, option_video_map(opts, labels))

    letter, reason = decide_fd(ctx_with({"Video 1": 0.7, "Video 2": 0.2}))
    assert letter == expected and reason.startswith("manipulation scores Video 1=0.700, Video 2=0.201")
    # equal manipulation scores: the inconsistency evidence breaks the tie (Video 2 is inconsistent)
    assert decide_fd(ctx_with({"Video 1": 0.5, "Video 2": 0.5}))[0] == ("B" if expected == "A" else "A")
    # a score for one video only: the inconsistency rule decides, as without the analyser
    assert decide_fd(ctx_with({"Video 1": 0.9}))[0] == ("B" if expected == "A" else "A")


def D_ARTIFACT():
    from sama_model.skills.temporal_grounding.policy import ARTIFACT_QUERY

    return ARTIFACT_QUERY


def test_am_matches_the_actor_motion_not_the_look(tmp_path):
    script = {"ref": {"patterns": ["bouncing"], "reader": "a ball bouncing"},
              "a": {"patterns": ["spinning"], "reader": "a top spinning"},
              "b": {"patterns": ["bouncing"], "reader": "a ball bouncing high"},
              "c": {"patterns": ["sliding"]}, "d": {"patterns": []}}
    letter, tools, _ = solve(tmp_path, script, "AM", "Which candidate shows the same action as the reference?",
                             FOUR, REF4)
    assert letter == "B"
    # appearance similarity is no evidence of the same action: only the motion analyser is asked
    assert {t for t, _ in tools} == {"motion_analyzer"}
    # motion analyser off: the reader's action descriptions (motion words only) decide
    letter, tools, _ = solve(tmp_path, script, "AM", "Which candidate shows the same action as the reference?",
                             FOUR, REF4, motion="off")
    assert letter == "B" and {t for t, _ in tools} == {"video_reader"}


def _am_ctx(objects: dict, readers: dict | None = None):
    """A PolicyContext whose memory holds motion_analyzer (and reader) results built by hand."""
    from sama_model.memory import EvidenceMemory
    from sama_model.skills.context import PolicyContext
    from sama_model.skills.multi_video_comparison.policy import ACTION_QUERY
    from sama_model.tools.base import ToolResult

    labels = list(REF4)
    q = AgentQuestion("q", "The Reference video shows an actor (the largest object) performing an action. Which "
                      "candidate shows the same action?", FOUR, tuple(VideoRef(v, f"/{v}.mp4") for v in labels))
    mem = EvidenceMemory(labels)
    for i, (video, objs) in enumerate(objects.items()):
        mem.add(ToolResult("motion_analyzer", {"video": video, "next_video": None}, data={"objects": objs},
                           videos=[video], call_id=f"m{i}"), 1)
    for i, (video, text) in enumerate((readers or {}).items()):
        mem.add(ToolResult("video_reader", {"video": video, "query": ACTION_QUERY}, data={"answer": text},
                           videos=[video], call_id=f"r{i}"), 1)
    return PolicyContext(q, "AM", "registry", mem, {"motion_analyzer"}, lambda _: 3.0,
                         option_video_map(FOUR, labels))


def test_am_main_actor_is_the_largest_else_the_most_moving_object():
    from sama_model.skills.multi_video_comparison.policy import main_actor

    objs = [{"id": 1, "pattern": "zig-zag", "patterns": ["zig-zag"], "path_px": 200.0},
            {"id": 2, "pattern": "spinning", "patterns": ["static", "spinning"], "path_px": 3.0},
            {"id": 3, "pattern": "unknown", "patterns": ["unknown"], "path_px": 900.0}]
    assert main_actor(objs)["id"] == 1  # no sizes reported: the one that moves most ("unknown" skipped)
    sized = [dict(objs[0], size_px=10.0), dict(objs[1], size_px=40.0), dict(objs[2], size_px=99.0)]
    assert main_actor(sized)["id"] == 2  # sizes reported: the largest
    assert main_actor([objs[2]]) is None


def test_am_action_scores_exact_values():
    from sama_model.skills.multi_video_comparison.policy import AM_ANY_OBJECT_WEIGHT, action_scores, decide_am

    actor = lambda pats, size: {"pattern": pats[0], "patterns": pats, "size_px": size, "path_px": 10.0}
    ctx = _am_ctx({
        "Reference": [actor(["bouncing", "growing"], 30.0), actor(["spinning"], 5.0)],
        "Video A": [actor(["bouncing"], 30.0)],  # actor shares 1 of 2 patterns
        "Video B": [actor(["spinning"], 30.0), actor(["bouncing", "growing"], 5.0)],  # only clutter matches
        "Video C": [actor(["bouncing", "growing"], 30.0)],  # same look would not matter: same motion
        "Video D": [actor(["static"], 30.0)],
    })
    scores = action_scores(ctx)
    assert scores["Video A"] == pytest.approx(0.5 + AM_ANY_OBJECT_WEIGHT * 0.5)
    assert scores["Video B"] == pytest.approx(0.0 + AM_ANY_OBJECT_WEIGHT * 1.0)
    assert scores["Video C"] == pytest.approx(1.0 + AM_ANY_OBJECT_WEIGHT * 1.0)
    assert scores["Video D"] == pytest.approx(0.0)
    assert decide_am(ctx)[0] == "C"


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
    """VS: content similarity. MVR: motion timing outweighs content (A looks most like the reference,
    C moves in sync with it), and no reader calls are needed."""
    script = {"ref": {"emb": [1, 0, 0], "emb_motion": [1, 0, 0]},
              "a": {"emb": [0.7, 0.7, 0], "emb_motion": [0, 1, 0]}, "b": {"emb": [0.2, 0.9, 0], "emb_motion": [0, 0, 1]},
              "c": {"emb": [0.6, 0.8, 0], "emb_motion": [0.9, 0.1, 0]},
              "d": {"emb": [0, 0, 1], "emb_motion": [0, 1, 1]}}
    assert solve(tmp_path, script, "VS", "Which candidate is a near-duplicate of the reference?", FOUR, REF4)[0] == "A"
    letter, tools, _ = solve(tmp_path, script, "MVR", "Which candidate shows the same event from another viewpoint?",
                             FOUR, REF4)
    assert letter == "C"
    assert sorted({a["aspect"] for t, a in tools if t == "visual_similarity"}) == ["content", "motion"]
    assert "video_reader" not in {t for t, _ in tools}


@pytest.mark.parametrize("emb,expected", [([0.95, 0.31, 0], "A"), ([0.2, 0.98, 0], "B")])
def test_rid_yes_no_by_identity_score(tmp_path, emb, expected):
    """The identity aspect decides (score >= 0.5 = same); backgrounds (content) are not asked."""
    script = {"v1": {"emb_identity": [1, 0, 0], "emb": [0, 0, 1]}, "v2": {"emb_identity": emb, "emb": [0, 0, 1]}}
    letter, tools, trace = solve(tmp_path, script, "RID", "Do the two clips show the same person?",
                                 {"A": "Yes, the same person", "B": "No, different people"},
                                 {"Video 1": "v1", "Video 2": "v2"})
    assert letter == expected
    assert [a["aspect"] for t, a in tools if t == "visual_similarity"] == ["identity"]
    reason = [s for s in trace["steps"] if s["kind"] == "final"][0]["reason"]
    assert "identity score" in reason and "threshold 0.5" in reason


@pytest.mark.parametrize("emb,expected", [([0.95, 0.31, 0], "A"), ([0.2, 0.98, 0], "B")])
def test_rid_falls_back_to_content_when_no_subject_is_found(tmp_path, emb, expected):
    script = {"v1": {"emb_identity": [0, 0, 0], "emb": [1, 0, 0]}, "v2": {"emb_identity": [0, 0, 0], "emb": emb}}
    letter, tools, trace = solve(tmp_path, script, "RID", "Do the two clips show the same person?",
                                 {"A": "Yes, the same person", "B": "No, different people"},
                                 {"Video 1": "v1", "Video 2": "v2"})
    assert letter == expected
    assert [a["aspect"] for t, a in tools if t == "visual_similarity"] == ["identity", "content"]
    assert "content score" in [s for s in trace["steps"] if s["kind"] == "final"][0]["reason"]


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
