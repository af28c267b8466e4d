"""The process-wide clip cache, bounded in bytes (``MVX_FRAME_CACHE_MB``) and entries
(``MVX_FRAME_CACHE_SIZE``), least recently used first out; one decode per key even when several
threads ask at once. :func:`mvx_tasks.video_decoder.configure` changes the bounds.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from .video_index import _CACHE_LOCK, _INFO
from .video_sampling import _env_int


class Cached(Protocol):
    """What the cache keeps: a decoded clip (:class:`mvx_tasks.video_decoder.VideoClip`), of which it reads its size
    and whether it is a window's. Why a protocol: the decoder imports this cache, so the cache names no type of the
    decoder's (no import cycle, not even one for type hints)."""

    span: tuple[float, float] | None

    @property
    def nbytes(self) -> int: ...


CACHE_SIZE = _env_int("MVX_FRAME_CACHE_SIZE", 64)
CACHE_BYTES = _env_int("MVX_FRAME_CACHE_MB", 1024) * 2 ** 20


# ----------------------------------------------------------------------------- the cache

_CACHE: "OrderedDict[tuple, Cached]" = OrderedDict()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_STATS = {"decodes": 0, "hits": 0, "window_decodes": 0, "evictions": 0}


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


def _cached(key: tuple, make: Callable[[], Cached]) -> Cached:
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
