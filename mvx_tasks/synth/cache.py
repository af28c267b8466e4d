"""``ensure_synth``: one generated MVX-Synth folder per (seed, size, difficulty), built once, reused.

The folder is generated into a temporary sibling and renamed into place only when complete, so
an interrupted run never looks like a finished dataset.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .common import get_difficulty
from .generate import generate


def default_cache_root() -> Path:
    hf_home = os.environ.get("HF_HOME")
    base = Path(hf_home) if hf_home else Path.home() / ".cache" / "huggingface"
    return base / "mvx_synth"


def ensure_synth(cache_dir=None, per_task: int | str = 20, seed: int = 0, difficulty: str = "default",
                 progress: bool = True) -> Path:
    """``$MVX_SYNTH_DATA`` if set, else a cached generated folder (generated on first use)."""
    env = os.environ.get("MVX_SYNTH_DATA")
    if env:
        return Path(env)
    diff = get_difficulty(difficulty).name
    root = Path(cache_dir) if cache_dir else default_cache_root()
    final = root / f"{int(seed)}-{per_task}-{diff}"
    if (final / "data.jsonl").is_file():
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=root))
    try:
        generate(tmp, per_task=per_task, seed=seed, difficulty=diff, progress=progress)
        try:
            tmp.rename(final)
        except OSError:  # another process finished first: keep theirs
            if not (final / "data.jsonl").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final
