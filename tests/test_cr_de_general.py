"""CR and DE on questions written unlike MVX-Synth's templates: CR's label search, reading a
video's option from the reader or abstaining; DE hypotheses with synonyms, passives, inverse
comparatives and negation."""
from __future__ import annotations

import pytest

from sama_model.memory import EvidenceMemory
from sama_model.question import AgentQuestion, VideoRef
from sama_model.skills.context import PolicyContext
from sama_model.skills.meta_planner.policy import option_video_map
from sama_model.skills.subtitle import cr
from sama_model.skills.subtitle.de import decide as decide_de, plan as plan_de
from sama_model.skills.subtitle.hypothesis import DeRelation, de_relation
from sama_model.tools.base import ToolResult
from test_agent_policies import HEAD, TAIL, ZONE, _tower_sg, _track, de_ctx

LABELS = ["Reference", "Video A", "Video B", "Video C"]
OPTS = {"A": "Video A", "B": "Video B", "C": "Video C"}
CR_Q = ("Each video below comes with its own counterfactual question and two options.\n"
        "Reference: Had the glass not been pushed, where would it be? Option 1: Still on the table. "
        "Option 2: On the floor.\n"
        "Video A: Suppose nobody had opened the gate. Option 1: The dog stays in the yard. Option 2: The dog escapes.\n"
        "Video B: What if the ramp were steeper? Option 1: The cart would go faster. Option 2: The cart would stop.\n"
        "Video C: If it had not rained, would the match go on? Option 1: No. Option 2: Yes.\n"
        "Which candidate's correct option number equals the Reference's?")


def cr_ctx(readers: dict[str, str], subtitles: dict[str, str] | None = None) -> PolicyContext:
    """A CR context whose memory holds each video's reader answer to its own question."""
    q = AgentQuestion("q", CR_Q, OPTS, tuple(VideoRef(v, f"/{v}.mp4") for v in LABELS))
    ctx = PolicyContext(q, "CR", "registry", EvidenceMemory(LABELS), {"video_reader", "subtitle_retriever"},
                        lambda _: 3.0, option_video_map(OPTS, LABELS))
    items = cr.cr_items(ctx)
    for i, (v, answer) in enumerate(readers.items()):
        ctx.memory.add(ToolResult("video_reader", {"video": v, "query": cr.reader_query(items[v])},
                                  data={"answer": answer}, videos=[v], call_id=f"r{i}"), 1)
    for i, (v, text) in enumerate((subtitles or {}).items()):
        ctx.memory.add(ToolResult("subtitle_retriever", {"video": v, "mode": "extract"}, data={"text": text},
                                  videos=[v], call_id=f"s{i}"), 1)
    return ctx


def test_cr_label_search_keeps_whole_words():
    """"Video B" inside "video below" is not Video B's entry: its question and options are read."""
    items = cr.cr_items(cr_ctx({}))
    assert items["Video B"] == cr.CrItem("What if the ramp were steeper?",
                                         ("The cart would go faster", "The cart would stop"))
    assert items["Video C"].options == ("No", "Yes")
    assert items["Reference"].question == "Had the glass not been pushed, where would it be?"


def test_cr_reads_options_named_by_the_reader():
    ctx = cr_ctx({"Reference": "Option 2 - it falls off the edge.", "Video A": "The dog stays in the yard.",
                  "Video B": "Option 2; the cart halts on the slope.", "Video C": "No. The match is called off."})
    letter, reason = cr.decide(ctx)
    assert (letter, reason) == ("B", "reference option 2; Reference: 2 (reader names it); Video A: 1 (word overlap "
                                     "1.00 vs 0.25); Video B: 2 (reader names it); Video C: 1 (reader names it)")
    # two candidates on the reference's option: no guess between them
    ctx = cr_ctx({"Reference": "Option 2.", "Video A": "Option 2.", "Video B": "Option 2.", "Video C": "Option 1."})
    assert cr.decide(ctx)[1].startswith("abstain: 2 candidates match option 2, 0 unknown")


def test_cr_eliminates_when_every_other_candidate_differs():
    ctx = cr_ctx({"Reference": "No visible change.", "Video A": "Option 2.", "Video B": "Option 2.",
                  "Video C": "unknown: the reader cannot answer this"},
                 subtitles={"Reference": "The glass is still on the table."})
    assert cr.decide(ctx)[0] == "C"


def test_cr_abstains_without_evidence_for_the_reference():
    """Colours and motion alone (the lite reader's kind of answer) tell no option apart: no default."""
    ctx = cr_ctx({v: "About 3 objects per frame: 1 red circle (small, centre)." for v in LABELS},
                 subtitles={v: "A ball starts rolling." for v in LABELS})
    letter, reason = cr.decide(ctx)
    assert letter is None and reason.startswith("abstain: no evidence tells the reference's option")
    # "No <noun> ..." is a statement, not the option "No"
    assert cr.named_option("No circle segmented in this window.", ("No", "Yes")) is None
    assert cr.named_option("No, it stops.", ("No", "Yes")) == 0


@pytest.mark.parametrize("hypothesis,relation", [
    ("The green area is going to be reached by the yellow hexagon.", DeRelation("reach", "yellow", "green")),
    ("Eventually the purple triangle ends up inside the red region", DeRelation("reach", "purple", "red")),
    ("Will the pink star make it to the cyan target?", DeRelation("reach", "pink", "cyan")),
    ("The orange square won't get to the grey zone.", DeRelation("reach", "orange", "grey", negated=True)),
    ("Squares outnumber circles in this room.", DeRelation("more", "square", "circle")),
    ("There are fewer stars than triangles.", DeRelation("more", "triangle", "star")),
    ("Circles are outnumbered by stars.", DeRelation("more", "star", "circle")),
    ("The number of stars exceeds the number of circles.", DeRelation("more", "star", "circle")),
    ("There are not more stars than circles.", DeRelation("more", "star", "circle", negated=True)),
    ("The white stack will end up shorter than the blue stack.", DeRelation("taller", "blue", "white")),
    ("The green pile is going to overtake the red pile.", DeRelation("taller", "green", "red")),
    ("The yellow column will rise above the purple one.", DeRelation("taller", "yellow", "purple")),
    ("The red tower will be surpassed by the blue tower.", DeRelation("taller", "blue", "red")),
    ("The ball will be higher than the box.", None),  # "higher" about no tower: not a tower race
])
def test_de_reads_hypotheses_the_generator_never_writes(hypothesis, relation):
    assert de_relation(hypothesis) == relation


@pytest.mark.parametrize("blue_end,expected", [(20.0, "A"), (116.0, "B")])
def test_de_inverse_comparative_decides_like_the_direct_one(blue_end, expected):
    ctx = de_ctx("The white stack will end up shorter than the blue stack.",
                 [_tower_sg("blue", HEAD, [80.0]), _tower_sg("blue", TAIL, [blue_end] * 3),
                  _tower_sg("white", HEAD, [68.0]), _tower_sg("white", TAIL, [68.0] * 3)])
    assert decide_de(ctx) == (expected, f"taller: final tops blue y={blue_end:.1f}, white y=68.0")


def test_de_passive_and_negated_reach():
    enters = [[90, 60, 100, 70], [105, 60, 115, 70], [120, 60, 130, 70], [135, 60, 145, 70]]
    hyp = "The green area won't be reached by the red square."
    assert [(c.tool, c.args) for c in plan_de(de_ctx(hyp, []))] == [
        ("object_tracker", {"video": "Update", "query": "red"}), ("object_tracker", {"video": "Update", "query": "green"})]
    ctx = de_ctx(hyp, [("object_tracker", {"video": "Update", "query": "red"}, {"tracks": [_track(enters)]}),
                       ("object_tracker", {"video": "Update", "query": "green"}, {"tracks": [ZONE]})])
    letter, reason = decide_de(ctx)
    assert letter == "B" and reason.endswith("; the hypothesis denies it")


def test_de_without_any_update_evidence_abstains():
    assert decide_de(de_ctx("The guests will enjoy the party.", [])) == (
        None, "hypothesis states no checkable visual relation; no update evidence")
