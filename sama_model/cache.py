"""Tool-result cache on disk, so a rerun or an ablation reuses finished tool work.

A key covers everything that determines a result: the tool, its backend name and options,
the content hash of every video it reads (bytes, not labels or paths, so the same file under
another label or folder hits), the remaining arguments and the decoder's settings that change the
frames a tool reads (:func:`mvx_tasks.video_decoder.decode_settings`: sampling rate and bounds,
frame size, decoder, window bounds), so a result computed on other frames is never served. Entries are JSON files written
atomically; a corrupt entry is treated as a miss. CACHE_REVISION is part of every key: it is
bumped whenever a backend's outputs change, so results cached by an older release are not reused.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from .atomic import atomic_write_text

log = logging.getLogger(__name__)

#: bump when any backend's outputs for the same inputs change (2: lite identity grids, motion-aspect and
#: style-mark similarity, motion patterns pulsing and shaking; 3: lite identity as a relative colour
#: layout, motion pattern rules; 4: lite reader background colour, model backends' one option vocabulary;
#: 5: lite motion analyzer's flow-read mover, lite identity located by flow and cut blurred under a
#: moving camera; 6: lite identity adds texture correlation when both cameras move; 7: lite identity rows
#: carry the path that read them; a still clip beside a clearly moving one is read the moving way, with texture;
#: 8: lite motion analyzer's tracker reads 16 frames with a rescue matching, lite count of moving objects
#: reads the regions at two foreground floors; 9: ... with the local test;
#: 10: ... at seven floors, the count two reach, a handover step trimmed; 11: the movers' camera held still
#: over a uniform backdrop, decided by its texture; 12: the count's foreground floors with hysteresis; 13: lite
#: identity near its still-and-moving camera gate reads the still clip both ways and gives the other side's score;
#: 14: the lite count of moving objects follows each candidate by its look, a fitted ensemble keeps the objects;
#: 15: lite identity reads the subject once from its aligned stack where a camera moves; 16: its
#: identity_similarity of two stack views is their colour layouts' (a moving camera's per-frame cuts are read
#: only where a pair needs them); 17: the lite segmenter's flat pass keeps a patch whose colour recurs around
#: it out of its objects and of the masked background; 18: the lite tracker's count of moving objects lists its
#: followed objects' probabilities, ``count_probabilities``, for the CNT policy's match probability; 20: the lite
#: counts of moving objects say what they count and whether they can tell the queried kind, ``target_separable``;
#: 21: the lite reader's answer keeps only its count, the tool's text says the rest, as the other count tools')
CACHE_REVISION = 21
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


def cache_key(tool: str, backend: str, options: dict[str, Any], videos: dict[str, str], args: dict[str, Any],
              decode: dict[str, Any] | None = None) -> str:
    """Stable key: JSON of the parts with sorted keys, hashed. ``decode``: the decoder's settings (default: this
    process's, :func:`mvx_tasks.video_decoder.decode_settings`)."""
    if decode is None:
        from mvx_tasks.video_decoder import decode_settings

        decode = decode_settings()
    payload = json.dumps({"tool": tool, "backend": backend, "options": options, "videos": videos, "args": args,
                          "decode": decode, "revision": CACHE_REVISION}, sort_keys=True, default=repr)
    return hashlib.sha256(payload.encode()).hexdigest()


class ToolCache:
    """A folder of ``<key[:2]>/<key>.json`` entries with hit/miss/corrupt counters.

    Each entry stores its own key and a SHA-256 of its value, so an entry that was truncated,
    garbled or copied under the wrong name is detected, counted as ``corrupt`` and recomputed
    (the recomputed value replaces it). Writes are atomic, so a killed run leaves no half entry.
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        from .atomic import check_writable

        self.directory = check_writable(directory, "the SAMA tool cache",
                                        "pass cache_dir=<a writable folder> (or cache_dir=none) in the model "
                                        "arguments, or set SAMA_CACHE_DIR")
        self.hits = 0
        self.misses = 0
        self.corrupt = 0
        self.write_errors = 0
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    @staticmethod
    def _checksum(value: Any) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        p = self._path(key)
        value, corrupt = None, False
        try:
            entry = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            entry = None
        except (OSError, ValueError):
            entry, corrupt = None, True
        if entry is not None:
            ok = (isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("value"), dict)
                  and entry.get("sha256") == self._checksum(entry["value"]))
            value, corrupt = (entry["value"], False) if ok else (None, True)
        with self._lock:
            if value is None:
                self.misses += 1
                self.corrupt += corrupt
            else:
                self.hits += 1
        return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store an entry; a failed write (disk full) loses only the cache entry, with one warning."""
        entry = {"key": key, "sha256": self._checksum(value), "value": value}
        try:
            atomic_write_text(self._path(key), json.dumps(entry, sort_keys=True))
        except OSError as exc:
            with self._lock:
                self.write_errors += 1
                first = self.write_errors == 1
            if first:
                log.warning("cannot write the SAMA tool cache under %s (%s); results are not cached. Free space "
                            "or pass cache_dir=<another folder>", self.directory, exc)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "corrupt": self.corrupt,
                    "write_errors": self.write_errors}
