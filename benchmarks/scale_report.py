"""``results/scale.md`` (one row per run) and ``results/scale_rss.png`` (RSS over time) from every
``results/scale_*.json`` that ``benchmarks/scale.py`` wrote."""
from __future__ import annotations

import json
from pathlib import Path

TASKS = ("CNT", "FD", "AM", "ART", "RID", "MVR", "VS", "CR", "DE", "SEQ", "SPR")


def _f(v, nd: int = 1) -> str:
    if v is None:
        return "-"
    return f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def flat_after_warmup(rss: list[list]) -> dict:
    """Peak total RSS after 10 % of the run against the value at 10 % (the issue's flatness test)."""
    if len(rss) < 5:
        return {}
    end = rss[-1][0] or 1.0
    at10 = next((r[1] for r in rss if r[0] >= 0.1 * end), rss[0][1])
    later = max(r[1] for r in rss if r[0] >= 0.1 * end)
    tail = [r for r in rss if r[0] >= 0.1 * end and len(r) > 4]
    return {"at_10pct_mib": round(at10, 1), "peak_after_mib": round(later, 1),
            "growth_pct": round(100 * (later - at10) / at10, 1) if at10 else None,
            "fds": (min(r[3] for r in tail), max(r[3] for r in tail)) if tail else None,
            "threads": (min(r[4] for r in tail), max(r[4] for r in tail)) if tail else None}


def markdown(reports: list[dict]) -> str:
    lines = ["# Paper scale: the offline profile through `lmms-eval --model sama` (`benchmarks/scale.py`)", "",
             "MVX-Synth from `mvx-bench synth --paper-scale` (1,442 questions, paper's per-task counts); a sweep "
             "with `--per-task N` answers the first N questions of each task (`lmms-eval --limit N`). CPU time is the "
             "whole process tree's; RSS is sampled every ~2 s over the tree (peak of the sum; per process in the "
             "JSON); decodes per video and tool-cache hit rate come from `<trace_dir>/run_stats/rank*.json`. "
             "`kill` is SIGKILLed (whole process group) once half the traces exist; `kill+rerun` resumes it. "
             "RSS growth: peak after 10 % of the run vs the value at 10 %. lmms-eval hands SAMA the questions task "
             "by task; rows before fd8270e answered them in that order, so RSS stepped up as each task's tools first ran. "
             "Since fd8270e SAMA answers them in turns across tasks (`sama_model.runner.interleaved`; `task_spans` "
             "in the JSON show every task running from the start); since d625299 the frame memo drops dead arrays' "
             "entries and the runner gives freed heap back after each question (`sama_model/heap.py`); since 714ab97 "
             "(`full_warm`) the runner warms up, before the first question, the backends some question can use "
             "(`sama_model.tools.toolkit.warm_up`: until then the subtitle retriever loaded its sentence model at the "
             "first question that searched by meaning, question 152 of 1,442, about +1 GB in a fresh process) and "
             "limits glibc to two malloc arenas; since f51dc5f (`full_final`) the similarity tool keeps only the "
             "most recent 512 embeddings (before, every video's) and the runner takes in each question as it finishes "
             "(before, it waited for the whole run, so every finished question's trace stayed in memory to the end "
             "and the per-question heap trim ran only after the run). "
             "The plot shows the paper-scale (`full*`) sweeps. Checks across sweeps and the conditions of each run: "
             "[scale_checks.md](scale_checks.md).", "",
             "| date | commit | sweep | run | questions | answered | failed | wall s | CPU s | q/min | peak RSS MiB "
             "(max process) | RSS growth after 10 % | open files, threads after 10 % (min-max) | resumed | decodes/video | tool-cache hit rate | disk MiB "
             "traces / cache / stills / results | accuracy % |",
             "|" + "---|" * 18]
    for rep in reports:
        for label, r in rep.get("runs", {}).items():
            procs = max((p["peak_mib"] for p in r.get("processes", {}).values()), default=None)
            d = r.get("disk_mib", {})
            pt = r.get("per_task") or {}
            n = sum(t["n"] for t in pt.values())
            acc = (100 * sum((t["acc"] or 0) * t["n"] / 100 for t in pt.values()) / n) if n else None
            flat = flat_after_warmup(r.get("rss", []))
            growth = flat.get("growth_pct")
            fds = "-".join(map(str, flat["fds"])) if flat.get("fds") else "-"
            threads = "-".join(map(str, flat["threads"])) if flat.get("threads") else "-"
            lines.append(
                f"| {rep['date']} | {rep['commit']} | {rep['tag']} | {label}{' (killed)' if r.get('killed') else ''} | "
                f"{r.get('questions')} | {_f(r.get('answered_total'))} | {_f(r.get('failed_total'))} | "
                f"{_f(r.get('wall_s'))} | {_f(r.get('cpu_s'))} | {_f(r.get('questions_per_min'), 2)} | "
                f"{_f(r.get('peak_total_mib'), 0)} ({_f(procs, 0)}) | {_f(growth)} % | {fds}, {threads} | "
                f"{_f(r.get('resumed'))} | "
                f"{_f(r.get('decodes_per_video'), 2)} | {_f(r.get('tool_cache_hit_rate'), 3)} | "
                f"{_f(d.get('traces'))} / {_f(d.get('tool_cache'))} / {_f(d.get('stills'))} / {_f(d.get('results'))} | "
                f"{_f(acc)} |")
    lines += ["", "Per-task accuracy (%), answered / failed:", "",
              "| sweep | run | " + " | ".join(TASKS) + " |", "|" + "---|" * (len(TASKS) + 2)]
    for rep in reports:
        for label, r in rep.get("runs", {}).items():
            pt = r.get("per_task") or {}
            if pt:
                cells = [f"{_f(pt[c]['acc'])} ({pt[c]['n']}/{pt[c]['failed']})" if c in pt else "-" for c in TASKS]
                lines.append(f"| {rep['tag']} | {label} | " + " | ".join(cells) + " |")
    lines += ["", "Ratios and answer comparisons (measured within one sweep):", ""]
    for rep in reports:
        for k, v in rep.get("ratios", {}).items():
            lines.append(f"- {rep['tag']}: {k}: {v}")
        for c in rep.get("comparisons", []):
            lines.append(f"- {rep['tag']}: answers {c['a']} vs {c['b']}: "
                         f"{'identical' if c['identical'] else 'DIFFER'} ({c['questions_a']} / {c['questions_b']} "
                         f"questions, {c['n_differing']} differing{': ' + ', '.join(c['differing']) if c['differing'] else ''})")
    for rep in reports:
        t = rep.get("tools")
        if not t:
            continue
        lines += ["", f"Viewer, summary, leaderboard on `{rep['tag']}` / w2 ({rep['questions']} questions):", "",
                  "| command | wall s | CPU s | peak RSS MiB | output |", "|---|---|---|---|---|"]
        v = t["view"]
        pages = ", ".join(f"{k} {s} KiB" for k, s in v.get("pages", {}).items())
        lines.append(f"| view | {v['wall_s']} | {v['cpu_s']} | {v['peak_mib']} | {v.get('site_mib')} MiB, "
                     f"{v.get('files')} files; {pages} |")
        lines.append(f"| summary | {t['summary']['wall_s']} | {t['summary']['cpu_s']} | {t['summary']['peak_mib']} | "
                     f"stdout |")
        lb = t["leaderboard"]
        lines.append(f"| leaderboard | {lb['wall_s']} | {lb['cpu_s']} | {lb['peak_mib']} | {lb.get('out_mib')} MiB |")
        b = t.get("browser", {})
        if "skipped" in b:
            lines.append(f"\nBrowser: skipped ({b['skipped']})")
        else:
            lines += ["", "| page (headless Chromium) | DOM ready ms | load ms | elements |", "|---|---|---|---|"]
            lines += [f"| {k} | {x['dom_ready_ms']} | {x['load_ms']} | {x['elements']} |" for k, x in b.items()]
    lines += ["", "RSS over time (sum over each run's process tree): [scale_rss.png](scale_rss.png)", ""]
    return "\n".join(lines)


def plot(reports: list[dict], out: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(9, 5))
    k = 0
    shown = [rep for rep in reports if rep["tag"].startswith("full")] or reports  # paper scale, where there is one
    for rep in shown:
        for label, r in rep.get("runs", {}).items():
            rss = r.get("rss") or []
            if len(rss) > 1:
                ax.plot([x[0] for x in rss], [x[1] for x in rss], label=f"{rep['tag']} {label}",
                        color=plt.cm.tab20(k % 20), ls="-" if k < 10 else "--")
                k += 1
    runs = [(rep["tag"], label, r) for rep in reports for label, r in rep.get("runs", {}).items() if r.get("rss")]
    full = [x for x in runs if x[0].startswith("full")]
    runs = full or runs
    if runs:  # the longest run's task phases: lmms-eval answers task by task, each task's tools load at its start
        tag, label, longest = max(runs, key=lambda x: x[2]["rss"][-1][0])
        top = max(x[1] for x in longest["rss"])
        for code, (t0, _) in (longest.get("task_spans") or {}).items():
            ax.axvline(t0, color="grey", lw=0.5, ls=":")
            ax.text(t0, top, code, fontsize=6, rotation=90, va="top", color="grey")
        ax.set_title(f"benchmarks/scale.py: RSS over time (task starts: {tag} {label})")
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("RSS of the process tree (MiB)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def write_report(results: Path) -> None:
    reports = []
    for p in sorted(results.glob("scale_*.json")):
        try:
            reports.append(json.loads(p.read_text()))
        except ValueError:
            continue
    (results / "scale.md").write_text(markdown(reports))
    plot(reports, results / "scale_rss.png")
