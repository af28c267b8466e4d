"""Every task's scripted policy picks the option its evidence supports (tool doubles), and the
meta planner identifies question types and option-video mappings."""
from __future__ import annotations

import pytest

import test_sama_doubles as D
from sama_model.agent import SamaAgent
from sama_model.profiles import build_config
from sama_model.question import AgentQuestion, VideoRef
from sama_model.skills.meta_planner.policy import identify_task, option_video_map
from sama_model.skills.multi_video_comparison.cnt import counting_relation, counting_target
from sama_model.trace import load_trace

FOUR = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}
REF4 = {"Reference": "ref", "Video A": "a", "Video B": "b", "Video C": "c", "Video D": "d"}


def solve(tmp_path, script, task, question, options, stems, subtitles=None, **args):
    D.reset(script)
    q = D.make_question(tmp_path, "q", task, question, options, stems, subtitles)
    # these tests exercise each task's skill, so the task code is given (task_hint=on); identification is tested apart
    result = SamaAgent(build_config(**{**D.DOUBLE_ARGS, "task_hint": "on", **args})).answer(q, tmp_path / "t.json")
    trace = load_trace(tmp_path / "t.json")
    tools = [(s["tool"], s["args"]) for s in trace["steps"] if s["kind"] == "tool"]
    return result.letter, tools, trace


def test_cnt_more_than_reference(tmp_path):
    script = {"ref": {"sg": 2}, "a": {"sg": 1}, "b": {"sg": 2}, "c": {"sg": 4}, "d": {"sg": 0}}
    letter, tools, _ = solve(tmp_path, script, "CNT", "Which video shows more cups than the reference?", FOUR, REF4)
    assert letter == "C"
    assert {t for t, _ in tools} == {"scene_graph", "object_tracker", "video_reader"}


def _final_reason(trace: dict) -> str:
    return [s for s in trace["steps"] if s["kind"] == "final"][-1]["reason"]


def test_cnt_answer_that_one_count_off_would_change_is_marked_fragile(tmp_path):
    """C leads with 4 against 2, 2, 0: no single count one off changes it. With B at 3 (C at 4), C one
    fewer ties B (listed first) and B one more ties C: both named, the answer marked fragile."""
    question = "Which video shows more cups than the reference?"
    steady = {"ref": {"sg": 2}, "a": {"sg": 2}, "b": {"sg": 2}, "c": {"sg": 4}, "d": {"sg": 0}}
    letter, _, trace = solve(tmp_path, steady, "CNT", question, FOUR, REF4)
    assert letter == "C" and "fragile" not in _final_reason(trace)
    close = {**steady, "b": {"sg": 3}}
    letter, _, trace = solve(tmp_path, close, "CNT", question, FOUR, REF4)
    assert letter == "C"
    assert ("fragile: one count off changes the answer (Video B one more -> B; Video C one fewer -> B)"
            in _final_reason(trace))


def test_cnt_match_probability_from_the_trackers_followed_objects(tmp_path):
    """Every video's tracker lists its followed objects' probabilities: the candidate most likely to hold the
    reference's count wins (B, surely 2, against A, whose second object reads 0.62, as the reference's 0.65),
    where the counts alone (A and B both 2) would take A; the reason names the doubts. When a video's count
    was settled against its tracker (scene graph and reader say 3, the tracker 2), the counts decide."""
    question = "Which video shows the same number of cups as the reference?"
    probs = {"ref": [1.0, 0.65], "a": [1.0, 0.62], "b": [1.0, 1.0], "c": [1.0], "d": [1.0, 1.0, 1.0]}
    script = {k: {"sg": sum(p >= 0.6 for p in v), "probs": v} for k, v in probs.items()}
    letter, _, trace = solve(tmp_path, script, "CNT", question, FOUR, REF4)
    reason = _final_reason(trace)
    assert letter == "B"
    assert ("highest count match probability (eq, two readings): Video B (Video A=0.536, Video B=0.650, "
            "Video C=0.350, Video D=0.000)") in reason
    # (the first readings' answer is fragile, so every video is read again; the second reading, on shifted frames, reads the same here: one object of one reading weighs half, so A's
    # 0.62 taken as one no longer changes the answer)
    assert "fragile: Reference's object at 0.65 taken as none -> C; the runner-up's match probability" in reason
    plain = {k: {"sg": v["sg"]} for k, v in script.items()}
    letter, tools, _ = solve(tmp_path, plain, "CNT", question, FOUR, REF4)
    assert letter == "A" and not any(a.get("shift_frames") for _, a in tools)  # no probabilities: no second reading
    outvoted = {**script, "d": {"sg": 3, "tr": 2, "reader": "three cups", "probs": [1.0, 1.0]}}
    letter, _, trace = solve(tmp_path, outvoted, "CNT", question, FOUR, REF4)
    assert "highest count match (eq)" in _final_reason(trace)


def test_cnt_weighs_the_trackers_second_reading_on_shifted_frames(tmp_path):
    """Where the first readings' answer is fragile (A at 1.0 against B's 0.7, a close runner-up), every video is read
    a second time one frame later (``shift_frames`` 1), and the match probability is that of the two readings' mean
    count distribution: A reads surely 2 then surely 3 (P(2) = 0.5), B 2 at 0.7 then at 0.9 (P(2) = 0.8), the
    reference surely 2 twice; the first reading alone would take A. A steady answer is not read again."""
    question = "Which video shows the same number of cups as the reference?"
    first = {"ref": [1.0, 1.0], "a": [1.0, 1.0], "b": [1.0, 0.7], "c": [1.0], "d": [1.0, 1.0, 1.0]}
    second = {**first, "a": [1.0, 1.0, 1.0], "b": [1.0, 0.9]}
    script = {k: {"sg": sum(p >= 0.6 for p in v), "probs": v, "probs_shifted": second[k]} for k, v in first.items()}
    letter, tools, trace = solve(tmp_path, script, "CNT", question, FOUR, REF4)
    assert letter == "B"
    shifted = sorted(a["video"] for t, a in tools if t == "object_tracker" and a.get("shift_frames") == 1)
    assert shifted == ["Reference", "Video A", "Video B", "Video C", "Video D"]
    reason = _final_reason(trace)
    assert ("highest count match probability (eq, two readings): Video B (Video A=0.500, Video B=0.800, "
            "Video C=0.000, Video D=0.000)") in reason
    # (B's 0.9 lies outside DOUBT_RANGE; its 0.7 taken as none leaves B 0.45 against A's 0.5)
    assert ("fragile: Video B's object at 0.70 taken as none -> A; the runner-up's match probability 0.500 is at "
            "least 0.5 of the best's 0.800") in reason
    single = {k: {key: v for key, v in s.items() if key != "probs_shifted"} for k, s in script.items()}
    assert solve(tmp_path, single, "CNT", question, FOUR, REF4)[0] == "A"  # (both readings alike: the first's answer)
    sure = {**first, "b": [1.0]}  # A surely 2 like the reference, nobody close
    steady = {k: {"sg": len(v), "probs": v, "probs_shifted": second[k]} for k, v in sure.items()}
    letter, tools, trace = solve(tmp_path, steady, "CNT", question, FOUR, REF4)
    assert letter == "A" and not any(a.get("shift_frames") for _, a in tools)
    assert "highest count match probability (eq): Video A" in _final_reason(trace)


@pytest.mark.parametrize("question,expected", [("Which video shows more cups than the reference?", "D"),
                                               ("Which video shows fewer cups than the reference?", "C")])
def test_cnt_tied_counts_broken_by_the_estimates_behind_them(tmp_path, question, expected):
    """B and C (fewer) and C and D (more) have the same count; the tracker's two estimates behind it
    (regions + points: C 1+2=3 < B 2+2=4, C 4+3=7 < D 4+4=8) decide: the one with less (more) evidence wins.
    Without estimates the first listed wins, as before."""
    est = {"ref": (2, 2), "a": (3, 3), "b": (2, 2), "c": (1, 2), "d": (4, 4)}
    counts = {"ref": 2, "a": 3, "b": 1, "c": 1, "d": 3}
    if "more" in question:
        est, counts = {**est, "c": (4, 3), "a": (1, 1)}, {**counts, "c": 3, "a": 1, "b": 2}
    script = {k: {"sg": counts[k], "estimates": {"regions": r, "points": p}} for k, (r, p) in est.items()}
    letter, _, _ = solve(tmp_path, script, "CNT", question, FOUR, REF4)
    assert letter == expected
    plain = {k: {"sg": v["sg"]} for k, v in script.items()}
    assert solve(tmp_path, plain, "CNT", question, FOUR, REF4)[0] == ("C" if "more" in question else "B")


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


def _fd_ctx(question: str, manip: dict[str, float]):
    """An FD PolicyContext (Videos 1 and 2, 3 s) whose memory holds grounding and reader evidence of Video 2's
    inconsistency and the given manipulation_detector scores."""
    from sama_model.memory import EvidenceMemory
    from sama_model.skills.context import PolicyContext
    from sama_model.skills.temporal_grounding.policy import ARTIFACT_QUERY, CHANGE_QUERY
    from sama_model.tools.base import ToolResult

    labels = ["Video 1", "Video 2"]
    opts = {"A": "Video 1", "B": "Video 2"}
    mem = EvidenceMemory(labels)
    mem.add(ToolResult("temporal_grounding", {"video": "Video 2", "query": CHANGE_QUERY},
                       data={"boundaries": [0.5, 1.0, 1.5], "spans": []}, videos=["Video 2"], call_id="g"), 1)
    mem.add(ToolResult("video_reader", {"video": "Video 2", "query": ARTIFACT_QUERY},
                       data={"answer": "There is flickering."}, videos=["Video 2"], call_id="r"), 1)
    for i, (v, score) in enumerate(manip.items()):
        mem.add(ToolResult("manipulation_detector", {"video": v},
                           data={"score": score}, videos=[v], call_id=f"m{i}"), 1)
    q = AgentQuestion("q", question, opts, tuple(VideoRef(v, f"/{v}.mp4") for v in labels))
    return PolicyContext(q, "FD", "registry", mem, set(), lambda _: 3.0, option_video_map(opts, labels))


@pytest.mark.parametrize("question,expected", [("Which video has been manipulated?", "A"),
                                               ("Which video is real?", "B")])
def test_fd_manipulation_score_decides_when_every_video_has_one(question, expected):
    """The detector's manipulation score outranks the reader/grounding inconsistency (which
    favours Video 2 here); the inconsistency only breaks exact ties."""
    from sama_model.skills.temporal_grounding.policy import decide_fd

    letter, reason = decide_fd(_fd_ctx(question, {"Video 1": 0.7, "Video 2": 0.2}))
    assert letter == expected and reason.startswith("manipulation scores Video 1=0.700, Video 2=0.201")
    assert "fragile" not in reason  # a gap of 0.499
    # equal manipulation scores: the inconsistency evidence breaks the tie (Video 2 is inconsistent)
    assert decide_fd(_fd_ctx(question, {"Video 1": 0.5, "Video 2": 0.5}))[0] == ("B" if expected == "A" else "A")
    # a score for one video only: the inconsistency rule decides, as without the analyser
    assert decide_fd(_fd_ctx(question, {"Video 1": 0.9}))[0] == ("B" if expected == "A" else "A")


@pytest.mark.parametrize("question,expected,pair", [("Which video has been manipulated?", "A", "Video 1 and Video 2"),
                                                    ("Which video is real?", "B", "Video 2 and Video 1")])
def test_fd_close_manipulation_scores_are_marked_fragile(question, expected, pair):
    """Detector scores 0.6 and 0.5 (+ 0.001 of Video 2's inconsistency, the tie-break) differ by 0.099, under
    FD_FRAGILE_MARGIN: marked fragile, the chosen video named first. The inconsistency rule alone (no detector
    scores) is on another scale and never marked."""
    from sama_model.skills.temporal_grounding.policy import decide_fd

    asked = "real" if "real" in question else "manipulated"
    assert decide_fd(_fd_ctx(question, {"Video 1": 0.6, "Video 2": 0.5})) == (
        expected, (f"manipulation scores Video 1=0.600, Video 2=0.501; asked for the {asked} video; fragile: the "
                   f"manipulation scores of {pair} differ by 0.099 < 0.15 (re-encoding could flip this answer)"))
    letter, reason = decide_fd(_fd_ctx(question, {}))
    assert letter == ("B" if asked == "manipulated" else "A") and "fragile" not in reason


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
    from sama_model.skills.multi_video_comparison.am import ACTION_QUERY
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
    from sama_model.skills.multi_video_comparison.am import main_actor

    objs = [{"id": 1, "pattern": "zig-zag", "patterns": ["zig-zag"], "path_px": 200.0},
            {"id": 2, "pattern": "spinning", "patterns": ["static", "spinning"], "path_px": 3.0},
            {"id": 3, "pattern": "unknown", "patterns": ["unknown"], "path_px": 900.0}]
    assert main_actor(objs)["id"] == 1  # no sizes reported: the one that moves most ("unknown" skipped)
    sized = [dict(objs[0], size_px=10.0), dict(objs[1], size_px=40.0), dict(objs[2], size_px=99.0)]
    assert main_actor(sized)["id"] == 2  # sizes reported: the largest
    assert main_actor([objs[2]]) is None


def test_am_action_scores_exact_values():
    from sama_model.skills.multi_video_comparison.am import AM_ANY_OBJECT_WEIGHT, action_scores, decide as decide_am

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
    letter, why = decide_am(ctx)
    assert letter == "C" and "fragile" not in why  # C leads A by 1.3 - 0.65 = 0.65


def test_am_answer_with_a_small_lead_is_marked_fragile():
    """Two candidates whose actors move alike score the same: the first listed wins, and the reason
    says the answer is fragile (its lead is under AM_FRAGILE_MARGIN)."""
    from sama_model.skills.multi_video_comparison.am import AM_FRAGILE_MARGIN, decide as decide_am

    actor = lambda pats: {"pattern": pats[0], "patterns": pats, "size_px": 30.0, "path_px": 10.0}
    ctx = _am_ctx({"Reference": [actor(["bouncing"])], "Video A": [actor(["linear"])],
                   "Video B": [actor(["bouncing"])], "Video C": [actor(["bouncing"])], "Video D": [actor(["static"])]})
    letter, why = decide_am(ctx)
    assert letter == "B"
    assert f"fragile: Video B leads Video C by 0.000 < {AM_FRAGILE_MARGIN} (re-encoding could flip this answer)" in why


def test_am_motion_found_actor_scores_exact_values():
    """data["actor"] (found by its own motion, followed by its texture) is compared by its patterns
    and its motion signature; the segmentation objects then weigh AM_SEGMENT_WEIGHT, and fully
    where a video has no motion-found actor."""
    from sama_model.memory import EvidenceMemory
    from sama_model.skills.context import PolicyContext
    from sama_model.skills.multi_video_comparison.am import (
        AM_ANY_OBJECT_WEIGHT, AM_SEGMENT_WEIGHT, AM_SIGNATURE_WEIGHT, action_scores, decide as decide_am,
        signature_similarity)
    from sama_model.tools.base import ToolResult

    seg = lambda pats: [{"pattern": pats[0], "patterns": pats, "size_px": 30.0, "path_px": 10.0}]
    orbit = {"extent": 2.0, "straight": 0.1, "turn": 0.0, "swing": 0.1, "reversals": 1.0}
    slide = {"extent": 3.0, "straight": 0.95, "turn": 0.0, "swing": 0.05, "reversals": 0.0}
    mover = lambda pats, sig: {"patterns": pats, "signature": sig, "near_threshold": ["extent"]}
    data = {
        "Reference": {"objects": seg(["linear"]), "actor": mover(["orbiting"], orbit)},  # background read as a slide
        "Video A": {"objects": seg(["linear"]), "actor": mover(["linear"], slide)},
        "Video B": {"objects": seg(["zig-zag"]), "actor": mover(["orbiting"], orbit)},
        "Video C": {"objects": seg(["linear"]), "actor": None},
        "Video D": {"objects": seg(["static", "spinning"]), "actor": mover(["static"], slide)},
    }
    labels = list(REF4)
    q = AgentQuestion("q", "Which candidate shows the same action?", FOUR, tuple(VideoRef(v, f"/{v}.mp4") for v in labels))
    mem = EvidenceMemory(labels)
    for i, (video, d) in enumerate(data.items()):
        mem.add(ToolResult("motion_analyzer", {"video": video, "next_video": None}, data=d, videos=[video],
                           call_id=f"m{i}"), 1)
    ctx = PolicyContext(q, "AM", "registry", mem, {"motion_analyzer"}, lambda _: 3.0, option_video_map(FOUR, labels))
    scores = action_scores(ctx)
    seg_match = 1.0 + AM_ANY_OBJECT_WEIGHT  # the segmentation main actors agree ("linear")
    assert scores["Video A"] == pytest.approx(AM_SIGNATURE_WEIGHT * signature_similarity(orbit, slide)
                                              + AM_SEGMENT_WEIGHT * seg_match)
    assert scores["Video B"] == pytest.approx(1.0 + AM_SIGNATURE_WEIGHT * 1.0)
    assert scores["Video C"] == pytest.approx(seg_match)  # no motion-found actor: segmentation in full
    # D's actor: static + the outline's spinning
    assert scores["Video D"] == pytest.approx(AM_SIGNATURE_WEIGHT * signature_similarity(orbit, slide))
    letter, why = decide_am(ctx)
    assert letter == "B" and "found by its motion: ['orbiting'] (near threshold: extent)" in why


def test_am_flow_read_movers_are_compared_by_their_action_probabilities():
    """With data["mover"] in every video the score is the chance the two movers do the same action
    (sum of p_ref x p_cand), and nothing else is added; when a candidate has none, every candidate is
    scored by the actor and segmentation terms (one scale); the reason names the reference mover's
    two likeliest actions."""
    from sama_model.memory import EvidenceMemory
    from sama_model.skills.context import PolicyContext
    from sama_model.skills.multi_video_comparison.am import (AM_ANY_OBJECT_WEIGHT, action_agreement, action_scores,
                                                              decide as decide_am)
    from sama_model.tools.base import ToolResult

    seg = lambda pats: [{"pattern": pats[0], "patterns": pats, "size_px": 30.0, "path_px": 10.0}]
    probs = lambda **p: {"action": max(p, key=p.get), "action_probs": p}
    data = {
        "Reference": {"objects": seg(["linear"]), "mover": probs(spinning=0.7, pulsing=0.2, linear=0.1)},
        "Video A": {"objects": seg(["linear"]), "mover": probs(spinning=0.1, pulsing=0.1, linear=0.8)},
        "Video B": {"objects": seg(["linear"]), "mover": probs(spinning=0.6, pulsing=0.4)},
        "Video C": {"objects": seg(["linear"]), "mover": probs(linear=1.0)},
        "Video D": {"objects": seg(["bouncing"]), "mover": probs(bouncing=1.0)},
    }
    labels = list(REF4)
    q = AgentQuestion("q", "Which candidate shows the same action?", FOUR, tuple(VideoRef(v, f"/{v}.mp4") for v in labels))

    def context(data):
        mem = EvidenceMemory(labels)
        for i, (video, d) in enumerate(data.items()):
            mem.add(ToolResult("motion_analyzer", {"video": video, "next_video": None}, data=d, videos=[video],
                               call_id=f"m{i}"), 1)
        return PolicyContext(q, "AM", "registry", mem, {"motion_analyzer"}, lambda _: 3.0,
                             option_video_map(FOUR, labels))

    ctx = context(data)
    scores = action_scores(ctx)
    assert action_agreement({"a": 0.5, "b": 0.5}, {"a": 1.0}) == pytest.approx(0.5)
    assert scores == pytest.approx({"Video A": 0.7 * 0.1 + 0.2 * 0.1 + 0.1 * 0.8, "Video B": 0.7 * 0.6 + 0.2 * 0.4,
                                    "Video C": 0.1, "Video D": 0.0})
    letter, why = decide_am(ctx)
    assert letter == "B" and "main mover (flow): spinning 0.70, pulsing 0.20" in why
    # a still candidate (no action) agrees with nothing; the others keep their scores
    still = {"action": "static", "action_probs": {}}
    scores = action_scores(context({**data, "Video D": {"objects": seg(["static"]), "mover": still}}))
    assert scores["Video D"] == 0.0 and scores["Video B"] == pytest.approx(0.5)
    # one candidate without a mover: all are scored by the segmentation objects (one scale)
    scores = action_scores(context({**data, "Video C": {"objects": seg(["linear"]), "mover": None}}))
    seg_match = 1.0 + AM_ANY_OBJECT_WEIGHT
    assert scores == pytest.approx({"Video A": seg_match, "Video B": seg_match, "Video C": seg_match, "Video D": 0.0})


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


@pytest.mark.parametrize("emb,expected,near", [([0.95, 0.31, 0], "A", False), ([0.6, 0.8, 0], "A", True),
                                                ([0.4, 0.9165, 0], "B", True), ([0.2, 0.98, 0], "B", False)])
def test_rid_verdict_near_its_threshold_says_so(tmp_path, emb, expected, near):
    """Scores 0.6 and 0.4 lie within RID_NEAR_MARGIN (0.15) of 0.5: the trace warns that re-encoding
    could flip them; 0.95 and 0.2 do not."""
    script = {"v1": {"emb_identity": [1, 0, 0]}, "v2": {"emb_identity": emb}}
    letter, _, trace = solve(tmp_path, script, "RID", "Do the two clips show the same person?",
                             {"A": "Yes, the same person", "B": "No, different people"},
                             {"Video 1": "v1", "Video 2": "v2"})
    reason = [s for s in trace["steps"] if s["kind"] == "final"][0]["reason"]
    assert letter == expected
    assert ("near the threshold (within 0.15)" in reason) is near


def test_rid_reads_a_pair_read_from_stacks_a_second_time_and_weighs_both(tmp_path):
    """A pair whose first identity reading compared stack views (the lite backend's ``stack_texture``) is read again one
    frame later (``shift_frames`` 1), and the mean of the two readings decides: 0.6 then 0.3 is 0.45, "different"; a
    pair read otherwise is not read again; a second reading that finds no subject leaves the first's score."""
    yes_no = {"A": "Yes, the same person", "B": "No, different people"}
    videos = {"Video 1": "v1", "Video 2": "v2"}
    question = "Do the two clips show the same person?"
    script = {"v1": {"emb_identity": [1, 0, 0]},
              "v2": {"emb_identity": [0.6, 0.8, 0], "emb_identity_shifted": [0.3, 0.9539, 0]},
              "_stack": {"stack_texture": 0.2}}
    letter, tools, trace = solve(tmp_path, script, "RID", question, yes_no, videos)
    assert letter == "B"
    assert [(a["aspect"], a.get("shift_frames", 0)) for t, a in tools if t == "visual_similarity"] == \
        [("identity", 0), ("identity", 1)]
    reason = _final_reason(trace)
    assert "identity (two readings) score 0.450 < threshold 0.5" in reason and "near the threshold" in reason
    second = [s for s in trace["steps"] if s["kind"] == "tool" and s.get("args", {}).get("shift_frames") == 1]
    assert second and "frames shifted by 1" in second[0]["text"]
    unstacked = {k: v for k, v in script.items() if k != "_stack"}
    letter, tools, trace = solve(tmp_path, unstacked, "RID", question, yes_no, videos)
    assert letter == "A" and not any(a.get("shift_frames") for _, a in tools)
    assert "identity score 0.600 >= threshold 0.5" in _final_reason(trace)
    lost = {**script, "v2": {**script["v2"], "emb_identity_shifted": [0, 0, 0]}}
    letter, tools, trace = solve(tmp_path, lost, "RID", question, yes_no, videos)
    assert letter == "A" and any(a.get("shift_frames") == 1 for _, a in tools)
    assert "identity score 0.600 >= threshold 0.5" in _final_reason(trace)
    # candidates named by the options: each pair read from stacks is read again, and the means decide
    four = {"ref": {"emb_identity": [1, 0, 0]},
            "a": {"emb_identity": [0.8, 0.6, 0], "emb_identity_shifted": [0.4, 0.9165, 0]},
            "b": {"emb_identity": [0.7, 0.7141, 0], "emb_identity_shifted": [0.9, 0.4359, 0]},
            "c": {"emb_identity": [0.1, 0.995, 0]}, "d": {"emb_identity": [0, 1, 0]}, "_stack": {"stack_texture": 0.5}}
    question = "Which candidate video shows the same individual as the reference?"
    letter, tools, trace = solve(tmp_path, four, "RID", question, FOUR, REF4)
    assert letter == "B"
    assert sorted(a["video_b"] for t, a in tools if t == "visual_similarity" and a.get("shift_frames") == 1) == \
        ["Video A", "Video B", "Video C", "Video D"]
    assert "highest identity score: Video B (Video A=0.600, Video B=0.800, Video C=0.100, Video D=0.000)" in \
        _final_reason(trace)


@pytest.mark.parametrize("emb,gate,near", [([0.95, 0.31, 0], 0.2, True), ([0.95, 0.31, 0], 0.9, False),
                                            ([0.2, 0.98, 0], 0.8, True), ([0.2, 0.98, 0], 0.3, False)])
def test_rid_verdict_whose_other_gate_side_disagrees_says_so(tmp_path, emb, gate, near):
    """Scores 0.95 and 0.2 are far from the threshold, but a camera near the still-and-moving gate gives the
    score on the gate's other side (``gate_score``): when it would give the other verdict, the trace says so."""
    script = {"v1": {"emb_identity": [1, 0, 0]}, "v2": {"emb_identity": emb}, "_gate": {"gate_score": gate}}
    letter, _, trace = solve(tmp_path, script, "RID", "Do the two clips show the same person?",
                             {"A": "Yes, the same person", "B": "No, different people"},
                             {"Video 1": "v1", "Video 2": "v2"})
    reason = _final_reason(trace)
    assert letter == ("A" if emb[0] > 0.5 else "B")
    assert ("near the still-and-moving gate" in reason) is near and ("fragile" in reason) is near
    if near:
        assert f"({gate:.3f})" in reason


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


@pytest.mark.parametrize("c3_c2,fragile", [
    (0.3, ""),  # C's mean continuity 0.2
    (0.9, "; fragile: B leads C by 0.100 < 0.15 (re-encoding could flip this answer)")])
def test_seq_answer_with_a_small_lead_is_marked_fragile(tmp_path, c3_c2, fragile):
    """B (Clip 1 -> 2 -> 3) has mean continuity (0.9 + 0.5) / 2 = 0.7; C (3 -> 2 -> 1) 0.2 leaves it unmarked,
    0.6 (Clip 3 -> 2 read at 0.9) is a lead of 0.1, under SEQ_FRAGILE_MARGIN: marked."""
    script = {"c1": {"next": {"c2": 0.9, "c3": 0.2}}, "c2": {"next": {"c3": 0.5, "c1": 0.3}},
              "c3": {"next": {"c2": c3_c2}}}
    opts = {"A": "Clip 2, Clip 1, Clip 3", "B": "Clip 1, Clip 2, Clip 3", "C": "Clip 3, Clip 2, Clip 1"}
    letter, _, trace = solve(tmp_path, script, "SEQ", "What is the correct chronological order of the clips?", opts,
                             {"Clip 1": "c1", "Clip 2": "c2", "Clip 3": "c3"})
    c = (c3_c2 + 0.3) / 2
    assert letter == "B"
    assert trace["steps"][-1]["reason"] == f"mean continuity per option: A=0.250, B=0.700, C={c:.3f}{fragile}"


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


def _cmp_ctx(task: str, question: str, results: list[tuple[str, dict, dict]]):
    """A comparison-task PolicyContext (Reference, Videos A-D) whose memory holds the given (tool, args, data)
    results."""
    from sama_model.memory import EvidenceMemory
    from sama_model.skills.context import PolicyContext
    from sama_model.tools.base import ToolResult

    labels = list(REF4)
    mem = EvidenceMemory(labels)
    for i, (tool, args, data) in enumerate(results):
        videos = [args[k] for k in ("video_a", "video_b") if k in args] or [args["video"]]
        mem.add(ToolResult(tool, args, data=data, videos=videos, call_id=f"c{i}"), 1)
    q = AgentQuestion("q", question, FOUR, tuple(VideoRef(v, f"/{v}.mp4") for v in labels))
    return PolicyContext(q, task, "registry", mem, {"visual_similarity", "motion_analyzer"}, lambda _: 3.0,
                         option_video_map(FOUR, labels))


def _sims(aspect: str, scores: dict[str, float]) -> list[tuple[str, dict, dict]]:
    return [("visual_similarity", {"video_a": "Reference", "video_b": c, "aspect": aspect}, {"score": s})
            for c, s in scores.items()]


@pytest.mark.parametrize("b_motion,fragile", [
    (0.4, ""),  # B 0.650
    (0.8, "; fragile: Video A leads Video B by 0.100 < 0.16 (re-encoding could flip this answer)")])
def test_mvr_answer_with_a_small_lead_is_marked_fragile(b_motion, fragile):
    """A's same-event score (motion + 0.5 x content) 1.15 leads B's 0.65 (unmarked) or 1.05: a lead of
    0.1, under MVR_FRAGILE_MARGIN, is marked fragile."""
    from sama_model.skills.multi_video_comparison.mvr import decide

    motion = {"Video A": 0.9, "Video B": b_motion, "Video C": 0.2, "Video D": 0.1}
    content = {"Video A": 0.5, "Video B": 0.5, "Video C": 0.4, "Video D": 0.0}
    ctx = _cmp_ctx("MVR", "Which candidate shows the same event from another viewpoint?",
                   _sims("motion", motion) + _sims("content", content))
    assert decide(ctx) == ("A", ("highest same-event score (motion timing + content): Video A (Video A=1.150, "
                                 f"Video B={b_motion + 0.25:.3f}, Video C=0.400, Video D=0.100){fragile}"))


@pytest.mark.parametrize("a_style,fragile", [
    (0.3, ""),
    (0.46, "; fragile: Video B leads Video A by 0.040 < 0.05 (re-encoding could flip this answer)")])
def test_art_answer_with_a_small_lead_is_marked_fragile(a_style, fragile):
    """B's style similarity 0.5 leads A's by 0.2 (unmarked) or by 0.04: under ART_FRAGILE_MARGIN (and over the
    reader tie-break's 0.02), marked fragile."""
    from sama_model.skills.multi_video_comparison.art import decide

    ctx = _cmp_ctx("ART", "Which candidate shares the reference's art style?",
                   _sims("style", {"Video A": a_style, "Video B": 0.5, "Video C": 0.2, "Video D": 0.1}))
    assert decide(ctx) == ("B", (f"highest style similarity: Video B (Video A={a_style:.3f}, Video B=0.500, "
                                 f"Video C=0.200, Video D=0.100){fragile}"))


@pytest.mark.parametrize("a_content,fragile", [
    (0.46, ""),
    (0.485, "; fragile: Video B leads Video A by 0.015 < 0.02 (re-encoding could flip this answer)")])
def test_vs_answer_with_a_small_lead_is_marked_fragile(a_content, fragile):
    """B's content similarity 0.5 leads A's by 0.04 (over VS_FRAGILE_MARGIN, unmarked) or by 0.015 (marked; no
    reader answers, so no tie-break)."""
    from sama_model.skills.multi_video_comparison.vs import decide

    ctx = _cmp_ctx("VS", "Which candidate is a near-duplicate of the reference?",
                   _sims("content", {"Video A": a_content, "Video B": 0.5, "Video C": 0.2, "Video D": 0.1}))
    assert decide(ctx) == ("B", (f"highest content similarity: Video B (Video A={a_content:.3f}, Video B=0.500, "
                                 f"Video C=0.200, Video D=0.100){fragile}"))


def _camera(video: str, trends: list[str], pan: float = 0.0, tilt: float = 0.0, zoom: float = 0.0):
    return ("motion_analyzer", {"video": video},
            {"camera": {"trends": trends, "pan": pan, "tilt": tilt, "zoom": zoom}, "objects": []})


@pytest.mark.parametrize("ref_zoom,fragile", [
    (0.1, ""),
    (0.05, ("; fragile: the shared zoom_in rests on Reference's zoom rate 0.050 < 0.06 (near the trend "
            "threshold: re-encoding could flip this answer)"))])
def test_spr_shared_trend_read_from_a_weak_rate_is_marked_fragile(ref_zoom, fragile):
    """C shares zoom_in with the reference (zoom rate 0.12). The reference's own zoom rate 0.1 stands
    unmarked; 0.05, under SPR_WEAK_RATE (the lite analyser names a trend at 0.04), marks the answer fragile."""
    from sama_model.skills.multi_video_comparison.spr import decide

    ctx = _cmp_ctx("SPR", "Which candidate shares at least one camera motion trend with the reference?", [
        _camera("Reference", ["zoom_in"], zoom=ref_zoom), _camera("Video A", ["tilt_up"], tilt=0.1),
        _camera("Video B", ["static"]), _camera("Video C", ["zoom_in"], zoom=0.12),
        _camera("Video D", ["pan_right"], pan=0.1)])
    assert decide(ctx) == ("C", ("reference trends ['zoom_in']; highest shared camera trends: Video C "
                                 f"(Video A=0.000, Video B=0.000, Video C=1.100, Video D=0.000){fragile}"))


def test_spr_shared_static_camera_is_not_marked():
    """A shared "static" is not marked (SPR_WEAK_RATE: the fitting set had no shared static near the threshold)."""
    from sama_model.skills.multi_video_comparison.spr import decide

    ctx = _cmp_ctx("SPR", "Which candidate shares at least one camera motion trend with the reference?", [
        _camera("Reference", ["static"]), _camera("Video A", ["tilt_up"], tilt=0.1),
        _camera("Video B", ["static"], pan=0.01), _camera("Video C", ["zoom_in"], zoom=0.12),
        _camera("Video D", ["pan_right"], pan=0.1)])
    letter, why = decide(ctx)
    assert letter == "B" and "fragile" not in why


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
    hinted = AgentQuestion("x", text, {"A": "a", "B": "b"}, (), task="vs")
    assert identify_task(hinted, use_hint=True) == ("VS", "registry")
    assert identify_task(hinted) == (code, "question text")  # the hint is opt-in (task_hint=on)
    assert identify_task(AgentQuestion("x", text, {}, (), task="vs"), use_hint=True) == ("", "open-ended")


def test_option_video_map_and_counting_parse():
    labels = ["Reference", "Video A", "Video B", "Video AB"]
    assert option_video_map({"A": "Video A", "B": "video b", "C": "Video AB", "D": "None"}, labels) == {
        "A": ["Video A"], "B": ["Video B"], "C": ["Video AB"], "D": []}
    assert option_video_map({"A": "2, 1, 3", "B": "B then A"}, ["Clip 1", "Clip 2", "Clip 3"]) == {
        "A": ["Clip 2", "Clip 1", "Clip 3"], "B": []}
    assert counting_target("Which video has fewer red cars than the reference?") == "red car"
    assert counting_target("How many people are dancing?") == "person"
    assert [counting_relation(x) for x in ("same number of", "more dogs", "fewer dogs")] == ["eq", "gt", "lt"]


# ----------------------------------------------------------------------------- DE visual relations

DE_OPTS = {"A": "Strengthens", "B": "Weakens"}
DE_LABELS = ["Premise", "Update"]


def de_ctx(hypothesis: str, results: list[tuple[str, dict, dict]]):
    """A DE PolicyContext (3 s clips) whose memory holds the given (tool, args, data) results."""
    from sama_model.memory import EvidenceMemory
    from sama_model.skills.context import PolicyContext
    from sama_model.tools.base import ToolResult

    mem = EvidenceMemory(DE_LABELS)
    for i, (tool, args, data) in enumerate(results):
        mem.add(ToolResult(tool, args, data=data, videos=[args["video"]], call_id=f"c{i}"), 1)
    q = AgentQuestion("q", f"Hypothesis: \"{hypothesis}\"\nDoes the Update video strengthen or weaken the "
                      "hypothesis?", DE_OPTS, tuple(VideoRef(v, f"/{v}.mp4") for v in DE_LABELS))
    tools = {"scene_graph", "object_tracker", "video_reader", "subtitle_retriever"}
    return PolicyContext(q, "DE", "registry", mem, tools, lambda _: 3.0, option_video_map(DE_OPTS, DE_LABELS))


def _track(boxes: list[list[float]], t0: float = 0.0) -> dict:
    times = [t0 + 0.5 * i for i in range(len(boxes))]
    c = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in boxes]
    return {"times": times, "boxes": boxes, "displacement": [c[-1][0] - c[0][0], c[-1][1] - c[0][1]]}


def test_de_relation_parsing():
    from sama_model.skills.subtitle.hypothesis import DeRelation, de_relation

    assert de_relation("The teal star will reach the orange zone.") == DeRelation("reach", "teal", "orange")
    assert de_relation("There are more circles than triangles in the room.") == DeRelation("more", "circle", "triangle")
    assert de_relation("The blue tower will end up taller than the white tower.") == DeRelation("taller", "blue", "white")
    assert de_relation("a man is cooking dinner.") is None


ZONE = _track([[140, 50, 165, 75]] * 6)


@pytest.mark.parametrize("subject_boxes,expected,gaps", [
    # moves right into the zone: gap 40 -> 0
    ([[90, 60, 100, 70], [105, 60, 115, 70], [120, 60, 130, 70], [135, 60, 145, 70]], "A", "40.0->0.0px"),
    # turns away upward: gap 40 -> hypot(50, 40)
    ([[90, 60, 100, 70], [95, 40, 105, 50], [90, 20, 100, 30], [80, 0, 90, 10]], "B", "40.0->64.0px"),
])
def test_de_reach_zone(subject_boxes, expected, gaps):
    from sama_model.skills.subtitle.de import decide as decide_de, plan as plan_de

    hyp = "The red square will reach the green zone."
    ctx = de_ctx(hyp, [])
    assert [(c.tool, c.args) for c in plan_de(ctx)] == [
        ("object_tracker", {"video": "Update", "query": "red"}), ("object_tracker", {"video": "Update", "query": "green"})]
    ctx = de_ctx(hyp, [("object_tracker", {"video": "Update", "query": "red"}, {"tracks": [_track(subject_boxes)]}),
                       ("object_tracker", {"video": "Update", "query": "green"}, {"tracks": [ZONE]})])
    letter, reason = decide_de(ctx)
    assert letter == expected and f"gap to 'green' zone {gaps}" in reason
    assert plan_de(ctx) and all(c.tool == "object_tracker" for c in plan_de(ctx))  # settled: no text reads


def test_de_reach_without_zone_uses_progress():
    """No zone-coloured region found: a subject that stops (a barrier) does not reach it."""
    from sama_model.skills.subtitle.de import decide as decide_de

    stops = [[0, 60, 10, 70], [10, 60, 20, 70], [20, 60, 30, 70], [30, 60, 40, 70], [31, 60, 41, 70], [31, 60, 41, 70]]
    ctx = de_ctx("The red square will reach the green zone.",
                 [("object_tracker", {"video": "Update", "query": "red"}, {"tracks": [_track(stops)]}),
                  ("object_tracker", {"video": "Update", "query": "green"}, {"tracks": []})])
    assert decide_de(ctx) == ("B", "reach: no 'green' zone found; last-third progress 0.0px vs first third 10.0px")


def _sg(video: str, counts: dict, **window) -> tuple[str, dict, dict]:
    args = {"video": video, "query": "", "n_frames": 6, "start": None, "end": None, **window}
    return "scene_graph", args, {"counts": counts, "frames": []}


@pytest.mark.parametrize("update_counts,expected,detail", [
    ({"star": 1, "circle": 0}, "A", "star 3+1=4 vs circle 2+0=2 (premise + update end)"),
    ({"circle": 3, "blob": 2}, "B", "star 3+0=3 vs circle 2+3=5 (premise + update end)"),
    ({"circle": 1}, "B", "star 3+0=3 vs circle 2+1=3 (premise + update end); fragile: one count off changes the "
                         "verdict (one more star or one fewer circle)"),
    ({"star": 2, "circle": 2}, "A", "star 3+2=5 vs circle 2+2=4 (premise + update end); fragile: one count off "
                                    "changes the verdict (one fewer star or one more circle)"),
])
def test_de_more_counts_premise_plus_update_end(update_counts, expected, detail):
    """A lead of 2 or more stands unmarked; a tie or a lead of one is marked fragile (one count off in either
    kind turns the verdict), naming which counts would."""
    from sama_model.skills.subtitle.de import decide as decide_de, plan as plan_de

    hyp = "There are more stars than circles in the room."
    planned = [(c.tool, c.args) for c in plan_de(de_ctx(hyp, []))]
    assert planned == [("scene_graph", {"video": "Premise", "query": "", "n_frames": 6}),
                       ("scene_graph", {"video": "Update", "query": "", "n_frames": 6, "start": 2.25, "end": None})]
    ctx = de_ctx(hyp, [_sg("Premise", {"star": 3, "circle": 2, "square": 4}),
                       _sg("Update", update_counts, start=2.25)])
    assert decide_de(ctx) == (expected, f"more: {detail}")


def _tower_sg(query: str, window: dict, tops: list[float], x: float = 60.0) -> tuple[str, dict, dict]:
    """A scene_graph result whose every frame shows a stack of 10 px blocks from y=126 up to each top."""
    frames = []
    for top in tops:
        ys = list(range(116, int(top) - 1, -12))
        frames.append({"objects": [{"box": [x, y, x + 10, y + 10]} for y in ys] +
                       [{"box": [x + 60, 10, x + 70, 20]}]})  # a stray same-colour object: no stack
    args = {"video": "Update", "query": query, "n_frames": 6, "start": None, "end": None, **window}
    return "scene_graph", args, {"frames": frames}


HEAD, TAIL = {"end": 0.75}, {"start": 2.25}


@pytest.mark.parametrize("blue_end,expected", [(20.0, "A"), (116.0, "B")])
def test_de_taller_compares_final_tops(blue_end, expected):
    from sama_model.skills.subtitle.de import decide as decide_de

    ctx = de_ctx("The blue tower will end up taller than the white tower.",
                 [_tower_sg("blue", HEAD, [80.0]), _tower_sg("blue", TAIL, [blue_end] * 3),
                  _tower_sg("white", HEAD, [68.0]), _tower_sg("white", TAIL, [68.0] * 3)])
    letter, reason = decide_de(ctx)
    assert letter == expected and reason == f"taller: final tops blue y={blue_end:.1f}, white y=68.0"


def test_de_taller_rival_unseen_uses_growth():
    from sama_model.skills.subtitle.de import decide as decide_de

    ctx = de_ctx("The blue tower will end up taller than the white tower.",
                 [_tower_sg("blue", HEAD, [80.0]), _tower_sg("blue", TAIL, [116.0]),
                  ("scene_graph", {"video": "Update", "query": "white", "n_frames": 6, "start": None, "end": 0.75},
                   {"frames": []})])
    assert decide_de(ctx) == ("B", "taller: white tower unseen; blue top y=80.0->116.0")


def test_de_unparseable_hypothesis_uses_text_rule():
    """No checkable relation: the text evidence is planned and the overlap rule decides."""
    from sama_model.skills.subtitle.de import decide as decide_de, plan as plan_de
    from sama_model.skills.subtitle.evidence import EVENT_QUERY

    hyp = "The guests will enjoy the party."
    assert {c.tool for c in plan_de(de_ctx(hyp, []))} == {"subtitle_retriever", "video_reader"}
    ctx = de_ctx(hyp, [("video_reader", {"video": "Premise", "query": EVENT_QUERY}, {"answer": "Guests arrive."}),
                       ("video_reader", {"video": "Update", "query": EVENT_QUERY},
                        {"answer": "The guests never enjoy the party; nobody dances."})])
    letter, reason = decide_de(ctx)
    assert letter == "B" and reason.startswith("hypothesis states no checkable visual relation; hypothesis overlap")


def test_de_inconclusive_measurement_falls_back_to_text():
    """A relation the measurements cannot settle (subject never tracked) adds the text reads."""
    from sama_model.skills.subtitle.de import plan as plan_de

    ctx = de_ctx("The red square will reach the green zone.",
                 [("object_tracker", {"video": "Update", "query": "red"}, {"tracks": []}),
                  ("object_tracker", {"video": "Update", "query": "green"}, {"tracks": [ZONE]})])
    assert {c.tool for c in plan_de(ctx)} == {"object_tracker", "subtitle_retriever", "video_reader"}


def test_de_text_rule_after_a_failed_measurement_is_marked_fragile():
    """A checkable relation the tracker could not measure is answered by the text rule and marked
    fragile (another encoding may let the tracker measure it); a hypothesis with no checkable
    relation is answered by the same rule unmarked."""
    from sama_model.skills.multi_video_comparison.common import marked_fragile
    from sama_model.skills.subtitle.de import decide as decide_de
    from sama_model.skills.subtitle.evidence import EVENT_QUERY

    reads = [("video_reader", {"video": "Premise", "query": EVENT_QUERY}, {"answer": "A red square slides."}),
             ("video_reader", {"video": "Update", "query": EVENT_QUERY}, {"answer": "The red square stops short."})]
    unmeasured = de_ctx("The red square will reach the green zone.",
                        [("object_tracker", {"video": "Update", "query": "red"}, {"tracks": []}),
                         ("object_tracker", {"video": "Update", "query": "green"}, {"tracks": [ZONE]}), *reads])
    letter, reason = decide_de(unmeasured)
    assert letter == "B" and reason.startswith("reach: subject 'red' not tracked; hypothesis overlap")
    assert marked_fragile(reason) and "the visual check measured nothing" in reason
    letter, reason = decide_de(de_ctx("The guests will enjoy the party.", reads))
    assert letter == "B" and not marked_fragile(reason)
