"""Peer multi-video benchmarks (CVBench, MVU-Eval, CrossVid) as data: one :class:`Benchmark` record each.

A benchmark here is a registry entry per sub-task (:class:`~mvx_tasks.task_spec.TaskSpec` with a
benchmark-specific code prefix: ``CVB_*``, ``MVU_*``, ``CXV_*``) plus a source mapping: where the
authors publish it (hub repo, cache folder), the environment variable naming a local copy, how one
of the authors' rows maps onto the canonical sample, how the authors label each video in the
prompt, the frame budget and how the paper aggregates. The loaders (:mod:`.data_peers`), the lmms-eval
hooks and generated task YAMLs (:mod:`.harness`, :mod:`.taskgen`), the VLMEvalKit dataset and the
leaderboard all read these records; nothing else keeps a list of peer benchmarks.

Schemas were checked against the authors' own loaders (Nov 2026):

* CVBench: the authors' lmms-eval fork (github.com/Hokhim2/CVBench, ``tasks/mvr/utils.py``) reads
  ``id, task_type, video_1..video_4, question, options, answer``; ``video_k`` is None when a group has
  fewer videos, paths are relative to the dataset folder, ``options`` a list of strings (``"A. ..."``
  or ``"Yes."/"No."``), ``answer`` a letter or Yes/No; 15 task types in three tiers.
* MVU-Eval: VLMEvalKit ``vlmeval/dataset/mvu_eval.py``: one JSON file ``{"0": {video_paths: [...],
  question, options: [...], ground_truth: "A", task}, ...}`` (hub ``MVU-Eval-Team/MVU-Eval-Data``,
  videos as mp4 or a zip unpacked flat), converted by VLMEvalKit to a TSV with ``video_paths``
  joined by ``;`` and ``options`` as a JSON string: both forms are read.
* CrossVid: the authors' release (github.com/chuntianli666/CrossVid, hub ``Chuntianli/CrossVid``):
  ``QA/<TASK>.json`` lists of ``{id, videos: [...], question, options: [...], answer}`` with
  ``videos/`` beside it; the task is the file name. Only the multi-video single-choice tasks (CC, NC)
  fit the one-letter multiple-choice schema; the others are skipped with the reason (see
  ``CROSSVID_UNSUPPORTED``).
"""
from __future__ import annotations

import json
import logging
import math
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from .schema_error import SchemaError
from .task_spec import TaskSpec

log = logging.getLogger(__name__)

Row = dict[str, Any]


@dataclass(frozen=True)
class Level:
    """A benchmark's sub-task group (a tier, dimension or category of its paper)."""

    code: str  # registry level, unique across benchmarks, e.g. "cvb_object"
    suffix: str  # harness group suffix: <task_prefix>_<suffix>
    title: str


@dataclass(frozen=True)
class Benchmark:
    """Everything that differs between multi-video benchmarks, in one place."""

    name: str  # shown on the leaderboard, e.g. "CVBench"
    key: str  # data-source name (``<key>_docs_<code>`` hooks, ``mvx-bench verify --benchmark``)
    task_prefix: str  # lmms-eval names: <prefix> (group), <prefix>_<suffix>, <prefix>_frames_...
    code_prefix: str  # sub-task codes are <code_prefix>_<SUFFIX>
    hub_repo: str
    cache_dir: str  # $HF_HOME/<cache_dir>, as lmms-eval caches video datasets
    env: str  # a local folder (canonical data.jsonl, or the authors' files) overrides the hub
    vlmeval_name: str
    header: str  # text item before each video: {n} the video's number (label "Video n"), {label}
    post_prompt: str
    aggregation: str  # "questions" (total correct / total) or "tasks" (mean of sub-task accuracies)
    n_questions: int  # in the full benchmark, as published
    n_videos: int
    levels: tuple[Level, ...]
    tasks: tuple[TaskSpec, ...]
    rows: Callable[[Path], Iterable[tuple[str, Row]]]  # the authors' annotation rows under a folder
    map_row: Callable[[Row, str], dict | None]  # one row -> canonical sample dict (None: skipped)
    source: str  # where the data comes from (README, errors)
    frames_per_video: int | None = None  # frames presentation: fixed frames per video ...
    total_frames: int | None = None  # ... or a total budget split evenly across the videos
    counts_note: str = ""  # what is (not) known about per-task counts
    expected_columns: str = ""

    @property
    def frames_group(self) -> str:
        return f"{self.task_prefix}_frames"

    def suffix(self, code: str) -> str:
        return code[len(self.code_prefix) + 1:].lower()

    def task_name(self, code: str, frames: bool = False) -> str:
        return f"{self.task_prefix}_{'frames_' if frames else ''}{self.suffix(code)}"

    def level_group(self, level: Level, frames: bool = False) -> str:
        return f"{self.task_prefix}_{'frames_' if frames else ''}{level.suffix}"

    def frames_for(self, n_videos: int) -> int:
        if self.total_frames:
            return max(1, self.total_frames // max(1, n_videos))
        return self.frames_per_video or 8

    def label(self, i: int) -> str:
        return f"Video {i}"


# ----------------------------------------------------------------------------- shared mapping helpers

_LETTERED = re.compile(r"^\s*\(?([A-Z])\s*[\.\):]\s*(.*?)\s*$", re.S)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def schema_error(bm_name: str, where: str, row: Row, problem: str, expected: str):
    found = sorted(str(k) for k in row if not str(k).startswith("_"))
    return SchemaError(f"cannot map {where} onto the {bm_name} schema: {problem}. Columns found: {found}. "
                       f"Expected: {expected}", sample_id=str(row.get("id")) if row.get("id") is not None else None,
                       fix="convert the data to data.jsonl in the canonical layout, or fix the column mapping "
                           "in mvx_tasks/benchmarks.py (one function per benchmark)")


def options_from_list(items: Any) -> dict[str, str]:
    """``["A. x", "B. y"]`` or ``["(A) x", ...]`` keep their letters; plain items get A, B, ... in order."""
    if isinstance(items, str):
        text = items.strip()
        items = json.loads(text) if text[:1] in "[{" else [ln for ln in text.splitlines() if ln.strip()]
    if isinstance(items, dict):
        return {str(k).strip("(). ").upper(): str(v).strip() for k, v in items.items()}
    items = [str(x).strip() for x in list(items)]
    lettered = [_LETTERED.match(x) for x in items]
    if items and all(lettered) and [m.group(1) for m in lettered] == list(string.ascii_uppercase[:len(items)]):
        return {m.group(1): m.group(2) for m in lettered}
    return {string.ascii_uppercase[i]: x for i, x in enumerate(items)}


def answer_letter(answer: Any, options: dict[str, str]) -> str | None:
    """The answer as an option letter: a letter, ``(B)``, ``B.``, or an option's text (``Yes``)."""
    text = str(answer).strip()
    key = text.strip("(). ").upper()
    if key in options:
        return key
    norm = text.strip(". ").lower()
    hits = [k for k, v in options.items() if v.strip(". ").lower() == norm]
    return hits[0] if len(hits) == 1 else None


def _code_by_name(names: dict[str, str], value: Any) -> str | None:
    norm = re.sub(r"[^a-z0-9]", "", str(value).lower())
    return names.get(norm)


def _name_index(tasks: Iterable[TaskSpec], extra: dict[str, str] | None = None) -> dict[str, str]:
    out = {}
    for t in tasks:
        for alias in (t.name, t.code, t.code.split("_", 1)[1]):
            out[re.sub(r"[^a-z0-9]", "", alias.lower())] = t.code
    for alias, code in (extra or {}).items():
        out[re.sub(r"[^a-z0-9]", "", alias.lower())] = code
    return out


def annotation_files(root: Path, suffixes=(".jsonl", ".json", ".parquet", ".csv", ".tsv")) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix.lower() in suffixes and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(root).parts))


def table_rows(files: Iterable[Path]) -> Iterator[tuple[str, Row]]:
    """Rows of jsonl / json (a list, ``{"data": [...]}`` or ``{"0": {...}}``) / parquet / csv / tsv files."""
    for f in files:
        suffix = f.suffix.lower()
        if suffix == ".jsonl":
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    yield f"{f}:{i}", json.loads(line)
        elif suffix == ".json":
            data = json.loads(f.read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("data"), list):
                data = data["data"]
            if isinstance(data, dict):  # {"0": {...}, "1": {...}}: the key is the question index
                for k, r in data.items():
                    if isinstance(r, dict):
                        yield f"{f}[{k}]", {"_key": k, **r}
            elif isinstance(data, list):
                for i, r in enumerate(data):
                    if isinstance(r, dict):
                        yield f"{f}[{i}]", r
        else:
            import pandas as pd

            df = (pd.read_parquet(f) if suffix == ".parquet" else
                  pd.read_csv(f, sep="\t" if suffix == ".tsv" else ","))
            for i, r in enumerate(df.to_dict(orient="records")):
                yield f"{f}[{i}]", r


def _as_list(value: Any) -> list:
    if hasattr(value, "tolist"):  # numpy arrays from parquet
        value = value.tolist()
    return list(value)


# ----------------------------------------------------------------------------- CVBench

CVB_LEVELS = (Level("cvb_object", "object", "Cross-video object association"),
              Level("cvb_event", "event", "Cross-video event association"),
              Level("cvb_complex", "complex", "Cross-video complex reasoning"))
_CVB = [  # (code, name as in the authors' task_type column, level); tiers from the paper's Tables 2-4
    ("CVB_COR", "Cross-video Object Recognition", "cvb_object"),
    ("CVB_MAR", "Multi-video Attribute Recognition", "cvb_object"),
    ("CVB_JC", "Joint-video Counting", "cvb_object"),
    ("CVB_CEM", "Cross-video Entity Matching", "cvb_object"),
    ("CVB_CAD", "Cross-video Anomaly Detection", "cvb_event"),
    ("CVB_CSR", "Cross-video Scene Recognition", "cvb_event"),
    ("CVB_MKAR", "Multi-video Key-Action Recognition", "cvb_event"),
    ("CVB_CER", "Cross-video Event Retrieval", "cvb_event"),
    ("CVB_MSU", "Multi-view Scene Understanding", "cvb_complex"),
    ("CVB_MTR", "Multi-video Temporal Reasoning", "cvb_complex"),
    ("CVB_JSN", "Joint-video Spatial Navigating", "cvb_complex"),
    ("CVB_VDC", "Video Difference Caption", "cvb_complex"),
    ("CVB_CCR", "Cross-video Counterfactual Reasoning", "cvb_complex"),
    ("CVB_JS", "Joint-video Summarization", "cvb_complex"),
    ("CVB_CPT", "Cross-video Procedural Transfer", "cvb_complex"),
]
# Per-task counts are not published (only the total, 1,000): n_questions 0 means "unknown".
# Options: one answer and three distractors, or Yes/No, mixed within tasks: n_options varies.
CVB_TASKS = tuple(TaskSpec(code, name, level, 0, None, 0.25, f"CVBench: {name}.", benchmark="CVBench")
                  for code, name, level in _CVB)
_CVB_NAMES = _name_index(CVB_TASKS, {"Cross-video Causal Reasoning": "CVB_CCR",
                                      "Joint-video Spatial Navigation": "CVB_JSN"})
CVB_COLUMNS = "id, task_type, video_1..video_4 (None when unused), question, options (list), answer"


def cvbench_rows(root: Path) -> Iterator[tuple[str, Row]]:
    return table_rows(annotation_files(root))


def cvbench_map_row(row: Row, where: str) -> dict:
    need = ["id", "task_type", "question", "options", "answer"]
    missing = [k for k in need if k not in row or _missing(row[k]) and k != "id"]
    videos = [(i, row.get(f"video_{i}")) for i in range(1, 5)]
    videos = [(i, str(v).strip()) for i, v in videos if not _missing(v)]
    if not videos:
        missing.append("video_1..video_4")
    if missing:
        raise schema_error("CVBench", where, row, f"no value for {', '.join(missing)}", CVB_COLUMNS)
    code = _code_by_name(_CVB_NAMES, row["task_type"])
    if code is None:
        raise schema_error("CVBench", where, row, f"unknown task_type {row['task_type']!r} (known: "
                           + ", ".join(t.name for t in CVB_TASKS) + ")", CVB_COLUMNS)
    options = options_from_list(_as_list(row["options"]) if not isinstance(row["options"], str) else row["options"])
    answer = answer_letter(row["answer"], options)
    if answer is None:
        raise schema_error("CVBench", where, row, f"answer {row['answer']!r} is neither an option letter nor an "
                           f"option's text ({options})", CVB_COLUMNS)
    return {"id": str(row["id"]), "task": code, "question": str(row["question"]).strip(), "options": options,
            "answer": answer, "videos": [{"label": f"Video {i}", "path": p} for i, p in videos],
            "meta": {"source": "CVBench", "task_type": str(row["task_type"])}}


# ----------------------------------------------------------------------------- MVU-Eval

MVU_LEVELS = (Level("mvu_perception", "perception", "Perception"),
              Level("mvu_reasoning", "reasoning", "Reasoning"))
_MVU = [  # the eight competencies of the MVU-Eval paper; the annotation's ``task`` column names them
    ("MVU_OR", "Object Recognition", "mvu_perception"),
    ("MVU_SU", "Spatial Understanding", "mvu_perception"),
    ("MVU_COUNT", "Counting", "mvu_perception"),
    ("MVU_COMP", "Comparison", "mvu_perception"),
    ("MVU_KIR", "Knowledge-Intensive Reasoning", "mvu_reasoning"),
    ("MVU_ICL", "In-Context Learning", "mvu_reasoning"),
    ("MVU_RAG", "Retrieval-Augmented Generation", "mvu_reasoning"),
    ("MVU_TR", "Temporal Reasoning", "mvu_reasoning"),
]
# Only the total (1,824 questions over 4,959 videos) is published here: n_questions 0 = unknown.
MVU_TASKS = tuple(TaskSpec(code, name, level, 0, None, 0.25, f"MVU-Eval: {name}.", benchmark="MVU-Eval")
                  for code, name, level in _MVU)
_MVU_NAMES = _name_index(MVU_TASKS, {"Knowledge Intensive Reasoning": "MVU_KIR", "KIR": "MVU_KIR",
                                      "ICL": "MVU_ICL", "RAG": "MVU_RAG", "Retrieval Augmented Generation": "MVU_RAG"})
MVU_COLUMNS = ("video_paths (list, or one ';'-joined string), question, options (list or JSON string), "
               "ground_truth (letter), task; the question index is the JSON key or an 'index' column")


def mvu_rows(root: Path) -> Iterator[tuple[str, Row]]:
    return table_rows(annotation_files(root, (".json", ".jsonl", ".tsv", ".parquet")))


def mvu_map_row(row: Row, where: str) -> dict:
    idx = row.get("_key", row.get("index", row.get("id")))
    missing = [k for k in ("video_paths", "question", "options", "ground_truth", "task") if _missing(row.get(k))
               and not (k == "video_paths" and hasattr(row.get(k), "__len__") and len(row.get(k)))]
    if idx is None:
        missing.append("index (JSON key)")
    if missing:
        raise schema_error("MVU-Eval", where, row, f"no value for {', '.join(missing)}", MVU_COLUMNS)
    code = _code_by_name(_MVU_NAMES, row["task"])
    if code is None:
        raise schema_error("MVU-Eval", where, row, f"unknown task {row['task']!r} (known: "
                           + ", ".join(t.name for t in MVU_TASKS) + ")", MVU_COLUMNS)
    paths = row["video_paths"]
    paths = [p.strip() for p in paths.split(";")] if isinstance(paths, str) else [str(p).strip() for p in _as_list(paths)]
    paths = [p if Path(p).suffix else p + ".mp4" for p in paths if p]
    options = options_from_list(row["options"] if isinstance(row["options"], str) else _as_list(row["options"]))
    answer = answer_letter(row["ground_truth"], options)
    if answer is None:
        raise schema_error("MVU-Eval", where, row, f"ground_truth {row['ground_truth']!r} is not an option letter "
                           f"({list(options)})", MVU_COLUMNS)
    return {"id": f"mvu-{idx}", "task": code, "question": str(row["question"]).strip(), "options": options,
            "answer": answer, "videos": [{"label": f"Video {i}", "path": p} for i, p in enumerate(paths, 1)],
            "meta": {"source": "MVU-Eval", "index": str(idx), "task_name": str(row["task"])}}


# ----------------------------------------------------------------------------- CrossVid

CXV_LEVELS = (Level("cxv_comparative", "comparative", "Comparative analysis"),)
CXV_TASKS = (  # per-task counts are not published (only the total, 9,015 over all ten tasks)
    TaskSpec("CXV_CC", "Cooking Comparison", "cxv_comparative", 0, None, 0.25,
             "CrossVid: which of four cooking videos differs / matches (single choice).", benchmark="CrossVid"),
    TaskSpec("CXV_NC", "Narrative Comprehension", "cxv_comparative", 0, None, 0.25,
             "CrossVid: a question across four movie clips (single choice).", benchmark="CrossVid"),
)
#: CrossVid tasks whose format the one-letter multiple-choice schema cannot hold (skipped with this reason).
CROSSVID_UNSUPPORTED = {
    "BU": "multiple-choice with 1-3 correct letters (scored as an exact set)",
    "PEA": "each video shown only between per-video begin/end times",
    "PI": "beginning and ending segments of one video",
    "PSS": "ordering segments of one video (answer is a sequence)",
    "FSA": "a time interval scored by IoU",
    "MSR": "drone frames with bounding boxes, not videos",
    "MOC": "drone frames with bounding boxes, not videos",
    "CCQA": "open-ended answers scored by an LLM judge",
}
CXV_COLUMNS = "QA/<TASK>.json: a list of {id, videos (list of paths under videos/), question, options (list), answer}"


def crossvid_rows(root: Path) -> Iterator[tuple[str, Row]]:
    files = [p for p in annotation_files(root, (".json",)) if p.parent.name == "QA"] or \
        [p for p in annotation_files(root, (".json",)) if p.stem.upper() in {t.code[4:] for t in CXV_TASKS}
         | set(CROSSVID_UNSUPPORTED)]
    for where, row in table_rows(files):
        yield where, {"_qa_file": Path(where.split("[")[0]).stem, **row}


def crossvid_map_row(row: Row, where: str) -> dict | None:
    task = str(row.get("_qa_file", "")).upper()
    if task in CROSSVID_UNSUPPORTED:
        return None
    code = f"CXV_{task}"
    if code not in {t.code for t in CXV_TASKS}:
        raise schema_error("CrossVid", where, row, f"unknown task file {task!r} (known: CC, NC; skipped: "
                           + ", ".join(CROSSVID_UNSUPPORTED) + ")", CXV_COLUMNS)
    missing = [k for k in ("id", "videos", "question", "options", "answer") if k not in row
               or (not isinstance(row[k], (list, tuple)) and _missing(row[k]))]
    if missing:
        raise schema_error("CrossVid", where, row, f"no value for {', '.join(missing)}", CXV_COLUMNS)
    options = options_from_list(_as_list(row["options"]))
    ans = row["answer"]
    ans = "".join(map(str, ans)) if isinstance(ans, (list, tuple)) else ans
    answer = answer_letter(ans, options)
    if answer is None:
        raise schema_error("CrossVid", where, row, f"answer {row['answer']!r} is not one option letter", CXV_COLUMNS)
    videos = [str(v) for v in _as_list(row["videos"])]
    videos = [v if v.startswith("videos/") else f"videos/{v}" for v in videos]
    return {"id": f"cxv-{task.lower()}-{row['id']}", "task": code, "question": str(row["question"]).strip(),
            "options": options, "answer": answer,
            "videos": [{"label": f"Video {i}", "path": p} for i, p in enumerate(videos, 1)],
            "meta": {"source": "CrossVid", "qa_file": task, "qa_id": str(row["id"])}}


# ----------------------------------------------------------------------------- the records

CVBENCH = Benchmark(
    name="CVBench", key="cvbench", task_prefix="cvbench_mv", code_prefix="CVB", hub_repo="Dongyh35/CVBench",
    cache_dir="cvbench_mv", env="CVBENCH_DATA", vlmeval_name="CVBench_MV",
    header="The video {n}.",  # the paper: "The video [video_index]." before each video's tokens
    post_prompt="Answer with the option's letter from the given choices directly.",
    aggregation="questions", n_questions=1000, n_videos=1315, levels=CVB_LEVELS, tasks=CVB_TASKS,
    rows=cvbench_rows, map_row=cvbench_map_row, frames_per_video=8,
    source="hub dataset Dongyh35/CVBench (paper: CVBench, Zhu et al. 2025; code github.com/Hokhim2/CVBench)",
    counts_note="1,000 questions over 1,315 videos in 15 tasks; per-task counts are not published",
    expected_columns=CVB_COLUMNS)

MVU_EVAL = Benchmark(
    name="MVU-Eval", key="mvu_eval", task_prefix="mvu_eval_mv", code_prefix="MVU",
    hub_repo="MVU-Eval-Team/MVU-Eval-Data", cache_dir="mvu_eval_mv", env="MVU_EVAL_DATA", vlmeval_name="MVU_Eval_MV",
    header="The following is the Video {n}",  # VLMEvalKit's mvu_eval.py
    post_prompt="Please select the correct answer from the options. Answer with the option's letter directly.",
    aggregation="questions", n_questions=1824, n_videos=4959, levels=MVU_LEVELS, tasks=MVU_TASKS,
    rows=mvu_rows, map_row=mvu_map_row, frames_per_video=16,
    source="hub dataset MVU-Eval-Team/MVU-Eval-Data (VLMEvalKit's MVU-Eval loader reads the same files)",
    counts_note="1,824 questions over 4,959 videos in 8 tasks; per-task counts are not published",
    expected_columns=MVU_COLUMNS)

CROSSVID = Benchmark(
    name="CrossVid", key="crossvid", task_prefix="crossvid", code_prefix="CXV", hub_repo="Chuntianli/CrossVid",
    cache_dir="crossvid", env="CROSSVID_DATA", vlmeval_name="CrossVid_MV",
    header="Video {n}:",  # the authors' eval scripts
    post_prompt="Select one answer choice, and only output the capital letter of your choice.",
    aggregation="tasks", n_questions=9015, n_videos=5331, levels=CXV_LEVELS, tasks=CXV_TASKS,
    rows=crossvid_rows, map_row=crossvid_map_row, total_frames=128,
    source="the authors' release: hub dataset Chuntianli/CrossVid (QA/*.json + videos/), github.com/chuntianli666/CrossVid",
    counts_note="9,015 questions over 5,331 videos in 10 tasks (all formats); per-task counts are not published; "
                "CC and NC are run here",
    expected_columns=CXV_COLUMNS)

PEERS: tuple[Benchmark, ...] = (CVBENCH, MVU_EVAL, CROSSVID)


def get_benchmark(name: str) -> Benchmark:
    """A peer benchmark by key, name, task prefix or VLMEvalKit name (case-insensitive)."""
    norm = re.sub(r"[^a-z0-9]", "", str(name).lower())
    for bm in PEERS:
        if norm in {re.sub(r"[^a-z0-9]", "", x.lower()) for x in (bm.key, bm.name, bm.task_prefix, bm.vlmeval_name)}:
            return bm
    raise KeyError(f"unknown benchmark {name!r}; known: MVX-Bench, " + ", ".join(b.name for b in PEERS))


def task_of_harness_name(task_name: str) -> tuple[str, str] | None:
    """(benchmark, code) of a per-task lmms-eval name of a peer (``cvbench_mv_frames_cor``); None otherwise."""
    for bm in PEERS:
        for spec in bm.tasks:
            if task_name in (bm.task_name(spec.code), bm.task_name(spec.code, frames=True)):
                return bm.name, spec.code
    return None
