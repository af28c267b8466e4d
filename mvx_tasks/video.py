"""The one video decoder: decord first, PyAV as fallback, one process-wide frame cache.

Every consumer (the frames task group, ``verify``, the agent's tools, the synthetic-data
tests) decodes through :func:`load_video`. A video is decoded once, sequentially, at a capped
resolution and frame count, and the decoded clip is kept in an LRU cache keyed by path, size
and modification time; later requests (a time window, N uniform frames) are served from memory.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["VideoClip", "VideoDecodeError", "load_video", "probe_video", "uniform_indices",
           "decode_stats", "clear_cache"]

DEFAULT_MAX_FRAMES = int(os.environ.get("MVX_MAX_DECODE_FRAMES", "256"))
DEFAULT_MAX_SIDE = int(os.environ.get("MVX_MAX_DECODE_SIDE", "448"))


class VideoDecodeError(RuntimeError):
    """A video that is missing or cannot be decoded; the message names the file and the fix."""


@dataclass
class VideoClip:
    """Decoded frames of one video (RGB uint8, shape [T, H, W, 3]) with their timestamps."""

    path: str
    frames: np.ndarray
    timestamps: np.ndarray  # seconds, one per frame
    fps: float  # native frame rate of the file
    duration: float  # seconds
    native_size: tuple[int, int]  # (width, height) of the file

    @property
    def n_frames(self) -> int:
        return int(self.frames.shape[0])

    def window(self, start: float | None = None, end: float | None = None) -> np.ndarray:
        """Indices of the decoded frames whose timestamps lie in [start, end]."""
        s = 0.0 if start is None else float(start)
        e = self.duration if end is None else float(end)
        if e < s:
            s, e = e, s
        idx = np.nonzero((self.timestamps >= s - 1e-6) & (self.timestamps <= e + 1e-6))[0]
        if idx.size == 0 and self.n_frames:  # window between two samples: nearest frame
            mid = (s + e) / 2
            idx = np.array([int(np.argmin(np.abs(self.timestamps - mid)))])
        return idx

    def sample(self, n: int, start: float | None = None, end: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Up to ``n`` frames spread uniformly over a time window, with their timestamps."""
        idx = self.window(start, end)
        pick = idx[uniform_indices(len(idx), n)]
        return self.frames[pick], self.timestamps[pick]


def uniform_indices(total: int, n: int) -> np.ndarray:
    """``n`` indices spread evenly over ``range(total)`` (centre of each segment)."""
    if total <= 0 or n <= 0:
        return np.zeros(0, dtype=int)
    if n >= total:
        return np.arange(total)
    edges = np.linspace(0, total, n + 1)
    return np.clip(((edges[:-1] + edges[1:]) / 2).astype(int), 0, total - 1)


_CACHE: "OrderedDict[tuple, VideoClip]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_STATS = {"decodes": 0, "hits": 0}
CACHE_SIZE = int(os.environ.get("MVX_FRAME_CACHE_SIZE", "64"))


def decode_stats() -> dict[str, int]:
    """How many real decodes and cache hits happened in this process (benchmarks read this)."""
    return dict(_STATS)


def clear_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


def _resize(frames: np.ndarray, max_side: int) -> np.ndarray:
    h, w = frames.shape[1:3]
    scale = max_side / max(h, w)
    if scale >= 1:
        return frames
    import cv2

    size = (max(2, round(w * scale)), max(2, round(h * scale)))
    return np.stack([cv2.resize(f, size, interpolation=cv2.INTER_AREA) for f in frames])


def _decode_decord(path: str, max_frames: int):
    import decord

    vr = decord.VideoReader(path, num_threads=1)
    total = len(vr)
    if total == 0:
        raise VideoDecodeError("the file holds no video frames")
    fps = float(vr.get_avg_fps() or 0) or 25.0
    idx = uniform_indices(total, max_frames)
    frames = vr.get_batch(list(map(int, idx))).asnumpy()
    h, w = frames.shape[1:3]
    return frames, idx / fps, fps, total / fps, (w, h)


def _decode_av(path: str, max_frames: int):
    import av

    with av.open(path) as container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate or stream.guessed_rate or 25.0)
        frames, times = [], []
        for frame in container.decode(stream):
            frames.append(frame.to_ndarray(format="rgb24"))
            times.append(float(frame.time) if frame.time is not None else len(times) / fps)
    if not frames:
        raise VideoDecodeError("the file holds no video frames")
    total = len(frames)
    idx = uniform_indices(total, max_frames)
    arr = np.stack([frames[i] for i in idx])
    t = np.asarray(times, dtype=float)
    t = t - t[0]
    h, w = arr.shape[1:3]
    return arr, t[idx], fps, max(total / fps, float(t[-1]) + 1.0 / fps), (w, h)


def load_video(path: str | os.PathLike, *, max_frames: int = DEFAULT_MAX_FRAMES,
               max_side: int = DEFAULT_MAX_SIDE) -> VideoClip:
    """Decode a video once (cached). Raises :class:`VideoDecodeError` naming the file and the fix."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError:
        raise VideoDecodeError(f"video file {p} does not exist; check the path in data.jsonl or "
                               f"re-download the dataset into its folder") from None
    if not p.is_file() or st.st_size == 0:
        raise VideoDecodeError(f"video file {p} is empty or not a file; replace it with a valid video")
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns, max_frames, max_side)
    with _CACHE_LOCK:
        clip = _CACHE.get(key)
        if clip is not None:
            _CACHE.move_to_end(key)
            _STATS["hits"] += 1
            return clip
        lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with lock:  # one decode per video even when several threads ask at once
        with _CACHE_LOCK:
            clip = _CACHE.get(key)
            if clip is not None:
                _STATS["hits"] += 1
                return clip
        errors = []
        result = None
        for decoder in (_decode_decord, _decode_av):
            try:
                result = decoder(str(p), max_frames)
                break
            except VideoDecodeError as exc:
                errors.append(str(exc))
            except Exception as exc:  # decoder-specific failures: try the next decoder
                errors.append(f"{decoder.__name__[8:]}: {type(exc).__name__}: {exc}".strip())
        if result is None:
            raise VideoDecodeError(f"cannot decode video {p} ({'; '.join(errors)[:300]}); re-encode it "
                                   f"as H.264 MP4 (e.g. ffmpeg -i in -c:v libx264 out.mp4) or replace the file")
        frames, ts, fps, duration, native = result
        clip = VideoClip(path=str(p), frames=_resize(frames, max_side), timestamps=np.asarray(ts, dtype=float),
                         fps=fps, duration=float(duration), native_size=native)
        with _CACHE_LOCK:
            _STATS["decodes"] += 1
            _CACHE[key] = clip
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
            _KEY_LOCKS.pop(key, None)
        return clip


def probe_video(path: str | os.PathLike) -> str | None:
    """None when the video opens and has frames, else the reason (cheap: no full decode)."""
    p = Path(path)
    if not p.is_file():
        return f"video file {p} does not exist"
    if p.stat().st_size == 0:
        return f"video file {p} is empty"
    try:
        import decord

        vr = decord.VideoReader(str(p), num_threads=1)
        if len(vr) == 0:
            return f"video file {p} holds no frames"
        vr[0]
        return None
    except Exception:
        pass
    try:
        import av

        with av.open(str(p)) as c:
            if not c.streams.video:
                return f"video file {p} has no video stream"
            next(c.decode(video=0))
        return None
    except Exception as exc:
        return f"video file {p} cannot be decoded ({type(exc).__name__}: {str(exc)[:120]})"
