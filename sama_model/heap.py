"""Giving freed heap memory back to the operating system between questions.

Why: a question's tools allocate and free hundreds of megabytes of frame arrays from several threads.
glibc's allocator keeps freed blocks in per-thread arenas, fragmented, so over an hour-long run a
process's resident memory creeps upwards although nothing is kept (measured at paper scale:
results/scale.md). ``malloc_trim(0)`` returns the free pages of every arena; it costs a few
milliseconds, once per question. Other C libraries (musl, macOS) have no such call: then nothing is done.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


def release_free_heap() -> bool:
    """Return freed heap pages to the OS where the C library can (glibc); True when it was asked."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
