"""One question's page: options, decision, filmstrips of the frames the tools looked at, the trace's
steps and the last memory snapshot."""
from __future__ import annotations

import json
from typing import Any

from .build import Question, Run
from .markup import e, jdump, page
from .thumbnails import Thumbnailer
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
