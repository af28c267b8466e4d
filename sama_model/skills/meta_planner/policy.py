"""Scripted policy of the meta planner skill: identify the question type first (from the question
text; the registry task code only with ``task_hint=on``), keep the option-to-video
mapping fixed for the whole question, and dispatch to the task's policy."""
from __future__ import annotations

import re
from typing import Any, Callable

from mvx_tasks.registry import UnknownTaskError, get_task

from ...question import AgentQuestion
from ..context import PolicyContext, mentions
from ..multi_video_comparison.policy import POLICIES as COMPARISON_POLICIES
from ..subtitle.policy import decide_cr, decide_de, plan_cr, plan_de
from ..temporal_grounding.policy import decide_fd, plan_fd
from ..video_reader.policy import decide_generic, plan_generic

Plan = Callable[[PolicyContext], list]
Decide = Callable[[PolicyContext], tuple[str | None, str]]

#: task code -> (plan, decide); one line per task
TASK_POLICIES: dict[str, tuple[Plan, Decide]] = {
    **COMPARISON_POLICIES,
    "FD": (plan_fd, decide_fd), "DE": (plan_de, decide_de), "CR": (plan_cr, decide_cr),
}
GENERIC_POLICY: tuple[Plan, Decide] = (plan_generic, decide_generic)

#: the skill whose procedure covers each task (small planners get only these documents)
TASK_SKILLS: dict[str, str] = {**{code: "multi_video_comparison" for code in COMPARISON_POLICIES},
                               "FD": "temporal_grounding", "DE": "subtitle", "CR": "subtitle"}


def relevant_skills(task: str) -> list[str]:
    """The meta planner, the task's skill, and the video reader skill every task leans on."""
    names = ["meta_planner", TASK_SKILLS.get(task, ""), "video_reader"]
    return [n for n in dict.fromkeys(names) if n]

#: question-text cues per task, checked in this order when no task code is given
TASK_CUES: list[tuple[str, str]] = [
    ("SEQ", r"chronolog|correct order|temporal order|which order|sequence|shuffled"),
    ("DE", r"hypothesis|strengthen|weaken|entail"),
    ("CR", r"counterfactual|what if|would (have )?happen|option 1|option 2"),
    ("CNT", r"how many|number of|\bcount"),
    ("FD", r"manipulat|deepfake|\bfake\b|forged|tamper|authentic"),
    ("SPR", r"camera (motion|movement|moves)|motion trend|spatial relation"),
    ("RID", r"same (person|individual|identity)|re-?identif|\bidentity\b"),
    ("ART", r"art(istic)? style|drawing style|animation style|rendering style|\bstyle\b"),
    ("MVR", r"viewpoint|view\b|perspective|same (event|location|place|scene)|modality"),
    ("AM", r"\baction\b|activity|same (movement|motion|way)|moves? like"),
    ("VS", r"similar|duplicate|same video"),
]


def identify_task(question: AgentQuestion, use_hint: bool = False) -> tuple[str, str]:
    """(task code, where it came from: "registry" | "question text" | "unknown").

    By default the type is identified from the question text, as the paper's meta planner does and
    as every baseline must; the harness's task code is used only when the run opts in
    (``task_hint=on``), and an open-ended question is never given a multiple-choice task."""
    if question.open_ended:
        return "", "open-ended"
    if use_hint and question.task:
        try:
            code = get_task(question.task).code
            if code in TASK_POLICIES:
                return code, "registry"
        except UnknownTaskError:
            pass
    text = question.question.lower()
    for code, pattern in TASK_CUES:
        if re.search(pattern, text):
            return code, "question text"
    return "", "unknown"


def option_video_map(options: dict[str, str], labels: list[str]) -> dict[str, list[str]]:
    """letter -> the video labels its text names, in order (fixed once per question)."""
    return {letter: mentions(text, labels) for letter, text in options.items()}


def select_policy(task: str, skills: bool) -> tuple[str, Plan, Decide]:
    """The (name, plan, decide) to run: the task's skill policy, or the generic procedure when
    skills are off or the task is unknown."""
    if skills and task in TASK_POLICIES:
        plan, decide = TASK_POLICIES[task]
        return f"skill:{task}", plan, decide
    return "generic", *GENERIC_POLICY


def describe(ctx: PolicyContext) -> dict[str, Any]:
    return {"task": ctx.task, "task_source": ctx.task_source, "reference": ctx.reference,
            "option_map": ctx.option_map}
