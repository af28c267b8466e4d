"""lmms-eval hooks for the MVX task YAMLs (referenced as ``!function mvx_tasks.harness.<name>``).

The YAMLs stay declarative; everything they call lives here and forwards to the modules that
own each concept (data sources, prompts, answer parsing, metrics). Because lmms-eval imports
this module by name (not as a bare file), state such as the video-health cache is shared.

Docs: a tiny placeholder file satisfies lmms-eval's ``dataset_path: json`` loader; the task's
``process_docs`` hook (``bench_docs_<code>``, ``synth_docs_<code>``, ``local_docs_<code>``...)
replaces it with the real questions of that task from the resolved source.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable

from .answer_notes import note_for
from .data import doc_to_sample, load_local, sample_to_doc
from .data_hub import load_bench_samples
from .metrics import accuracy, score_output
from .prompts import (DEFAULT_POST_PROMPT, frame_messages, frames_order_line, question_text, video_messages)
from .registry import get_task
from .video_decoder import current_policy, probe_video, sample_video

DEFAULT_N_FRAMES = 8

# ----------------------------------------------------------------------------- data sources

_SOURCES: dict[str, Callable[[], tuple[Path, list]]] = {}
_LOADED: dict[str, tuple[Path, list]] = {}
_LOCK = threading.Lock()


def register_source(name: str, loader: Callable[[], tuple[Path, list]]) -> None:
    """A named data source for ``<name>_docs_<code>`` hooks: returns (root, samples)."""
    _SOURCES[name] = loader


def _synth_source() -> tuple[Path, list]:
    from .synth import ensure_synth

    root = ensure_synth()
    return root, load_local(root)


def _local_source() -> tuple[Path, list]:
    root = os.environ.get("MVX_LOCAL_DATA")
    if not root:
        raise RuntimeError("the local_docs_* hooks read MVX_LOCAL_DATA=<folder in the canonical layout>; set it")
    return Path(root), load_local(root)


def _probe_source() -> tuple[Path, list]:
    from .probe import ensure_probe

    root = ensure_probe()
    return root, load_local(root)


register_source("bench", load_bench_samples)
register_source("synth", _synth_source)
register_source("local", _local_source)
register_source("probe", _probe_source)

_SOURCE_ENV = {"bench": "MVX_BENCH_DATA", "synth": "MVX_SYNTH_DATA", "local": "MVX_LOCAL_DATA", "probe": "MVX_PROBE_DATA"}


def _register_peer_sources() -> None:
    """``cvbench_docs_<code>``, ``mvu_eval_docs_<code>``, ``crossvid_docs_<code>``: one source per peer
    benchmark (its env var, else its hub cache), from the records in :mod:`.benchmarks`."""
    from .benchmarks import PEERS
    from .data_peers import load_benchmark_samples

    for bm in PEERS:
        register_source(bm.key, lambda bm=bm: load_benchmark_samples(bm))
        _SOURCE_ENV[bm.key] = bm.env


_register_peer_sources()


def _samples(source: str) -> tuple[Path, list]:
    key = f"{source}:{os.environ.get(_SOURCE_ENV.get(source, ''), '')}"
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = _SOURCES[source]()
        return _LOADED[key]


def task_docs(source: str, code: str) -> list[dict[str, str]]:
    """The harness docs of one task from one source, in file order."""
    spec = get_task(code)
    root, samples = _samples(source)
    return [sample_to_doc(s, root) for s in samples if s.task == spec.code]


def _docs_hook(source: str, code: str) -> Callable[[Any], Any]:
    def process_docs(dataset: Any) -> Any:
        import datasets

        docs = task_docs(source, code)
        if not docs:
            root, _ = _samples(source)
            raise RuntimeError(f"the {source} data at {root} has no questions for task {code}; "
                               f"check the task codes in its data.jsonl (mvx-bench verify {root})")
        return datasets.Dataset.from_list(docs)
    process_docs.__name__ = f"{source}_docs_{code.lower()}"
    return process_docs


def __getattr__(name: str) -> Any:
    """``<source>_docs_<code>``: the process_docs hook of any registered task and source."""
    source, sep, code = name.partition("_docs_")
    if sep and source in _SOURCES and code:
        return _docs_hook(source, code)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------- videos

_HEALTH: dict[str, str | None] = {}


def video_problem(path: str) -> str | None:
    """Why a video cannot be shown (cached per path), or None."""
    if path not in _HEALTH:
        _HEALTH[path] = probe_video(path)
    return _HEALTH[path]


def _videos(doc: dict) -> list[dict]:
    return json.loads(doc["videos"]) if isinstance(doc["videos"], str) else list(doc["videos"])


def doc_to_visual(doc: dict) -> list[str]:
    """Video paths in presentation order; an unreadable video is left out (and the question failed)."""
    return [v["path"] for v in _videos(doc) if video_problem(v["path"]) is None]


def _kw(kwargs: dict | None) -> dict:
    return kwargs or {}


def doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    kw = _kw(lmms_eval_specific_kwargs)
    return question_text(doc_to_sample(doc), pre_prompt=kw.get("pre_prompt", ""),
                         post_prompt=kw.get("post_prompt", DEFAULT_POST_PROMPT))


def _header(kwargs: dict | None) -> str | None:
    """The text before each video (``video_header`` in the task's kwargs, e.g. MVU-Eval's
    "The following is the Video {i}"); None: ``<label>:``."""
    return _kw(kwargs).get("video_header") or None


def doc_to_messages(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> list[dict]:
    """Each video preceded by its label, then the question."""
    sample = doc_to_sample(doc)
    kept = [v for v in sample.videos if video_problem(v.path) is None]
    shown = sample if len(kept) == len(sample.videos) else _with_videos(sample, kept)
    return video_messages(shown, doc_to_text(doc, lmms_eval_specific_kwargs), header=_header(lmms_eval_specific_kwargs))


def _with_videos(sample, videos):
    from dataclasses import replace

    return replace(sample, videos=tuple(videos))


# ----------------------------------------------------------------------------- frames presentation

def _sampled(path: str, n: int):
    """``n`` frames spread uniformly over the video and their timestamps; only those are decoded."""
    return sample_video(path, n)


def _frames(doc: dict, n: int, with_times: bool = False) -> list[tuple]:
    from PIL import Image

    out = []
    for v in _videos(doc):
        if video_problem(v["path"]) is not None:
            continue
        frames, times = _sampled(v["path"], n)
        imgs = [Image.fromarray(f) for f in frames]
        out.append((v["label"], imgs, times) if with_times else (v["label"], imgs))
    return out


def _n_frames(kwargs: dict | None, n_videos: int = 1) -> int:
    """Frames per video: ``MVX_FRAMES_PER_VIDEO`` (set by ``mvx-bench run`` from a config) wins over
    the task's ``lmms_eval_specific_kwargs`` (lmms-eval has no command-line override for those):
    ``n_frames`` per video, or ``total_frames`` split evenly over the question's videos (CrossVid)."""
    env = os.environ.get("MVX_FRAMES_PER_VIDEO")
    if env:
        return int(env)
    kw = _kw(kwargs)
    if kw.get("total_frames"):
        return max(1, int(kw["total_frames"]) // max(1, n_videos))
    return int(kw.get("n_frames", DEFAULT_N_FRAMES))


def _n_videos(doc: dict) -> int:
    return sum(1 for v in _videos(doc) if video_problem(v["path"]) is None)


def frames_doc_to_visual(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> list:
    """All videos' frames as one flat list of PIL images, video by video."""
    return [img for _, imgs in _frames(doc, _n_frames(lmms_eval_specific_kwargs, _n_videos(doc))) for img in imgs]


def frames_doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    kw = _kw(lmms_eval_specific_kwargs)
    sample = doc_to_sample(doc)
    n = _n_frames(kw, _n_videos(doc))
    shown = [(v.label, len(_sampled(v.path, n)[1])) for v in sample.videos if video_problem(v.path) is None]
    order = frames_order_line([s[0] for s in shown], [s[1] for s in shown])
    return question_text(sample, pre_prompt=kw.get("pre_prompt", ""),
                         post_prompt=kw.get("post_prompt", DEFAULT_POST_PROMPT), order_line=order)


def frames_doc_to_messages(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> list[dict]:
    sample = doc_to_sample(doc)
    n = _n_frames(lmms_eval_specific_kwargs, _n_videos(doc))
    frames = _frames(doc, n, with_times=True)
    kept = [v for v in sample.videos if video_problem(v.path) is None]
    policy = {"frames_per_video": n, "decode_max_side": current_policy().max_side}
    sampling = [dict(policy, timestamps=[round(float(t), 3) for t in times]) for _, _, times in frames]
    return frame_messages(_with_videos(sample, kept), frames_doc_to_text(doc, lmms_eval_specific_kwargs),
                          [imgs for _, imgs, _ in frames], sampling=sampling, header=_header(lmms_eval_specific_kwargs))


# ----------------------------------------------------------------------------- scoring

def process_results(doc: dict, results: list) -> dict[str, dict]:
    """Parse and score one output; the record names the question, so the samples log stands alone.

    What the model knows about this answer beyond its text (what it cost, why it could not answer,
    where the answer came from) is read from the answer's note (:mod:`.answer_notes`), found by the
    question and the answer text, so an answer from lmms-eval's cache or from a replayed log is
    counted like a fresh one."""
    output = results[0] if results else ""
    if isinstance(output, (list, tuple)):
        output = output[0] if output else ""
    output = "" if output is None else str(output)
    note = note_for(doc, output)
    problems = [f"{v['label']}: {p}" for v in _videos(doc) if (p := video_problem(v["path"]))]
    record = score_output(doc["id"], doc["task"], output, json.loads(doc["options"]), doc["answer"],
                          failed="; ".join(problems) or None, agent_failed=note.failure).to_dict()
    return {**note.metrics(), "mvx_acc": record, "mvx_unparsed": int(record["unparsed"]),
            "mvx_failed": int(record["failed"] is not None), "mvx_agent_failed": int(record["agent_failed"] is not None),
            "mvx_chance": 100.0 * record["chance"], "mvx_data_notes": {"root": doc.get("root"), "task": doc["task"]}}


def aggregate_accuracy(records: list[dict]) -> float:
    """Percent correct over a task's questions."""
    return accuracy(records)


def aggregate_count(flags: list[int]) -> int:
    """How many questions were unparsed (or failed, or the agent could not answer, or were
    answered from a given source: ``mvx_src_*``)."""
    return int(sum(flags))


def aggregate_data_notes(items: list[dict]) -> str:
    """The task's rows repaired or skipped when its data was read, by row id (``mvx_data_notes`` in the
    results file; the whole load's report is in the run log and ``mvx-bench verify``)."""
    from .data_release import report_for

    if not items:
        return "no questions"
    report = report_for(items[0]["root"]) if items[0].get("root") else None
    return report.task_notes(items[0]["task"]) if report else "repaired 0, skipped 0"


def aggregate_mean(values: list[float]) -> float:
    """Mean per question of a task (tokens, dollars, iterations, tool calls: ``mvx_tokens`` ...)."""
    return round(sum(values) / len(values), 6) if values else 0.0
