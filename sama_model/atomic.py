"""Crash-safe file writes: a reader sees the old file or the complete new one, never half."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mvx_tasks.atomic import (
    atomic_write_text,  # the one crash-safe writer, shared with the benchmark side
)

__all__ = ["OutputWriteError", "atomic_write_text", "check_writable"]


class OutputWriteError(OSError):
    """A file the run must keep could not be written: names the path, the cause and the fix."""

    def __init__(self, path: str | os.PathLike, cause: BaseException, what: str, fix: str) -> None:
        reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
        super().__init__(f"cannot write {what} to {path}: {reason}; {fix}")
        self.path = str(path)


def check_writable(folder: str | os.PathLike, what: str, fix: str) -> Path:
    """Create ``folder`` and write (then remove) a probe file in it, so that an unwritable or full
    output location is reported before the first question runs, not after an hour."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-check.", dir=folder)
        try:
            os.write(fd, b"x" * 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise OutputWriteError(folder, exc, what, fix) from exc
    return folder
