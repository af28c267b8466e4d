"""The one video decoder: decord first, PyAV as fallback, one process-wide frame cache.

Every consumer (the frames task group, ``verify``, the agent's tools, the synthetic-data
tests) decodes through this module. How it keeps memory bounded whatever the input:

* **Index first.** A video is indexed once (PyAV demux, no decoding): frame count, presentation
  timestamps, keyframes, codec, rotation, and whether the data stops before the header says it
  should (a truncated file). Problems are reported from the index with the file, the cause and
  the fix, before any decoder sees the file.
* **Decode at the size that is kept.** Frames are scaled inside the decoder (decord's
  ``VideoReader(width=, height=)``; PyAV converts each sampled frame to RGB at the kept size as
  it comes and never converts the others), and written straight into the output array, so no
  full-resolution batch or frame list exists. Frames stored with rotation metadata come out
  upright.
* **Sampling policy.** The frames kept per video follow :class:`SamplingPolicy`: a frames-per-
  second target with a floor and a cap (``MVX_SAMPLE_FPS``, ``MVX_MIN_FRAMES``,
  ``MVX_MAX_FRAMES``; :func:`configure` per run). The floor (256) keeps every frame of a clip of
  up to 256 frames, as before.
* **Windows on demand.** :meth:`VideoClip.dense` (and :func:`load_window`) decode a time window
  at a higher density than the uniform sampling: seek to the keyframe before the window, decode
  forward, keep the requested frames; cached by (video, window, frames).
* **Bounded cache and concurrency.** The clip cache is bounded in bytes (``MVX_FRAME_CACHE_MB``,
  default 1024) and entries (``MVX_FRAME_CACHE_SIZE``); at most ``MVX_MAX_DECODES`` (default 2)
  decodes run at once in a process, whatever the number of workers and videos per question.

The jobs live in their own modules, re-exported here (this module is the public API):
:mod:`.video_sampling` (how many frames are kept: :class:`SamplingPolicy`, the environment
defaults, :func:`uniform_indices`), :mod:`.video_index` (the container index, :class:`VideoInfo`,
:class:`VideoDecodeError`), :mod:`.frame_decoders` (decord and PyAV decoding at the kept size) and
:mod:`.frame_cache` (the byte-bounded clip cache and its statistics). This module holds the run's
settings (:func:`configure`), :class:`VideoClip` and the loaders and checks that tie them together.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import frame_cache
from .frame_cache import _cached, _evict, clear_cache, decode_stats
from .frame_decoders import _DECODERS, _decode_av
from .video_index import _CACHE_LOCK, REENCODE, VideoDecodeError, VideoInfo, _file_key, video_info
from .video_sampling import (DEFAULT_MAX_SIDE, WINDOW_MAX_FRAMES, WINDOW_MIN_FRAMES, SamplingPolicy, _default_policy,
                             _env_int, uniform_indices)

__all__ = ["VideoClip", "VideoDecodeError", "VideoInfo", "SamplingPolicy", "load_video", "load_window",
           "sample_video", "sampling_of", "probe_video", "check_video", "video_info", "uniform_indices", "decode_stats",
           "clear_cache", "configure", "current_policy", "decode_settings"]


MAX_DECODES = _env_int("MVX_MAX_DECODES", 2)
#: auto: decord for short files kept at their own size (MVX-Synth: the frames they always had), PyAV
#: for the rest (decord's scaled reader is slower on HD, grows past the memory budget when it seeks
#: through long files, and garbles rotated files); the other decoder is the fallback
DECODER = os.environ.get("MVX_DECODER", "auto")  # auto | decord | av
_DECODE_SLOTS = threading.BoundedSemaphore(MAX_DECODES)
_POLICY = _default_policy()


def current_policy() -> SamplingPolicy:
    return _POLICY


def decode_settings() -> dict:
    """Every setting of this process that changes the frames a tool reads: the sampling policy (``MVX_SAMPLE_FPS``,
    ``MVX_MIN_FRAMES``, ``MVX_MAX_FRAMES`` or the older ``MVX_MAX_DECODE_FRAMES``, ``MVX_MAX_DECODE_SIDE``, or
    :func:`configure`), the decoder (``MVX_DECODER``: decord and PyAV scale frames differently) and the bounds of a
    dense window re-read (``MVX_WINDOW_MIN_FRAMES``, ``MVX_WINDOW_MAX_FRAMES``). Part of every tool-cache key
    (:func:`sama_model.cache.cache_key`) and of a trace's resume key, so that neither serves results computed under
    other settings. Settings that change only speed or memory (``MVX_MAX_DECODES``, ``MVX_DECODE_THREADS``, the
    frame cache's size) are not in it."""
    return {**_POLICY.describe(), "decoder": DECODER, "window_min_frames": WINDOW_MIN_FRAMES,
            "window_max_frames": WINDOW_MAX_FRAMES}


def configure(*, fps: float | None = None, min_frames: int | None = None, max_frames: int | None = None,
              max_side: int | None = None, cache_mb: int | None = None, cache_size: int | None = None,
              max_decodes: int | None = None, decoder: str | None = None) -> SamplingPolicy:
    """Set this process's sampling policy and limits (a run's settings); returns the policy."""
    global _POLICY, MAX_DECODES, _DECODE_SLOTS, DECODER
    changes = {k: v for k, v in dict(fps=fps, min_frames=min_frames, max_frames=max_frames,
                                     max_side=max_side).items() if v is not None}
    if changes:
        from dataclasses import replace

        _POLICY = replace(_POLICY, **changes)
        if _POLICY.min_frames > _POLICY.max_frames or _POLICY.max_frames < 1 or _POLICY.max_side < 16:
            raise ValueError(f"invalid sampling policy {_POLICY}: need 1 <= min_frames <= max_frames, max_side >= 16")
    if cache_mb is not None:
        frame_cache.CACHE_BYTES = int(cache_mb) * 2 ** 20
    if cache_size is not None:
        frame_cache.CACHE_SIZE = int(cache_size)
    if max_decodes is not None:
        MAX_DECODES = max(1, int(max_decodes))
        _DECODE_SLOTS = threading.BoundedSemaphore(MAX_DECODES)
    if decoder is not None:
        if decoder not in ("auto", "decord", "av"):
            raise ValueError(f"decoder must be auto, decord or av, not {decoder!r}")
        DECODER = decoder
    with _CACHE_LOCK:
        _evict()
    return _POLICY


# ----------------------------------------------------------------------------- clips

@dataclass
class VideoClip:
    """Decoded frames of one video (RGB uint8, shape [T, H, W, 3], upright) with their timestamps."""

    path: str
    frames: np.ndarray
    timestamps: np.ndarray  # seconds, one per frame
    fps: float  # native frame rate of the file
    duration: float  # seconds
    native_size: tuple[int, int]  # (width, height) of the file, upright
    total_frames: int = 0  # frames in the file (0: unknown)
    indices: np.ndarray | None = None  # the file's frame numbers of the kept frames
    span: tuple[float, float] | None = None  # a window clip: the window it was decoded for
    policy: dict | None = None  # the sampling that produced it
    decoder: str = ""
    max_side: int = DEFAULT_MAX_SIDE

    @property
    def n_frames(self) -> int:
        return int(self.frames.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.frames.nbytes)

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

    def shifted_window(self, window: tuple[float | None, float | None],
                       frames: int) -> tuple[float | None, float | None]:
        """``window`` starting at its ``frames``-th decoded frame after the first (unchanged when ``frames`` is 0 or the
        window holds no more than that many frames). Why: a reader samples a window uniformly, so the same window read
        from a frame later samples the frames between: a second reading of the video that errs elsewhere (the
        ``shift_frames`` of ``object_tracker`` and ``visual_similarity``)."""
        if frames < 0:
            raise ValueError(f"shift_frames must be 0 or more, got {frames}")
        idx = self.window(*window)
        if frames == 0 or len(idx) <= frames:
            return window
        return (float(self.timestamps[idx[frames]]), window[1])

    def sample(self, n: int, start: float | None = None, end: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Up to ``n`` frames spread uniformly over a time window, with their timestamps."""
        idx = self.window(start, end)
        pick = idx[uniform_indices(len(idx), n)]
        return self.frames[pick], self.timestamps[pick]

    def dense(self, start: float | None = None, end: float | None = None, n_frames: int = WINDOW_MIN_FRAMES) -> "VideoClip":
        """A clip with at least ``n_frames`` frames in [start, end] when the file has them: this clip if
        its sampling is already that dense (always so for a clip that kept every frame), else a decode
        of just that window (cached)."""
        if self.total_frames <= self.n_frames or not Path(self.path).is_file():
            return self
        n = max(1, min(int(n_frames), WINDOW_MAX_FRAMES))
        have = int(((self.timestamps >= (start or 0.0) - 1e-6)
                    & (self.timestamps <= (self.duration if end is None else end) + 1e-6)).sum())
        if have >= n:
            return self
        try:
            info = video_info(self.path)
        except VideoDecodeError:
            return self
        if len(info.frames_in(start, end)) <= have:
            return self
        return load_window(self.path, start, end, n, max_side=self.max_side)


def _decode(info: VideoInfo, idx: np.ndarray, max_side: int, decoder: str | None = None) -> tuple[np.ndarray, str]:
    if info.problem:
        raise VideoDecodeError(info.problem)
    choice = decoder or DECODER
    if choice == "auto":
        small = info.kept_size(max_side) is None and not info.rotation and info.n_frames <= _POLICY.min_frames
        order = ("decord", "av") if small else ("av", "decord")
    else:
        order = (choice,)
    errors = []
    with _DECODE_SLOTS:
        for name in order:
            try:
                return _DECODERS[name](info, idx, max_side), name
            except VideoDecodeError as exc:
                errors.append(str(exc))
            except Exception as exc:  # decoder-specific failures: try the next decoder
                errors.append(f"{name}: {type(exc).__name__}: {exc}".strip())
    raise VideoDecodeError(f"video file {info.path} cannot be decoded ({info.codec}, {info.pix_fmt}: {'; '.join(errors)[:300]}); "
                           f"{REENCODE}")


def _clip(info: VideoInfo, idx: np.ndarray, max_side: int, decoder: str | None, policy: dict,
          span: tuple[float, float] | None = None) -> VideoClip:
    frames, used = _decode(info, idx, max_side, decoder)
    return VideoClip(path=info.path, frames=frames, timestamps=info.times[idx].astype(float), fps=info.fps,
                     duration=float(info.duration), native_size=info.display_size, total_frames=info.n_frames,
                     indices=np.asarray(idx, dtype=int), span=span, policy=policy, decoder=used, max_side=max_side)


def load_video(path: str | os.PathLike, *, max_frames: int | None = None, max_side: int | None = None,
               policy: SamplingPolicy | None = None, decoder: str | None = None) -> VideoClip:
    """Decode a video once (cached) under the sampling policy (or exactly ``max_frames`` uniform frames,
    when given). Raises :class:`VideoDecodeError` naming the file, the cause and the fix."""
    pol = policy or _POLICY
    if max_frames is not None:
        pol = SamplingPolicy(fps=0.0, min_frames=int(max_frames), max_frames=int(max_frames), max_side=pol.max_side)
    if max_side is not None:
        from dataclasses import replace

        pol = replace(pol, max_side=int(max_side))
    p = Path(path)
    key = _file_key(p) + ("clip", pol, decoder)

    def make() -> VideoClip:
        info = video_info(p)
        n = pol.frames_for(info.duration, info.n_frames)
        idx = uniform_indices(info.n_frames, n)
        return _clip(info, idx, pol.max_side, decoder, dict(pol.describe(), kept=int(len(idx))))

    return _cached(key, make)


def load_window(path: str | os.PathLike, start: float | None, end: float | None, n_frames: int, *,
                max_side: int | None = None, decoder: str | None = None) -> VideoClip:
    """Up to ``n_frames`` frames spread uniformly over [start, end] of the file (seek to the keyframe
    before the window, decode forward), cached by (video, window, frames). The clip's timestamps are
    the video's; its ``span`` is the window."""
    side = int(max_side or _POLICY.max_side)
    p = Path(path)
    n = max(1, int(n_frames))
    key = _file_key(p) + ("window", None if start is None else round(float(start), 3),
                          None if end is None else round(float(end), 3), n, side, decoder)

    def make() -> VideoClip:
        info = video_info(p)
        inside = info.frames_in(start, end)
        idx = inside[uniform_indices(len(inside), n)]
        s = 0.0 if start is None else float(start)
        e = info.duration if end is None else float(end)
        return _clip(info, idx, side, decoder, {"window": [s, e], "frames": n, "max_side": side, "kept": int(len(idx))},
                     span=(min(s, e), max(s, e)))

    return _cached(key, make)


def sample_video(path: str | os.PathLike, n: int, *, max_side: int | None = None,
                 decoder: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``n`` frames spread uniformly over the whole file and their timestamps, decoding only those
    (the frames group and VLMEvalKit's frame datasets)."""
    clip = load_window(path, None, None, n, max_side=max_side, decoder=decoder)
    return clip.frames, clip.timestamps


def sampling_of(clip: VideoClip) -> dict:
    """How a clip was sampled, for traces: frames kept of the file's, the window, the policy."""
    out = {"frames": clip.n_frames, "of": int(clip.total_frames or clip.n_frames),
           "size": [int(clip.frames.shape[2]), int(clip.frames.shape[1])] if clip.frames.ndim == 4 else None}
    if clip.span is not None:
        out["window"] = [round(float(clip.span[0]), 3), round(float(clip.span[1]), 3)]
    if clip.policy:
        out["policy"] = {k: v for k, v in clip.policy.items() if k in ("fps", "min_frames", "max_frames", "max_side")}
    return out


# ----------------------------------------------------------------------------- checks

def probe_video(path: str | os.PathLike) -> str | None:
    """None when the video opens, its first frame decodes and its data is complete, else the reason
    (no full decode: the container is demuxed, cached with the index)."""
    try:
        info = video_info(path)
    except VideoDecodeError as exc:
        return str(exc)
    return info.problem


def check_video(path: str | os.PathLike) -> str | None:
    """:func:`probe_video`, then decode from the last keyframe to the last frame: None when the video
    decodes to its end, else the reason with the time where it breaks (``mvx-bench verify``)."""
    problem = probe_video(path)
    if problem:
        return problem
    info = video_info(path)
    last = info.n_frames - 1
    tail = np.arange(info.keyframe_before(last), last + 1)
    try:
        with _DECODE_SLOTS:
            _decode_av(info, tail, 64)
    except VideoDecodeError as exc:
        return str(exc)
    except Exception as exc:
        at = float(info.times[int(tail[0])])
        return (f"video file {info.path} does not decode to its end: it breaks after {at:.2f} s of "
                f"{info.duration:.2f} s ({type(exc).__name__}: {str(exc)[:100]}); re-download it or {REENCODE}")
    return None
