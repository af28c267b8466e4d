"""How a question and its labelled videos are shown to a model.

Two presentations share one wording:

* video: each video is passed as a video, preceded by its label (chat adapters get interleaved
  ``label, video, label, video, ..., question``; simple adapters get the videos in order and a
  text that lists the order);
* frames: each video becomes N uniformly sampled frames, labelled per video, for adapters that
  accept only images or silently drop every video after the first.

Only ``question``, ``options`` and the video labels are shown: never ``answer`` or ``meta``.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from .schema import Sample

DEFAULT_POST_PROMPT = "Answer with the option's letter from the given choices directly."


def video_order_line(labels: Sequence[str]) -> str:
    if len(labels) == 1:
        return f"You are given one video: {labels[0]}."
    return f"You are given {len(labels)} videos, in this order: {', '.join(labels)}."


_ORDER_LINE = re.compile(r"^You are given (one video: .+|\d+ videos(, in this order: .+|, each shown as frames .+))\.$")


def is_order_line(line: str) -> bool:
    """Whether ``line`` is one of the order lines above (an agent reading the prompt drops it:
    the labels already come with the videos)."""
    return bool(_ORDER_LINE.match(line.strip()))


def frames_order_line(labels: Sequence[str], n_frames: Sequence[int]) -> str:
    """Say which image numbers belong to which video, so labels survive adapters that reorder."""
    parts, start = [], 1
    for label, n in zip(labels, n_frames):
        parts.append(f"images {start}-{start + n - 1} are {label}" if n > 1 else f"image {start} is {label}")
        start += n
    return (f"You are given {len(labels)} videos, each shown as frames sampled uniformly in time: "
            + "; ".join(parts) + ".")


def options_block(options: dict[str, str]) -> str:
    return "\n".join(f"{k}. {v}" for k, v in options.items())


def question_text(sample: Sample, *, pre_prompt: str = "", post_prompt: str = DEFAULT_POST_PROMPT,
                  order_line: str | None = None) -> str:
    """The full text prompt: video order, question, options, answer instruction."""
    order_line = order_line if order_line is not None else video_order_line([v.label for v in sample.videos])
    parts = [p for p in (pre_prompt.strip(), order_line, sample.question, "Options:\n" + options_block(sample.options),
                         post_prompt.strip()) if p]
    return "\n".join(parts)


def video_header(label: str, i: int, header: str | None = None) -> str:
    """The text item before the ``i``-th (1-based) video: ``<label>:``, or a benchmark's own wording
    (``header`` with ``{n}``: the label's number, else ``i``; or ``{label}``; e.g. MVU-Eval's
    "The following is the Video {n}"). The number comes from the label so that a question whose
    video 2 cannot be shown still calls the next one "Video 3", as its options do."""
    if not header:
        return f"{label}:"
    m = re.search(r"(\d+)\s*$", label)
    return header.format(n=int(m.group(1)) if m else i, i=i, label=label)


def video_messages(sample: Sample, text: str, video_paths: Sequence[str] | None = None,
                   header: str | None = None) -> list[dict[str, Any]]:
    """lmms-eval chat messages: ``label:`` (or ``header``) before each video, then the question text."""
    paths = list(video_paths) if video_paths is not None else [v.path for v in sample.videos]
    content: list[dict[str, Any]] = []
    for i, (v, p) in enumerate(zip(sample.videos, paths), 1):
        content.append({"type": "text", "text": video_header(v.label, i, header)})
        content.append({"type": "video", "url": p})
    content.append({"type": "text", "text": text})
    return [{"role": "user", "content": content}]


def frame_messages(sample: Sample, text: str, frames_per_video: Sequence[Sequence[Any]],
                   sampling: Sequence[dict[str, Any]] | None = None, header: str | None = None) -> list[dict[str, Any]]:
    """lmms-eval chat messages with each video as labelled frame images. ``sampling`` (one dict per
    video: frames asked, their timestamps, decode size) rides on each video's header item as
    ``metadata``; lmms-eval's message model ignores the key, logs and tests can read it."""
    content: list[dict[str, Any]] = []
    for i, (v, frames) in enumerate(zip(sample.videos, frames_per_video)):
        text_ = video_header(v.label, i + 1, header) if header else f"{v.label} ({len(frames)} frames):"
        item: dict[str, Any] = {"type": "text", "text": text_}
        if sampling is not None and i < len(sampling):
            item["metadata"] = dict(sampling[i], video=v.label)
        content.append(item)
        content.extend({"type": "image", "url": f} for f in frames)
    content.append({"type": "text", "text": text})
    return [{"role": "user", "content": content}]
