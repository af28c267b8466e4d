"""Write the static site: plain HTML + one CSS + one small script, thumbnails as files beside them.

Every text that comes from a run (questions, model outputs, tool results, planner messages) is
escaped with :func:`html.escape`; the question list's rows travel as JSON in ``data/index.js``
and are put into the page with ``textContent``, never as markup. No external resource is
referenced, so the folder opens from the file system offline.
"""
from __future__ import annotations

import hashlib
import html
import json
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .build import FrameRequest, Question, Run, flips, load_run, safe_name, _task_order

STATIC = Path(__file__).with_name("static")
THUMB_SIDE = 128  # thumbnails' longer side in pixels
THUMB_QUALITY = 70
PAGE_SIZE = 100  # question-list rows per page
MAX_PRE = 20000  # characters of one JSON/text block on a question page


def e(x: Any) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def pct(x: float | None) -> str:
    return "" if x is None else f"{x:.1f}"


def jdump(x: Any, limit: int = MAX_PRE) -> str:
    text = x if isinstance(x, str) else json.dumps(x, indent=1, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters)"
    return text


def page(title: str, body: str, *, prefix: str = "", here: str = "", run_name: str = "", has_compare: bool = False,
         scripts: Iterable[str] = ()) -> str:
    nav = [("index.html", "Run", "run"), ("questions.html", "Questions", "questions")]
    if has_compare:
        nav.append(("compare.html", "Compare", "compare"))
    here_attr = ' class="here"'
    links = " ".join(f'<a href="{prefix}{href}"{here_attr if key == here else ""}>{label}</a>'
                     for href, label, key in nav)
    js = "".join(f'<script src="{prefix}{s}"></script>' for s in scripts)
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{e(title)}</title>"
            f'<link rel="stylesheet" href="{prefix}assets/viewer.css"></head><body>'
            f'<header class="top"><strong>mvx-bench view</strong> {links}<span class="run">{e(run_name)}</span></header>'
            f"<main>{body}</main>{js}</body></html>\n")


# ----------------------------------------------------------------------------- thumbnails

@dataclass
class Frame:
    t: float
    src: str  # path relative to the site root
    calls: list[str] = field(default_factory=list)  # "t3 video_reader"


class Thumbnailer:
    """Extracts the frames tools looked at through the project's decoder, as small JPEGs.

    Decodes with :func:`mvx_tasks.video_decoder.load_video` at the tools' frame count, so timestamps are
    the ones the tools saw; each (video, frame) is written once even when several questions or
    calls look at it.
    """

    def __init__(self, site: Path, side: int = THUMB_SIDE, quality: int = THUMB_QUALITY) -> None:
        self.site, self.side, self.quality = site, side, quality
        self.written = 0

    def filmstrip(self, path: Path, requests: list[FrameRequest]) -> tuple[list[Frame], str | None]:
        """The distinct frames all requests looked at, in time order, or ([], why) when the video fails."""
        import numpy as np
        from PIL import Image

        from ..video_decoder import VideoDecodeError, load_video

        if not requests:
            return [], None
        try:
            clip = load_video(path, max_side=max(self.side, 64))
        except VideoDecodeError as exc:
            return [], str(exc)
        if clip.n_frames == 0:
            return [], "no frames decoded"
        picked: dict[int, list[str]] = {}
        for req in requests:
            if req.times:
                idx = [int(np.argmin(np.abs(clip.timestamps - t))) for t in req.times]
            else:
                _, ts = clip.sample(req.n, req.window[0], req.window[1])
                idx = [int(np.argmin(np.abs(clip.timestamps - t))) for t in ts]
            for i in idx:
                tag = f"{req.call_id} {req.tool}"
                lst = picked.setdefault(i, [])
                if tag not in lst:
                    lst.append(tag)
        folder = self.site / "thumbs" / hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True)
        frames = []
        for i in sorted(picked):
            f = folder / f"{i:04d}.jpg"
            if not f.exists():
                img = Image.fromarray(clip.frames[i])
                img.thumbnail((self.side, self.side))
                img.save(f, "JPEG", quality=self.quality)
                self.written += 1
            frames.append(Frame(t=float(clip.timestamps[i]), src=f.relative_to(self.site).as_posix(), calls=picked[i]))
        return frames, None


# ----------------------------------------------------------------------------- run page

def _sources_order(run: Run) -> list[str]:
    pref = ["planner", "planner-forced", "evidence-fallback", "first-option-rule", "failed", "model"]
    seen = set(run.sources())
    return [s for s in pref if s in seen] + sorted(seen - set(pref))


def _reported(run: Run, code: str) -> float | None:
    for task, metrics in (run.results.get("results") or {}).items():
        if task.endswith("_" + code.lower()) and "mvx_acc,none" in metrics:
            from ..leaderboard import task_code

            if task_code(task) and task_code(task)[1] == code:
                return float(metrics["mvx_acc,none"])
    return None


def leaderboard_block(run: Run, site: Path) -> str:
    """The leaderboard plot (paper rows + this run) beside the paper's Table 1 rows."""
    from ..leaderboard import build_leaderboard, load_paper_table, plot
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
    cards = [("accuracy %", pct(s.overall)), ("questions", s.n_total), ("correct", sum(s.correct_per_task.values())),
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
                    f"<td class='num answered'>{n - s.failed_per_task[code]}</td>"
                    f"<td class='num unparsed'>{s.unparsed_per_task[code]}</td>"
                    f"<td class='num failed'>{s.failed_per_task[code]}</td>"
                    + "".join(f"<td class=num>{src.get(x, 0)}</td>" for x in sources) + "</tr>")
    allsrc = run.sources()
    rows.append(f'<tr class="total" data-task="overall"><td>overall</td><td>question-weighted</td><td></td>'
                f"<td class=num>{s.n_total}</td><td class='num acc'>{pct(s.overall)}</td>"
                f"<td class='num answered'>{s.n_total - n_failed}</td><td class='num unparsed'>{n_unparsed}</td>"
                f"<td class='num failed'>{n_failed}</td>"
                + "".join(f"<td class=num>{allsrc.get(x, 0)}</td>" for x in sources) + "</tr>")
    body.append("<h2>Per task</h2><table id='per-task'><tr><th>task</th><th>name</th><th>level</th><th class=num>n</th>"
                "<th class=num>acc %</th><th class=num>answered</th><th class=num>unparsed</th><th class=num>failed</th>"
                f"{src_head}</tr>" + "".join(rows) + "</table>"
                "<p class='muted'>Answer-source columns: where each final answer came from (the trace's final "
                "step: planner, planner-forced at the iteration cap, evidence-fallback when the planner named no "
                "option, first-option-rule when nothing decided (an abstention); model for a baseline). "
                "Answered = not failed.</p>")
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


# ----------------------------------------------------------------------------- question page

def _options_table(q: Question) -> str:
    truth, pred = q.record.get("answer"), q.record.get("parsed")
    rows = []
    for letter, text in (q.doc.get("options") or {}).items():
        cls = []
        marks = []
        if letter == truth:
            cls.append("truth")
            marks.append("<span class='badge correct'>truth</span>")
        if letter == pred:
            cls.append("pred" + (" wrongpred" if pred != truth else ""))
            marks.append(f"<span class='badge {'correct' if pred == truth else 'wrong'}'>predicted</span>")
        rows.append(f'<tr class="{" ".join(cls)}" data-letter="{e(letter)}"><td class="letter">{e(letter)}</td>'
                    f"<td>{e(text)}</td><td>{' '.join(marks)}</td></tr>")
    if not rows:
        return f"<p>truth {e(truth)}, predicted {e(pred)}</p>"
    return "<table class='options' id='options'>" + "".join(rows) + "</table>"


def _filmstrips(q: Question, thumbs: Thumbnailer | None) -> str:
    if q.trace is None or thumbs is None:
        vids = q.videos()
        if not vids:
            return ""
        return ("<h2>Videos</h2><ul>" + "".join(f"<li>{e(v.get('label'))}: <code>{e(v.get('path'))}</code></li>"
                                                for v in vids) + "</ul>")
    reqs = q.frame_requests()
    out = ["<h2>What the tools looked at</h2><p class='muted'>One filmstrip per video: the distinct decoded "
           "frames the tool calls sampled, with their timestamps and the calls that read them.</p>"]
    for v in q.videos():
        label = v.get("label")
        path = q.video_path(label)
        frames, why = thumbs.filmstrip(path, reqs.get(label, [])) if path is not None else ([], "no path")
        figs = "".join(
            f'<figure data-t="{f.t:.3f}"><img loading="lazy" src="../{e(f.src)}" alt="{e(label)} at {f.t:.2f}s" '
            f'title="{e(", ".join(f.calls))}"><figcaption>{f.t:.2f}s · {e(", ".join(c.split()[0] for c in f.calls))}'
            f"</figcaption></figure>" for f in frames)
        note = (f"<span class='failed'>cannot show frames: {e(why)}</span>" if why else
                "" if frames else "<span class='muted'>no tool looked at this video's frames</span>")
        out.append(f'<div class="filmstrip" data-video="{e(label)}" data-frames="{len(frames)}">'
                   f"<h3>{e(label)} <span class='meta muted'>{len(frames)} frames · {len(reqs.get(label, []))} calls"
                   f" · <code>{e(v.get('path'))}</code></span></h3><div class='frames'>{figs}{note}</div></div>")
    return "".join(out)


def _step_html(s: dict[str, Any]) -> str:
    kind = s.get("kind")
    if kind == "planner":
        meta = [f"iteration {s.get('iteration')}", f"{s.get('elapsed', 0):.3f}s"]
        if s.get("usage"):
            meta.append("tokens " + ", ".join(f"{k}={v}" for k, v in s["usage"].items()))
        if s.get("forced"):
            meta.append("forced final")
        if s.get("invalid"):
            meta.append(f"invalid outputs {s['invalid']}")
        acts = "".join(f"<li><code>{e(a.get('tool'))}</code> {e(json.dumps(a.get('args', {}), ensure_ascii=False))}</li>"
                       for a in s.get("actions") or [])
        parts = [f'<div class="step planner" data-iteration="{e(s.get("iteration"))}"><div class="head">planner '
                 f"{e(s.get('planner'))}<span class='meta'>{e(' · '.join(meta))}</span></div>"]
        if s.get("note"):
            parts.append(f"<div class='muted'>{e(s['note'])}</div>")
        if acts:
            parts.append(f"<ul>{acts}</ul>")
        if s.get("final"):
            parts.append(f"<div>final: <strong>{e(s['final'])}</strong></div>")
        if s.get("output") not in (None, ""):
            parts.append(f"<details><summary>raw output</summary><pre>{e(jdump(s['output']))}</pre></details>")
        if s.get("messages"):
            parts.append(f"<details><summary>messages shown ({len(s['messages'])})</summary>"
                         f"<pre>{e(jdump(s['messages']))}</pre></details>")
        return "".join(parts) + "</div>"
    if kind == "tool":
        cls = "tool" + (" error" if s.get("error") else "") + (" reread" if s.get("reread_of") else "")
        badges = []
        if s.get("cached"):
            badges.append("<span class='badge cached'>cache hit</span>")
        else:
            badges.append("<span class='badge'>computed</span>")
        if s.get("reread_of"):
            badges.append(f"<span class='badge failed'>re-read for {e(s['reread_of'])}</span>")
        body = (f"<div class='wrong'>error: {e(s['error'])}</div>" if s.get("error") else f"<div>{e(s.get('text'))}</div>")
        return (f'<div class="step {cls}" data-call="{e(s.get("call_id"))}" data-tool="{e(s.get("tool"))}">'
                f"<div class='head'>{e(s.get('call_id'))} <code>{e(s.get('tool'))}</code>[{e(s.get('backend'))}]"
                f"<span class='meta'>{float(s.get('elapsed') or 0):.3f}s</span> {' '.join(badges)}</div>"
                f"<div class='muted'>args: <code>{e(json.dumps(s.get('args', {}), ensure_ascii=False))}</code></div>"
                f"{body}<details><summary>result data</summary><pre>{e(jdump(s.get('data')))}</pre></details></div>")
    if kind == "conflict":
        rounds = "".join(f"<li>window {e(r.get('window'))}, {e(r.get('n_frames'))} frames, calls "
                         f"{e(', '.join(map(str, r.get('calls', []))))}: {e(json.dumps(r.get('values'), ensure_ascii=False, default=str))}</li>"
                         for r in s.get("rereads") or [])
        return (f'<div class="step conflict" data-conflict="{e(s.get("conflict_id"))}"><div class="head">conflict '
                f"{e(s.get('conflict_id'))}: {e(s.get('video'))} {e(s.get('attribute'))}({e(s.get('subject'))})"
                f"<span class='meta'>{e(s.get('status'))}</span></div>"
                f"<div>first reported: <code>{e(json.dumps(s.get('values'), ensure_ascii=False, default=str))}</code>"
                f" in window {e(s.get('window'))}</div>"
                f"<div>re-reads:<ul>{rounds or '<li>none</li>'}</ul></div>"
                f"<div>resolution: <strong>{e(json.dumps(s.get('resolution'), ensure_ascii=False, default=str))}</strong>"
                f" ({e(s.get('rule'))})</div></div>")
    if kind == "memory":
        return (f'<div class="step memory"><details><summary>memory after iteration {e(s.get("iteration"))}</summary>'
                f"<pre>{e(jdump(s.get('snapshot')))}</pre></details></div>")
    if kind == "final":
        return (f'<div class="step final" id="final-step"><div class="head">final answer {e(s.get("letter") or s.get("answer"))}'
                f"<span class='meta'>source: <span class='source'>{e(s.get('source'))}</span>"
                f"{' · forced' if s.get('forced') else ''}</span></div><div>{e(s.get('reason'))}</div></div>")
    if kind == "error":
        return f'<div class="step error"><div class="head">error</div><div>{e(s.get("message"))}</div></div>'
    return f"<div class='step'><pre>{e(jdump(s))}</pre></div>"


def question_page(q: Question, run: Run, thumbs: Thumbnailer | None, has_compare: bool) -> str:
    rec = q.record
    status = q.status
    body = [f"<h1>{e(q.id)} <span class='badge'>{e(q.task)} · {e(q.level)}</span> "
            f"<span class='badge {status}' id='status'>{e(status)}</span></h1>",
            f"<p id='question-text'>{e(q.doc.get('question', '(question text not in this run: pass --data)'))}</p>",
            _options_table(q),
            (f"<details><summary>prompt the model received</summary><pre>{e(q.doc['prompt'])}</pre></details>"
             if q.doc.get("prompt") else ""),
            "<h2>Decision</h2><table class='kv' id='decision'>"
            f"<tr><td>truth</td><td>{e(rec.get('answer'))}</td></tr>"
            f"<tr><td>predicted</td><td>{e(rec.get('parsed') if rec.get('parsed') is not None else '(none: unparsed)')}</td></tr>"
            f"<tr><td>raw output</td><td><code>{e(rec.get('raw_output'))}</code></td></tr>"
            f"<tr><td>answer source</td><td class='source'>{e(q.source)}</td></tr>"
            + (f"<tr><td>failed</td><td class='failed'>{e(rec.get('failed') or (q.trace or {}).get('failure'))}</td></tr>"
               if status == "failed" else "")]
    fin = q.final
    if fin:
        body.append(f"<tr><td>why</td><td>{e(fin.get('reason'))}</td></tr>")
    if q.trace is not None:
        tot = q.trace.get("totals") or {}
        body.append(f"<tr><td>trace</td><td><code>{e(q.trace_path)}</code> · {e(q.trace.get('elapsed'))}s · "
                    + e(", ".join(f"{k}={v}" for k, v in tot.items())) + "</td></tr>")
    body.append("</table>")
    body.append(_filmstrips(q, thumbs))
    if q.trace is not None:
        steps = q.steps
        body.append(f"<h2>Trace</h2><p class='muted'>{sum(1 for s in steps if s.get('kind') == 'planner')} planner turns, "
                    f"{q.tool_calls} tool calls, {q.conflicts} conflicts.</p><div id='steps'>"
                    + "".join(_step_html(s) for s in steps if s.get("kind") != "memory") + "</div>")
        mems = [s for s in steps if s.get("kind") == "memory"]
        if mems:
            body.append(f"<h2>Memory snapshot</h2><p class='muted'>after iteration {e(mems[-1].get('iteration'))} "
                        f"(the last of {len(mems)})</p><pre id='memory'>{e(jdump(mems[-1].get('snapshot')))}</pre>")
    return page(f"{q.id}", "".join(body), prefix="../", run_name=run.name, has_compare=has_compare)


# ----------------------------------------------------------------------------- compare

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
                "<th>B predicted</th><th>B source</th><th>flip</th></tr>")
    for code, items in by_task.items():
        body.append(f"<tr class='total'><td colspan=8>{e(code)}: {len(items)} flipped</td></tr>")
        for f in items:
            body.append(f'<tr class="flip" data-id="{e(f.id)}" data-direction="{f.direction}">'
                        f'<td><a href="q/{safe_name(f.id)}.html">{e(f.id)}</a></td><td>{e(f.task)}</td>'
                        f"<td>{e(f.a.record.get('answer'))}</td><td>{e(f.a.record.get('parsed'))}</td><td>{e(f.a.source)}</td>"
                        f"<td>{e(f.b.record.get('parsed'))}</td><td>{e(f.b.source)}</td>"
                        f"<td class='{'wrong' if f.direction == 'lost' else 'correct'}'>{f.direction}</td></tr>")
    body.append("</table>")
    return page(f"{a.name} vs {b.name}", "".join(body), here="compare", run_name=a.name, has_compare=True)


# ----------------------------------------------------------------------------- the site

def build_site(output_path: str | Path, out: str | Path, *, compare: str | Path | None = None,
               data: str | Path | None = None, thumbnails: bool = True, workers: int = 2,
               progress: bool = False) -> dict[str, Any]:
    """Build the site for one run (and a comparison with a second); returns counts and timings."""
    t0 = time.perf_counter()
    run = load_run(output_path, data=data)
    other = load_run(compare, data=data) if compare else None
    t_load = time.perf_counter() - t0
    site = Path(out)
    (site / "q").mkdir(parents=True, exist_ok=True)
    (site / "data").mkdir(exist_ok=True)
    (site / "assets").mkdir(exist_ok=True)
    for f in STATIC.iterdir():
        if f.suffix in (".css", ".js"):
            shutil.copyfile(f, site / "assets" / f.name)
    has_compare = other is not None
    (site / "index.html").write_text(run_page(run, site, has_compare), encoding="utf-8")
    index = {"run": run.name, "page_size": PAGE_SIZE, "tasks": _task_order({q.task for q in run.questions.values()}),
             "sources": _sources_order(run), "rows": index_rows(run)}
    (site / "data" / "index.js").write_text(
        "window.MVX_INDEX = " + json.dumps(index, ensure_ascii=True).replace("</", "<\\/") + ";\n", encoding="utf-8")
    (site / "questions.html").write_text(list_page(run, has_compare), encoding="utf-8")
    if other is not None:
        (site / "compare.html").write_text(compare_page(run, other, str(compare)), encoding="utf-8")
    t_pages = time.perf_counter() - t0
    thumbs = Thumbnailer(site) if thumbnails and run.is_agent else None

    def one(q: Question) -> None:
        (site / "q" / f"{safe_name(q.id)}.html").write_text(question_page(q, run, thumbs, has_compare), encoding="utf-8")

    qs = list(run.questions.values())
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(qs), desc="question pages", dynamic_ncols=True)
    with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
        for _ in pool.map(one, qs):
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return {"site": str(site), "questions": len(qs), "agent": run.is_agent, "thumbnails": thumbs.written if thumbs else 0,
            "flips": len(flips(run, other)) if other else None, "seconds": round(time.perf_counter() - t0, 3),
            "seconds_load": round(t_load, 3), "seconds_pages": round(t_pages, 3)}
