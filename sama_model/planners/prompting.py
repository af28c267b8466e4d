"""Prompt text shared by the LLM planners: role and rules, skills, the question, the evidence."""
from __future__ import annotations

import json

from mvx_tasks.registry import get_task

from ..skills import skills_prompt
from ..skills.meta_planner.policy import relevant_skills
from .base import AgentState, QuestionContext

ROLE = """You are the planner of SAMA, an agent that answers multiple-choice questions about several videos.
You cannot see the videos. You call tools that observe them and you reason over the evidence they return.
Rules:
- Address videos only by their labels, exactly as listed (for example "Reference", "Video A").
- Tool calls that do not depend on each other can be made in the same turn; they run in parallel.
- Time windows are in seconds; leave start/end null for the whole video.
- When the evidence is sufficient, stop calling tools and reply with exactly one option letter in the form "Answer: X"."""

JSON_PROTOCOL = """Reply with exactly one JSON object and nothing else, in one of these forms:
{"tool": "<tool name>", "args": {<arguments>}}
{"final_answer": "<option letter>", "reason": "<one sentence>"}"""


def tool_catalogue(ctx: QuestionContext) -> str:
    """Compact tool list for planners without native function calling."""
    lines = ["Tools:"]
    for spec in ctx.tool_specs:
        f = spec["function"]
        props = f["parameters"]["properties"]
        req = set(f["parameters"]["required"])
        args = ", ".join(f"{k}{'' if k in req else '?'}: {json.dumps(v.get('enum') or v['type'])}"
                         for k, v in props.items())
        summary = f["description"].split(". ")[0].rstrip(".")  # first sentence: short contexts
        lines.append(f"- {f['name']}({args}): {summary}.")
    return "\n".join(lines)


def system_prompt(ctx: QuestionContext, json_protocol: bool = False, skill_docs: str = "all") -> str:
    """Role and rules, the tool catalogue and JSON protocol (planners without function calling),
    and the skills: all five (``skill_docs="all"``) or only those the task needs (``"task"``,
    for small local models with short contexts)."""
    parts = [ROLE]
    if json_protocol:
        first = ctx.question.labels[0] if ctx.question.labels else "Video 1"
        example = json.dumps({"tool": "video_reader", "args": {"video": first, "query": "Describe what happens."}})
        parts += [tool_catalogue(ctx), JSON_PROTOCOL + f"\nExample: {example}"]
    if ctx.skills:
        parts.append(skills_prompt(None if skill_docs == "all" else relevant_skills(ctx.task)))
    return "\n\n".join(parts)


def question_block(ctx: QuestionContext) -> str:
    q = ctx.question
    lines = []
    if ctx.skills and ctx.task:
        lines.append(f"Question type: {ctx.task} ({get_task(ctx.task).name}), identified from the {ctx.task_source}.")
    lines.append(f"Videos: {', '.join(q.labels)}.")
    lines.append(f"Question: {q.question}")
    if q.options:
        lines.append("Options:")
        lines += [f"{k}. {v}" for k, v in q.options.items()]
    else:
        lines.append("This question has no options: give the answer itself as free text"
                     + (f" ({q.instruction})" if q.instruction else " (a word, a number or a short phrase)") + ".")
    if ctx.skills:
        named = {k: v for k, v in ctx.option_map.items() if v}
        if named:
            lines.append("Options refer to videos: " + "; ".join(f"{k} -> {', '.join(v)}" for k, v in named.items()))
    return "\n".join(lines)


def state_block(state: AgentState, include_evidence: bool = True) -> str:
    parts = [state.memory.context()] if include_evidence else []
    if state.verification_notes:
        parts.append("Verification:\n" + "\n".join(f"- {n}" for n in state.verification_notes))
    parts.append(f"Iteration {state.iteration} of {state.max_iterations}.")
    return "\n\n".join(parts)


FINAL_REQUEST = ("The tool budget is spent. Using only the evidence above, reply now with exactly one option "
                 "letter in the form \"Answer: X\".")
