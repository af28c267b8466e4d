"""Tool-result cache on disk, so a rerun or an ablation reuses finished tool work.

A key covers everything that determines a result: the tool, its backend name and options,
the content hash of every video it reads (bytes, not labels or paths, so the same file under
another label or folder hits) and the remaining arguments. Entries are JSON files written
atomically; a corrupt entry is treated as a miss. CACHE_REVISION is part of every key: it is
bumped whenever a backend's outputs change, so results cached by an older release are not reused.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from .atomic import atomic_write_text

#: bump when any backend's outputs for the same inputs change (2: lite identity grids, motion-aspect and
#: style-mark similarity, motion patterns pulsing and shaking; 3: lite identity as a relative colour
#: layout, motion pattern rules)
CACHE_REVISION = 3
_HASHES: dict[tuple[str, int, int], str] = {}
_HASH_LOCK = threading.Lock()


def file_hash(path: str | os.PathLike) -> str:
    """BLAKE2b of a file's bytes, memoised per process by (resolved path, size, mtime)."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    with _HASH_LOCK:
        if key in _HASHES:
            return _HASHES[key]
    h = hashlib.blake2b(digest_size=16)
    with p.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    digest = h.hexdigest()
    with _HASH_LOCK:
        _HASHES[key] = digest
    return digest


def cache_key(tool: str, backend: str, options: dict[str, Any], videos: dict[str, str], args: dict[str, Any]) -> str:
    """Stable key: JSON of the parts with sorted keys, hashed."""
    payload = json.dumps({"tool": tool, "backend": backend, "options": options, "videos": videos, "args": args,
                          "revision": CACHE_REVISION}, sort_keys=True, default=repr)
    return hashlib.sha256(payload.encode()).hexdigest()


class ToolCache:
    """A folder of ``<key[:2]>/<key>.json`` entries with hit/miss counters."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        p = self._path(key)
        try:
            value = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            value = None
        with self._lock:
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
        return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        atomic_write_text(self._path(key), json.dumps(value, sort_keys=True))

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"hits": self.hits, "misses": self.misses}
