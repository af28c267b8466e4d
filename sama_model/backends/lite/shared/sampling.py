"""Which frames of a window a lite tool reads, and at what size (downscaled copies shared through the frame memo)."""

from __future__ import annotations

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip, uniform_indices

from .frame_memo import FRAME_MEMO

Window = tuple[float | None, float | None]

# Frames of a window examined by the tracking-based tools (tracker, grounding, motion, reader):
# one shared default means they sample the same frames and share each frame's segmentation.
# 24 is 3 s at 8 fps (every MVX-Synth clip whole); a longer clip is thinned to it, so a call's
# cost does not grow with the clip's length (it was 32: a third more work on real footage).
TRACK_FRAMES = 24


def window_indices(clip: VideoClip, window: Window = (None, None), max_frames: int | None = None) -> np.ndarray:
    """Indices of the clip's decoded frames in ``window``, thinned uniformly to ``max_frames``."""
    start, end = window if window is not None else (None, None)
    idx = clip.window(start, end)
    if max_frames is not None and len(idx) > max_frames:
        idx = idx[uniform_indices(len(idx), max_frames)]
    return idx


def window_span(clip: VideoClip, window: Window = (None, None)) -> list[float]:
    """The window as explicit ``[start, end]`` seconds (None filled from the clip)."""
    start, end = window if window is not None else (None, None)
    s = 0.0 if start is None else float(start)
    e = float(clip.duration) if end is None else float(end)
    return [round(min(s, e), 3), round(max(s, e), 3)]


def resize_max(frame: np.ndarray, max_side: int) -> tuple[np.ndarray, float]:
    """Downscale ``frame`` so its longer side is at most ``max_side``; returns (image, scale)."""
    h, w = frame.shape[:2]
    scale = min(1.0, max_side / float(max(h, w)))
    if scale >= 1.0:
        return frame, 1.0
    size = (max(2, int(round(w * scale))), max(2, int(round(h * scale))))
    return FRAME_MEMO.resized(frame, size), scale


def grey_small(frame: np.ndarray, max_side: int = 160) -> np.ndarray:
    """Greyscale float32 copy at working resolution (flow, hashes, change detection)."""
    small, _ = resize_max(frame, max_side)
    return cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)
