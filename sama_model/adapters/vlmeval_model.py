"""SAMA as a VLMEvalKit model, for any video or image dataset.

VLMEvalKit's local path calls ``set_dump_image`` on every non-API model and then
``generate(message, dataset)``; its API path runs ``generate`` from ``--api-nproc`` threads and
retries answers that carry the model's failure message. So, when VLMEvalKit is importable:

* :class:`SAMAVLMEval` subclasses ``vlmeval.vlm.base.BaseModel`` (local planners: scripted,
  hf_local): images are dumped by the dataset and read as still clips, videos as they are;
* :class:`SAMAVLMEvalAPI` subclasses ``vlmeval.api.base.BaseAPI`` (API-bound planners: openai):
  VLMEvalKit answers many questions at once, and a failed question returns BaseAPI's failure
  message, which VLMEvalKit's resume retries; SAMA's own retries run first, so BaseAPI retries once.

:func:`build_model` picks the class from the planner (VLMEvalKit's ``supported_VLM`` entries call
it). The message is read like any model reads it (:mod:`.messages`): a text item ``"<label>:"``
right before a video names it, images become still clips, options come from "A. ..." lines and
a message without options is open-ended. Without VLMEvalKit the classes stand alone
(``generate(message, dataset)`` returns the answer), which the tests of the message reading use.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ..profiles import build_config
from ..question import AgentQuestion
from ..runner import run_questions
from .common import make_agent
from .messages import build_question, items_from_vlmeval

#: planners that mostly wait on a remote server (VLMEvalKit's API path suits them)
API_PLANNERS = ("openai",)


class _Standalone:
    """The part of VLMEvalKit's model interface SAMA uses, when VLMEvalKit is not installed."""

    def __init__(self, **_: Any) -> None:
        self.dump_image_func = None

    def set_dump_image(self, dump_image_func: Any) -> None:
        self.dump_image_func = dump_image_func

    def generate(self, message: list[dict[str, Any]], dataset: str | None = None) -> str:
        return self.answer(message, dataset)  # type: ignore[attr-defined]


try:
    from vlmeval.api.base import BaseAPI as _APIBase
    from vlmeval.vlm.base import BaseModel as _ModelBase

    HAVE_VLMEVAL = True
except ImportError:  # VLMEvalKit absent (or a broken torchvision under it): stand alone
    _APIBase = _ModelBase = _Standalone  # type: ignore[assignment,misc]
    HAVE_VLMEVAL = False


def question_from_message(message: list[dict[str, Any]], dataset: str | None = None, *, task_hint: bool = False,
                          stills_dir: str | Path | None = None) -> AgentQuestion:
    """An :class:`AgentQuestion` from a VLMEvalKit message; its id hashes the text and the media."""
    items = items_from_vlmeval(message)
    key = "|".join(f"{i.kind}:{i.value if isinstance(i.value, str) else id(i.value)}" for i in items)
    qid = hashlib.sha1(key.encode()).hexdigest()[:16]
    task = None
    if task_hint and dataset:
        m = re.search(r"MVX[_-]?(?:Bench|Synth)?[_-]?([A-Za-z]+)$", dataset, re.IGNORECASE)
        task = m.group(1).upper() if m else None
    return build_question(items, qid, task=task, stills_dir=stills_dir)


class _SamaAnswers:
    """What both classes share: the agent from the model arguments, one answer per message."""

    INTERLEAVE = True
    VIDEO_LLM = True
    allowed_types = ("text", "image", "video")

    def _build_agent(self, model_args: dict[str, Any]) -> None:
        self.agent, self.trace_dir = make_agent(model_args)

    def use_custom_prompt(self, dataset: str) -> bool:
        return False

    def answer(self, message: list[dict[str, Any]], dataset: str | None = None) -> str:
        """SAMA's output for one message ("Answer: X"; "" when the question failed, with its trace)."""
        cfg = self.agent.config
        stills = Path(cfg.cache_dir or self.trace_dir) / "stills"
        question = question_from_message(message, dataset, task_hint=cfg.task_hint, stills_dir=stills)
        return run_questions(self.agent, [question], self.trace_dir, workers=1, progress=False)[0]


class SAMAVLMEval(_SamaAnswers, _ModelBase):
    """SAMA with a local planner as a VLMEvalKit ``BaseModel`` (``set_dump_image`` included)."""

    is_api = False

    def __init__(self, **model_args: Any) -> None:
        _ModelBase.__init__(self)
        self._build_agent(model_args)

    def generate_inner(self, message: list[dict[str, Any]], dataset: str | None = None) -> str:
        return self.answer(message, dataset)


class SAMAVLMEvalAPI(_SamaAnswers, _APIBase):
    """SAMA with an API-bound planner as a VLMEvalKit ``BaseAPI`` (answered from ``--api-nproc`` threads)."""

    is_api = True

    def __init__(self, **model_args: Any) -> None:
        if HAVE_VLMEVAL:
            _APIBase.__init__(self, retry=1, wait=0, verbose=False)
        else:
            _APIBase.__init__(self)
        self._build_agent(model_args)

    def generate_inner(self, inputs: list[dict[str, Any]], **kwargs: Any) -> tuple[int, str, str]:
        """BaseAPI's contract: (0, answer, log) when answered, (-1, "", why) when the question failed."""
        output = self.answer(inputs, kwargs.get("dataset"))
        return (0, output, "") if output else (-1, "", f"SAMA could not answer; see its traces in {self.trace_dir}")


def build_model(**model_args: Any) -> SAMAVLMEval | SAMAVLMEvalAPI:
    """The class for the configured planner: :class:`SAMAVLMEvalAPI` for API-bound ones, else
    :class:`SAMAVLMEval`."""
    planner = build_config(**model_args).planner
    return (SAMAVLMEvalAPI if planner in API_PLANNERS else SAMAVLMEval)(**model_args)
