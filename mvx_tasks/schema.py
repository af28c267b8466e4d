"""The canonical MVX sample: typed, validated, with errors that say what to fix.

One line of ``data.jsonl`` is one question::

    {"id": str, "task": code, "question": str, "options": {"A": str, ...}, "answer": "B",
     "videos": [{"label": "Reference", "path": "videos/x.mp4", "subtitle": "videos/x.srt"}, ...],
     "meta": {...}}

Videos are in presentation order and their paths are relative to the dataset folder.
``meta`` is kept for analysis only: prompts, models and tools never see it.
"""
from __future__ import annotations

import json
import string
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from .registry import get_task, UnknownTaskError
from .schema_error import SchemaError

VIDEO_EXTENSIONS = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg", ".gif")
SUBTITLE_EXTENSIONS = (".srt", ".vtt", ".txt")
REQUIRED_FIELDS = ("id", "task", "question", "options", "answer", "videos")


@dataclass(frozen=True)
class Video:
    """One video of a question, addressed by its label (e.g. "Reference", "Video A")."""

    label: str
    path: str  # relative to the dataset root, POSIX separators
    subtitle: str | None = None

    def to_dict(self) -> dict[str, str]:
        d = {"label": self.label, "path": self.path}
        if self.subtitle:
            d["subtitle"] = self.subtitle
        return d


@dataclass(frozen=True)
class Sample:
    """One multiple-choice question over several videos."""

    id: str
    task: str
    question: str
    options: dict[str, str]
    answer: str
    videos: tuple[Video, ...]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def letters(self) -> list[str]:
        return list(self.options)

    def video(self, label: str) -> Video:
        for v in self.videos:
            if v.label == label:
                return v
        raise KeyError(f"question {self.id!r} has no video labelled {label!r}; labels: "
                       f"{[v.label for v in self.videos]}")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "task": self.task, "question": self.question,
                "options": dict(self.options), "answer": self.answer,
                "videos": [v.to_dict() for v in self.videos], "meta": dict(self.meta)}

    def public_dict(self) -> dict[str, Any]:
        """What a model or tool may see: no answer, no meta."""
        d = self.to_dict()
        d.pop("answer")
        d.pop("meta")
        return d

    @classmethod
    def from_dict(cls, raw: Any, *, where: str | None = None) -> "Sample":
        return validate_sample(raw, where=where)


def check_relative_path(value: Any, *, what: str, sample_id: str | None, where: str | None,
                        extensions: tuple[str, ...] | None = None) -> str:
    """A path that stays inside the dataset folder: relative, no '..', POSIX separators."""
    if not isinstance(value, str) or not value.strip():
        raise SchemaError(f"{what} must be a non-empty relative path string, got {value!r}",
                          sample_id=sample_id, where=where, fix="write the path relative to the dataset folder")
    norm = value.strip().replace("\\", "/")
    p = PurePosixPath(norm)
    if p.is_absolute() or (len(norm) > 1 and norm[1] == ":"):
        raise SchemaError(f"{what} {value!r} is absolute", sample_id=sample_id, where=where,
                          fix="write it relative to the dataset folder, e.g. videos/x.mp4")
    if ".." in p.parts:
        raise SchemaError(f"{what} {value!r} leaves the dataset folder ('..')", sample_id=sample_id,
                          where=where, fix="move the file inside the dataset folder and point to it without '..'")
    if extensions and p.suffix.lower() not in extensions:
        raise SchemaError(f"{what} {value!r} has extension {p.suffix or '(none)'!r}", sample_id=sample_id,
                          where=where, fix=f"use one of {', '.join(extensions)}")
    return str(p)


def validate_sample(raw: Any, *, where: str | None = None) -> Sample:
    """Turn one parsed JSON object into a :class:`Sample`, or raise :class:`SchemaError`."""
    if not isinstance(raw, dict):
        raise SchemaError(f"a sample must be a JSON object, got {type(raw).__name__}", where=where,
                          fix="write one JSON object per line")
    sid = raw.get("id")
    sid_s = str(sid) if sid not in (None, "") else None
    missing = [k for k in REQUIRED_FIELDS if k not in raw or raw[k] in (None, "")]
    if missing:
        raise SchemaError(f"missing field(s) {', '.join(missing)}", sample_id=sid_s, where=where,
                          fix=f"every line needs {', '.join(REQUIRED_FIELDS)} (meta and subtitle are optional)")
    if not isinstance(sid, (str, int)):
        raise SchemaError(f"id must be a string, got {sid!r}", where=where, fix="give each question a unique string id")
    sid_s = str(sid)
    try:
        spec = get_task(raw["task"])
    except UnknownTaskError as exc:
        raise SchemaError(str(exc), sample_id=sid_s, where=where,
                          fix="use a registered task code (mvx-bench tasks lists them)") from None
    question = raw["question"]
    if not isinstance(question, str) or not question.strip():
        raise SchemaError("question must be non-empty text", sample_id=sid_s, where=where, fix="write the question text")
    options = raw["options"]
    if isinstance(options, list):  # tolerate a list of option texts: letters in order
        options = dict(zip(string.ascii_uppercase, options))
    if not isinstance(options, dict) or len(options) < 2:
        raise SchemaError(f"options must map letters to text with at least two entries, got {options!r}",
                          sample_id=sid_s, where=where, fix='write options as {"A": "...", "B": "..."}')
    letters = [str(k).strip().upper() for k in options]
    expected = list(string.ascii_uppercase[: len(letters)])
    if letters != expected:
        raise SchemaError(f"option letters {letters} are not consecutive from A", sample_id=sid_s, where=where,
                          fix=f"use the letters {expected} in order")
    opts = {k: str(v).strip() for k, v in zip(letters, options.values())}
    if any(not v for v in opts.values()):
        raise SchemaError("an option has empty text", sample_id=sid_s, where=where, fix="give every option a text")
    if spec.n_options is not None and len(opts) != spec.n_options:
        raise SchemaError(f"task {spec.code} has {spec.n_options} options per question, this one has {len(opts)}",
                          sample_id=sid_s, where=where, fix="check the task code or the options")
    answer = str(raw["answer"]).strip().strip("()").upper()
    if answer not in opts:
        raise SchemaError(f"answer {raw['answer']!r} is not one of the option letters {list(opts)}",
                          sample_id=sid_s, where=where, fix="set answer to the letter of the correct option")
    videos_raw = raw["videos"]
    if not isinstance(videos_raw, list) or not videos_raw:
        raise SchemaError("videos must be a non-empty list", sample_id=sid_s, where=where,
                          fix='write videos as [{"label": "Reference", "path": "videos/x.mp4"}, ...]')
    videos: list[Video] = []
    for i, v in enumerate(videos_raw):
        if isinstance(v, str):
            v = {"label": f"Video {i + 1}", "path": v}
        if not isinstance(v, dict) or "path" not in v:
            raise SchemaError(f"video {i} must be an object with label and path, got {v!r}", sample_id=sid_s,
                              where=where, fix='write {"label": "...", "path": "videos/x.mp4"}')
        label = str(v.get("label") or f"Video {i + 1}").strip()
        path = check_relative_path(v["path"], what=f"video {label!r} path", sample_id=sid_s, where=where,
                                   extensions=VIDEO_EXTENSIONS)
        sub = v.get("subtitle")
        if sub not in (None, ""):
            sub = check_relative_path(sub, what=f"video {label!r} subtitle", sample_id=sid_s, where=where,
                                      extensions=SUBTITLE_EXTENSIONS)
        else:
            sub = None
        videos.append(Video(label=label, path=path, subtitle=sub))
    labels = [v.label for v in videos]
    if len(set(labels)) != len(labels):
        raise SchemaError(f"video labels {labels} are not unique", sample_id=sid_s, where=where,
                          fix="give each video of a question its own label")
    meta = raw.get("meta") or {}
    if not isinstance(meta, dict):
        raise SchemaError("meta must be an object", sample_id=sid_s, where=where, fix="write meta as {...} or omit it")
    return Sample(id=sid_s, task=spec.code, question=question.strip(), options=opts, answer=answer,
                  videos=tuple(videos), meta=meta)


def read_jsonl(path: str | Path) -> list[Sample]:
    """Parse and validate every line of a ``data.jsonl``; the first bad line raises."""
    path = Path(path)
    samples: list[Sample] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SchemaError(f"not valid JSON ({exc.msg} at column {exc.colno})", where=where,
                                  fix="write one JSON object per line") from None
            samples.append(validate_sample(raw, where=where))
    return samples


def write_jsonl(samples: Iterable[Sample], path: str | Path) -> None:
    """Write samples as canonical ``data.jsonl`` (atomic: a crash leaves the old file)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(json.dumps(s.to_dict(), ensure_ascii=False, sort_keys=False) + "\n")
    tmp.replace(path)
