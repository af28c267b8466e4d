"""SAMA as a VLMEvalKit model: ``generate(message, dataset=None) -> str``.

The MVX VLMEvalKit dataset puts a text item ``"<label>:"`` immediately before each video item,
so labelled videos are recovered from the message alone; the remaining text is the question
with its options ("A. ...", one per line).
"""
from __future__ import annotations

import hashlib
import re
from typing import Any

from ..question import AgentQuestion, VideoRef
from ..runner import run_questions
from .common import make_agent

_LABEL = re.compile(r"^\s*([^\n:]{1,40}):\s*$")
_OPTION = re.compile(r"^\s*\(?([A-Z])[\.\)]\s+(.+?)\s*$")


def labelled_videos(message: list[dict[str, Any]]) -> tuple[list[VideoRef], list[str]]:
    """(videos, remaining texts): a text item that is just "<label>:" names the video right after it;
    an unlabelled video is called "Video <n>"."""
    videos: list[VideoRef] = []
    texts: list[str] = []
    pending: str | None = None
    for item in message:
        kind, value = item.get("type"), item.get("value")
        if kind == "text":
            m = _LABEL.match(str(value))
            if m:
                if pending is not None:
                    texts.append(f"{pending}:")
                pending = m.group(1).strip()
                continue
            if pending is not None:
                texts.append(f"{pending}:")
                pending = None
            texts.append(str(value))
        elif kind == "video":
            videos.append(VideoRef(pending or f"Video {len(videos) + 1}", str(value)))
            pending = None
    return videos, texts


def question_from_message(message: list[dict[str, Any]], dataset: str | None = None) -> AgentQuestion:
    """An :class:`AgentQuestion` from a VLMEvalKit message (options parsed from "X. text" lines)."""
    videos, texts = labelled_videos(message)
    if not videos:
        raise ValueError("SAMA needs at least one video item in the message")
    options: dict[str, str] = {}
    question_lines: list[str] = []
    for line in "\n".join(texts).splitlines():
        m = _OPTION.match(line)
        if m and (not options or ord(m.group(1)) == ord(list(options)[-1]) + 1) and (options or m.group(1) == "A"):
            options[m.group(1)] = m.group(2)
        elif line.strip():
            question_lines.append(line.strip())
    if len(options) < 2:
        raise ValueError("SAMA could not find the options ('A. ...' lines) in the message text")
    text = "\n".join(question_lines)
    qid = hashlib.sha1((text + "|".join(v.path for v in videos)).encode()).hexdigest()[:16]
    task = None
    if dataset:
        m = re.search(r"MVX[_-]?(?:Bench)?[_-]?([A-Za-z]+)$", dataset, re.I)
        task = m.group(1).upper() if m else None
    return AgentQuestion(id=qid, question=text, options=options, videos=tuple(videos), task=task)


class SAMAVLMEval:
    """VLMEvalKit model wrapper (register it in ``vlmeval.config.supported_VLM``)."""

    INTERLEAVE = True
    VIDEO_LLM = True
    is_api = False

    def __init__(self, **model_args: Any) -> None:
        self.agent, self.trace_dir = make_agent(model_args)

    def use_custom_prompt(self, dataset: str) -> bool:
        return False

    def generate(self, message: list[dict[str, Any]], dataset: str | None = None) -> str:
        return run_questions(self.agent, [question_from_message(message, dataset)], self.trace_dir,
                             workers=1, progress=False)[0]
