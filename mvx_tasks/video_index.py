"""A video file's index, read from its container (demuxed, not decoded) and cached by path, size and
mtime: frame count, presentation timestamps, keyframes, codec, rotation, and whether the data stops
before the header says it should. Problems are reported from here with the file, the cause and the fix.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


class VideoDecodeError(RuntimeError):
    """A video that is missing or cannot be decoded; the message names the file and the fix."""


REENCODE = "re-encode it as 8-bit H.264 MP4 (ffmpeg -i IN -c:v libx264 -pix_fmt yuv420p OUT.mp4) or replace the file"


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

_CACHE_LOCK = threading.Lock()  # guards this index cache and the clip cache (frame_cache.py)


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
