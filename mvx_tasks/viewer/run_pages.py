"""The run-level pages: the run page (cards, per task and level, answer sources, leaderboard,
configuration), the question list and the comparison with a second run."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .build import Run, flips, safe_name, _task_order
from .markup import e, page, pct

# ----------------------------------------------------------------------------- run page


def _sources_order(run: Run) -> list[str]:
    pref = ["planner", "planner-forced", "evidence-fallback", "rule", "first-option-rule", "failed", "model"]
    seen = set(run.sources())
    return [s for s in pref if s in seen] + sorted(seen - set(pref))


def _reported(run: Run, code: str) -> float | None:
    for task, metrics in (run.results.get("results") or {}).items():
        if task.endswith("_" + code.lower()) and "mvx_acc,none" in metrics:
            from ..leaderboard.runs import task_code

            if task_code(task) and task_code(task)[1] == code:
                return float(metrics["mvx_acc,none"])
    return None


def leaderboard_block(run: Run, site: Path) -> str:
    """The leaderboard plot (paper rows + this run) beside the paper's Table 1 rows."""
    from ..leaderboard.output import plot
    from ..leaderboard.runs import load_paper_table
    from ..leaderboard.table import build_leaderboard
    from ..registry import BENCH_CODES

    try:
        board = build_leaderboard([run.path], n_boot=200)
        plot(board, site / "leaderboard.png")
        img = '<img src="leaderboard.png" alt="leaderboard: Table 1 rows and this run">'
    except Exception as exc:  # the plot is a convenience; never fail the site for it
        img = f'<p class="muted">no leaderboard plot: {e(exc)}</p>'
    s = run.summary()
    head = "".join(f"<th class=num>{c}</th>" for c in BENCH_CODES)
    rows = [f'<tr class="ours"><td>{e(run.name)} (this run, {e(run.benchmark)})</td><td class=num>{pct(s.overall)}</td>'
            + "".join(f"<td class=num>{pct(s.per_task.get(c))}</td>" for c in BENCH_CODES) + "</tr>"]
    for r in load_paper_table():
        rows.append(f"<tr><td>{e(r.model)}</td><td class=num>{r.avg:.1f}</td>"
                    + "".join(f"<td class=num>{r.per_task[c]:.1f}</td>" for c in BENCH_CODES) + "</tr>")
    note = ("" if run.benchmark == "MVX-Bench" else
            f'<p class="muted">This run is on {e(run.benchmark)}; the paper rows are on MVX-Bench.</p>')
    table = (f'<table id="paper-rows"><tr><th>model (paper Table 1)</th><th class=num>Avg</th>{head}</tr>'
             + "".join(rows) + "</table>")
    return f'<h2>Leaderboard</h2>{note}<div class="side">{img}<div>{table}</div></div>'


def run_page(run: Run, site: Path, has_compare: bool) -> str:
    s = run.summary()
    tot = run.totals()
    sources = _sources_order(run)
    n_unparsed = sum(s.unparsed_per_task.values())
    n_failed = sum(s.failed_per_task.values())
    cards = [("accuracy %", pct(s.overall)), ("chance %", pct(s.chance_overall)), ("questions", s.n_total),
             ("correct", sum(s.correct_per_task.values())),
             ("unparsed", n_unparsed), ("failed", n_failed)]
    if tot.get("time_per_question") is not None:
        cards.append(("s / question" + (" (wall)" if tot.get("time_is_wall") else ""), f"{tot['time_per_question']:.2f}"))
    if run.is_agent:
        cards += [("tool calls", tot["tool_calls"]), ("conflicts", tot["conflicts"])]
    if tot.get("tokens"):
        cards.append(("tokens", f"{tot['tokens']:,}"))
    if tot.get("cost") is not None:
        cards.append(("cost", f"{tot['cost']:.4f}"))
    body = [f"<h1>{e(run.name)} <span class='badge'>{'SAMA agent run' if run.is_agent else 'baseline run'}</span></h1>",
            '<div class="cards" id="cards">' + "".join(
                f'<div class="card"><div class="v">{e(v)}</div><div class="k">{e(k)}</div></div>' for k, v in cards)
            + "</div>"]
    from ..registry import get_task, UnknownTaskError

    src_head = "".join(f"<th class=num>{e(x)}</th>" for x in sources)
    rows = []
    for code in _task_order(s.per_task):
        try:
            spec = get_task(code)
            name, level = spec.name, spec.level
        except UnknownTaskError:
            name, level = code, "?"
        n = s.n_per_task[code]
        rep = _reported(run, code)
        flag = "" if rep is None or abs(rep - s.per_task[code]) < 0.05 else f" <span class=wrong title='harness reported {rep:.1f}'>≠</span>"
        src = run.sources(code)
        rows.append(f'<tr data-task="{e(code)}"><td><a href="questions.html#task={e(code)}">{e(code)}</a></td>'
                    f"<td>{e(name)}</td><td>{e(level)}</td><td class=num>{n}</td>"
                    f'<td class="num acc">{pct(s.per_task[code])}{flag}</td>'
                    f"<td class='num chance'>{pct(s.chance_per_task.get(code))}</td><td class='num answered'>{n - s.failed_per_task[code]}</td>"
                    f"<td class='num unparsed'>{s.unparsed_per_task[code]}</td>"
                    f"<td class='num failed'>{s.failed_per_task[code]}</td>"
                    + "".join(f"<td class=num>{src.get(x, 0)}</td>" for x in sources) + "</tr>")
    allsrc = run.sources()
    rows.append(f'<tr class="total" data-task="overall"><td>overall</td><td>question-weighted</td><td></td>'
                f"<td class=num>{s.n_total}</td><td class='num acc'>{pct(s.overall)}</td>"
                f"<td class='num chance'>{pct(s.chance_overall)}</td><td class='num answered'>{s.n_total - n_failed}</td><td class='num unparsed'>{n_unparsed}</td>"
                f"<td class='num failed'>{n_failed}</td>"
                + "".join(f"<td class=num>{allsrc.get(x, 0)}</td>" for x in sources) + "</tr>")
    body.append("<h2>Per task</h2><table id='per-task'><tr><th>task</th><th>name</th><th>level</th><th class=num>n</th>"
                "<th class=num>acc %</th><th class=num>chance %</th><th class=num>answered</th><th class=num>unparsed</th><th class=num>failed</th>"
                f"{src_head}</tr>" + "".join(rows) + "</table>"
                "<p class='muted'>Answer-source columns: where each final answer came from (the trace's final "
                "step: planner, planner-forced at the iteration cap, evidence-fallback when the planner named no "
                "option, rule when a solver's stated rule named it (a tie, a default; the reason says which), "
                "first-option-rule when nothing decided (an abstention); model for a baseline). "
                "Answered = not failed. Chance = uniform guessing on these questions (1 / options each).</p>")
    lv_rows = []
    for level, acc in s.per_level.items():
        codes = [c for c in s.per_task if _level(c) == level]
        lv_rows.append(f'<tr data-level="{e(level)}"><td>{e(level)}</td><td class=num>{sum(s.n_per_task[c] for c in codes)}</td>'
                       f"<td class='num acc'>{pct(acc)}</td></tr>")
    body.append("<h2>Per level</h2><table id='per-level'><tr><th>level</th><th class=num>n</th><th class=num>acc %</th></tr>"
                + "".join(lv_rows) + "</table>")
    body.append(leaderboard_block(run, site))
    body.append("<h2>Configuration</h2><table class='kv' id='config'>"
                + "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in run.config_rows()) + "</table>")
    return page(f"{run.name}: run", "".join(body), here="run", run_name=run.name, has_compare=has_compare)


def _level(code: str) -> str:
    from ..registry import UnknownTaskError, get_task

    try:
        return get_task(code).level
    except UnknownTaskError:
        return "?"


# ----------------------------------------------------------------------------- question list

def index_rows(run: Run) -> list[dict[str, Any]]:
    rows = []
    for i, q in enumerate(run.questions.values()):
        rows.append({"order": i, "id": q.id, "task": q.task, "status": q.status, "parsed": q.record.get("parsed"),
                     "answer": q.record.get("answer"), "unparsed": bool(q.record.get("unparsed")), "source": q.source,
                     "tools": q.tool_calls, "conflicts": q.conflicts,
                     "time": None if q.elapsed is None else round(q.elapsed, 3),
                     "text": str(q.doc.get("question") or "")[:300], "href": f"q/{safe_name(q.id)}.html"})
    return rows


def list_page(run: Run, has_compare: bool) -> str:
    body = ("<h1>Questions</h1><div class='controls'>"
            "<label>task <select id='f-task'><option value=''>all</option></select></label>"
            "<label>result <select id='f-status'><option value=''>all</option><option value='correct'>correct</option>"
            "<option value='wrong'>wrong</option><option value='failed'>failed</option><option value='unparsed'>unparsed</option></select></label>"
            "<label>answer source <select id='f-source'><option value=''>all</option></select></label>"
            "<label>conflicts <select id='f-conflicts'><option value=''>any</option><option value='yes'>with</option>"
            "<option value='no'>without</option></select></label>"
            "<label>search <input id='f-search' type='search' placeholder='id or question text'></label>"
            "<label>sort <select id='f-sort'><option value='id'>run order</option><option value='time'>time ↓</option>"
            "<option value='time-asc'>time ↑</option><option value='tools'>tool calls ↓</option>"
            "<option value='tools-asc'>tool calls ↑</option></select></label>"
            "<span id='count' class='muted'></span></div>"
            "<table id='qlist'><thead><tr><th>id</th><th>task</th><th>result</th><th>predicted</th><th>truth</th>"
            "<th>source</th><th class=num>tool calls</th><th class=num>conflicts</th><th class=num>time s</th>"
            "<th>question</th></tr></thead><tbody></tbody></table>"
            "<div class='pager'><button id='prev'>◀ previous</button><span id='page'></span>"
            "<button id='next'>next ▶</button></div>"
            "<noscript>The list needs JavaScript; every question page is under q/.</noscript>")
    return page(f"{run.name}: questions", body, here="questions", run_name=run.name, has_compare=has_compare,
                scripts=("data/index.js", "assets/viewer.js"))


# ----------------------------------------------------------------------------- compare

def _mark(fragile: bool | None) -> str:
    """yes / no for an agent's answer, a dash for a model without traces."""
    return "\u2013" if fragile is None else ("yes" if fragile else "no")


def compare_page(a: Run, b: Run, b_path: str) -> str:
    fl = flips(a, b)
    sa, sb = a.summary(), b.summary()
    common = [qid for qid in a.questions if qid in b.questions]
    rows = []
    for code in _task_order(set(sa.per_task) | set(sb.per_task)):
        lost = sum(1 for f in fl if f.task == code and f.direction == "lost")
        gained = sum(1 for f in fl if f.task == code and f.direction == "gained")
        pa, pb = sa.per_task.get(code), sb.per_task.get(code)
        d = "" if pa is None or pb is None else f"{pb - pa:+.1f}"
        rows.append(f'<tr data-task="{e(code)}"><td>{e(code)}</td><td class=num>{pct(pa)}</td><td class=num>{pct(pb)}</td>'
                    f"<td class=num>{d}</td><td class='num lost'>{lost}</td><td class='num gained'>{gained}</td></tr>")
    rows.append(f"<tr class='total'><td>overall</td><td class=num>{pct(sa.overall)}</td><td class=num>{pct(sb.overall)}</td>"
                f"<td class=num>{sb.overall - sa.overall:+.1f}</td>"
                f"<td class=num>{sum(f.direction == 'lost' for f in fl)}</td>"
                f"<td class=num>{sum(f.direction == 'gained' for f in fl)}</td></tr>")
    body = [f"<h1>Compare</h1><table class='kv'><tr><td>A (this site)</td><td>{e(a.name)} · <code>{e(a.path)}</code></td></tr>"
            f"<tr><td>B</td><td>{e(b.name)} · <code>{e(b.path)}</code></td></tr>"
            f"<tr><td>questions in both</td><td>{len(common)}</td></tr>"
            f"<tr><td>flipped</td><td id='n-flips'>{len(fl)}</td></tr></table>",
            "<h2>Per task</h2><table id='compare-tasks'><tr><th>task</th><th class=num>A acc %</th><th class=num>B acc %</th>"
            "<th class=num>B − A</th><th class=num>lost (A right, B wrong)</th><th class=num>gained (A wrong, B right)</th></tr>"
            + "".join(rows) + "</table>"]
    by_task: dict[str, list] = {}
    for f in fl:
        by_task.setdefault(f.task, []).append(f)
    body.append("<h2>Questions that flipped</h2>")
    if not fl:
        body.append("<p id='no-flips'>No question flipped.</p>")
    body.append("<table id='flips'><tr><th>id</th><th>task</th><th>truth</th><th>A predicted</th><th>A source</th>"
                "<th>B predicted</th><th>B source</th><th>flip</th><th>marked fragile (A / B)</th></tr>")
    for code, items in by_task.items():
        body.append(f"<tr class='total'><td colspan=9>{e(code)}: {len(items)} flipped</td></tr>")
        for f in items:
            body.append(f'<tr class="flip" data-id="{e(f.id)}" data-direction="{f.direction}" '
                        f'data-fragile="{_mark(f.a.fragile)}/{_mark(f.b.fragile)}">'
                        f'<td><a href="q/{safe_name(f.id)}.html">{e(f.id)}</a></td><td>{e(f.task)}</td>'
                        f"<td>{e(f.a.record.get('answer'))}</td><td>{e(f.a.record.get('parsed'))}</td><td>{e(f.a.source)}</td>"
                        f"<td>{e(f.b.record.get('parsed'))}</td><td>{e(f.b.source)}</td>"
                        f"<td class='{'wrong' if f.direction == 'lost' else 'correct'}'>{f.direction}</td>"
                        f"<td>{_mark(f.a.fragile)} / {_mark(f.b.fragile)}</td></tr>")
    body.append("</table>")
    if any(q.fragile is not None for q in (*a.questions.values(), *b.questions.values())):
        body.append("<p class='muted'>Marked fragile: the agent's reason says a small change of its evidence (a small "
                    "lead, one count off, a score near its threshold) would change the answer; \u2013 for a run "
                    "without traces.</p>")
    return page(f"{a.name} vs {b.name}", "".join(body), here="compare", run_name=a.name, has_compare=True)
