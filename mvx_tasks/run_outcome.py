"""Did an lmms-eval run succeed? Decided from what the run wrote, never from its exit code.

lmms-eval exits 0 when a task is not found or the model raises, so every wrapper of ours
(``demo``, ``run``, ``probe``) snapshots the output folder before starting, then accepts only a
results file written by *this* run that holds every requested task. An older run's file in the
same folder is never taken for this run's.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable


def _files(folder: Path, pattern: str) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in folder.rglob(pattern)} if folder.is_dir() else {}


@dataclass
class RunWatch:
    """A snapshot of an output folder taken before a run starts."""

    folder: Path
    started_ns: int = field(default_factory=time.time_ns)
    before: dict[Path, int] = field(default_factory=dict)

    @classmethod
    def start(cls, folder: str | Path) -> "RunWatch":
        folder = Path(folder)
        return cls(folder, time.time_ns(), _files(folder, "*.json*"))

    def new_files(self, pattern: str) -> list[Path]:
        """Files matching ``pattern`` created or rewritten since :meth:`start`, oldest first."""
        found = _files(self.folder, pattern)
        new = [p for p, m in found.items() if self.before.get(p) != m]
        return sorted(new, key=lambda p: found[p])

    def results(self, tasks: Iterable[str]) -> tuple[Path | None, str | None]:
        """(this run's results file, None) or (None, why the run failed)."""
        tasks = [t for t in tasks if t]
        new = self.new_files("*_results.json")
        if not new:
            return None, f"lmms-eval wrote no results file under {self.folder}; see its log above"
        path = new[-1]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return None, f"the results file {path} cannot be read ({exc})"
        have = set(data.get("results") or {}) | set(data.get("groups") or {}) | set(data.get("group_subtasks") or {})
        missing = [t for t in tasks if t not in have]
        if missing:
            return None, f"the results file {path} has no results for {', '.join(missing)}; see the lmms-eval log above"
        return path, None

    def samples(self, task: str) -> tuple[Path | None, str | None]:
        """(this run's samples file of ``task``, None) or (None, why not)."""
        new = self.new_files(f"*_samples_{task}.jsonl")
        if not new:
            return None, f"lmms-eval wrote no samples file for {task} under {self.folder}; see its log above"
        return new[-1], None
