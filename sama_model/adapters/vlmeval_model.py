"""SAMA as a VLMEvalKit model: ``generate(message, dataset=None) -> str`` for any video or image dataset.

The message is read like any model reads it (:mod:`.messages`): a text item ``"<label>:"`` right
before a video names it, images become still clips, options come from "A. ..." lines and a
message without options is open-ended. With an API-bound planner the wrapper declares itself an
API model, so VLMEvalKit's API path calls ``generate`` from several threads at once
(``--api-nproc``) instead of answering a large dataset one question at a time.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ..question import AgentQuestion
from ..runner import run_questions
from .common import make_agent
from .messages import build_question, items_from_vlmeval

#: planners that mostly wait on a remote server (VLMEvalKit's API path suits them)
API_PLANNERS = ("openai",)


def question_from_message(message: list[dict[str, Any]], dataset: str | None = None, *, task_hint: bool = False,
                          stills_dir: str | Path | None = None) -> AgentQuestion:
    """An :class:`AgentQuestion` from a VLMEvalKit message; its id hashes the text and the media."""
    items = items_from_vlmeval(message)
    key = "|".join(f"{i.kind}:{i.value if isinstance(i.value, str) else id(i.value)}" for i in items)
    qid = hashlib.sha1(key.encode()).hexdigest()[:16]
    task = None
    if task_hint and dataset:
        m = re.search(r"MVX[_-]?(?:Bench|Synth)?[_-]?([A-Za-z]+)$", dataset, re.I)
        task = m.group(1).upper() if m else None
    return build_question(items, qid, task=task, stills_dir=stills_dir)


class SAMAVLMEval:
    """VLMEvalKit model wrapper (register it in ``vlmeval.config.supported_VLM``)."""

    INTERLEAVE = True
    VIDEO_LLM = True

    def __init__(self, **model_args: Any) -> None:
        self.agent, self.trace_dir = make_agent(model_args)
        self.is_api = self.agent.config.planner in API_PLANNERS

    def use_custom_prompt(self, dataset: str) -> bool:
        return False

    def generate(self, message: list[dict[str, Any]], dataset: str | None = None) -> str:
        cfg = self.agent.config
        stills = Path(cfg.cache_dir or self.trace_dir) / "stills"
        question = question_from_message(message, dataset, task_hint=cfg.task_hint, stills_dir=stills)
        return run_questions(self.agent, [question], self.trace_dir, workers=1, progress=False)[0]
