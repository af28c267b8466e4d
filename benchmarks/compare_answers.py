"""Per-question comparison of two SAMA runs: which answers a code change moved, task by task.

Each side is an ``offline_profile.py --json`` file (its first configuration, or ``--config``) or a
trace folder (``trace_dir=``; one JSON per question, the final step's letter and source). The
ground truth comes from the data folder's ``data.jsonl`` (``--data``), so accuracy moves can be
shown next to answer moves. Prints a Markdown table and the changed questions. Per task it also
counts the answers whose reason marks them fragile in either run (AM, MVR, ART, VS, SEQ: a small lead; FD: close
manipulation scores; CNT: one count off would change them; RID: a score near its threshold; SPR: a shared
camera trend read from a rate near the trend threshold; DE: a count comparison within one) and splits the
changed answers into marked and unmarked: how well the trace warns of the answers that re-encoding moves.

When both sides are trace folders, it also compares the evidence behind the answers: every tool
call made with the same arguments in both runs, per tool, whose results are identical and which
fields moved (numbers with their mean absolute move), and per task, how many questions saw only
identical tool results and how many answers moved with or without any result moving. Why: when the
same frames at another codec quality move an answer, this says which tool's output moved it.

    python benchmarks/compare_answers.py before.json /tmp/traces_after --data outputs/demo/data
    python benchmarks/compare_answers.py /tmp/tr_crf20/full /tmp/tr_crf30/full --data /tmp/set_crf20
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sama_model.skills.multi_video_comparison.common import marked_fragile


def load_run(path: str, config: str | None = None) -> dict[str, dict[str, Any]]:
    """question id -> {"letter", "source", "fragile"} from a profile JSON or a trace folder ("fragile": the
    decision's reason marks it, see :func:`~sama_model.skills.multi_video_comparison.common.marked_fragile`)."""
    p = Path(path)
    if not p.exists():
        raise SystemExit(f"compare_answers: {path} does not exist; give an offline_profile.py --json file "
                         "or a trace folder (<--trace-dir>/<config>)")
    out: dict[str, dict[str, Any]] = {}
    if p.is_dir():
        for f in sorted(p.glob("*.json")):
            t = json.loads(f.read_text())
            finals = [s for s in t.get("steps", []) if s.get("kind") == "final"]
            qid = str((t.get("question") or {}).get("id") or f.stem)
            out[qid] = {"letter": finals[-1].get("letter") if finals else None,
                        "source": finals[-1].get("source") if finals else None,
                        "fragile": bool(finals) and marked_fragile(finals[-1].get("reason"))}
        return out
    runs = json.loads(p.read_text())["runs"]
    run = next((r for r in runs if r["config"] == config), runs[0]) if config else runs[0]
    return {str(r["id"]): {"letter": r.get("letter"), "source": r.get("source"), "fragile": bool(r.get("fragile"))}
            for r in run["records"]}


def load_evidence(folder: str) -> dict[str, dict[str, Any]]:
    """question id -> {(tool, arguments as sorted JSON): data} of the trace folder's successful tool
    calls (a repeated call keeps its last result)."""
    out: dict[str, dict[str, Any]] = {}
    for f in sorted(Path(folder).glob("*.json")):
        t = json.loads(f.read_text())
        qid = str((t.get("question") or {}).get("id") or f.stem)
        calls = out.setdefault(qid, {})
        for s in t.get("steps", []):
            if s.get("kind") == "tool" and not s.get("error"):
                calls[(s["tool"], json.dumps(s.get("args") or {}, sort_keys=True))] = s.get("data") or {}
    return out


def _leaves(data: Any, prefix: str = "", depth: int = 2) -> dict[str, Any]:
    """Field path -> value, nested dicts opened ``depth`` levels deep ("actor.patterns")."""
    if not isinstance(data, dict) or depth == 0:
        return {prefix: data}
    out: dict[str, Any] = {}
    for k, v in data.items():
        out.update(_leaves(v, f"{prefix}.{k}" if prefix else str(k), depth - 1))
    return out


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def compare_evidence(before: dict[str, dict], after: dict[str, dict], answers_changed: set[str],
                     truth: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Per tool: calls with the same arguments in both runs, identical results, and per field the
    calls where it moved (with the mean absolute move of numeric fields). Per task: questions, those
    whose every shared tool result is identical, and answers moved with / without a moved result."""
    tools: dict[str, Counter] = defaultdict(Counter)
    fields: dict[str, Counter] = defaultdict(Counter)  # tool -> field -> calls where it moved
    moves: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    tasks: dict[str, Counter] = defaultdict(Counter)
    for qid in sorted(set(before) & set(after)):
        moved = False
        for key in sorted(set(before[qid]) & set(after[qid])):
            tool, b, a = key[0], before[qid][key], after[qid][key]
            tools[tool]["calls"] += 1
            if b == a:
                tools[tool]["identical"] += 1
                continue
            moved = True
            lb, la = _leaves(b), _leaves(a)
            for field in set(lb) | set(la):
                x, y = lb.get(field), la.get(field)
                if x != y:
                    fields[tool][field] += 1
                    if _is_number(x) and _is_number(y):
                        moves[tool][field].append(abs(float(x) - float(y)))
        c = tasks[truth.get(qid, ("?", None))[0]]
        c["n"] += 1
        c["evidence_same"] += not moved
        c["answer_moved_evidence_moved"] += moved and qid in answers_changed
        c["answer_moved_evidence_same"] += (not moved) and qid in answers_changed
    return {"tools": tools, "fields": fields, "moves": moves, "tasks": tasks}


def evidence_markdown(result: dict[str, Any], top: int = 6) -> str:
    lines = ["| tool | calls in both runs | identical results | fields that moved (calls; mean abs move) |",
             "|---|---:|---:|---|"]
    for tool, c in sorted(result["tools"].items()):
        moved = sorted(result["fields"][tool].items(), key=lambda f: (-f[1], f[0]))
        shown = []
        for name, n in moved[:top]:
            d = result["moves"][tool].get(name)
            shown.append(f"{name} {n}" + (f" ({sum(d) / len(d):.3g})" if d else ""))
        lines.append(f"| {tool} | {c['calls']} | {c['identical']} | {', '.join(shown) or '-'} |")
    lines += ["", "| task | questions | every tool result identical | answer moved, a result moved | "
              "answer moved, no result moved |", "|---|---:|---:|---:|---:|"]
    for task, c in sorted(result["tasks"].items()):
        lines.append(f"| {task} | {c['n']} | {c['evidence_same']} | {c['answer_moved_evidence_moved']} | "
                     f"{c['answer_moved_evidence_same']} |")
    return "\n".join(lines)


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
        marked = bool(before[qid].get("fragile") or after[qid].get("fragile"))
        c["marked"] += marked
        c["changed_marked"] += b != a and marked
        if b != a:
            changed.append((qid, task, answer, b, a, after[qid].get("source")))
    return {"rows": rows, "changed": changed}


def markdown(result: dict[str, Any]) -> str:
    lines = [("| task | questions | identical answers | correct before | correct after | marked fragile (either run) "
              "| changed: marked / unmarked |"), "|---|---:|---:|---:|---:|---:|---:|"]
    tot: Counter = Counter()
    for task, c in sorted(result["rows"].items()):
        tot.update(c)
        lines.append(f"| {task} | {c['n']} | {c['same']} | {c['right_before']} | {c['right_after']} | {c['marked']} | "
                     f"{c['changed_marked']} / {c['n'] - c['same'] - c['changed_marked']} |")
    lines.append(f"| **all** | {tot['n']} | {tot['same']} | {tot['right_before']} | {tot['right_after']} | "
                 f"{tot['marked']} | {tot['changed_marked']} / {tot['n'] - tot['same'] - tot['changed_marked']} |")
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
    result = compare(load_run(args.before, args.config), load_run(args.after, args.config), truth)
    print(markdown(result))
    if Path(args.before).is_dir() and Path(args.after).is_dir():
        changed = {q for q, *_ in result["changed"]}
        print("\n" + evidence_markdown(compare_evidence(load_evidence(args.before), load_evidence(args.after),
                                                          changed, truth)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
