"""Peer multi-video benchmarks (CVBench, MVU-Eval, CrossVid) as data: one :class:`Benchmark` record each.

A benchmark here is a registry entry per sub-task (:class:`~mvx_tasks.registry.TaskSpec` with a
benchmark-specific code prefix: ``CVB_*``, ``MVU_*``, ``CXV_*``, and the published question count of
each) plus a source mapping: where the authors publish it (hub repo, the files of each published
form, :class:`Release`), the environment variable naming a local copy, how one of the authors' rows
maps onto the canonical sample, how the authors label each video in the prompt, the frame budget and
how the paper aggregates. The loaders (:mod:`.data_peers`, :mod:`.data_release`), the lmms-eval hooks
and generated task YAMLs (:mod:`.harness`, :mod:`.taskgen`), the VLMEvalKit dataset and the
leaderboard all read these records; nothing else keeps a list of peer benchmarks. docs/benchmarks.md
tabulates them.

Schemas were checked against the authors' own files and loaders:

* CVBench: the authors' repository (github.com/Hokhim2/CVBench) publishes the 1,000-row annotation
  file ``Video-R1/src/r1-v/Evaluation/CVBench.json`` (videos beside it in ``CVBench/<group>/<file>``)
  and, for their lmms-eval fork (``tasks/mvr``), a ``datasets`` ``save_to_disk`` folder
  (``mvr_dataset/``); rows are ``id, task_type, video_1..video_4, question, options, answer``;
  ``video_k`` is None when a group has fewer videos, ``options`` a list of strings (``"A. ..."``,
  ``"Yes."/"No."``), ``answer`` a letter or the word Yes/No. Row 996 holds its four options joined
  into one string (repaired here, and reported).
* MVU-Eval: VLMEvalKit ``vlmeval/dataset/mvu_eval.py``: one JSON file ``{"0": {video_paths: [...],
  question, options: [...], ground_truth: "A", task}, ...}`` (hub ``MVU-Eval-Team/MVU-Eval-Data``,
  videos as mp4 or a zip unpacked flat), which VLMEvalKit converts to ``mvu_eval.tsv`` beside it
  (``video_paths`` joined by ``;``, ``options`` a JSON string); the authors' own script
  (github.com/NJU-LINK/MVU-Eval, ``inference/main.py``) reads a list of such rows with ``QA_index``.
* CrossVid: the authors' release (github.com/chuntianli666/CrossVid, hub ``Chuntianli/CrossVid``):
  ``QA/<TASK>.json`` lists of ``{id, videos: [...], question, options: [...], answer}`` with video
  paths relative to ``videos/``; the task is the file name. Only the multi-video single-choice tasks
  (CC, NC) fit the one-letter multiple-choice schema; the others are not read (see
  ``CROSSVID_UNSUPPORTED``), and scores are labelled "CrossVid CC+NC".
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from .task_spec import TaskSpec
from .row_mapping import (Row, answer_letter, as_list, checked_options, code_by_name, missing_value, name_index,
                          schema_error)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Level:
    """A benchmark's sub-task group (a tier, dimension or category of its paper)."""

    code: str  # registry level, unique across benchmarks, e.g. "cvb_object"
    suffix: str  # harness group suffix: <task_prefix>_<suffix>
    title: str


@dataclass(frozen=True)
class Release:
    """One form in which a benchmark's questions are published, and exactly the files it names.

    A loader reads the first release of a record whose patterns match files under the dataset folder,
    and nothing else: a stray output, a config or a second copy of the questions in another format
    beside it is listed as not read, never read as questions."""

    what: str  # where this form comes from, for messages and docs/benchmarks.md
    patterns: tuple[str, ...]  # globs relative to the dataset folder
    videos: tuple[str, ...] = ("",)  # folders (in the dataset folder) the rows' video paths are relative to
    arrow: bool = False  # a ``datasets`` save_to_disk folder: the pattern names its dataset_dict.json / state.json
    single: bool = False  # one annotation file: several matches are an error, not a union


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
    n_questions: int  # in the full benchmark, as published (every task of the paper, run here or not)
    n_videos: int
    levels: tuple[Level, ...]
    tasks: tuple[TaskSpec, ...]
    releases: tuple[Release, ...]  # the published forms, in the order they are looked for
    map_row: Callable[[Row, str], dict]  # one row -> canonical sample dict (raises SchemaError)
    source: str  # where the data comes from (README, errors)
    paper_tasks: tuple[str, ...] = ()  # every task code of the paper (the label says which of them ran)
    frames_per_video: int | None = None  # frames presentation: fixed frames per video ...
    total_frames: int | None = None  # ... or a total budget split evenly across the videos
    counts_note: str = ""  # where the per-task counts come from, and what is not published
    expected_columns: str = ""
    hub_patterns: tuple[str, ...] | None = None  # what the hub fetch downloads (None: the whole snapshot)
    protocol_note: str = ""  # how running it here differs from the authors' protocol

    @property
    def frames_group(self) -> str:
        return f"{self.task_prefix}_frames"

    @property
    def display_name(self) -> str:
        """The name a score on the tasks run here carries: "CrossVid CC+NC" where the paper has more tasks."""
        return self.scope_name(t.code for t in self.tasks)

    def scope_name(self, codes: Iterable[str]) -> str:
        """The benchmark's name, followed by the tasks that ran when they are not all of the paper's."""
        codes = set(codes)
        ran = [t for t in self.tasks if t.code in codes]
        paper = set(self.paper_tasks) or {self.suffix(t.code).upper() for t in self.tasks}
        names = [self.suffix(t.code).upper() for t in ran]
        return self.name if set(names) >= paper else f"{self.name} {'+'.join(names)}"

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

    def published_counts(self) -> dict[str, int]:
        """Per-task question counts as published (tasks whose count is not published are left out)."""
        return {t.code: t.n_questions for t in self.tasks if t.n_questions}


# ----------------------------------------------------------------------------- CVBench

CVB_LEVELS = (Level("cvb_object", "object", "Cross-video object association"),
              Level("cvb_event", "event", "Cross-video event association"),
              Level("cvb_complex", "complex", "Cross-video complex reasoning"))
_CVB = [  # (code, name as in the authors' task_type column, level, questions in the released file, chance)
    # counts: the released CVBench.json (the paper's Tables 2-4 print CAD 83 and CEM 75, the file has 84
    # and 74; every other count agrees); chance: the mean of 1/options over that task's questions in it
    ("CVB_COR", "Cross-video Object Recognition", "cvb_object", 68, 0.254),
    ("CVB_MAR", "Multi-video Attribute Recognition", "cvb_object", 46, 0.261),
    ("CVB_JC", "Joint-video Counting", "cvb_object", 60, 0.25),
    ("CVB_CEM", "Cross-video Entity Matching", "cvb_object", 74, 0.277),
    ("CVB_CAD", "Cross-video Anomaly Detection", "cvb_event", 84, 0.253),
    ("CVB_CSR", "Cross-video Scene Recognition", "cvb_event", 149, 0.455),
    ("CVB_MKAR", "Multi-video Key-Action Recognition", "cvb_event", 88, 0.25),
    ("CVB_CER", "Cross-video Event Retrieval", "cvb_event", 49, 0.25),
    ("CVB_MSU", "Multi-view Scene Understanding", "cvb_complex", 55, 0.25),
    ("CVB_MTR", "Multi-video Temporal Reasoning", "cvb_complex", 75, 0.257),
    ("CVB_JSN", "Joint-video Spatial Navigating", "cvb_complex", 42, 0.262),
    ("CVB_VDC", "Video Difference Caption", "cvb_complex", 55, 0.25),
    ("CVB_CCR", "Cross-video Counterfactual Reasoning", "cvb_complex", 52, 0.255),
    ("CVB_JS", "Joint-video Summarization", "cvb_complex", 52, 0.25),
    ("CVB_CPT", "Cross-video Procedural Transfer", "cvb_complex", 51, 0.25),
]
# Options: one answer and three distractors, or Yes/No, mixed within tasks: n_options varies, and
# chance is computed per question (1 / options) wherever it is shown.
CVB_TASKS = tuple(TaskSpec(code, name, level, n, None, chance, f"CVBench: {name}.", benchmark="CVBench")
                  for code, name, level, n, chance in _CVB)
_CVB_NAMES = name_index(CVB_TASKS, {"Cross-video Causal Reasoning": "CVB_CCR",
                                      "Joint-video Spatial Navigation": "CVB_JSN"})
CVB_COLUMNS = "id, task_type, video_1..video_4 (None when unused), question, options (list), answer"
CVB_RELEASES = (
    Release("the authors' repository file Video-R1/src/r1-v/Evaluation/CVBench.json (videos in CVBench/<group>/)",
            ("CVBench.json",), videos=("CVBench", ""), single=True),
    Release("the authors' save_to_disk folder mvr_dataset/ (their lmms-eval fork's tasks/mvr)",
            ("dataset_dict.json", "mvr_dataset/dataset_dict.json", "state.json"), videos=("", "CVBench"), arrow=True),
    Release("the hub dataset's parquet shards (Dongyh35/CVBench)", ("data/*.parquet", "*.parquet"),
            videos=("", "videos", "CVBench")),
)


def cvbench_map_row(row: Row, where: str) -> dict:
    need = ["id", "task_type", "question", "options", "answer"]
    missing = [k for k in need if k not in row or missing_value(row[k]) and k != "id"]
    videos = [(i, row.get(f"video_{i}")) for i in range(1, 5)]
    videos = [(i, str(v).strip()) for i, v in videos if not missing_value(v)]
    if not videos:
        missing.append("video_1..video_4")
    if missing:
        raise schema_error("CVBench", where, row, f"no value for {', '.join(missing)}", CVB_COLUMNS)
    code = code_by_name(_CVB_NAMES, row["task_type"])
    if code is None:
        raise schema_error("CVBench", where, row, f"unknown task_type {row['task_type']!r} (known: "
                           + ", ".join(t.name for t in CVB_TASKS) + ")", CVB_COLUMNS)
    options, repairs = checked_options("CVBench", where, row, row["options"], CVB_COLUMNS)
    answer = answer_letter(row["answer"], options)
    if answer is None:
        raise schema_error("CVBench", where, row, f"answer {row['answer']!r} is neither an option letter nor an "
                           f"option's text ({options})", CVB_COLUMNS)
    meta = {"source": "CVBench", "task_type": str(row["task_type"])}
    if repairs:
        meta["repairs"] = repairs
    return {"id": str(row["id"]), "task": code, "question": str(row["question"]).strip(), "options": options,
            "answer": answer, "videos": [{"label": f"Video {i}", "path": p} for i, p in videos], "meta": meta}


# ----------------------------------------------------------------------------- MVU-Eval

MVU_LEVELS = (Level("mvu_perception", "perception", "Perception"),
              Level("mvu_reasoning", "reasoning", "Reasoning"))
_MVU = [  # the eight competencies of the MVU-Eval paper and their published question counts (1,824 in all)
    ("MVU_OR", "Object Recognition", "mvu_perception", 126),
    ("MVU_SU", "Spatial Understanding", "mvu_perception", 179),
    ("MVU_COUNT", "Counting", "mvu_perception", 227),
    ("MVU_COMP", "Comparison", "mvu_perception", 135),
    ("MVU_KIR", "Knowledge-Intensive Reasoning", "mvu_reasoning", 281),
    ("MVU_ICL", "In-Context Learning", "mvu_reasoning", 164),
    ("MVU_RAG", "Retrieval-Augmented Generation", "mvu_reasoning", 339),
    ("MVU_TR", "Temporal Reasoning", "mvu_reasoning", 373),
]
# 2 to 11 options per question: the registry's 0.25 is only a fallback for records written before
# chance was recorded per question (1 / options).
MVU_TASKS = tuple(TaskSpec(code, name, level, n, None, 0.25, f"MVU-Eval: {name}.", benchmark="MVU-Eval")
                  for code, name, level, n in _MVU)
_MVU_NAMES = name_index(MVU_TASKS, {"Knowledge Intensive Reasoning": "MVU_KIR", "KIR": "MVU_KIR",
                                      "ICL": "MVU_ICL", "RAG": "MVU_RAG", "Retrieval Augmented Generation": "MVU_RAG",
                                      "OR": "MVU_OR", "SU": "MVU_SU", "TR": "MVU_TR", "Spatial": "MVU_SU",
                                      "Temporal": "MVU_TR"})
MVU_COLUMNS = ("video_paths (list, or one ';'-joined string), question, options (list or JSON string), "
               "ground_truth (letter), task; the question index is the JSON key, 'QA_index' or an 'index' column")
MVU_RELEASES = (
    Release("the hub annotation JSON (MVU-Eval-Team/MVU-Eval-Data), one file at the folder's top",
            ("*.json",), videos=("", "video", "videos"), single=True),
    Release("VLMEvalKit's conversion mvu_eval.tsv (read only where the JSON is absent)", ("mvu_eval.tsv",),
            videos=("", "video", "videos")),
)


def mvu_map_row(row: Row, where: str) -> dict:
    idx = next((row[k] for k in ("_key", "QA_index", "index", "id") if not missing_value(row.get(k))), None)
    missing = [k for k in ("video_paths", "question", "options", "ground_truth", "task") if missing_value(row.get(k))
               and not (k == "video_paths" and hasattr(row.get(k), "__len__") and len(row.get(k)))]
    if idx is None:
        missing.append("index (JSON key)")
    if missing:
        raise schema_error("MVU-Eval", where, row, f"no value for {', '.join(missing)}", MVU_COLUMNS)
    code = code_by_name(_MVU_NAMES, row["task"])
    if code is None:
        raise schema_error("MVU-Eval", where, row, f"unknown task {row['task']!r} (known: "
                           + ", ".join(t.name for t in MVU_TASKS) + ")", MVU_COLUMNS)
    paths = row["video_paths"]
    paths = [p.strip() for p in paths.split(";")] if isinstance(paths, str) else [str(p).strip() for p in as_list(paths)]
    paths = [p if "." in p.rsplit("/", 1)[-1] else p + ".mp4" for p in paths if p]
    options, repairs = checked_options("MVU-Eval", where, row, row["options"], MVU_COLUMNS)
    answer = answer_letter(row["ground_truth"], options)
    if answer is None:
        raise schema_error("MVU-Eval", where, row, f"ground_truth {row['ground_truth']!r} is not an option letter "
                           f"({list(options)})", MVU_COLUMNS)
    idx = int(idx) if isinstance(idx, float) and idx.is_integer() else idx
    meta = {"source": "MVU-Eval", "index": str(idx), "task_name": str(row["task"])}
    if repairs:
        meta["repairs"] = repairs
    return {"id": f"mvu-{idx}", "task": code, "question": str(row["question"]).strip(), "options": options,
            "answer": answer, "videos": [{"label": f"Video {i}", "path": p} for i, p in enumerate(paths, 1)],
            "meta": meta}


# ----------------------------------------------------------------------------- CrossVid

CXV_LEVELS = (Level("cxv_comparative", "comparative", "Comparative analysis"),)
CXV_TASKS = (  # per-task counts are not published (only the total, 9,015 over all ten tasks): 0 = unknown
    TaskSpec("CXV_CC", "Cooking Comparison", "cxv_comparative", 0, None, 0.25,
             "CrossVid: which of four cooking videos differs / matches (single choice).", benchmark="CrossVid"),
    TaskSpec("CXV_NC", "Narrative Comprehension", "cxv_comparative", 0, None, 0.25,
             "CrossVid: a question across four movie clips (single choice).", benchmark="CrossVid"),
)
#: CrossVid tasks whose format the one-letter multiple-choice schema cannot hold (their files are not read).
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
CXV_RELEASES = (
    Release("the authors' release QA/CC.json and QA/NC.json (videos/cook/, videos/movie/)",
            ("QA/CC.json", "QA/NC.json"), videos=("videos", "")),
)


def crossvid_map_row(row: Row, where: str) -> dict:
    task = str(row.get("_file", "")).upper()
    code = f"CXV_{task}"
    if code not in {t.code for t in CXV_TASKS}:
        raise schema_error("CrossVid", where, row, f"unknown task file {task!r} (read: CC, NC; not read: "
                           + ", ".join(CROSSVID_UNSUPPORTED) + ")", CXV_COLUMNS)
    missing = [k for k in ("id", "videos", "question", "options", "answer") if k not in row
               or (not isinstance(row[k], (list, tuple)) and not hasattr(row[k], "tolist") and missing_value(row[k]))]
    if missing:
        raise schema_error("CrossVid", where, row, f"no value for {', '.join(missing)}", CXV_COLUMNS)
    options, repairs = checked_options("CrossVid", where, row, row["options"], CXV_COLUMNS)
    ans = row["answer"]
    ans = "".join(map(str, ans)) if isinstance(ans, (list, tuple)) else ans
    answer = answer_letter(ans, options)
    if answer is None:
        raise schema_error("CrossVid", where, row, f"answer {row['answer']!r} is not one option letter", CXV_COLUMNS)
    videos = [str(v) for v in as_list(row["videos"])]
    meta = {"source": "CrossVid", "qa_file": task, "qa_id": str(row["id"])}
    if repairs:
        meta["repairs"] = repairs
    return {"id": f"cxv-{task.lower()}-{row['id']}", "task": code, "question": str(row["question"]).strip(),
            "options": options, "answer": answer,
            "videos": [{"label": f"Video {i}", "path": p} for i, p in enumerate(videos, 1)], "meta": meta}


# ----------------------------------------------------------------------------- the records

CVBENCH = Benchmark(
    name="CVBench", key="cvbench", task_prefix="cvbench_mv", code_prefix="CVB", hub_repo="Dongyh35/CVBench",
    cache_dir="cvbench_mv", env="CVBENCH_DATA", vlmeval_name="CVBench_MV",
    header="The video {n}.",  # the paper: "The video [video_index]." before each video's tokens
    post_prompt="Answer with the option's letter from the given choices directly.",
    aggregation="questions", n_questions=1000, n_videos=1315, levels=CVB_LEVELS, tasks=CVB_TASKS,
    releases=CVB_RELEASES, map_row=cvbench_map_row, frames_per_video=8,
    source="hub dataset Dongyh35/CVBench (paper: CVBench, Zhu et al. 2025; code github.com/Hokhim2/CVBench)",
    counts_note="1,000 questions over 1,315 videos in 15 tasks; per-task counts of the released CVBench.json "
                "(the paper's Tables 2-4 print CAD 83 and CEM 75, the file has 84 and 74)",
    expected_columns=CVB_COLUMNS,
    protocol_note="Yes/No questions are shown as options A/B and scored by letter (the authors' fork asks for the "
                  "word); the title-card images the authors put around each video are replaced by a text label")

MVU_EVAL = Benchmark(
    name="MVU-Eval", key="mvu_eval", task_prefix="mvu_eval_mv", code_prefix="MVU",
    hub_repo="MVU-Eval-Team/MVU-Eval-Data", cache_dir="mvu_eval_mv", env="MVU_EVAL_DATA", vlmeval_name="MVU_Eval_MV",
    header="The following is the Video {n}",  # VLMEvalKit's mvu_eval.py
    post_prompt="Please select the correct answer from the options. Answer with the option's letter directly.",
    aggregation="questions", n_questions=1824, n_videos=4959, levels=MVU_LEVELS, tasks=MVU_TASKS,
    releases=MVU_RELEASES, map_row=mvu_map_row, frames_per_video=32,
    source="hub dataset MVU-Eval-Team/MVU-Eval-Data (VLMEvalKit's MVU-Eval loader reads the same files)",
    counts_note="1,824 questions over 4,959 videos in 8 tasks; per-task counts from the MVU-Eval paper",
    expected_columns=MVU_COLUMNS, hub_patterns=("*.json", "*.mp4", "*.zip"),  # as VLMEvalKit fetches it
    protocol_note="VLMEvalKit's own MVU-Eval reports one overall figure at 16 frames; this variant reports the "
                  "paper's eight tasks and two levels at the authors' 32 frames per video, with the same questions")

CROSSVID = Benchmark(
    name="CrossVid", key="crossvid", task_prefix="crossvid", code_prefix="CXV", hub_repo="Chuntianli/CrossVid",
    cache_dir="crossvid", env="CROSSVID_DATA", vlmeval_name="CrossVid_MV",
    header="Video {n}:",  # the authors' eval scripts
    post_prompt="Select one answer choice, and only output the capital letter of your choice.",
    aggregation="tasks", n_questions=9015, n_videos=5331, levels=CXV_LEVELS, tasks=CXV_TASKS,
    releases=CXV_RELEASES, map_row=crossvid_map_row, total_frames=128,
    paper_tasks=("BU", "NC", "CC", "PEA", "PI", "FSA", "PSS", "MSR", "MOC", "CCQA"),
    source="the authors' release: hub dataset Chuntianli/CrossVid (QA/*.json + videos/), github.com/chuntianli666/CrossVid",
    counts_note="9,015 questions over 5,331 videos in 10 tasks (all formats); per-task counts are not published; "
                "only CC and NC are run here, so the score is 'CrossVid CC+NC', neither the paper's O.Avg nor its C.Avg",
    expected_columns=CXV_COLUMNS, hub_patterns=("QA/CC.json", "QA/NC.json", "videos/cook*", "videos/movie*"),
    protocol_note="only CC and NC (the single-choice tasks over whole videos); the mean of their accuracies is "
                  "labelled 'CrossVid CC+NC'")

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
