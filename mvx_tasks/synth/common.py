"""Shared plumbing of the generators: difficulty knobs, seeding, balanced answer slots, plans.

A generator never renders while it plans: it returns a :class:`Planned` question whose videos
are :class:`VideoJob` closures. The runner renders them (or not, in a dry run), so question text,
answers and balance can be checked without encoding a single frame.
"""
from __future__ import annotations

import re
import string
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..subtitles import SubtitleSegment


class GenerationError(RuntimeError):
    """A generator could not build a question whose answer is unique by construction."""


@dataclass(frozen=True)
class Difficulty:
    """Knobs every generator reads; higher values make a question harder to shortcut."""

    name: str
    distractors: tuple[int, int]  # inclusive range of distractor objects per video
    noise: float  # sensor-noise standard deviation (0-255 scale)
    occluders: int  # foreground occluding bars per video
    jitter: float  # camera shake amplitude in output pixels
    light: float  # relative amplitude of lighting change over a clip
    similarity: float  # 0..1, how close negatives are to the positive / reference


DIFFICULTIES: dict[str, Difficulty] = {
    "easy": Difficulty("easy", (1, 2), 2.0, 0, 0.5, 0.05, 0.25),
    "default": Difficulty("default", (2, 4), 4.0, 1, 1.5, 0.12, 0.6),
    "hard": Difficulty("hard", (4, 6), 7.0, 2, 3.0, 0.2, 0.9),
}

CANDIDATE_LABELS = ("Video A", "Video B", "Video C", "Video D")
LETTERS = string.ascii_uppercase


def get_difficulty(name: str | Difficulty) -> Difficulty:
    if isinstance(name, Difficulty):
        return name
    try:
        return DIFFICULTIES[str(name).lower()]
    except KeyError:
        raise ValueError(f"unknown difficulty {name!r}; choose one of {', '.join(DIFFICULTIES)}") from None


def _code_key(code: str) -> int:
    return zlib.crc32(code.upper().encode("ascii"))


def rng_for(seed: int, code: str, index: int, *extra: int) -> np.random.Generator:
    """An independent generator per (seed, task, question, ...): questions never share a stream."""
    return np.random.default_rng([int(seed), _code_key(code), int(index), *map(int, extra)])


def balanced_position(seed: int, code: str, index: int, n: int, salt: int = 0) -> int:
    """Answer slot of question ``index``: each block of ``n`` questions uses every slot once.

    The block permutation depends only on (seed, task, block), so question ``i`` is the same
    whatever ``per_task`` is, and any prefix of the task is balanced up to one block.
    """
    block, within = divmod(int(index), n)
    perm = np.random.default_rng([int(seed), _code_key(code), 7919, n, salt, block]).permutation(n)
    return int(perm[within])


def slug(label: str) -> str:
    """File-name form of a video label: "Video A" -> "video-a"."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def question_id(code: str, index: int) -> str:
    return f"synth-{code.lower()}-{index:04d}"


@dataclass
class VideoJob:
    """One video of a planned question: its label, how to render it, optional subtitles."""

    label: str
    render: Callable[[], np.ndarray]  # -> uint8 frames [T, H, W, 3]
    subtitle: list[SubtitleSegment] | None = None
    crf: int | None = None  # encoding quality override (VS re-encodes near-duplicates)


@dataclass
class Planned:
    """A question before rendering; ``meta`` holds the facts the answer was derived from."""

    question: str
    options: dict[str, str]
    answer: str
    videos: list[VideoJob]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QuestionContext:
    """Everything a generator needs for one question."""

    code: str
    index: int
    seed: int
    difficulty: Difficulty

    @property
    def qid(self) -> str:
        return question_id(self.code, self.index)

    def rng(self, *extra: int) -> np.random.Generator:
        return rng_for(self.seed, self.code, self.index, *extra)

    def slot(self, n: int, salt: int = 0) -> int:
        return balanced_position(self.seed, self.code, self.index, n, salt)


def candidate_options(n: int = 4) -> dict[str, str]:
    """Options whose text is the candidate video's label ("A" -> "Video A")."""
    return {LETTERS[i]: CANDIDATE_LABELS[i] for i in range(n)}


def require_unique(matches: list[bool], answer_pos: int, what: str) -> None:
    """Raise unless exactly the answer slot satisfies the task's criterion."""
    hits = [i for i, m in enumerate(matches) if m]
    if hits != [answer_pos]:
        raise GenerationError(f"{what}: candidates satisfying the criterion are {hits}, expected only {answer_pos}")


def jsonable(value: Any) -> Any:
    """Meta values as plain JSON types (numpy scalars and arrays included)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return round(float(value), 4)
    if isinstance(value, float):
        return round(value, 4)
    return value
