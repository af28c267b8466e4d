"""The ``mvx-bench`` commands that need the agent: ``demo``, ``summary``, ``estimate``, ``trace``.

The benchmark package (``mvx_tasks``) never imports the agent, so its CLI cannot name these; it reads
the entry-point group ``mvx_bench.commands`` instead, and this package declares :func:`register`
there (setup.cfg). Installed without the agent, ``mvx-bench`` simply has no such commands.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from mvx_tasks.cli import output_problem, results_table


def demo_data(folder: Path, per_task: int, seed: int, difficulty: str) -> Path:
    """The demo's MVX-Synth folder, regenerated whenever per-task, seed or difficulty differ from
    what it holds (the generator's ``synth.json``), so a demo never runs on another set's data."""
    from mvx_tasks import synth

    want = {"per_task": per_task, "seed": seed, "difficulty": difficulty}
    have = synth.read_manifest(folder)
    if have is not None and all(have.get(k) == v for k, v in want.items()) and (folder / "data.jsonl").is_file():
        print(f"[1/3] reusing MVX-Synth at {folder} ({per_task} per task, seed {seed}, {difficulty})", flush=True)
        return folder
    if (folder / "data.jsonl").is_file():
        print(f"[1/3] {folder} holds another MVX-Synth set ({have or 'unknown parameters'}); regenerating", flush=True)
        (folder / "data.jsonl").unlink()
        shutil.rmtree(folder / "videos", ignore_errors=True)
    print(f"[1/3] generating MVX-Synth ({per_task} questions per task, seed {seed}, {difficulty}) into {folder}",
          flush=True)
    return synth.generate(folder, per_task=per_task, seed=seed, difficulty=difficulty)


def cmd_demo(args: argparse.Namespace) -> int:
    """Offline main job: MVX-Synth -> lmms-eval -> SAMA (offline profile) -> results, traces, table."""
    from mvx_tasks.run_outcome import RunWatch

    out = Path(args.out).resolve()
    problem = output_problem(out, "--out")
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    data = demo_data(out / "data", args.per_task, args.seed, args.difficulty)
    model_args = f"profile=offline,workers={args.workers},trace_dir={out / 'traces'},cache_dir={out / 'tool_cache'}"
    cmd = [sys.executable, "-m", "lmms_eval", "--model", "sama", "--model_args", model_args,
           "--tasks", "mvx_synth", "--batch_size", "1", "--output_path", str(out / "results"), "--log_samples"]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    env = {**os.environ, "MVX_SYNTH_DATA": str(data), "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    print("[2/3] " + shlex.join(cmd), flush=True)
    watch = RunWatch.start(out / "results")
    proc = subprocess.run(cmd, env=env, check=False)  # lmms-eval exits 0 even on failure: read what it wrote
    results, why = watch.results(["mvx_synth"])
    if results is None:
        print(f"error: the demo run failed (lmms-eval exit code {proc.returncode}): {why}", file=sys.stderr)
        return 1
    print(f"[3/3] results: {results}\n        traces:  {out / 'traces'}\n")
    print(results_table(results, "mvx_synth"))
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from .trace import render_trace

    try:
        print(render_trace(args.file))
    except (OSError, ValueError) as exc:  # missing file, or not a SAMA trace (JSON errors are ValueErrors)
        print(f"cannot read trace {args.file}: {exc}. Traces are the JSON files under the run's sama_traces/ "
              f"folder (or the trace_dir you passed)", file=sys.stderr)
        return 1
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Entry point (``mvx_bench.commands``): add the agent's commands to ``mvx-bench``."""
    from . import run_summary

    s = sub.add_parser("demo", help="offline main job: SAMA on MVX-Synth through lmms-eval")
    s.add_argument("--out", default="outputs/demo")
    s.add_argument("--per-task", type=int, default=20)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--difficulty", choices=("easy", "default", "hard"), default="default")
    s.add_argument("--workers", type=int, default=2)
    s.add_argument("--limit", type=int, default=None, help="questions per task (for a quick look)")
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("summary", help="a run's accuracy next to its tokens, dollars, iterations and tool calls")
    run_summary.add_summary_arguments(s)
    s.set_defaults(func=run_summary.cmd_summary)
    s = sub.add_parser("estimate", help="answer N sampled questions and project the full run's cost")
    run_summary.add_estimate_arguments(s)
    s.set_defaults(func=run_summary.cmd_estimate)

    s = sub.add_parser("trace", help="print one SAMA trace readably")
    s.add_argument("file")
    s.set_defaults(func=cmd_trace)
