"""Measure one command's process tree: wall and CPU time, RSS of every process sampled every few
seconds (a time series, not only the peak at the end), and optionally kill the whole process group
once a condition holds (the kill-and-resume check). Used by ``benchmarks/scale.py``."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import psutil


@dataclass
class Measured:
    """One command's measurements."""

    cmd: list[str]
    rc: int | None
    wall_s: float
    cpu_s: float  # user + system of the whole tree (wait4 of the child; sampled processes when killed)
    killed: bool = False
    #: [seconds since start, total RSS MiB, {pid: RSS MiB}, open file descriptors, threads] (whole tree)
    rss: list[list] = field(default_factory=list)
    #: pid -> {"name": short command line, "peak_mib": float}
    processes: dict[str, dict] = field(default_factory=dict)

    @property
    def peak_total_mib(self) -> float:
        return max((r[1] for r in self.rss), default=0.0)

    def to_dict(self) -> dict:
        return {**asdict(self), "peak_total_mib": round(self.peak_total_mib, 1)}


def _short(proc: psutil.Process) -> str:
    try:
        cmd = proc.cmdline()
    except psutil.Error:
        return "?"
    keep = [c for c in cmd if not c.startswith("/") or c.endswith(("python", "python3"))][:6]
    return " ".join(os.path.basename(c) for c in keep)[:80]


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def run_measured(cmd: list[str], *, env: dict[str, str], log: Path, interval: float = 2.0,
                 kill_when: Callable[[], bool] | None = None, timeout: float = 6 * 3600,
                 cwd: str | Path | None = None) -> Measured:
    """Run ``cmd`` in its own process group, sampling the tree's RSS every ``interval`` seconds; when
    ``kill_when()`` turns true, SIGKILL the whole group (as a crashed node or an OOM kill would)."""
    t0 = time.monotonic()
    rss: list[list] = []
    procs: dict[str, dict] = {}
    killed = False
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as fh:
        p = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True, cwd=cwd)
        root = psutil.Process(p.pid)
        next_sample = 0.0
        while True:
            # wait4, not Popen.wait: the child's own rusage (CPU of it and its reaped descendants)
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            now = time.monotonic() - t0
            if now >= next_sample:
                next_sample = now + interval
                _sample(root, now, rss, procs)
                if kill_when is not None and not killed and kill_when():
                    os.killpg(p.pid, signal.SIGKILL)
                    killed = True
                if now > timeout and not killed:
                    os.killpg(p.pid, signal.SIGKILL)
                    killed = True
            time.sleep(0.05)
    p.returncode = rc = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    cpu = usage.ru_utime + usage.ru_stime
    if killed:  # the killed group's processes were reaped by init, not by the child: add what was sampled
        cpu = max(cpu, sum(x.get("cpu_s", 0.0) for x in procs.values()))
    return Measured(list(cmd), rc, round(wall, 2), round(cpu, 1), killed, rss, procs)


def _sample(root: psutil.Process, now: float, rss: list[list], procs: dict[str, dict]) -> None:
    total, per, fds, threads = 0.0, {}, 0, 0
    for q in _tree(root):
        try:
            mib = q.memory_info().rss / 2 ** 20
            ct = q.cpu_times()
            fds += q.num_fds()
            threads += q.num_threads()
        except psutil.Error:
            continue
        total += mib
        per[str(q.pid)] = round(mib, 1)
        rec = procs.setdefault(str(q.pid), {"name": _short(q), "peak_mib": 0.0})
        rec["peak_mib"] = round(max(rec["peak_mib"], mib), 1)
        rec["cpu_s"] = round(ct.user + ct.system, 1)
    rss.append([round(now, 1), round(total, 1), per, fds, threads])


def du_mib(path: Path, exclude: tuple[str, ...] = ()) -> float:
    """Disk used under ``path`` (allocated blocks), skipping top-level entries named in ``exclude``."""
    if not path.exists():
        return 0.0
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        if Path(dirpath) == path:
            dirnames[:] = [d for d in dirnames if d not in exclude]
        for f in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
            except OSError:
                pass
    return round(total / 2 ** 20, 2)


def count_files(path: Path, pattern: str = "*.json") -> int:
    return sum(1 for _ in path.glob(pattern)) if path.is_dir() else 0
