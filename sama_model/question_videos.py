"""Per-question video access: labels -> confined paths -> shared decoded clips and subtitles.

Tools address videos by the labels the question uses ("Reference", "Video B"). This layer
resolves a label (leniently: "video b", "B", "reference" all work), refuses any path that leaves
the dataset root, decodes through :func:`mvx_tasks.video_decoder.load_video` (one process-wide cache, so a
video shared by several questions or tools is decoded once) and parses subtitles once.
"""
from __future__ import annotations

import re
import threading
from pathlib import Path

from mvx_tasks.data import resolve_in_root
from mvx_tasks.schema import SchemaError
from mvx_tasks.subtitles import SubtitleSegment, read_subtitles
from mvx_tasks.video_decoder import WINDOW_MIN_FRAMES, VideoClip, load_video

from .cache import file_hash
from .question import AgentQuestion


class UnknownVideoError(KeyError):
    """A label the question does not have; the message lists the valid labels."""

    def __str__(self) -> str:
        return str(self.args[0])


class PathOutsideRootError(ValueError):
    """A video or subtitle path that escapes the dataset root."""


def _norm_label(text: str) -> str:
    return re.sub(r"[\s_\-:]+", " ", str(text)).strip().lower()


class QuestionVideos:
    """The videos of one question, addressed by label."""

    def __init__(self, question: AgentQuestion) -> None:
        self.question = question
        self._paths: dict[str, Path] = {}
        self._subs_paths: dict[str, Path | None] = {}
        for v in question.videos:
            self._paths[v.label] = self._confine(v.path, v.label)
            self._subs_paths[v.label] = self._confine(v.subtitle, v.label) if v.subtitle else None
        self._subs: dict[str, list[SubtitleSegment]] = {}
        self._lock = threading.Lock()

    def _confine(self, path: str, label: str) -> Path:
        root = self.question.root
        if root:
            try:
                return resolve_in_root(root, path, sample_id=self.question.id, what=f"video {label!r}")
            except SchemaError as exc:
                raise PathOutsideRootError(str(exc)) from None
        p = Path(path)
        if not p.is_absolute():
            raise PathOutsideRootError(f"question {self.question.id!r}: video {label!r} path {path!r} is relative "
                                       "but the question has no dataset root")
        return p

    @property
    def labels(self) -> list[str]:
        return list(self._paths)

    def resolve(self, name: str) -> str:
        """The canonical label for ``name``: exact, case/spacing-insensitive, or a unique suffix ("B")."""
        if name in self._paths:
            return name
        want = _norm_label(name)
        for label in self._paths:
            if _norm_label(label) == want:
                return label
        tail = [label for label in self._paths if _norm_label(label).split(" ")[-1] == want]
        if len(tail) == 1:
            return tail[0]
        if want in ("ref", "reference video"):
            return self.resolve("reference")
        raise UnknownVideoError(f"no video labelled {name!r}; this question's videos are {self.labels}")

    def path(self, label: str) -> Path:
        return self._paths[self.resolve(label)]

    def clip(self, label: str, start: float | None = None, end: float | None = None,
             n_frames: int | None = None) -> VideoClip:
        """Decoded frames of a video (decoded once per process, shared). With a window, a clip at
        least ``n_frames`` dense in it (default :data:`mvx_tasks.video_decoder.WINDOW_MIN_FRAMES`): the shared
        clip when its uniform sampling is dense enough there (always, for a clip that kept every
        frame), else a decode of just that window (seek, decode forward; cached)."""
        clip = load_video(self.path(label))
        if start is None and end is None:
            return clip
        return clip.dense(start, end, n_frames or WINDOW_MIN_FRAMES)

    def subtitle_path(self, label: str) -> Path | None:
        return self._subs_paths[self.resolve(label)]

    def subtitles(self, label: str) -> list[SubtitleSegment]:
        """Timed subtitle segments of a video ([] when it has none)."""
        label = self.resolve(label)
        with self._lock:
            if label not in self._subs:
                p = self._subs_paths[label]
                self._subs[label] = read_subtitles(p) if p is not None and p.is_file() else []
            return self._subs[label]

    def content_hash(self, label: str) -> str:
        """Hash of the video file's bytes (memoised by path, size and mtime)."""
        return file_hash(self.path(label))
