"""Deterministic ±N grey-level noise on decoded frames: a perturbation below any codec's.

Why: re-encoding a clip at another CRF moves its pixels by about 2-3 grey levels on average
(`mvx-bench reencode`); noise of ±1 (mean absolute change 0.67) is smaller than any encoding step.
A decision that moves under it sits on an edge that *any* change of the input moves (the pipeline
amplifies noise: a follow takes another branch, a seed comes from another frame); a decision that
moves only under re-encoding moves in proportion to the change (a score drifting across its
threshold). ``benchmarks/offline_profile.py --pixel-noise N`` and ``benchmarks/actor_stability.py
SET --pixel-noise N`` use it; the project's tools never do.

The noise of a decode depends only on the video's path and the frame indices decoded, so two runs
on the same files see the same noise.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np


def noisy(frames: np.ndarray, amount: int, key: str, idx: Iterable[int] = ()) -> np.ndarray:
    """``frames`` (uint8) plus integer noise drawn uniformly from [-amount, amount] per value, clipped
    to 0-255; seeded by ``key`` (a video's path) and the decoded frame indices ``idx``."""
    if amount <= 0:
        return frames
    seed = zlib.crc32(str(key).encode()) ^ zlib.crc32(np.asarray(list(idx), np.int64).tobytes())
    noise = np.random.default_rng(seed).integers(-amount, amount + 1, frames.shape, dtype=np.int16)
    return np.clip(frames.astype(np.int16) + noise, 0, 255).astype(np.uint8)


def install(amount: int) -> None:
    """Make every decode in this process return noisy frames (:func:`noisy`, keyed by the video's path
    and the frame indices). For benchmark child processes only: it replaces the decoder's internal
    decode function, so the frame cache holds the noisy frames."""
    import mvx_tasks.video_decoder as vd

    if amount <= 0 or getattr(vd._decode, "pixel_noise", None) == amount:
        return
    clean = getattr(vd._decode, "clean", vd._decode)

    def _decode(info, idx, max_side, decoder=None):  # type: ignore[no-untyped-def]
        frames, used = clean(info, idx, max_side, decoder)
        return noisy(frames, amount, str(info.path), idx), used

    _decode.pixel_noise = amount  # type: ignore[attr-defined]
    _decode.clean = clean  # type: ignore[attr-defined]
    vd._decode = _decode
    vd.clear_cache()
