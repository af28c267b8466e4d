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
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["VideoClip", "VideoDecodeError", "VideoInfo", "SamplingPolicy", "load_video", "load_window",
           "sample_video", "sampling_of", "probe_video", "check_video", "video_info", "uniform_indices", "decode_stats",
           "clear_cache", "configure", "current_policy"]


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
CACHE_SIZE = _env_int("MVX_FRAME_CACHE_SIZE", 64)
CACHE_BYTES = _env_int("MVX_FRAME_CACHE_MB", 1024) * 2 ** 20
MAX_DECODES = _env_int("MVX_MAX_DECODES", 2)
DECODE_THREADS = _env_int("MVX_DECODE_THREADS", 2)  # PyAV frame threads per decode
#: auto: decord for short files kept at their own size (MVX-Synth: the frames they always had), PyAV
#: for the rest (decord's scaled reader is slower on HD, grows past the memory budget when it seeks
#: through long files, and garbles rotated files); the other decoder is the fallback
DECODER = os.environ.get("MVX_DECODER", "auto")  # auto | decord | av


class VideoDecodeError(RuntimeError):
    """A video that is missing or cannot be decoded; the message names the file and the fix."""


REENCODE = "re-encode it as 8-bit H.264 MP4 (ffmpeg -i IN -c:v libx264 -pix_fmt yuv420p OUT.mp4) or replace the file"


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


_POLICY = _default_policy()


def current_policy() -> SamplingPolicy:
    return _POLICY


def configure(*, fps: float | None = None, min_frames: int | None = None, max_frames: int | None = None,
              max_side: int | None = None, cache_mb: int | None = None, cache_size: int | None = None,
              max_decodes: int | None = None, decoder: str | None = None) -> SamplingPolicy:
    """Set this process's sampling policy and limits (a run's settings); returns the policy."""
    global _POLICY, CACHE_BYTES, CACHE_SIZE, MAX_DECODES, _DECODE_SLOTS, DECODER
    changes = {k: v for k, v in dict(fps=fps, min_frames=min_frames, max_frames=max_frames,
                                     max_side=max_side).items() if v is not None}
    if changes:
        from dataclasses import replace

        _POLICY = replace(_POLICY, **changes)
        if _POLICY.min_frames > _POLICY.max_frames or _POLICY.max_frames < 1 or _POLICY.max_side < 16:
            raise ValueError(f"invalid sampling policy {_POLICY}: need 1 <= min_frames <= max_frames, max_side >= 16")
    if cache_mb is not None:
        CACHE_BYTES = int(cache_mb) * 2 ** 20
    if cache_size is not None:
        CACHE_SIZE = int(cache_size)
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


def uniform_indices(total: int, n: int) -> np.ndarray:
    """``n`` indices spread evenly over ``range(total)`` (centre of each segment)."""
    if total <= 0 or n <= 0:
        return np.zeros(0, dtype=int)
    if n >= total:
        return np.arange(total)
    edges = np.linspace(0, total, n + 1)
    return np.clip(((edges[:-1] + edges[1:]) / 2).astype(int), 0, total - 1)


# ----------------------------------------------------------------------------- the index

@dataclass
class VideoInfo:
    """What a video file holds, from its container (demuxed, not decoded)."""

    path: str
    n_frames: int  # frames whose data is in the file
    declared_frames: int  # what the header promises (0: not stated)
    raw_pts: np.ndarray  # presentation timestamps in stream time base, sorted (int64)
    keyframes: np.ndarray  # frame numbers of keyframes, sorted
    time_base: float
    fps: float
    cfr: bool  # constant frame rate: frame i is at i / fps
    width: int  # coded size
    height: int
    rotation: int  # clockwise degrees that make the frames upright (0, 90, 180, 270)
    codec: str
    pix_fmt: str
    file_size: int = 0
    problem: str | None = None  # why it cannot be used (truncated ...), None when fine
    broken_at: float | None = None  # seconds where the data stops
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))  # seconds of each frame

    def __post_init__(self) -> None:
        if self.cfr:
            self.times = np.arange(self.n_frames) / self.fps
        else:
            self.times = (self.raw_pts - (self.raw_pts[0] if len(self.raw_pts) else 0)) * self.time_base

    @property
    def duration(self) -> float:
        if self.cfr or self.n_frames < 2:
            return self.n_frames / self.fps
        step = float(np.median(np.diff(self.times)))
        return float(self.times[-1] + step)

    @property
    def display_size(self) -> tuple[int, int]:
        return (self.height, self.width) if self.rotation in (90, 270) else (self.width, self.height)

    def frames_in(self, start: float | None, end: float | None) -> np.ndarray:
        s = 0.0 if start is None else float(start)
        e = self.duration if end is None else float(end)
        if e < s:
            s, e = e, s
        lo, hi = np.searchsorted(self.times, s - 1e-6, "left"), np.searchsorted(self.times, e + 1e-6, "right")
        if hi <= lo and self.n_frames:
            mid = (s + e) / 2
            return np.array([int(np.argmin(np.abs(self.times - mid)))])
        return np.arange(lo, hi)

    def keyframe_before(self, i: int) -> int:
        k = int(np.searchsorted(self.keyframes, i, "right")) - 1
        return int(self.keyframes[k]) if k >= 0 else 0

    def kept_size(self, max_side: int) -> tuple[int, int] | None:
        """(width, height) to decode at, in coded orientation; None when no scaling is needed."""
        scale = max_side / max(self.width, self.height)
        if scale >= 1:
            return None
        return max(2, round(self.width * scale)), max(2, round(self.height * scale))

    def summary(self) -> dict:
        return {"frames": self.n_frames, "fps": round(self.fps, 3), "duration": round(self.duration, 3),
                "size": list(self.display_size), "codec": self.codec, "pix_fmt": self.pix_fmt,
                "rotation": self.rotation, "cfr": self.cfr}


_INFO: "OrderedDict[tuple, VideoInfo]" = OrderedDict()
_INFO_SIZE = 4096


def _file_key(p: Path) -> tuple:
    try:
        st = p.stat()
    except OSError:
        raise VideoDecodeError(f"video file {p} does not exist; check the path in data.jsonl or "
                               f"re-download the dataset into its folder") from None
    if not p.is_file() or st.st_size == 0:
        raise VideoDecodeError(f"video file {p} is empty (zero bytes) or not a file; replace it with a valid video")
    return (str(p.resolve()), st.st_size, st.st_mtime_ns)


def video_info(path: str | os.PathLike) -> VideoInfo:
    """The file's index (cached by path, size and mtime). Raises :class:`VideoDecodeError` for a file
    that cannot be opened, has no video stream or whose first frame cannot be decoded."""
    p = Path(path)
    key = _file_key(p)
    with _CACHE_LOCK:
        info = _INFO.get(key)
        if info is not None:
            _INFO.move_to_end(key)
            return info
    info = _index(p, key[1])
    with _CACHE_LOCK:
        _INFO[key] = info
        while len(_INFO) > _INFO_SIZE:
            _INFO.popitem(last=False)
    return info


def _index(p: Path, size: int) -> VideoInfo:
    import av

    try:
        container = av.open(str(p))
    except Exception as exc:
        raise VideoDecodeError(
            f"video file {p} cannot be decoded: it does not open ({type(exc).__name__}: {str(exc)[:120]}); it is damaged, "
            f"truncated before its index (an MP4 cut mid-download has no 'moov' box) or not a video: "
            f"re-download it or {REENCODE}") from None
    with container:
        if not container.streams.video:
            kinds = ", ".join(s.type for s in container.streams) or "nothing"
            raise VideoDecodeError(f"video file {p} has no video stream (it holds {kinds}); replace it with the "
                                   f"video itself")
        stream = container.streams.video[0]
        ctx = stream.codec_context
        codec = ctx.name if ctx is not None else "?"
        pix_fmt = (ctx.pix_fmt if ctx is not None else None) or "?"
        tb = float(stream.time_base) if stream.time_base else 1 / 90000
        declared = int(stream.frames or 0)
        pts, keys, broken = [], [], None
        try:
            for packet in container.demux(stream):
                t = packet.pts if packet.pts is not None else packet.dts
                if t is None or packet.size == 0:
                    continue
                pts.append(t)
                keys.append(bool(packet.is_keyframe))
        except Exception as exc:  # data ends or is damaged mid-stream
            broken = f"{type(exc).__name__}: {str(exc)[:80]}"
        if not pts:
            raise VideoDecodeError(f"video file {p} holds no video frames ({codec}); {REENCODE}")
        order = np.argsort(np.asarray(pts, dtype=np.int64), kind="stable")
        raw = np.asarray(pts, dtype=np.int64)[order]
        keyframes = np.nonzero(np.asarray(keys, dtype=bool)[order])[0]
        if keyframes.size == 0 or keyframes[0] != 0:
            keyframes = np.concatenate([[0], keyframes]).astype(int)
        rate = stream.average_rate or stream.guessed_rate or stream.base_rate
        fps = float(rate) if rate else 0.0
        if not fps or not np.isfinite(fps):
            span = (raw[-1] - raw[0]) * tb
            fps = (len(raw) - 1) / span if span > 0 else 25.0
        rel = (raw - raw[0]) * tb
        cfr = bool(np.all(np.abs(rel - np.arange(len(raw)) / fps) < 0.5 / fps))
        # decode the first frame: proves the codec works here and reads the display matrix
        rotation = 0
        try:
            container.seek(int(raw[0]), stream=stream, backward=True)
            frame = next(container.decode(stream))
            rotation = int(round(-float(getattr(frame, "rotation", 0) or 0))) % 360
            rotation = min((0, 90, 180, 270), key=lambda r: min(abs(r - rotation), 360 - abs(r - rotation)))
        except Exception as exc:
            raise VideoDecodeError(
                f"video file {p} cannot be decoded: its {codec} ({pix_fmt}) stream does not decode with this build "
                f"({type(exc).__name__}: {str(exc)[:100]}); {REENCODE}") from None
    info = VideoInfo(path=str(p), n_frames=len(raw), declared_frames=declared, raw_pts=raw, keyframes=keyframes,
                     time_base=tb, fps=fps, cfr=cfr, width=int(ctx.width or frame.width),
                     height=int(ctx.height or frame.height), rotation=rotation, codec=codec, pix_fmt=pix_fmt,
                     file_size=size)
    if broken is not None or (declared and len(raw) < declared - 1):
        info.broken_at = float(info.times[-1]) if info.n_frames else 0.0
        total = f" of {declared / fps:.2f} s" if declared else ""
        info.problem = (f"video file {p} is truncated or damaged: its data stops at {info.broken_at:.2f} s{total} "
                        f"({len(raw)} of {declared or '?'} frames{'; ' + broken if broken else ''}); re-download it or "
                        f"replace the file (what is left can be saved with ffmpeg -i IN -c:v libx264 OUT.mp4)")
    return info


# ----------------------------------------------------------------------------- decoders

def _decode_decord(info: VideoInfo, idx: np.ndarray, max_side: int) -> np.ndarray:
    import decord

    if info.rotation:  # decord rotates but then scales to the unrotated size (garbled frames)
        raise RuntimeError("rotated video: left to PyAV")
    size = info.kept_size(max_side)
    kw = {"width": size[0], "height": size[1]} if size else {}
    vr = decord.VideoReader(info.path, num_threads=1, **kw)
    if len(vr) < (int(idx[-1]) + 1 if len(idx) else 0):
        raise RuntimeError(f"decord sees {len(vr)} frames, the index {info.n_frames}")
    w, h = size or (info.width, info.height)
    out = np.empty((len(idx), h, w, 3), dtype=np.uint8)
    for a in range(0, len(idx), 16):  # small batches: never more than 16 decoded frames outside `out`
        chunk = [int(i) for i in idx[a: a + 16]]
        out[a: a + len(chunk)] = vr.get_batch(chunk).asnumpy()
    del vr
    return out


def _decode_av(info: VideoInfo, idx: np.ndarray, max_side: int) -> np.ndarray:
    """Decode the frames ``idx`` (sorted frame numbers): seek to a keyframe when the next wanted frame
    lies beyond the next keyframe, else decode forward; convert only the wanted frames, at kept size."""
    import av

    size = info.kept_size(max_side)
    w, h = size or (info.width, info.height)
    k_rot = info.rotation // 90
    oh, ow = (w, h) if k_rot % 2 else (h, w)
    out = np.empty((len(idx), oh, ow, 3), dtype=np.uint8)
    if not len(idx):
        return out
    with av.open(info.path) as container:
        stream = container.streams.video[0]
        if DECODE_THREADS != 1:
            stream.thread_type = "AUTO"
            stream.codec_context.thread_count = DECODE_THREADS
        k, cur, frames = 0, -1, None
        while k < len(idx):
            target = int(idx[k])
            key = info.keyframe_before(target)
            if frames is None or key > cur + 1:
                container.seek(int(info.raw_pts[key]), stream=stream, backward=True)
                frames, cur = container.decode(stream), key - 1
            progressed = False
            for frame in frames:
                progressed = True
                if frame.pts is not None:
                    j = int(np.searchsorted(info.raw_pts, frame.pts))
                    cur = j if j < info.n_frames and info.raw_pts[j] == frame.pts else cur + 1
                else:
                    cur += 1
                if cur < target:
                    continue
                arr = frame.to_ndarray(format="rgb24", width=w, height=h) if size else frame.to_ndarray(format="rgb24")
                if k_rot:
                    arr = np.rot90(arr, -k_rot)
                while k < len(idx) and int(idx[k]) <= cur:  # a lost frame: the next one stands in
                    out[k] = arr
                    k += 1
                if k >= len(idx):
                    break
                target = int(idx[k])
                if info.keyframe_before(target) > cur + 1:
                    break  # seek ahead
            else:
                if k < len(idx):
                    at = float(info.times[min(cur, info.n_frames - 1)]) if cur >= 0 else 0.0
                    raise VideoDecodeError(f"video file {info.path} stops decoding at {at:.2f} s (frame {cur + 1} of "
                                           f"{info.n_frames}); re-download it or {REENCODE}")
            if not progressed:
                break
    return out


_DECODERS = {"decord": _decode_decord, "av": _decode_av}


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


# ----------------------------------------------------------------------------- the cache

_CACHE: "OrderedDict[tuple, VideoClip]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_STATS = {"decodes": 0, "hits": 0, "window_decodes": 0, "evictions": 0}
_DECODE_SLOTS = threading.BoundedSemaphore(MAX_DECODES)


def decode_stats() -> dict[str, int]:
    """How many real decodes and cache hits happened in this process (benchmarks read this), and the
    cache's current size in bytes."""
    with _CACHE_LOCK:
        return dict(_STATS, cached_bytes=sum(c.nbytes for c in _CACHE.values()), cached_clips=len(_CACHE))


def clear_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()
        _INFO.clear()


def _evict() -> None:
    """Drop least recently used clips until the cache fits its byte and entry bounds (lock held)."""
    total = sum(c.nbytes for c in _CACHE.values())
    while _CACHE and (total > CACHE_BYTES or len(_CACHE) > CACHE_SIZE):
        _, old = _CACHE.popitem(last=False)
        total -= old.nbytes
        _STATS["evictions"] += 1


def _cached(key: tuple, make) -> VideoClip:
    with _CACHE_LOCK:
        clip = _CACHE.get(key)
        if clip is not None:
            _CACHE.move_to_end(key)
            _STATS["hits"] += 1
            return clip
        lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with lock:  # one decode per key even when several threads ask at once
        with _CACHE_LOCK:
            clip = _CACHE.get(key)
            if clip is not None:
                _STATS["hits"] += 1
                return clip
        try:
            clip = make()
        except BaseException:
            with _CACHE_LOCK:
                _KEY_LOCKS.pop(key, None)
            raise
        with _CACHE_LOCK:
            _STATS["window_decodes" if clip.span is not None else "decodes"] += 1
            if clip.nbytes <= CACHE_BYTES:  # a clip larger than the whole cache is handed out, not kept
                _CACHE[key] = clip
                _evict()
            _KEY_LOCKS.pop(key, None)
        return clip


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
