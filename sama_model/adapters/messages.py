"""Any harness message -> an :class:`AgentQuestion`: the one place both adapters build questions.

SAMA is called like any MLLM, so it gets what every baseline gets: the content items of the
request (lmms-eval ``ChatMessages`` from ``doc_to_messages``, or a VLMEvalKit message), in any
order of text, video and image items. From them:

* **labels**: the last line of the text right before a video or image, when it is a short
  ``"<label>:"`` ("Video A:", "Reference:", "Clip 2 (8 frames):") or a benchmark's phrase
  ("The following is the Video 2", "The video 2."); else ``Video n`` / ``Image n``;
* **images** become short still videos (cached by content), so every tool accepts them;
* **subtitles**: a sidecar file next to the video, same name with ``.srt`` or ``.vtt`` (the
  convention video players use; the MVX loaders keep MVX's subtitles there);
* **options**: "A. ...", "(A) ...", "A) ...", "A: ..." lines, any number, letters in increasing
  order (gaps allowed); none means an open-ended question, answered in free text;
* **instruction**: the text after the options (or a last line starting with "Answer"), kept apart
  from the question so policies read the question alone.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from mvx_tasks.prompts import is_order_line

from ..question import AgentQuestion, VideoRef

IMAGE_EXTS = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"}
VIDEO_EXTS = {".mp4", ".mkv", ".avi", ".mov", ".webm", ".m4v", ".mpg", ".mpeg", ".flv", ".wmv", ".ts", ".3gp"}
SUBTITLE_EXTS = (".srt", ".vtt")
STILL_SECONDS, STILL_FPS = 2, 4  # an image becomes a 2-second still clip at 4 fps (8 frames)

_LABEL = re.compile(r"^\s*([^\n:]{1,48}?)\s*(?:\(\d+ frames?\))?\s*:\s*$")
# benchmarks' own wording before a video: MVU-Eval "The following is the Video 2", CVBench "The video 2."
_PHRASE_LABEL = re.compile(r"^\s*(?:the following is\s+)?the\s+(video|clip)\s+(\d+)\s*[.:]?\s*$", re.I)
_OPTION = re.compile(r"^\s*(?:\(([A-Z])\)|([A-Z])\s*[\.\):])\s+(\S.*?)\s*$")
_OPTIONS_HEADER = re.compile(r"^\s*(options|choices|candidates)\s*:?\s*$", re.I)
_INSTRUCTION = re.compile(r"^\s*(answer|respond|reply|please answer|only answer|output)\b", re.I)


@dataclass
class Item:
    """One content item: ``kind`` is text, video or image; ``value`` a string, a path or a PIL image."""

    kind: str
    value: Any


class QuestionBuildError(ValueError):
    """The request cannot become a question (the run records it as a failed question)."""


def _kind_of_path(value: Any) -> str | None:
    if not isinstance(value, (str, os.PathLike)):
        return "image" if hasattr(value, "save") else None  # a PIL image
    ext = Path(str(value)).suffix.lower()
    return "image" if ext in IMAGE_EXTS else "video" if ext in VIDEO_EXTS else None


def items_from_chat(messages: Any) -> list[Item]:
    """Items of lmms-eval chat messages (``ChatMessages``, or what ``doc_to_messages`` returned, parsed
    by lmms-eval's ``ChatMessages``); user turns only, in order; audio is ignored."""
    from mvx_tasks.chat_contract import chat_messages  # lmms-eval: imported only on its adapter's path

    items: list[Item] = []
    for m in chat_messages(messages).messages:
        if m.role != "user":
            continue
        for c in m.content:
            if c.type == "text":
                items.append(Item("text", c.text))
            elif c.type in ("video", "image"):
                items.append(Item(c.type, c.url))
    return items


def items_from_vlmeval(message: Iterable[dict[str, Any]]) -> list[Item]:
    """Items of a VLMEvalKit message (``dict(type='text'|'image'|'video', value=...)``)."""
    items = []
    for m in message:
        kind = m.get("type")
        if kind in ("text", "image", "video"):
            items.append(Item(kind, m.get("value")))
    return items


def still_video(image: Any, folder: str | Path) -> Path:
    """An image (path or PIL) as a short still MP4 in ``folder``, named by its content hash."""
    import numpy as np
    from PIL import Image

    from mvx_tasks.synth.encode import encode_mp4

    if hasattr(image, "save"):
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        data = buf.getvalue()
    else:
        data = Path(image).read_bytes()
    out = Path(folder) / f"still-{hashlib.blake2b(data, digest_size=12).hexdigest()}.mp4"
    if out.is_file():
        return out
    img = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = img.size
    scale = min(1.0, 1280 / max(w, h))
    w2, h2 = max(2, int(w * scale) // 2 * 2), max(2, int(h * scale) // 2 * 2)
    frame = np.asarray(img.resize((w2, h2)), dtype=np.uint8)
    return encode_mp4(np.repeat(frame[None], STILL_SECONDS * STILL_FPS, axis=0), out, fps=STILL_FPS)


def sidecar_subtitle(video: str | Path) -> str | None:
    """``<video stem>.srt`` or ``.vtt`` beside the video, if present."""
    p = Path(video)
    for ext in SUBTITLE_EXTS:
        side = p.with_suffix(ext)
        if side.is_file():
            return str(side)
    return None


def _split_label(text: str) -> tuple[str, str | None]:
    """(text without its last line, that line's label) when the last line is "<label>:"."""
    lines = text.rstrip().split("\n")
    m = _LABEL.match(lines[-1]) if lines else None
    if m and len(m.group(1).split()) <= 6:
        return "\n".join(lines[:-1]), m.group(1).strip()
    p = _PHRASE_LABEL.match(lines[-1]) if lines else None
    if p:
        return "\n".join(lines[:-1]), f"{p.group(1).capitalize()} {p.group(2)}"
    return text, None


def parse_prompt(text: str) -> tuple[str, dict[str, str], str]:
    """(question, options, instruction) from prompt text."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    options: dict[str, str] = {}
    first_opt = last_opt = None
    for i, line in enumerate(lines):
        m = _OPTION.match(line)
        if not m:
            continue
        letter = m.group(1) or m.group(2)
        if options and letter <= list(options)[-1]:
            continue  # not increasing: a sentence starting with a capital, not an option
        if last_opt is not None and any(lines[j].strip() and not _OPTIONS_HEADER.match(lines[j])
                                        for j in range(last_opt + 1, i)):
            break  # options form one block
        options[letter] = m.group(3)
        first_opt = i if first_opt is None else first_opt
        last_opt = i
    if len(options) < 2:
        options, first_opt, last_opt = {}, None, None
    if first_opt is None:
        body, tail = lines, []
        if len(body) > 1 and _INSTRUCTION.match(body[-1]):
            body, tail = body[:-1], body[-1:]
    else:
        body, tail = lines[:first_opt], lines[last_opt + 1:]
    body = [ln for ln in body if ln.strip() and not _OPTIONS_HEADER.match(ln) and not is_order_line(ln)]
    return "\n".join(body).strip(), options, "\n".join(ln for ln in tail if ln.strip()).strip()


def build_question(items: list[Item], qid: str, *, task: str | None = None,
                   stills_dir: str | Path | None = None) -> AgentQuestion:
    """An :class:`AgentQuestion` from content items. A request without any video or image, or with a
    missing file, still becomes a question: the agent fails it alone, with the reason in its trace."""
    texts: list[str] = []
    videos: list[VideoRef] = []
    counts = {"video": 0, "image": 0}
    seen: set[str] = set()
    for item in items:
        if item.kind == "text":
            texts.append(str(item.value or ""))
            continue
        kind = item.kind if item.kind in counts else (_kind_of_path(item.value) or "video")
        counts[kind] += 1
        label = None
        if texts:
            texts[-1], label = _split_label(texts[-1])
        label = label or f"{'Video' if kind == 'video' else 'Image'} {counts[kind]}"
        base, n = label, 2
        while label.lower() in seen:  # two items under one label: keep both, distinctly named
            label, n = f"{base} ({n})", n + 1
        seen.add(label.lower())
        if kind == "image":
            if stills_dir is None:
                raise QuestionBuildError("an image item needs a folder for its still clip")
            path = str(still_video(item.value, stills_dir))
            subtitle = None
        else:
            path = str(item.value)
            subtitle = sidecar_subtitle(path)
        videos.append(VideoRef(label, path, subtitle))
    question, options, instruction = parse_prompt("\n".join(t for t in texts if t.strip()))
    # no video at all: still a question, which the agent fails alone with the reason in its trace
    return AgentQuestion(id=str(qid), question=question, options=options, videos=tuple(videos), task=task,
                         instruction=instruction)
