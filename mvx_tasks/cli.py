"""``mvx-bench``: the project's one console script; each subcommand forwards to its module."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

COMMANDS_GROUP = "mvx_bench.commands"


def _cmd_tasks(args: argparse.Namespace) -> int:
    if args.lmms:
        from .discovery import cmd_lmms_tasks

        return cmd_lmms_tasks(args)
    from .registry import all_tasks

    print(f"{'code':<10}{'name':<38}{'level':<16}{'questions':>10}{'options':>9}{'chance':>8}  benchmark")
    for t in all_tasks():
        print(f"{t.code:<10}{t.name:<38}{t.level:<16}{t.n_questions or '?':>10}{str(t.n_options or 'var'):>9}"
              f"{t.chance * 100:>7.1f}%  {t.benchmark}")
    return 0


def _cmd_tasks_path(args: argparse.Namespace) -> int:
    from .lmms_eval_plugin import TASKS_DIR

    print(TASKS_DIR)
    return 0


def _cmd_configs_path(args: argparse.Namespace) -> int:
    from .package_data import config_dir

    print(config_dir())
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from .data_hub import HubColumns
    from .data_verify import hub_columns_report, verify

    try:
        columns = HubColumns.parse(args.hub_columns) if args.hub_columns is not None else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if columns is not None:
        text, ok = hub_columns_report(args.folder, columns)
        print(text)
        return 0 if ok else 1
    report = verify(args.folder, decode=not args.no_decode, benchmark=args.benchmark,
                    strict=True if args.strict else None)
    print(report.render())
    return 0 if report.ok else 1


def _cmd_gen_tasks(args: argparse.Namespace) -> int:
    from .taskgen import TASKS_DIR, stale_files, write_tasks

    out = args.out or TASKS_DIR
    if args.check:
        stale = stale_files(out)
        for rel in stale:
            print(f"out of date: {rel}")
        return 1 if stale else 0
    print(f"wrote {len(write_tasks(out))} task files under {out}")
    return 0


def _cmd_synth(args: argparse.Namespace) -> int:
    from .synth import generate

    tasks = [t.strip().upper() for t in args.tasks.split(",")] if args.tasks else None
    per_task = "paper" if args.paper_scale else args.per_task
    out = generate(args.out, per_task=per_task, seed=args.seed, difficulty=args.difficulty, tasks=tasks,
                   workers=args.workers)
    print(f"wrote {out}")
    return 0


def results_table(results_file: Path, group: str) -> str:
    """Per-task accuracy, unparsed, failed (videos not shown) and agent-failed (the model reported it
    could not answer) counts, where the answers came from (planner, forced final turn, evidence
    fallback, first-option rule; "-" when the model does not say), levels and overall from a
    results file. A task whose every answer is the first-option rule shows "no solver", not its
    chance-level hit rate."""
    from .answer_sources import METRICS
    from .registry import LEVELS, bench_tasks

    data = json.loads(Path(results_file).read_text())
    res, groups = data.get("results", {}), data.get("groups", {})
    src_names = [m[len("mvx_src_"):] for m in METRICS.values()]
    rows = [f"{'task':<6}{'acc %':>10}{'n':>6}{'unparsed':>10}{'failed':>8}{'agent failed':>14}"
            + "".join(f"{s:>10}" for s in src_names)]
    for t in bench_tasks():
        r = res.get(f"{group}_{t.slug}")
        if r is None:
            continue
        n = data.get("n-samples", {}).get(f"{group}_{t.slug}", {}).get("effective", "")
        src = [int(r.get(f"{m},none", 0) or 0) for m in METRICS.values()]
        acc = f"{r.get('mvx_acc,none', float('nan')):.1f}"
        if src[-1] and src[-1] == n:
            acc = "no solver"
        rows.append(f"{t.code:<6}{acc:>10}{n:>6}"
                    f"{r.get('mvx_unparsed,none', 0):>10}{r.get('mvx_failed,none', 0):>8}"
                    f"{r.get('mvx_agent_failed,none', 0):>14}"
                    + "".join(f"{(v if any(src) else '-'):>10}" for v in src))
    for lv in LEVELS:
        r = groups.get(f"{group}_{lv}") or res.get(f"{group}_{lv}")
        if r and "mvx_acc,none" in r:
            rows.append(f"{lv:<12}{r['mvx_acc,none']:>6.1f}")
    r = groups.get(group) or res.get(group)
    if r and "mvx_acc,none" in r:
        rows.append(f"{'overall':<12}{r['mvx_acc,none']:>6.1f}  (question-weighted)")
    return "\n".join(rows)


def output_problem(folder: Path, option: str) -> str | None:
    """Why ``folder`` cannot take a run's output (with the fix, naming ``option``), or None."""
    from .atomic import OutputWriteError, check_writable

    try:
        check_writable(folder, "the run's output", f"choose a writable folder with free space ({option})")
    except OutputWriteError as exc:
        return str(exc)
    return None


def _cmd_probe(args: argparse.Namespace) -> int:
    """Run a model on the video-visibility probe through lmms-eval and say whether it saw every video."""
    from .probe import report_from_samples
    from .run_outcome import RunWatch

    out = Path(args.output).resolve()
    problem = output_problem(out, "--output")
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    task = "mvx_probe_frames" if args.frames else "mvx_probe"
    cmd = [sys.executable, "-m", "lmms_eval", "--model", args.model, "--model_args", args.model_args,
           "--tasks", task, "--batch_size", "1", "--output_path", str(out), "--log_samples", *args.extra]
    print(shlex.join(cmd), flush=True)
    watch = RunWatch.start(out)
    proc = subprocess.run(cmd, check=False)
    samples, why = watch.samples(task)
    if samples is None:
        print(f"error: the probe run failed (lmms-eval exit code {proc.returncode}): {why}", file=sys.stderr)
        return 1
    rep = report_from_samples(samples)
    for pos, acc in rep["accuracy_by_position"].items():
        print(f"asked about video {pos}: {acc:5.1f}% correct")
    print(f"verdict: {rep['verdict']}")
    return 0 if rep["verdict"] == "sees every video" else 2


def _cmd_reencode(args: argparse.Namespace) -> int:
    from .data import DataSourceError
    from .reencode import ReencodeError, reencode_folder
    from .schema import SchemaError

    try:
        out = reencode_folder(args.folder, args.out, args.crf, args.preset, args.workers)
    except (ReencodeError, DataSourceError, SchemaError) as exc:
        print(f"mvx-bench reencode: {exc}", file=sys.stderr)
        return 2
    print(f"{args.out}: {len(out['done'])} videos re-encoded at CRF {args.crf} ({args.preset}), "
          f"{len(out['skipped'])} already done, {len(out['failed'])} failed; record: {out['record']}")
    for rel, reason in out["failed"].items():
        print(f"failed (copied unchanged): {rel}: {reason}", file=sys.stderr)
    if not out["failed"]:
        print(f"compare a model's answers on both: run it on {args.folder} and on {args.out} (lmms-eval with "
              "--log_samples), then `mvx-bench view RUN_A --compare RUN_B` (any model), or for SAMA's traces "
              f"`python benchmarks/compare_answers.py TRACES_A TRACES_B --data {args.folder}` (which tool results moved)")
    return 1 if out["failed"] else 0


def _add_vlmeval(s: argparse.ArgumentParser) -> None:
    from .vlmeval.launch import add_vlmeval_arguments  # light: vlmeval itself is imported on run

    add_vlmeval_arguments(s)

    def run(args: argparse.Namespace) -> int:
        from .vlmeval.launch import cmd_vlmeval

        return cmd_vlmeval(args)
    s.set_defaults(func=run)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mvx-bench", description="MVX-Bench and the SAMA agent.")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("tasks", help="list the task registry (--lmms: the task names lmms-eval indexes)")
    s.add_argument("--lmms", action="store_true",
                   help="list the lmms-eval tasks and groups of this package as lmms-eval's TaskManager indexes "
                        "them (what `lmms-eval tasks list --include-path \"$(mvx-bench tasks-path)\"` adds)")
    s.set_defaults(func=_cmd_tasks)
    s = sub.add_parser("tasks-path", help="print the lmms-eval task folder (for --include_path)")
    s.set_defaults(func=_cmd_tasks_path)
    s = sub.add_parser("configs-path", help="print the run-config folder in use ($MVX_CONFIG_DIR, else the shipped one)")
    s.set_defaults(func=_cmd_configs_path)

    from .discovery import add_models_arguments, cmd_models

    s = sub.add_parser("models", help="the models plugins add to lmms-eval (sama, mvx_hf_chat), as lmms-eval resolves "
                                      "them (`lmms-eval models` lists only its built-in ones)")
    add_models_arguments(s)
    s.set_defaults(func=cmd_models)

    from .install_extras import add_install_arguments, cmd_install_extras

    s = sub.add_parser("install-extras", help="install an extra whose package's own dependency list conflicts "
                                              "(models: ultralytics; vlmeval: ms-vlmeval), see docs/install.md")
    add_install_arguments(s)
    s.set_defaults(func=cmd_install_extras)

    s = sub.add_parser("verify", help="check a dataset folder (canonical layout, or a peer benchmark's own files)")
    s.add_argument("folder")
    s.add_argument("--no-decode", action="store_true", help="only check that videos exist")
    s.add_argument("--benchmark", default=None,
                   help="read the folder as a peer benchmark: cvbench, mvu_eval or crossvid (default: MVX-Bench)")
    s.add_argument("--strict", action="store_true",
                   help="a row that cannot be mapped is an error, not a reported skip (also MVX_DATA_STRICT=1)")
    s.add_argument("--hub-columns", nargs="*", default=None, metavar="YAML|KEY=COLUMN",
                   help="show how MVX-Bench's hub copy maps onto the schema (columns found, the column each field "
                        "comes from, rows that do not map); name columns with a YAML file or key=column pairs")
    s.set_defaults(func=_cmd_verify)

    s = sub.add_parser("gen-tasks", help="write the peer benchmarks' lmms-eval task YAMLs from their records")
    s.add_argument("--out", default=None, help="task folder (default: this package's mvx_tasks/tasks)")
    s.add_argument("--check", action="store_true", help="only report files that differ (exit 1)")
    s.set_defaults(func=_cmd_gen_tasks)

    s = sub.add_parser("synth", help="generate MVX-Synth, the offline synthetic twin")
    s.add_argument("--out", required=True)
    s.add_argument("--per-task", type=int, default=20)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--difficulty", choices=("easy", "default", "hard"), default="default")
    s.add_argument("--tasks", default=None, help="comma-separated task codes (default: all)")
    s.add_argument("--paper-scale", action="store_true",
                   help="each task's question count in the paper (1,442 in all; overrides --per-task)")
    s.add_argument("--workers", type=int, default=None, help="render processes (default: one per CPU)")
    s.set_defaults(func=_cmd_synth)

    s = sub.add_parser("reencode", help="copy a dataset folder with every video re-encoded at another quality "
                                        "(codec-stability tests)")
    s.add_argument("folder", help="dataset folder (data.jsonl and its videos)")
    s.add_argument("--out", required=True, help="where the copy goes (a rerun resumes it)")
    s.add_argument("--crf", type=int, required=True, help="libx264 quality (18 near lossless, 23 default, 30 low)")
    s.add_argument("--preset", default="medium", help="libx264 preset, ultrafast ... veryslow (default: medium, "
                                                      "libx264's own)")
    s.add_argument("--workers", type=int, default=1, help="videos re-encoded in parallel")
    s.set_defaults(func=_cmd_reencode)

    from . import harness_configs, leaderboard

    s = sub.add_parser("run", help="launch lmms-eval for harness configs (prints the exact command)")
    harness_configs.add_run_arguments(s)
    s.set_defaults(func=harness_configs.cmd_run)

    from .baselines import routes

    s = sub.add_parser("routes", help="run each baseline config's route on a tiny model of its architecture "
                                      "(offline): videos, frames and labels that reach the processor")
    routes.add_routes_arguments(s)
    s.set_defaults(func=routes.cmd_routes)

    s = sub.add_parser("leaderboard", help="merge runs with the paper's Table 1 into Markdown, CSV and a chart")
    leaderboard.add_leaderboard_arguments(s)
    s.set_defaults(func=leaderboard.cmd_leaderboard)

    s = sub.add_parser("vlmeval", help="evaluate with VLMEvalKit (registers MVX datasets and SAMA)")
    _add_vlmeval(s)

    s = sub.add_parser("probe", help="video-visibility probe: does a model really see every video?")
    s.add_argument("--model", required=True)
    s.add_argument("--model_args", default="")
    s.add_argument("--frames", action="store_true", help="use the frames presentation (mvx_probe_frames)")
    s.add_argument("--output", default="outputs/probe")
    s.set_defaults(func=_cmd_probe)

    from .viewer.cli import add_view_arguments, cmd_view

    s = sub.add_parser("view", help="build a static HTML site to browse a run (traces, frames) and compare two runs")
    add_view_arguments(s)
    s.set_defaults(func=cmd_view)

    for register in plugin_commands():  # the agent's commands (demo, summary, estimate, trace)
        register(sub)
    return p


def plugin_commands() -> list:
    """The ``register(subparsers)`` functions installed packages declare in the entry-point group
    ``mvx_bench.commands`` (the agent declares its commands there; this package never imports it).
    One that fails to load is reported and left out, so the benchmark's commands still work."""
    from importlib.metadata import entry_points

    found: dict[str, object] = {}
    for ep in entry_points(group=COMMANDS_GROUP):
        if ep.name in found:  # the same distribution seen twice on sys.path: the first one wins
            continue
        try:
            found[ep.name] = ep.load()
        except Exception as exc:
            print(f"warning: mvx-bench commands of {ep.value} not loaded ({type(exc).__name__}: {exc})",
                  file=sys.stderr)
    return list(found.values())


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:  # everything after -- goes to the wrapped tool (lmms-eval, VLMEvalKit)
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    from .package_data import PackageDataError

    try:
        args = build_parser().parse_args(argv)
        args.extra = extra
        return int(args.func(args) or 0)
    except PackageDataError as exc:  # a broken $MVX_CONFIG_DIR / $MVX_PAPER_TABLE, or a broken install
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
