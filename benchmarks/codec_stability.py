"""How many of the offline agent's answers does re-encoding move? Issue 19's codec bound, pooled over seeds.

For each seed, the real-footage composite set (``python -m mvx_tasks.real_composite``) is generated at every CRF from
the same frames, each encoding is answered by the offline agent (``offline_profile.py --configs full``), and every
encoding's answers are compared with the first CRF's (``compare_answers.py``'s rule: per task, answers changed, and how
many of them the trace marked fragile). The figure is pooled over the seeds with a Wilson 95 % interval. Why pooled:
one seed holds 60 questions, where one answer is 1.7 %; on held-out seeds 63-66 the same code moved 2 to 9 answers of
60 at CRF 30, so a single seed's figure says little about the bound.

Each step (one encoding's set, one encoding's answers) is skipped when its output is already in ``OUT`` (a set whose
manifest, written last, names the same seed, CRF, size, tasks and generator version; an answers file that reads whole),
so a second run into the same folder runs nothing again, and one after a killed run starts at the step that was killed.
Seeds in the fitting record (``mvx_tasks/fitting_record.yaml``: every seed read while fitting or choosing the offline
profile) are refused: the figure is a held-out one.

    python benchmarks/codec_stability.py OUT --seeds 65 66 --crfs 20 30 [--per-task 20] [--tasks CNT,AM,RID]
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import compare_answers  # noqa: E402


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval (fractions) for ``k`` events in ``n`` trials; (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    mid, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (mid - half) / (1 + z * z / n)), min(1.0, (mid + half) / (1 + z * z / n))


def set_dir(out: Path, seed: int, crf: int) -> Path:
    return out / f"set_s{seed}_crf{crf}"


def profile_json(out: Path, seed: int, crf: int) -> Path:
    return out / f"answers_s{seed}_crf{crf}.json"


def _set_done(folder: Path, seed: int, crf: int, per_task: int, tasks: list[str] | None) -> bool:
    from mvx_tasks.real_composite.generate import GENERATOR_VERSION, MANIFEST

    try:
        m = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return (m.get("seed"), m.get("crf"), m.get("per_task"), m.get("version")) == (seed, crf, per_task, GENERATOR_VERSION) \
        and (tasks is None or m.get("tasks") == tasks) and (folder / "data.jsonl").is_file()


def _answers_done(path: Path) -> bool:
    """Whether an answers file (``offline_profile.py --json``) is there and reads whole (a kill mid-write leaves it
    cut off: then the step runs again)."""
    try:
        return bool(json.loads(path.read_text()).get("runs"))
    except (OSError, ValueError, AttributeError):
        return False


def _run(cmd: list[str], log: Path) -> None:
    """Run one step, its output into ``log``; a failed step stops here with the log's path (its output stays)."""
    with log.open("w") as fh:
        code = subprocess.call(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    if code:
        raise SystemExit(f"codec_stability: {' '.join(cmd[1:3])} ... failed (exit {code}); see {log}")


def prepare(out: Path, seed: int, crfs: list[int], per_task: int, tasks: list[str] | None, workers: int) -> None:
    """Generate every encoding of one seed and answer it, skipping what ``out`` already holds."""
    for crf in crfs:
        folder = set_dir(out, seed, crf)
        if not _set_done(folder, seed, crf, per_task, tasks):
            _run([sys.executable, "-m", "mvx_tasks.real_composite", str(folder), "--seed", str(seed), "--crf",
                  str(crf), "--per-task", str(per_task), "--workers", str(workers),
                  *(["--tasks", ",".join(tasks)] if tasks else [])], out / f"generate_s{seed}_crf{crf}.log")
        answers = profile_json(out, seed, crf)
        if not _answers_done(answers):
            _run([sys.executable, str(ROOT / "benchmarks" / "offline_profile.py"), "--data", str(folder), "--configs",
                  "full", "--workers", str(workers), "--trace-dir", str(out / f"traces_s{seed}_crf{crf}"),
                  "--json", str(answers)], out / f"answers_s{seed}_crf{crf}.log")


def pool(out: Path, seeds: list[int], crfs: list[int]) -> dict[str, Any]:
    """Per seed and CRF (against the first CRF) and pooled over the seeds per CRF: questions, answers changed
    (marked fragile / not), per task, right answers, and the changed share's Wilson interval."""
    from mvx_tasks.data import load_local

    base, rows, pooled = crfs[0], [], {}
    for crf in crfs[1:]:
        tot: Counter = Counter()
        per_task: dict[str, Counter] = {}
        for seed in seeds:
            truth = {s.id: (s.task, s.answer) for s in load_local(set_dir(out, seed, base))}
            result = compare_answers.compare(compare_answers.load_run(str(profile_json(out, seed, base))),
                                             compare_answers.load_run(str(profile_json(out, seed, crf))), truth)
            row: Counter = Counter()
            for task, c in result["rows"].items():
                changed = c["n"] - c["same"]
                figures = {"n": c["n"], "changed": changed, "marked": c["changed_marked"],
                           "right_base": c["right_before"], "right": c["right_after"]}
                row.update(figures)
                per_task.setdefault(task, Counter()).update(figures)
            tot.update(row)
            rows.append({"seed": seed, "crf": crf, **row, "changed_questions": [q for q, *_ in result["changed"]]})
        lo, hi = wilson(tot["changed"], tot["n"])
        pooled[str(crf)] = {**tot, "share": tot["changed"] / tot["n"] if tot["n"] else 0.0, "interval": [lo, hi],
                            "per_task": {t: dict(c) for t, c in sorted(per_task.items())}}
    return {"base_crf": base, "seeds": seeds, "rows": rows, "pooled": pooled}


def markdown(report: dict[str, Any]) -> str:
    base = report["base_crf"]
    lines = [f"| seed | CRF (vs {base}) | questions | right (CRF {base} / this) | changed | of them unmarked |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in report["rows"]:
        lines.append(f"| {r['seed']} | {r['crf']} | {r['n']} | {r['right_base']} / {r['right']} | {r['changed']} | "
                     f"{r['changed'] - r['marked']} |")
    for crf, p in report["pooled"].items():
        tasks = ", ".join(f"{t} {c['changed']} of {c['n']}" for t, c in p["per_task"].items())
        lo, hi = p["interval"]
        lines.append(f"| **pooled** | {crf} | {p['n']} | {p['right_base']} / {p['right']} | **{p['changed']} "
                     f"({100 * p['share']:.1f} %, 95 % {100 * lo:.1f}-{100 * hi:.1f} %)** | {p['changed'] - p['marked']} |")
        lines.append(f"|  | per task | {tasks} | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="folder for the sets, answers, traces and logs (reused by a second run)")
    ap.add_argument("--seeds", type=int, nargs="+", required=True, help="generator seeds (none that mvx_tasks/fitting_record.yaml lists)")
    ap.add_argument("--crfs", type=int, nargs="+", default=[20, 30], help="encodings; the first is the base (20 30)")
    ap.add_argument("--per-task", type=int, default=20)
    ap.add_argument("--tasks", help="comma-separated task codes (default: all of the set's)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", help="write the per-seed and pooled figures here")
    args = ap.parse_args(argv)
    from mvx_tasks.fitting_record import RecordedSeedError, refuse_recorded

    try:
        refuse_recorded("real_composite", args.seeds, "codec_stability.py's held-out figure")
    except RecordedSeedError as exc:
        ap.error(str(exc))
    if len(args.crfs) < 2:
        ap.error("give at least two CRFs: the base and one to compare with it")
    tasks = [t.strip().upper() for t in args.tasks.split(",")] if args.tasks else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        prepare(out, seed, args.crfs, args.per_task, tasks, args.workers)
    report = pool(out, args.seeds, args.crfs)
    print(markdown(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
