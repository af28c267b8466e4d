"""Per-question comparison of two SAMA runs: which answers a code change moved, task by task.

Each side is an ``offline_profile.py --json`` file (its first configuration, or ``--config``) or a
trace folder (``trace_dir=``; one JSON per question, the final step's letter and source). The
ground truth comes from the data folder's ``data.jsonl`` (``--data``), so accuracy moves can be
shown next to answer moves. Prints a Markdown table and the changed questions.

    python benchmarks/compare_answers.py before.json /tmp/traces_after --data outputs/demo/data
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def load_run(path: str, config: str | None = None) -> dict[str, dict[str, Any]]:
    """question id -> {"letter", "source"} from a profile JSON or a trace folder."""
    p = Path(path)
    out: dict[str, dict[str, Any]] = {}
    if p.is_dir():
        for f in sorted(p.glob("*.json")):
            t = json.loads(f.read_text())
            finals = [s for s in t.get("steps", []) if s.get("kind") == "final"]
            qid = str((t.get("question") or {}).get("id") or f.stem)
            out[qid] = {"letter": finals[-1].get("letter") if finals else None,
                        "source": finals[-1].get("source") if finals else None}
        return out
    runs = json.loads(p.read_text())["runs"]
    run = next((r for r in runs if r["config"] == config), runs[0]) if config else runs[0]
    return {str(r["id"]): {"letter": r.get("letter"), "source": r.get("source")} for r in run["records"]}


def compare(before: dict[str, dict], after: dict[str, dict], truth: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Per task: questions in both runs, identical answers, correct before/after; changed questions."""
    rows: dict[str, Counter] = defaultdict(Counter)
    changed = []
    for qid in sorted(set(before) & set(after)):
        task, answer = truth.get(qid, ("?", None))
        b, a = before[qid]["letter"], after[qid]["letter"]
        c = rows[task]
        c["n"] += 1
        c["same"] += b == a
        c["right_before"] += b == answer
        c["right_after"] += a == answer
        if b != a:
            changed.append((qid, task, answer, b, a, after[qid].get("source")))
    return {"rows": rows, "changed": changed}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| task | questions | identical answers | correct before | correct after |",
             "|---|---:|---:|---:|---:|"]
    tot: Counter = Counter()
    for task, c in sorted(result["rows"].items()):
        tot.update(c)
        lines.append(f"| {task} | {c['n']} | {c['same']} | {c['right_before']} | {c['right_after']} |")
    lines.append(f"| **all** | {tot['n']} | {tot['same']} | {tot['right_before']} | {tot['right_after']} |")
    if result["changed"]:
        lines += ["", "| question | task | answer | before | after (source) |", "|---|---|---|---|---|"]
        lines += [f"| {q} | {t} | {ans} | {b} | {a} ({src}) |" for q, t, ans, b, a, src in result["changed"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--data", required=True, help="the data folder both runs answered (data.jsonl)")
    ap.add_argument("--config", help="configuration to read from profile JSON files (default: the first)")
    args = ap.parse_args(argv)
    from mvx_tasks.data import load_local

    truth = {s.id: (s.task, s.answer) for s in load_local(args.data)}
    print(markdown(compare(load_run(args.before, args.config), load_run(args.after, args.config), truth)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
