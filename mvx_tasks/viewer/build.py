"""Collect one evaluation into plain data: lmms-eval results + samples files + SAMA traces.

A *run* is the newest ``*_results.json`` under an output folder, its ``*_samples_<task>.jsonl``
files (one ``mvx_acc`` record per question) and, for SAMA, one trace per question (found through
the ``trace_dir`` model argument, else any ``sama_traces/`` folder next to the results). Any
lmms-eval model's run works; without traces the agent parts are simply absent.

Which frames a tool looked at comes from the trace: a tool step's arguments name the videos
(``video``, ``video_a`` ...) and the window (``start``/``end``); its result data records the
timestamps (``frame_times``, scene-graph ``frames[].t``) or, for results that do not, the
number of frames sampled uniformly over the window (``frames_used`` / ``n_frames``), which is
resolved against the decoded clip at build time.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..leaderboard.runs import load_lmms_run, parse_model_args, task_code
from ..metrics import summarize
from ..registry import UnknownTaskError, get_task

#: argument names a tool uses for videos (the tools' ``video_args``); windows are ``start``/``end``
VIDEO_ARGS = ("video", "video_a", "video_b", "next_video")
DEFAULT_N_FRAMES = 8  # what a tool samples when its result does not say


@dataclass
class FrameRequest:
    """What one tool call looked at in one video: explicit timestamps, or n frames over a window."""

    call_id: str
    tool: str
    times: list[float] | None = None
    window: tuple[float | None, float | None] = (None, None)
    n: int = DEFAULT_N_FRAMES


@dataclass
class Question:
    """One question of a run, with everything its page and its list row show."""

    id: str
    task: str
    record: dict[str, Any]
    doc: dict[str, Any] = field(default_factory=dict)  # question, options, videos, root (trace or samples doc)
    trace: dict[str, Any] | None = None
    trace_path: str | None = None

    @property
    def status(self) -> str:
        if self.record.get("failed") or (self.trace or {}).get("status") == "failed":
            return "failed"
        return "correct" if self.record.get("correct") else "wrong"

    @property
    def level(self) -> str:
        try:
            return get_task(self.task).level
        except UnknownTaskError:
            return "?"

    @property
    def steps(self) -> list[dict[str, Any]]:
        return list((self.trace or {}).get("steps") or [])

    @property
    def final(self) -> dict[str, Any] | None:
        return next((s for s in reversed(self.steps) if s.get("kind") == "final"), None)

    @property
    def source(self) -> str:
        """Where the answer came from: the trace's final step (planner, planner-forced,
        evidence-fallback, first-option-rule), ``failed`` for a trace without one, ``model`` for a baseline."""
        if self.trace is None:
            return "model"
        fin = self.final
        return str(fin.get("source")) if fin else "failed"

    @property
    def fragile(self) -> bool | None:
        """Whether the agent marked its answer fragile, a small change of its evidence would change it (the
        trace's final step records it as ``fragile``); None without a trace."""
        if self.trace is None:
            return None
        fin = self.final
        return bool(fin and fin.get("fragile"))

    @property
    def tool_calls(self) -> int:
        return sum(1 for s in self.steps if s.get("kind") == "tool")

    @property
    def conflicts(self) -> int:
        return sum(1 for s in self.steps if s.get("kind") == "conflict")

    @property
    def elapsed(self) -> float | None:
        e = (self.trace or {}).get("elapsed")
        return float(e) if isinstance(e, (int, float)) else None

    @property
    def tokens(self) -> int:
        tot = (self.trace or {}).get("totals") or {}
        if isinstance(tot.get("tokens"), int):  # every source (planner and endpoint backends)
            return int(tot["tokens"])
        return int(tot.get("prompt_tokens") or 0) + int(tot.get("completion_tokens") or 0)

    @property
    def cost(self) -> float | None:
        tot = (self.trace or {}).get("totals") or {}
        c = tot.get("cost_usd", tot.get("cost"))  # dollars priced by sama_model/pricing.py
        return float(c) if isinstance(c, (int, float)) else None

    def videos(self) -> list[dict[str, Any]]:
        return list(self.doc.get("videos") or [])

    def video_path(self, label: str) -> Path | None:
        """Absolute path of a video of this question (paths are relative to the question's root)."""
        for v in self.videos():
            if v.get("label") == label:
                p = Path(str(v.get("path", "")))
                root = self.doc.get("root")
                if not p.is_absolute() and root:
                    p = Path(root) / p
                return p
        return None

    def frame_requests(self) -> dict[str, list[FrameRequest]]:
        """Per video label, what each tool call looked at (errored calls looked at nothing)."""
        labels = [v.get("label") for v in self.videos()]
        out: dict[str, list[FrameRequest]] = {lb: [] for lb in labels}
        for s in self.steps:
            if s.get("kind") != "tool" or s.get("error"):
                continue
            args, data = s.get("args") or {}, s.get("data") or {}
            for key in VIDEO_ARGS:
                label = args.get(key)
                if label not in out:
                    continue
                req = tool_frames(s, key, data, args)
                if req is not None:
                    out[label].append(req)
        return out


def _floats(values: Any) -> list[float] | None:
    if not isinstance(values, list):
        return None
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError):
        return None


def tool_frames(step: dict[str, Any], key: str, data: dict[str, Any], args: dict[str, Any]) -> FrameRequest | None:
    """What a tool call looked at in the video passed as argument ``key``."""
    suffix = {"video_a": "_a", "video_b": "_b", "next_video": "_next"}.get(key, "")
    tool = str(step.get("tool", ""))
    if tool == "subtitle_retriever":
        return None  # reads the subtitle file, not frames
    times = _floats(data.get("frame_times" + suffix))
    if times is None and not suffix and isinstance(data.get("frames"), list):
        times = _floats([f.get("t") for f in data["frames"] if isinstance(f, dict)])
    win = data.get("window" + suffix) if suffix else data.get("window")
    if isinstance(win, list) and len(win) == 2:
        window = (win[0], win[1])
    else:
        window = (args.get("start"), args.get("end"))
    n = data.get("frames_used") if not suffix else data.get("frames_used" + suffix)
    if not isinstance(n, int) or n <= 0:
        n = args.get("n_frames") if isinstance(args.get("n_frames"), int) else DEFAULT_N_FRAMES
    return FrameRequest(call_id=str(step.get("call_id", "")), tool=tool, times=times, window=window, n=int(n))


@dataclass
class Run:
    """One evaluation: its results file, per-question records and (for SAMA) traces."""

    path: str  # the results file
    name: str
    model: str
    model_args: dict[str, str]
    benchmark: str
    results: dict[str, Any]  # the results json as lmms-eval wrote it
    questions: dict[str, Question]
    trace_dirs: list[str] = field(default_factory=list)

    @property
    def is_agent(self) -> bool:
        return any(q.trace is not None for q in self.questions.values())

    @property
    def records(self) -> list[dict[str, Any]]:
        return [q.record for q in self.questions.values()]

    def summary(self):
        return summarize(self.records)

    def config_rows(self) -> list[tuple[str, str]]:
        cfg = self.results.get("config") or {}
        rows = [("results file", self.path), ("model", self.model), ("benchmark", self.benchmark)]
        rows += [(f"model_args.{k}", v) for k, v in self.model_args.items()]
        for k in ("batch_size", "limit", "gen_kwargs", "random_seed", "numpy_seed", "torch_seed"):
            if cfg.get(k) not in (None, "", {}):
                rows.append((k, json.dumps(cfg[k]) if not isinstance(cfg[k], str) else cfg[k]))
        for k in ("date", "lmms_eval_version", "total_evaluation_time_seconds", "model_name"):
            v = self.results.get(k)
            if v not in (None, ""):
                rows.append((k, str(v)))
        if self.trace_dirs:
            rows.append(("SAMA traces", ", ".join(self.trace_dirs)))
            tcfg = next((q.trace.get("config") for q in self.questions.values() if q.trace), None) or {}
            for k in ("planner", "model", "skills", "conflict", "aggregation", "motion", "max_iterations", "workers"):
                if k in tcfg:
                    rows.append((f"agent.{k}", str(tcfg[k])))
        return rows

    def sources(self, task: str | None = None) -> Counter:
        return Counter(q.source for q in self.questions.values() if task is None or q.task == task)

    def totals(self) -> dict[str, Any]:
        """Tokens, cost and time per question over the run (None where nothing recorded them)."""
        qs = list(self.questions.values())
        times = [q.elapsed for q in qs if q.elapsed is not None]
        tokens = sum(q.tokens for q in qs)
        costs = [q.cost for q in qs if q.cost is not None]
        out: dict[str, Any] = {"questions": len(qs), "tokens": tokens or None, "cost": sum(costs) if costs else None,
                               "time_per_question": (sum(times) / len(times)) if times else None,
                               "tool_calls": sum(q.tool_calls for q in qs), "conflicts": sum(q.conflicts for q in qs)}
        if out["time_per_question"] is None:
            total = self.results.get("total_evaluation_time_seconds")
            try:
                out["time_per_question"] = float(total) / len(qs) if qs and total is not None else None
                out["time_is_wall"] = out["time_per_question"] is not None
            except (TypeError, ValueError):
                pass
        return out


# ----------------------------------------------------------------------------- finding files

def find_results(output_path: str | Path) -> Path:
    """The newest ``*_results.json`` under an lmms-eval output folder (or the file itself)."""
    p = Path(output_path)
    if p.is_file():
        return p
    found = sorted(p.rglob("*_results.json"), key=lambda f: (f.stat().st_mtime, f.name))
    if not found:
        raise FileNotFoundError(f"no lmms-eval *_results.json under {p}; pass the --output_path of an "
                                f"lmms-eval run made with --log_samples")
    return found[-1]


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _trace_dirs(results_file: Path, root: Path, model_args: dict[str, str]) -> list[Path]:
    """Folders holding this run's traces: ``trace_dir=`` if given, else ``sama_traces/*`` nearby."""
    if model_args.get("trace_dir"):
        d = Path(model_args["trace_dir"])
        if not d.is_absolute():
            d = results_file.parent / d if not d.exists() else d
        return [d] if d.is_dir() else []
    dirs: list[Path] = []
    for folder in [results_file.parent, *results_file.parents]:
        cand = folder / "sama_traces"
        if cand.is_dir():
            dirs += sorted(d for d in cand.iterdir() if d.is_dir()) or [cand]
            break
        if folder == root or folder == folder.parent:
            break
    return dirs


def load_traces(dirs: Iterable[Path], wanted: set[str] | None = None) -> dict[str, tuple[dict, Path]]:
    """Traces by question id (the newest file wins when several folders hold one)."""
    out: dict[str, tuple[dict, Path, float]] = {}
    for d in dirs:
        for f in sorted(Path(d).glob("*.json")):
            try:
                t = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(t, dict) or "steps" not in t:
                continue
            qid = str((t.get("question") or {}).get("id", ""))
            if not qid or (wanted is not None and qid not in wanted):
                continue
            mtime = f.stat().st_mtime
            if qid not in out or mtime > out[qid][2]:
                out[qid] = (t, f, mtime)
    return {k: (v[0], v[1]) for k, v in out.items()}


def _doc_from_sample(line: dict) -> dict[str, Any]:
    """Question, options, videos and root from a samples line's ``doc`` (when lmms-eval kept it)."""
    doc = line.get("doc")
    if not isinstance(doc, dict):
        return {}

    def obj(v: Any) -> Any:
        if isinstance(v, str) and v[:1] in "[{":
            try:
                return json.loads(v)
            except ValueError:
                return v
        return v

    out = {k: obj(doc[k]) for k in ("id", "task", "question", "options", "videos", "root") if k in doc}
    return out if isinstance(out.get("videos", []), list) else {}


def _doc_from_prompt(prompt: Any) -> dict[str, Any]:
    """Question text and options from the prompt lmms-eval logged (``input``) when the doc is absent."""
    if not isinstance(prompt, str) or not prompt.strip():
        return {}
    head, _, tail = prompt.partition("\nOptions:\n")
    options = {}
    for line in tail.splitlines():
        m = re.match(r"^\(?([A-H])[.)]\s+(.*)$", line.strip())
        if m:
            options[m.group(1)] = m.group(2)
        elif options:
            break
    return {"question": head.strip(), "options": options, "prompt": prompt}


def load_data_docs(folder: str | Path | None) -> dict[str, dict]:
    """Questions of a canonical data folder by id (for baseline runs whose samples lack the doc)."""
    if not folder:
        return {}
    folder = Path(folder)
    f = folder / "data.jsonl" if folder.is_dir() else folder
    if not f.is_file():
        return {}
    out = {}
    for row in _read_jsonl(f):
        out[str(row.get("id"))] = {"question": row.get("question", ""), "options": row.get("options", {}),
                                   "videos": row.get("videos", []), "root": str(f.parent.resolve())}
    return out


def load_run(output_path: str | Path, *, data: str | Path | None = None) -> Run:
    """Read one lmms-eval run (any model) and, for SAMA, its traces."""
    root = Path(output_path)
    rf = find_results(root)
    base = load_lmms_run(rf, root if root.is_dir() else None)  # per-task figures and mvx_acc records
    results = json.loads(rf.read_text(encoding="utf-8"))
    stamp = rf.name[: -len("_results.json")]
    margs = parse_model_args((results.get("config") or {}).get("model_args"))
    docs: dict[str, dict] = {}
    records: list[dict] = []
    for task in (results.get("results") or {}):
        if task_code(task) is None:
            continue
        samples = rf.parent / f"{stamp}_samples_{task}.jsonl"
        if not samples.is_file():
            continue
        for line in _read_jsonl(samples):
            rec = line.get("mvx_acc")
            if not isinstance(rec, dict):
                continue
            records.append(rec)
            d = _doc_from_sample(line) or _doc_from_prompt(line.get("input"))
            if d:
                docs[str(rec["id"])] = d
    if not records:
        records = list(base.records)
    extra = load_data_docs(data)
    dirs = _trace_dirs(rf, root, margs)
    ids = {str(r["id"]) for r in records}
    traces = load_traces(dirs, ids)
    questions: dict[str, Question] = {}
    for rec in records:
        qid = str(rec["id"])
        # what the samples line says, then the trace's question, then the data folder: later wins
        doc = dict(docs.get(qid) or {})
        t, tp = traces.get(qid, (None, None))
        if t is not None:
            tq = t.get("question") or {}
            doc.update({k: tq[k] for k in ("question", "options", "videos", "root") if tq.get(k)})
        doc.update(extra.get(qid) or {})
        questions[qid] = Question(id=qid, task=str(rec.get("task", "?")), record=rec, doc=doc, trace=t,
                                  trace_path=str(tp) if tp else None)
    name = base.name
    return Run(path=str(rf), name=name, model=base.model, model_args=margs, benchmark=base.benchmark,
               results=results, questions=questions, trace_dirs=[str(d) for d in dirs if any(
                   q.trace_path and Path(q.trace_path).parent == d for q in questions.values())])


# ----------------------------------------------------------------------------- compare

@dataclass
class Flip:
    id: str
    task: str
    a: Question
    b: Question

    @property
    def direction(self) -> str:
        """``lost``: right in the first run, wrong in the second; ``gained``: the reverse."""
        return "lost" if self.a.record.get("correct") else "gained"


def flips(a: Run, b: Run) -> list[Flip]:
    """Questions answered right in one run and wrong in the other (ids in both runs), by task then id."""
    out = []
    for qid, qa in a.questions.items():
        qb = b.questions.get(qid)
        if qb is not None and bool(qa.record.get("correct")) != bool(qb.record.get("correct")):
            out.append(Flip(qid, qa.task, qa, qb))
    order = {c: i for i, c in enumerate(_task_order([f.task for f in out]))}
    return sorted(out, key=lambda f: (order.get(f.task, 99), f.id))


def _task_order(codes: Iterable[str]) -> list[str]:
    from ..registry import all_tasks

    known = [t.code for t in all_tasks()]
    codes = set(codes)
    return [c for c in known if c in codes] + sorted(codes - set(known))


def safe_name(qid: str) -> str:
    """A file-name-safe, collision-free stem for a question id."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", qid)[:100] or "q"
    if safe != qid:
        import hashlib

        safe += "-" + hashlib.sha1(qid.encode()).hexdigest()[:8]
    return safe
