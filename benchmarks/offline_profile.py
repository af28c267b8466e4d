"""Offline SAMA profile on MVX-Synth: accuracy per task vs chance, ablations, cost per question.

Runs the ``offline`` profile (scripted planner, lite backends) on an MVX-Synth set under several
configurations and prints one Markdown table the lead can paste:

* ``full``: the offline profile as shipped (the question type identified from the question text);
* ``hint_on``: ``task_hint=on``, the MVX task code given to the agent (what it had before issue 14);
* ``motion_off``: ``motion=off`` (no motion_analyzer);
* ``skills_off`` / ``conflict_off`` / ``aggregation_off``: the paper's ablations.

Per configuration it reports accuracy per task (registry chance alongside), question-weighted
overall accuracy, seconds per question (wall clock with the given workers, and process CPU),
tool calls and verification re-reads per question, and decodes per video per question (the
:func:`mvx_tasks.video_decoder.decode_stats` delta over the distinct videos the questions use; 1.0 means
every video is decoded exactly once).

Every configuration runs in a fresh child process with no on-disk tool cache, so no frame cache,
embedding cache or model load carries over from another configuration: timings are cold.
``--warm`` answers the same questions a second time in that process (in-memory caches warm)
and reports that pass's cost separately.

    python benchmarks/offline_profile.py --data /tmp/pol_synth0 --workers 2
    python benchmarks/offline_profile.py --per-task 20 --seed 0 --configs full,skills_off
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: configuration name -> SAMA model arguments on top of profile=offline
CONFIGS: dict[str, dict[str, str]] = {
    "full": {},
    # the harness's MVX task code given to the agent (off by default: it identifies the type from the text)
    "hint_on": {"task_hint": "on"},
    "motion_off": {"motion": "off"},
    "skills_off": {"skills": "off"},
    "conflict_off": {"conflict": "off"},
    "aggregation_off": {"aggregation": "off"},
}


# ----------------------------------------------------------------------------- child: one configuration

def _answer_all(agent: Any, questions: list[Any], workers: int) -> tuple[list[Any], float, float]:
    """(results in question order, wall seconds, process CPU seconds) for one pass."""
    from concurrent.futures import ThreadPoolExecutor

    t0, c0 = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(agent.answer, questions))
    return results, time.perf_counter() - t0, time.process_time() - c0


def _pass_stats(results: list[Any], wall: float, cpu: float, decodes: int, n_videos: int) -> dict[str, Any]:
    from sama_model.trace import ConflictStep, ToolStep

    n = max(len(results), 1)
    tools: Counter[str] = Counter()
    calls = rereads = conflicts = 0
    for r in results:
        steps = r.trace.steps if r.trace else []
        for s in steps:
            if isinstance(s, ToolStep):
                calls += 1
                tools[s.tool] += 1
                rereads += s.reread_of is not None
            elif isinstance(s, ConflictStep):
                conflicts += 1
    return {"wall_s": wall, "cpu_s": cpu, "s_per_q_wall": wall / n, "s_per_q_cpu": cpu / n,
            "tool_calls_per_q": calls / n, "rereads_per_q": rereads / n, "conflicts_per_q": conflicts / n,
            "tools": dict(tools), "decodes": decodes, "videos": n_videos,
            "decodes_per_video": decodes / max(n_videos, 1)}


def run_child(data: str, config: str, workers: int, tasks: list[str] | None, trace_dir: str | None,
              warm: bool, pixel_noise: int = 0) -> dict[str, Any]:
    """Answer every question of ``data`` under one configuration; per-question records + costs.
    ``pixel_noise``: every decoded frame gets deterministic ±N grey-level noise (:mod:`pixel_noise`)."""
    from mvx_tasks.data import load_local
    from mvx_tasks.video_decoder import decode_stats
    from sama_model.agent import SamaAgent
    from sama_model.profiles import build_config
    from sama_model.question import AgentQuestion
    from sama_model.skills.multi_video_comparison.common import marked_fragile

    if pixel_noise:
        from pixel_noise import install

        install(pixel_noise)
    samples = [s for s in load_local(data) if not tasks or s.task in tasks]
    questions = [AgentQuestion.from_sample(s, root=data) for s in samples]
    n_videos = len({str((Path(data) / v.path).resolve()) for s in samples for v in s.videos})
    agent = SamaAgent(build_config(profile="offline", workers=str(workers), **CONFIGS[config]))
    d0 = decode_stats()["decodes"]
    results, wall, cpu = _answer_all(agent, questions, workers)
    cold = _pass_stats(results, wall, cpu, decode_stats()["decodes"] - d0, n_videos)
    records = []
    for s, r in zip(samples, results):
        totals = r.trace.totals() if r.trace else {}
        finals = r.trace.of_kind("final") if r.trace else []
        records.append({"id": s.id, "task": s.task, "answer": s.answer, "letter": r.letter,
                        "correct": r.letter == s.answer, "status": r.status, "failure": r.failure,
                        "source": r.source, "fragile": bool(finals) and marked_fragile(finals[-1].reason),
                        "tool_calls": totals.get("tool_calls", 0), "elapsed": r.trace.elapsed if r.trace else 0.0})
        if trace_dir and r.trace is not None:
            r.trace.save(Path(trace_dir) / config / f"{s.id}.json")
    out = {"config": config, "records": records, "cold": cold}
    if warm:
        d0 = decode_stats()["decodes"]
        results, wall, cpu = _answer_all(agent, questions, workers)
        out["warm"] = _pass_stats(results, wall, cpu, decode_stats()["decodes"] - d0, n_videos)
    return out


# ----------------------------------------------------------------------------- parent: tables

def chance_of(task: str) -> float:
    from mvx_tasks.registry import get_task

    return get_task(task).chance


def accuracy_by_task(records: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """task -> (correct, total)."""
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        acc[r["task"]][0] += bool(r["correct"])
        acc[r["task"]][1] += 1
    return {k: (v[0], v[1]) for k, v in acc.items()}


#: answer source -> the short name cells use (see mvx_tasks.answer_sources)
SOURCE_SHORT = {"planner": "planner", "planner-forced": "forced", "evidence-fallback": "fallback",
                "rule": "stated rule", "first-option-rule": "rule"}
#: the sources whose letter a stated rule named, not the evidence (a solver's tie or default, the agent's abstention)
RULE_SOURCES = ("rule", "first-option-rule")


def sources_by_task(records: list[dict[str, Any]]) -> dict[str, Counter]:
    """task -> Counter of answer sources (``None`` for a failed question or an old record)."""
    out: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        out[r["task"]][r.get("source")] += 1
    return out


def task_cell(correct: int, n: int, sources: Counter) -> str:
    """Accuracy with where its answers came from: answers not decided by the planner are counted
    ("fallback 2, rule 3"); a task whose every answer is the first-option rule has no solver
    here, and the cell says so instead of showing the rule's chance-level hit rate as a result."""
    if not n:
        return "-"
    if sources.get("first-option-rule", 0) == n:
        return f"no solver ({n}/{n} first-option rule; {correct} right)"
    if sum(sources.get(k, 0) for k in RULE_SOURCES) == n:
        rules = ", ".join(f"{SOURCE_SHORT[k]} {sources[k]}" for k in RULE_SOURCES if sources.get(k))
        return f"no solver ({n}/{n} by rule: {rules}; {correct} right)"
    other = ", ".join(f"{SOURCE_SHORT[k]} {sources[k]}" for k in ("planner-forced", "evidence-fallback",
                                                                    *RULE_SOURCES) if sources.get(k))
    return f"{100 * correct / n:.0f}% ({correct}/{n}" + (f"; {other})" if other else ")")


def markdown(runs: list[dict[str, Any]], warm: bool) -> str:
    """One table: tasks as rows, configurations as columns, answer sources and cost rows at the bottom."""
    from mvx_tasks.registry import BENCH_CODES

    names = [r["config"] for r in runs]
    accs = {r["config"]: accuracy_by_task(r["records"]) for r in runs}
    srcs = {r["config"]: sources_by_task(r["records"]) for r in runs}
    tasks = [t for t in BENCH_CODES if any(t in a for a in accs.values())]
    tasks += sorted({t for a in accs.values() for t in a} - set(tasks))
    lines = ["| task | chance | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
    for t in tasks:
        cells = [task_cell(*accs[name].get(t, (0, 0)), srcs[name].get(t, Counter())) for name in names]
        lines.append(f"| {t} | {100 * chance_of(t):.0f}% | " + " | ".join(cells) + " |")

    def row(label: str, fn: Any) -> None:
        lines.append(f"| {label} | | " + " | ".join(fn(r) for r in runs) + " |")

    def overall(r: dict[str, Any]) -> str:
        c = sum(bool(x["correct"]) for x in r["records"])
        return f"**{100 * c / max(len(r['records']), 1):.1f}%** ({c}/{len(r['records'])})"

    row("**overall**", overall)

    def decided(r: dict[str, Any]) -> str:  # the questions whose letter the evidence named (no rule, no failure)
        kept = [x for x in r["records"] if x.get("source") and x["source"] not in RULE_SOURCES]
        c = sum(bool(x["correct"]) for x in kept)
        return f"{100 * c / max(len(kept), 1):.1f}% ({c}/{len(kept)})"

    row("decided by a solver (no rule)", decided)
    row("chance (q-weighted)", lambda r: f"{100 * sum(chance_of(x['task']) for x in r['records']) / max(len(r['records']), 1):.1f}%")
    row("failed questions", lambda r: str(sum(x["status"] != "finished" for x in r["records"])))
    row("answers from", lambda r: ", ".join(f"{SOURCE_SHORT.get(k, k)} {v}" for k, v in sorted(
        Counter(x.get("source") or "unrecorded" for x in r["records"]).items(),
        key=lambda kv: list(SOURCE_SHORT).index(kv[0]) if kv[0] in SOURCE_SHORT else 9)))
    passes = ["cold", "warm"] if warm else ["cold"]
    for p in passes:
        row(f"s/question wall ({p})", lambda r, p=p: f"{r[p]['s_per_q_wall']:.2f}")
        row(f"s/question CPU ({p})", lambda r, p=p: f"{r[p]['s_per_q_cpu']:.2f}")
    row("tool calls/question", lambda r: f"{r['cold']['tool_calls_per_q']:.1f}")
    row("re-reads/question", lambda r: f"{r['cold']['rereads_per_q']:.2f}")
    row("conflicts/question", lambda r: f"{r['cold']['conflicts_per_q']:.2f}")
    row("decodes/video (cold)", lambda r: f"{r['cold']['decodes_per_video']:.2f}")
    row("tools used", lambda r: ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in
                                          sorted(r["cold"]["tools"].items(), key=lambda kv: -kv[1])))
    return "\n".join(lines)


def ensure_data(args: argparse.Namespace) -> str:
    """The data folder: --data, else a generated set (reused when it already exists)."""
    if args.data:
        return str(Path(args.data).resolve())
    out = Path(args.out or Path(tempfile.gettempdir()) / f"mvx_synth_s{args.seed}_n{args.per_task}_{args.difficulty}")
    if not (out / "data.jsonl").is_file():
        from mvx_tasks.synth import generate

        generate(out, per_task=args.per_task, seed=args.seed, difficulty=args.difficulty, progress=False)
    return str(out.resolve())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="an MVX-Synth folder (data.jsonl + videos/)")
    ap.add_argument("--per-task", type=int, default=20, help="questions per task when generating (default 20)")
    ap.add_argument("--seed", type=int, default=0, help="generator seed when generating (default 0)")
    ap.add_argument("--difficulty", default="default")
    ap.add_argument("--out", help="where to generate (default: a folder in the temp dir named by the parameters)")
    ap.add_argument("--workers", type=int, default=2, help="questions answered in parallel (default 2)")
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help=f"comma-separated, from {', '.join(CONFIGS)} (default all)")
    ap.add_argument("--tasks", help="comma-separated task codes (default all)")
    ap.add_argument("--trace-dir", help="save each question's trace under <dir>/<config>/")
    ap.add_argument("--warm", action="store_true", help="also time a second, warm pass in the same process")
    ap.add_argument("--json", help="write the raw per-question records and costs here (after each configuration)")
    ap.add_argument("--from-json", nargs="+", help="only print the table of earlier --json files (runs concatenated)")
    ap.add_argument("--pixel-noise", type=int, default=0, metavar="N",
                    help="add deterministic +-N grey-level noise to every decoded frame (benchmarks/pixel_noise.py): "
                         "compare the traces with a clean run's (benchmarks/compare_answers.py) to see which answers "
                         "any change of the input moves")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    tasks = [t.strip().upper() for t in args.tasks.split(",")] if args.tasks else None

    if args._child:
        out = run_child(args.data, args._child, args.workers, tasks, args.trace_dir, args.warm, args.pixel_noise)
        print("@@RESULT@@" + json.dumps(out))
        return 0

    if args.from_json:
        runs = [r for f in args.from_json for r in json.loads(Path(f).read_text())["runs"]]
        print(markdown(runs, all("warm" in r for r in runs)))
        return 0
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {unknown}; known: {', '.join(CONFIGS)}")
    data = ensure_data(args)
    runs = []
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    for name in configs:
        cmd = [sys.executable, __file__, "--data", data, "--workers", str(args.workers), "--_child", name]
        cmd += (["--tasks", args.tasks] if args.tasks else []) + (["--trace-dir", args.trace_dir] if args.trace_dir else [])
        cmd += ["--warm"] if args.warm else []
        cmd += ["--pixel-noise", str(args.pixel_noise)] if args.pixel_noise else []
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")), None)
        if proc.returncode != 0 or line is None:
            sys.stderr.write(proc.stderr[-4000:])
            raise SystemExit(f"configuration {name} failed (exit {proc.returncode})")
        run = json.loads(line[len("@@RESULT@@"):])
        runs.append(run)
        acc = accuracy_by_task(run["records"])
        print(f"[{name}] {time.perf_counter() - t0:.0f}s: " +
              ", ".join(f"{t} {c}/{n}" for t, (c, n) in acc.items()), file=sys.stderr, flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps({"data": data, "workers": args.workers, "runs": runs}, indent=1))
    n = len(runs[0]["records"]) if runs else 0
    kind = "Real-footage composite" if (Path(data) / "real_composite.json").is_file() else "MVX-Synth"
    noise = f", decoded frames with +-{args.pixel_noise} grey-level noise" if args.pixel_noise else ""
    print(f"{kind} {data} ({n} questions){noise}, offline profile, {args.workers} workers, cold caches per configuration\n")
    print(markdown(runs, args.warm))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
