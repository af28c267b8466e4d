"""Decoding chosen frames at the kept size: decord (scaled reader) and PyAV (seek to the keyframe
before, decode forward, convert only the wanted frames), both writing straight into the output array.
"""
from __future__ import annotations

import numpy as np

from .video_index import REENCODE, VideoDecodeError, VideoInfo
from .video_sampling import _env_int
DECODE_THREADS = _env_int("MVX_DECODE_THREADS", 2)  # PyAV frame threads per decode
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
