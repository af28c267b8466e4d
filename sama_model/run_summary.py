"""``mvx-bench summary <output_path>`` and ``mvx-bench estimate``: a run's accuracy next to what it
cost, in the paper's terms (iterations and tool calls per question, dollars per run).

``summary`` reads what a run left: lmms-eval's results file (accuracy and the ``mvx_tokens`` /
``mvx_cost_usd`` / ``mvx_iterations`` / ``mvx_tool_calls`` means per task) and SAMA's traces (tokens
by source and model, dollars, failures by cause, the protocol adaptations the run made).
``estimate`` answers N questions sampled from a benchmark with a given configuration and projects
the whole benchmark's tokens and dollars from them, before a paid run is started.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from .chat_api import USAGE_KEYS

#: the paper's profiling run (appendix G): 350 questions, GPT-5.2 planner
PAPER = {"questions": 350, "cost_usd": 53.0, "iterations": 3.8, "tool_calls": 3.6}
COST_METRICS = ("mvx_tokens", "mvx_cost_usd", "mvx_iterations", "mvx_tool_calls")


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def trace_files(root: Path) -> list[Path]:
    """SAMA traces under ``root``: ``sama_traces/<config>/*.json`` at any depth (lmms-eval's
    default), ``traces/*.json`` (the layout ``mvx-bench demo`` writes), or ``root`` itself when it
    is a trace folder."""
    found = sorted(root.rglob("sama_traces/*/*.json")) or sorted(root.glob("traces/*.json"))
    return found or sorted(p for p in root.glob("*.json") if not p.name.endswith("_results.json"))


def trace_summary(paths: list[Path]) -> dict[str, Any]:
    """Run totals from traces: questions, statuses, failure causes, tokens by source, dollars,
    iterations and tool calls per answered question, adaptation events."""
    from .runner import failure_cause

    by_source: dict[str, dict[str, Any]] = {}
    statuses: Counter = Counter()
    causes: Counter = Counter()
    events: Counter = Counter()
    forced_final = 0
    cost, tokens, iters, tools, finished, unpriced = 0.0, 0, 0, 0, 0, set()
    for p in paths:
        t = _load(p)
        if t is None or "steps" not in t:
            continue
        statuses[t.get("status")] += 1
        if t.get("status") == "failed":
            causes[failure_cause(t.get("failure") or "")] += 1
        tot = t.get("totals") or {}
        cost += float(tot.get("cost_usd") or 0)
        tokens += int(tot.get("tokens") or 0)
        unpriced.update(tot.get("unpriced") or [])
        if t.get("status") == "finished":
            finished += 1
            iters += int(tot.get("iterations") or 0)
            tools += int(tot.get("tool_calls") or 0)
        for src, u in (tot.get("usage_by_source") or {}).items():
            entry = by_source.setdefault(src, {"model": u.get("model"), **{k: 0 for k in USAGE_KEYS}, "calls": 0,
                                               "cost_usd": 0.0})
            for k in (*USAGE_KEYS, "calls"):
                entry[k] += int(u.get(k) or 0)
            entry["cost_usd"] += float((tot.get("cost_by_source") or {}).get(src) or 0)
        for s in t["steps"]:
            for e in s.get("events") or [] if isinstance(s, dict) else []:
                if e.get("kind") == "parameter":
                    events[f"{e.get('endpoint')}: {e.get('parameter')} -> {e.get('replacement') or 'dropped'}"] += 1
                elif e.get("kind") == "protocol":
                    events[f"{e.get('endpoint')}: protocol {e.get('from')} -> {e.get('to')}"] += 1
                elif e.get("kind") == "forced-final":
                    forced_final += 1
            data = s.get("data") if isinstance(s, dict) else None
            for e in (data or {}).get("adaptations") or [] if isinstance(data, dict) else []:
                events[f"{e.get('endpoint')}: {e.get('parameter')} -> {e.get('replacement') or 'dropped'}"] += 1
    n = sum(statuses.values())
    for entry in by_source.values():
        entry["cost_usd"] = round(entry["cost_usd"], 6)
    return {"questions": n, "finished": statuses.get("finished", 0), "failed": statuses.get("failed", 0),
            "failure_causes": dict(causes), "tokens": tokens, "cost_usd": round(cost, 6),
            "cost_per_question_usd": round(cost / n, 6) if n else 0.0,
            "cost_per_100_usd": round(100 * cost / n, 4) if n else 0.0,
            "iterations_per_question": round(iters / finished, 3) if finished else 0.0,
            "tool_calls_per_question": round(tools / finished, 3) if finished else 0.0,
            "usage_by_source": by_source, "unpriced_models": sorted(str(u) for u in unpriced),
            "adaptations": dict(events), "forced_final_questions": forced_final}


def results_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per task of a results file: accuracy ("no solver" when every answer was the
    first-option rule), n, and the cost metrics (means per question)."""
    rows = []
    n_samples = results.get("n-samples", {})
    for task, r in sorted((results.get("results") or {}).items()):
        if not isinstance(r, dict):
            continue
        acc_key = "mvx_acc,none" if "mvx_acc,none" in r else next(
            (k for k in r if k.endswith(",none") and not k.startswith(("mvx_", "alias")) and "stderr" not in k), None)
        n = (n_samples.get(task) or {}).get("effective")
        if acc_key is None or n is None:
            continue
        acc = r[acc_key]
        acc = acc * 100 if acc_key != "mvx_acc,none" and isinstance(acc, (int, float)) and acc <= 1 else acc
        rule = r.get("mvx_src_rule,none")
        if isinstance(rule, (int, float)) and n and rule == n:
            acc = "no solver"  # every answer was the first-option rule: its hit rate is chance, not a result
        row = {"task": task, "acc": acc, "n": int(n), "chance": r.get("mvx_chance,none")}
        for m in COST_METRICS:
            row[m] = r.get(f"{m},none")
        rows.append(row)
    return rows


def latest_results(root: Path) -> Path | None:
    found = sorted(root.rglob("*_results.json"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def summarize(root: Path, results_file: Path | None = None) -> dict[str, Any]:
    results_file = results_file or latest_results(root)
    results = _load(results_file) if results_file else None
    return {"output_path": str(root), "results_file": str(results_file) if results_file else None,
            "tasks": results_rows(results) if results else [], "run": trace_summary(trace_files(root))}


def _fmt(v: Any, spec: str) -> str:
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def render(summary: dict[str, Any]) -> str:
    lines = []
    rows = summary["tasks"]
    if rows:
        lines.append(f"{'task':<24}{'acc %':>10}{'chance %':>9}{'n':>5}{'tokens/q':>10}{'$/q':>10}{'iter/q':>8}{'tools/q':>8}{'$':>10}")
        for r in rows:
            total = r["mvx_cost_usd"] * r["n"] if isinstance(r.get("mvx_cost_usd"), (int, float)) else None
            acc = r["acc"] if isinstance(r["acc"], str) else _fmt(r["acc"], ".1f")
            lines.append(f"{r['task']:<24}{acc:>10}{_fmt(r.get('chance'), '.1f'):>9}{r['n']:>5}{_fmt(r['mvx_tokens'], '.0f'):>10}"
                         f"{_fmt(r['mvx_cost_usd'], '.4f'):>10}{_fmt(r['mvx_iterations'], '.2f'):>8}"
                         f"{_fmt(r['mvx_tool_calls'], '.2f'):>8}{_fmt(total, '.4f'):>10}")
    else:
        lines.append("no lmms-eval results file found (accuracy not shown)")
    run = summary["run"]
    lines.append("")
    if not run["questions"]:
        lines.append("no SAMA traces found")
        return "\n".join(lines)
    causes = ", ".join(f"{c}: {n}" for c, n in sorted(run["failure_causes"].items()))
    lines.append(f"questions: {run['questions']} ({run['finished']} finished, {run['failed']} failed"
                 + (f": {causes}" if causes else "") + ")")
    lines.append(f"cost: ${run['cost_usd']:.4f} for {run['questions']} questions = ${run['cost_per_question_usd']:.4f} "
                 f"per question, ${run['cost_per_100_usd']:.2f} per 100; {run['tokens']} tokens"
                 + (f" (unpriced models: {', '.join(run['unpriced_models'])})" if run["unpriced_models"] else ""))
    lines.append(f"per answered question: {run['iterations_per_question']:.2f} iterations, "
                 f"{run['tool_calls_per_question']:.2f} tool calls (paper: {PAPER['iterations']} and "
                 f"{PAPER['tool_calls']}; ${PAPER['cost_usd']:.0f} for {PAPER['questions']} questions)")
    for src, u in sorted(run["usage_by_source"].items()):
        lines.append(f"  {src} [{u['model']}]: {u['calls']} calls, prompt {u['prompt_tokens']} (cached "
                     f"{u['cached_tokens']}), completion {u['completion_tokens']} (reasoning {u['reasoning_tokens']}),"
                     f" ${u['cost_usd']:.4f}")
    for what, n in sorted(run["adaptations"].items()):
        lines.append(f"  adapted: {what} ({n}x)")
    if run["forced_final_questions"]:
        lines.append(f"  forced final answers after unusable JSON actions: {run['forced_final_questions']}")
    return "\n".join(lines)


def add_summary_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("output_path", help="the run's --output_path (or a folder of SAMA traces)")
    s.add_argument("--results", default=None, help="a results file (default: the newest under output_path)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")


def cmd_summary(args: argparse.Namespace) -> int:
    root = Path(args.output_path)
    if not root.exists():
        print(f"error: {root} does not exist", file=sys.stderr)
        return 2
    summary = summarize(root, Path(args.results) if args.results else None)
    print(json.dumps(summary, indent=1) if args.json else render(summary))
    return 0


# ----------------------------------------------------------------------------- estimate

def estimate(model_args: str, source: str, n: int, seed: int, out: Path, workers: int | None = None
             ) -> dict[str, Any]:
    """Answer ``n`` questions sampled (seeded) from ``source``'s benchmark and project the whole run."""
    from mvx_tasks.data import sample_to_doc
    from mvx_tasks.harness import _SOURCES, _samples, doc_to_messages

    from .adapters.common import make_agent
    from .adapters.lmms_eval_model import question_id
    from .adapters.messages import build_question, items_from_chat
    from .runner import RunStats, run_questions

    if source not in _SOURCES:
        raise ValueError(f"unknown source {source!r}; choose one of {', '.join(sorted(_SOURCES))}")
    root, samples = _samples(source)
    if not samples:
        raise RuntimeError(f"the {source} source has no questions")
    picked = random.Random(seed).sample(list(samples), min(n, len(samples)))
    args = dict(kv.split("=", 1) for kv in model_args.split(",") if kv.strip())
    args.setdefault("trace_dir", str(out / "sama_traces" / "estimate"))
    if workers:
        args["workers"] = str(workers)
    agent, trace_dir = make_agent(args)
    questions = []
    for s in picked:
        doc = sample_to_doc(s, root)
        items = items_from_chat(doc_to_messages(doc))
        questions.append(build_question(items, question_id(doc, source, 0), stills_dir=out / "stills"))
    stats = RunStats()
    run_questions(agent, questions, trace_dir, workers=agent.config.workers, progress=False, stats=stats)
    run = trace_summary([trace_dir / f"{q.id}.json" for q in questions if (trace_dir / f"{q.id}.json").exists()])
    per_q_cost = [float(((_load(trace_dir / f"{q.id}.json") or {}).get("totals") or {}).get("cost_usd") or 0)
                  for q in questions]
    mean = sum(per_q_cost) / len(per_q_cost)
    sd = math.sqrt(sum((c - mean) ** 2 for c in per_q_cost) / (len(per_q_cost) - 1)) if len(per_q_cost) > 1 else 0.0
    total = len(samples)
    return {"source": source, "sampled": len(questions), "seed": seed, "benchmark_questions": total,
            "failed": stats.failed, "tokens_per_question": round(run["tokens"] / len(questions), 1),
            "cost_per_question_usd": round(mean, 6),
            "projected_cost_usd": round(mean * total, 4),
            "projected_cost_range_usd": [round(max(0.0, mean - 1.96 * sd / math.sqrt(len(per_q_cost))) * total, 4),
                                         round((mean + 1.96 * sd / math.sqrt(len(per_q_cost))) * total, 4)],
            "projected_tokens": int(round(run["tokens"] / len(questions) * total)),
            "iterations_per_question": run["iterations_per_question"],
            "tool_calls_per_question": run["tool_calls_per_question"],
            "unpriced_models": run["unpriced_models"], "trace_dir": str(trace_dir)}


def add_estimate_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--model_args", required=True, help="SAMA model arguments, as for lmms-eval --model sama")
    s.add_argument("--source", default="bench", help="the questions: bench (MVX-Bench), synth (MVX-Synth), local")
    s.add_argument("-n", "--questions", type=int, default=20, help="how many questions to answer")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--workers", type=int, default=None)
    s.add_argument("--output", default="outputs/estimate")
    s.add_argument("--json", action="store_true")


def cmd_estimate(args: argparse.Namespace) -> int:
    out = Path(args.output).resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        rep = estimate(args.model_args, args.source, args.questions, args.seed, out, args.workers)
    except (RuntimeError, OSError, ValueError, KeyError) as exc:  # no data, bad model arguments
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rep, indent=1))
        return 0
    lo, hi = rep["projected_cost_range_usd"]
    print(f"answered {rep['sampled']} of {rep['benchmark_questions']} questions ({rep['source']}, seed {rep['seed']}; "
          f"{rep['failed']} failed)\n"
          f"per question: {rep['tokens_per_question']:.0f} tokens, ${rep['cost_per_question_usd']:.4f}, "
          f"{rep['iterations_per_question']:.2f} iterations, {rep['tool_calls_per_question']:.2f} tool calls\n"
          f"projected full run: ${rep['projected_cost_usd']:.2f} (95% interval ${lo:.2f}-${hi:.2f}), "
          f"{rep['projected_tokens']} tokens"
          + (f"\nunpriced models (counted as $0): {', '.join(rep['unpriced_models'])}" if rep["unpriced_models"] else ""))
    return 0
