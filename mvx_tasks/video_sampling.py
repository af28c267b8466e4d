"""How many frames of a video are kept: the sampling policy and its environment defaults.

``MVX_SAMPLE_FPS``, ``MVX_MIN_FRAMES``, ``MVX_MAX_FRAMES`` (or the older fixed
``MVX_MAX_DECODE_FRAMES``) and ``MVX_MAX_DECODE_SIDE`` set the default :class:`SamplingPolicy`;
``MVX_WINDOW_MIN_FRAMES`` / ``MVX_WINDOW_MAX_FRAMES`` bound dense window re-reads. The run's current
policy is held and changed by :func:`mvx_tasks.video_decoder.configure`.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import numpy as np


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, "") or default)


def _env_float(name: str, default: float) -> float:
    return float(os.environ.get(name, "") or default)


_LEGACY_FRAMES = os.environ.get("MVX_MAX_DECODE_FRAMES")  # before the policy: one fixed frame count
DEFAULT_MAX_SIDE = _env_int("MVX_MAX_DECODE_SIDE", 448)
DEFAULT_MAX_FRAMES = _env_int("MVX_MAX_FRAMES", int(_LEGACY_FRAMES or 512))
#: a windowed tool call without its own frame count gets at least this many frames in its window
WINDOW_MIN_FRAMES = _env_int("MVX_WINDOW_MIN_FRAMES", 16)
#: frames of one dense window re-read (a window is never decoded at more than this)
WINDOW_MAX_FRAMES = _env_int("MVX_WINDOW_MAX_FRAMES", 256)


# ----------------------------------------------------------------------------- sampling policy

@dataclass(frozen=True)
class SamplingPolicy:
    """How many frames of a video are kept: ``duration * fps`` clamped to ``[min_frames, max_frames]``
    (never more than the file has), spread uniformly; the longer side scaled to ``max_side``."""

    fps: float = 1.0
    min_frames: int = 256
    max_frames: int = 512
    max_side: int = 448

    def frames_for(self, duration: float, total: int) -> int:
        want = int(round(max(0.0, float(duration)) * self.fps))
        return int(min(total, max(self.min_frames, min(self.max_frames, want))))

    def describe(self) -> dict:
        return asdict(self)


def _default_policy() -> SamplingPolicy:
    if _LEGACY_FRAMES and not any(os.environ.get(k) for k in ("MVX_MIN_FRAMES", "MVX_MAX_FRAMES", "MVX_SAMPLE_FPS")):
        n = int(_LEGACY_FRAMES)
        return SamplingPolicy(fps=0.0, min_frames=n, max_frames=n, max_side=DEFAULT_MAX_SIDE)
    return SamplingPolicy(fps=_env_float("MVX_SAMPLE_FPS", 1.0), min_frames=_env_int("MVX_MIN_FRAMES", 256),
                          max_frames=DEFAULT_MAX_FRAMES, max_side=DEFAULT_MAX_SIDE)


def uniform_indices(total: int, n: int) -> np.ndarray:
    """``n`` indices spread evenly over ``range(total)`` (centre of each segment)."""
    if total <= 0 or n <= 0:
        return np.zeros(0, dtype=int)
    if n >= total:
        return np.arange(total)
    edges = np.linspace(0, total, n + 1)
    return np.clip(((edges[:-1] + edges[1:]) / 2).astype(int), 0, total - 1)
