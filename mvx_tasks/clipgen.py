"""Generated test clips for the decoder: any size, duration and frame rate, VFR, rotation metadata,
truncation, audio-only. Used by the decoder tests and ``benchmarks/decode.py`` (never committed).

Frames are a textured background panning under a moving bright square, so that a codec has real
work to do (a flat frame decodes unrealistically fast) and a frame's content tells its time:
the square's x position grows by a fixed step per frame. Written with PyAV (libx264), no ffmpeg CLI.
"""
from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

import numpy as np

__all__ = ["make_clip", "make_audio_only", "set_rotation", "truncate_file", "frame_pattern"]


def _texture(width: int, height: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, size=(height // 8 + 8, width // 8 + 8, 3), dtype=np.uint8)
    # nearest upscale of coarse noise, plus a fine grain: compressible but not trivial
    tex = np.repeat(np.repeat(small, 8, axis=0), 8, axis=1)
    grain = rng.integers(0, 24, size=tex.shape, dtype=np.uint8)
    return (tex // 2 + grain).astype(np.uint8)


def frame_pattern(i: int, width: int, height: int, tex: np.ndarray) -> np.ndarray:
    """Frame ``i``: the texture shifted by ``i`` pixels, a white square at x = 4 + 3*i (mod the width)."""
    dx = i % 64
    img = np.ascontiguousarray(tex[: height, dx: dx + width])
    side = max(4, min(width, height) // 8)
    x = (4 + 3 * i) % max(1, width - side)
    y = height // 2 - side // 2
    img[y: y + side, x: x + side] = 255
    return img


def make_clip(path: str | Path, width: int = 320, height: int = 240, seconds: float = 3.0, fps: int = 24, *,
              codec: str = "libx264", pix_fmt: str = "yuv420p", gop: int | None = None, crf: int = 23,
              preset: str = "ultrafast", vfr: bool = False, rotate: int = 0, faststart: bool = False,
              seed: int = 0, threads: int = 0) -> Path:
    """Write a clip; ``vfr`` alternates frame durations of 1/fps and 2/fps (a variable frame rate);
    ``rotate`` (90, 180, 270) stores a display matrix the way phones do; odd sizes are allowed for
    codecs that accept them (libx264 with yuv444p; yuv420p needs even sizes)."""
    import av

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = max(1, int(round(seconds * fps)))
    tex = _texture(width + 64, height, seed)
    options = {"movflags": "+faststart"} if faststart and path.suffix == ".mp4" else {}
    with av.open(str(path), "w", options=options) as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        opts = {"g": str(gop or 2 * fps)}
        if codec in ("libx264", "libx265"):
            opts.update({"preset": preset, "crf": str(crf)})
        stream.options = opts
        stream.codec_context.thread_count = threads
        if vfr:
            stream.time_base = Fraction(1, 1000)
            stream.codec_context.time_base = Fraction(1, 1000)
        t = 0
        for i in range(n):
            frame = av.VideoFrame.from_ndarray(frame_pattern(i, width, height, tex), format="rgb24")
            if vfr:
                frame.pts, frame.time_base = t, Fraction(1, 1000)
                t += int(round(1000 / fps * (1 if i % 2 == 0 else 2)))
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    if rotate:
        set_rotation(path, rotate)
    return path


def set_rotation(path: str | Path, degrees: int) -> Path:
    """Store a display matrix (clockwise ``degrees``: 90, 180, 270) in an MP4's video track header,
    as phone cameras do, by patching the identity matrix the muxer wrote."""
    p = Path(path)
    data = bytearray(p.read_bytes())
    one, neg = 0x10000, 0xFFFF0000
    ident = struct.pack(">9I", one, 0, 0, 0, one, 0, 0, 0, 0x40000000)
    box = data.find(b"tkhd")
    at = data.find(ident, box)
    if box < 0 or at < 0:
        raise ValueError(f"{p}: no MP4 track header with an identity matrix to patch")
    m = {90: (0, one, 0, neg, 0, 0), 180: (neg, 0, 0, 0, neg, 0), 270: (0, neg, 0, one, 0, 0)}[int(degrees) % 360]
    data[at: at + 36] = struct.pack(">9I", *m, 0, 0, 0x40000000)
    p.write_bytes(bytes(data))
    return p


def truncate_file(path: str | Path, fraction: float, out: str | Path | None = None) -> Path:
    """Keep the first ``fraction`` of the bytes (a download cut mid-stream)."""
    src = Path(path)
    dst = Path(out) if out is not None else src
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * fraction)])
    return dst


def make_audio_only(path: str | Path, seconds: float = 2.0, rate: int = 16000) -> Path:
    """A file with one audio stream and no video."""
    import av

    path = Path(path)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("aac", rate=rate)
        stream.layout = "mono"
        samples = (np.sin(np.arange(int(seconds * rate)) / 8.0) * 8000).astype(np.int16)[None]
        for i in range(0, samples.shape[1], 1024):
            frame = av.AudioFrame.from_ndarray(samples[:, i: i + 1024], format="s16", layout="mono")
            frame.sample_rate = rate
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path
