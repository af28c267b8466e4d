"""Deterministic H.264 encoding and subtitle writing for the synthetic videos.

libx264 with one thread, no B-frames and a fixed CRF/preset gives byte-identical files for
identical frames, which is what makes a seed reproduce a dataset exactly.
"""
from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from ..subtitles import SubtitleSegment, format_srt

FPS = 8
CRF = 20


def encode_mp4(frames: np.ndarray, path: str | Path, fps: int = FPS, crf: int = CRF) -> Path:
    """Write uint8 RGB frames [T, H, W, 3] as an H.264/yuv420p MP4 readable by decord, PyAV and OpenCV."""
    frames = np.ascontiguousarray(frames, dtype=np.uint8)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.shape[1] % 2 or frames.shape[2] % 2:
        raise ValueError(f"frames must be [T, H, W, 3] with even H and W, got {frames.shape}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with av.open(str(tmp), "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height = int(frames.shape[2]), int(frames.shape[1])
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": str(crf), "preset": "superfast", "threads": "1", "bframes": "0",
                          "g": str(2 * fps), "sc_threshold": "0"}
        stream.codec_context.thread_count = 1
        for f in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(f, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    tmp.replace(path)
    return path


def write_srt(segments: list[SubtitleSegment], path: str | Path) -> Path:
    path = Path(path)
    path.write_text(format_srt(segments), encoding="utf-8")
    return path
