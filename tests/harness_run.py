"""Run the real lmms-eval CLI in a subprocess and return its results file (never trust the exit code)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def run_lmms_eval(args: list[str], out: Path, env: dict | None = None, timeout: int = 600) -> tuple[dict, Path]:
    """Returns (results json, output folder); fails with the log tail when no results file appears."""
    out = Path(out)
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    cmd = [sys.executable, "-m", "lmms_eval", *args, "--output_path", str(out), "--log_samples"]
    proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=timeout)
    found = sorted(out.rglob("*_results.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise AssertionError(f"lmms-eval wrote no results file (exit {proc.returncode}).\n"
                             f"command: {' '.join(cmd)}\n--- log tail ---\n{(proc.stdout + proc.stderr)[-4000:]}")
    return json.loads(found[-1].read_text()), found[-1].parent


def samples(folder: Path, task: str) -> list[dict]:
    files = sorted(Path(folder).rglob(f"*_samples_{task}.jsonl"))
    assert files, f"no samples file for {task} in {folder}"
    return [json.loads(line) for line in files[-1].read_text().splitlines() if line.strip()]
