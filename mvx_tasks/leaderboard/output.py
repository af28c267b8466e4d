"""The leaderboard written out: Markdown tables, CSV rows and the bar plot."""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any


from ..benchmarks import PEERS
from ..registry import BENCH_CODES, LEVELS
from .runs import AVG_TOLERANCE
from .table import Leaderboard


# ----------------------------------------------------------------------------- output

LEVEL_TITLES = {"perception": "Perception", "matching": "Matching", "reasoning": "Reasoning"}


def _f(x: float | None, digits: int = 1) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


MVX_BENCHMARKS = ("MVX-Bench", "MVX-Synth")
#: Benchmarks shown side by side, MVX-Bench first, each under what its score covers ("CrossVid CC+NC");
#: each peer also gets its own per-task table.
COLUMN_OF = {"MVX-Bench": "MVX-Bench", **{bm.name: bm.display_name for bm in PEERS}}
SIDE_BY_SIDE = tuple(COLUMN_OF.values())


def side_by_side(board: Leaderboard) -> list[dict[str, Any]]:
    """One row per model (run name, or paper row): its overall on each benchmark it was run on."""
    rows: dict[str, dict[str, Any]] = {}
    for e in board.entries:
        col = COLUMN_OF.get(e.benchmark)
        if col is None:
            continue
        row = rows.setdefault(e.name, {"model": e.name, "kind": e.kind})
        row[col] = e.avg
        row[f"{col} answered"] = e.answered
        row[f"{col} chance"] = e.chance
    return sorted(rows.values(), key=lambda r: (-sum(1 for b in SIDE_BY_SIDE if b in r), r["kind"] != "run", r["model"]))


def _chance_row(entries: list, codes: list[str], width: int, n_levels: int = 0, lead: int = 2) -> str:
    """The per-task chance of the questions asked (the entry that answered the most), as a table row."""
    best = max(entries, key=lambda e: e.answered or 0)
    cells = ["*chance*", *[""] * (lead - 1), _f(best.chance), "", *[""] * n_levels,
             *(_f(best.chance_per_task.get(c)) for c in codes)]
    return "| " + " | ".join(cells + [""] * (width - len(cells))) + " |"


def _peer_tables(board: Leaderboard) -> list[str]:
    lines: list[str] = []
    for bm in PEERS:
        entries = sorted((e for e in board.runs() if e.benchmark == bm.name), key=lambda e: -e.avg)
        if not entries:
            continue
        codes = [t.code for t in bm.tasks]
        how = "question-weighted" if bm.aggregation == "questions" else "mean of sub-task accuracies"
        head = ["Model", "Source", "Overall", "95% CI", *(lv.title for lv in bm.levels),
                *(bm.suffix(c).upper() for c in codes), "Answered", "Unparsed", "Chance"]
        lines += ["", f"## {bm.display_name}", "", f"Accuracy (%); overall {how}, as in the {bm.name} paper "
                  f"({bm.counts_note}). Chance: uniform guessing on the questions answered (1 / options each), "
                  "aggregated the same way.", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for e in entries:
            ci = f"{e.ci[0]:.1f}–{e.ci[1]:.1f}" if e.ci else ""
            name = f"**{e.name}**" + (f" ({e.label})" if e.label and e.label != bm.display_name else "")
            lines.append("| " + " | ".join([name, e.source, _f(e.avg), ci,
                                            *(_f(e.per_level.get(lv.code)) for lv in bm.levels),
                                            *(_f(e.per_task.get(c)) for c in codes),
                                            "" if e.answered is None else str(e.answered),
                                            "" if e.unparsed is None else str(e.unparsed), _f(e.chance)]) + " |")
        lines.append(_chance_row(entries, codes, len(head), len(bm.levels)))
    return lines


def csv_rows(board: Leaderboard) -> list[dict[str, Any]]:
    out = []
    for e in board.ranked():
        row: dict[str, Any] = {"model": e.name, "kind": e.kind, "source": e.source, "benchmark": e.benchmark,
                               "group": e.group, "label": e.label or e.benchmark, "Avg": _f(e.avg, 2),
                               "chance": _f(e.chance, 2),
                               "ci95_low": _f(e.ci[0], 2) if e.ci else "", "ci95_high": _f(e.ci[1], 2) if e.ci else ""}
        row.update({LEVEL_TITLES[lv]: _f(e.per_level.get(lv), 2) for lv in LEVELS})
        row.update({c: _f(e.per_task.get(c), 2) for c in BENCH_CODES})
        row.update({lv.code: _f(e.per_level.get(lv.code), 2) for bm in PEERS for lv in bm.levels})
        row.update({t.code: _f(e.per_task.get(t.code), 2) for bm in PEERS for t in bm.tasks})
        row.update({"answered": "" if e.answered is None else e.answered,
                    "unparsed": "" if e.unparsed is None else e.unparsed,
                    "failed": "" if e.failed is None else e.failed,
                    "partial": e.partial if e.kind == "run" else "",
                    "paper_row": e.paper_row or "", "delta_Avg": _f(e.delta.get("Avg"), 2),
                    "Avg_recomputed": _f(e.avg_recomputed, 2),
                    "Avg_check": "" if e.avg_agrees is None else ("ok" if e.avg_agrees else "MISMATCH"),
                    "flags": "; ".join(e.flags), "route": e.route_mark or ("verified by route check" if e.route_verified else "")})
        row.update({f"delta_{c}": _f(e.delta.get(c), 2) for c in BENCH_CODES})
        out.append(row)
    return out


def markdown(board: Leaderboard) -> str:
    head = ["#", "Model", "Source", "Avg", "95% CI", *LEVEL_TITLES.values(), *BENCH_CODES, "Answered", "Unparsed",
            "Chance", "Δ Avg", "Flags"]
    lines = ["# MVX-Bench leaderboard", "",
             "Accuracy (%). `Avg` is question-weighted (total correct / questions answered). Paper rows are "
             "Table 1 as printed; their level columns are derived from the per-task figures with the registry's "
             "question counts. Our runs are re-scored from their per-question records; the 95% CI is a "
             "stratified percentile bootstrap. `Chance` is uniform guessing on the questions a row answered "
             "(1 / options each; the paper rows: the full benchmark's).", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, e in enumerate((e for e in board.ranked() if e.benchmark in MVX_BENCHMARKS), 1):
        ci = f"{e.ci[0]:.1f}–{e.ci[1]:.1f}" if e.ci else ""
        name = f"**{e.name}**" if e.kind == "run" else e.name
        cells = [str(i), name, e.source if e.kind == "paper" else f"{e.source} ({e.benchmark})", _f(e.avg), ci,
                 *(_f(e.per_level.get(lv)) for lv in LEVELS), *(_f(e.per_task.get(c)) for c in BENCH_CODES),
                 "" if e.answered is None else str(e.answered), "" if e.unparsed is None else str(e.unparsed),
                 _f(e.chance), f"{e.delta['Avg']:+.1f} vs {e.paper_row}" if "Avg" in e.delta else "",
                 "; ".join([*e.flags, *([e.route_mark] if e.route_mark else [])])]
        lines.append("| " + " | ".join(cells) + " |")
    mvx = [e for e in board.entries if e.benchmark in MVX_BENCHMARKS]
    if mvx:
        lines.append(_chance_row([e for e in mvx if e.kind == "run"] or mvx, list(BENCH_CODES), len(head),
                                 len(LEVEL_TITLES), 3))
    repro = [e for e in board.runs() if e.delta]
    if repro:
        lines += ["", "## Reproductions (run minus paper, points)", "",
                  "| Run | Paper row | Avg | " + " | ".join(BENCH_CODES) + " |", "|" + "---|" * (3 + len(BENCH_CODES))]
        for e in repro:
            lines.append(f"| {e.name} | {e.paper_row} | {e.delta['Avg']:+.1f} | "
                         + " | ".join(f"{e.delta[c]:+.1f}" if c in e.delta else "" for c in BENCH_CODES) + " |")
    sbs = side_by_side(board)
    if any(b in r for r in sbs for b in SIDE_BY_SIDE[1:]):
        lines += ["", "## Benchmarks side by side", "",
                  "Overall accuracy (%) per benchmark, each aggregated as its own paper does (questions answered "
                  "and chance on them in brackets).", "", "| Model | " + " | ".join(SIDE_BY_SIDE) + " |", "|" + "---|" * (1 + len(SIDE_BY_SIDE))]
        for r in sbs:
            cells = [f"{_f(r[b])} ({r[b + ' answered']}; chance {_f(r.get(b + ' chance'))})"
                     if b in r and r.get(b + " answered") is not None
                     else (_f(r[b]) if b in r else "") for b in SIDE_BY_SIDE]
            name = f"**{r['model']}**" if r["kind"] == "run" else r["model"]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += _peer_tables(board)
    lines += ["", "## Checks", ""]
    for e in board.entries:
        if e.kind == "paper" and not e.avg_agrees:
            lines.append(f"- Paper row **{e.name}**: printed Avg {e.avg:.1f}, question-weighted per-task mean "
                         f"{e.avg_recomputed:.2f}; it does not follow from its per-task figures "
                         "(likely a partial run).")
    for e in board.runs():
        if e.partial:
            lines.append(f"- Run **{e.name}** answered {e.answered} of the registry's questions: a partial run.")
    unverified = sorted({e.paper_row or e.name for e in board.entries if e.route_unverified})
    if unverified:
        lines.append(f"- Route not verified offline (remote code, vLLM or an API; `mvx-bench routes` checks their "
                     f"request messages only): {', '.join(unverified)}.")
    agree = sum(1 for e in board.entries if e.kind == "paper" and e.avg_agrees)
    total = sum(1 for e in board.entries if e.kind == "paper")
    lines.append(f"- {agree} of {total} paper rows reproduce their Avg within {AVG_TOLERANCE}.")
    return "\n".join(lines) + "\n"


def plot(board: Leaderboard, path: str | Path) -> Path:
    """Horizontal bars of Avg; our runs coloured with their interval, flagged paper rows hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranked = [e for e in board.ranked() if e.benchmark in MVX_BENCHMARKS][::-1]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(ranked) + 1.2))
    colors = ["tab:orange" if e.kind == "run" else ("tab:green" if e.group == "agent" else "tab:gray") for e in ranked]
    bars = ax.barh(range(len(ranked)), [e.avg for e in ranked], color=colors)
    for bar, e in zip(bars, ranked):
        if e.flags:
            bar.set_hatch("//")
        if e.ci:
            ax.errorbar(e.avg, bar.get_y() + bar.get_height() / 2, xerr=[[e.avg - e.ci[0]], [e.ci[1] - e.avg]],
                        fmt="none", ecolor="black", capsize=2)
    ax.set_yticks(range(len(ranked)), [e.name for e in ranked], fontsize=7)
    ax.set_xlabel("Avg accuracy (%), question-weighted")
    ax.set_title("MVX-Bench: Table 1 and our runs (hatched: flagged)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_leaderboard(board: Leaderboard, out: str | Path) -> dict[str, Path]:
    """Write leaderboard.md, leaderboard.csv and leaderboard.png into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = csv_rows(board)
    with (out / "leaderboard.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "leaderboard.md").write_text(markdown(board), encoding="utf-8")
    sbs = side_by_side(board)
    cols = ["model", "kind"] + [c for b in SIDE_BY_SIDE for c in (b, f"{b} answered", f"{b} chance")]
    with (out / "leaderboard_benchmarks.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows({k: (_f(v, 2) if isinstance(v, float) else ("" if v is None else v)) for k, v in r.items()}
                    for r in sbs)
    return {"csv": out / "leaderboard.csv", "benchmarks_csv": out / "leaderboard_benchmarks.csv", "md": out / "leaderboard.md", "png": plot(board, out / "leaderboard.png")}
