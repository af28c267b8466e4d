"""MVX-Bench / MVX-Synth as a VLMEvalKit Video-MCQ dataset.

The dataset reads the canonical local folder (``data.jsonl`` + videos) and shows each question's
videos either as files (video LLMs) or as N uniformly sampled frames per video, decoded by the
project's one decoder. Labels must survive models that move every image before the text, so
each video's frames follow a ``<label>:`` text item AND the question text lists which image
numbers belong to which video. Scoring is rule-based with the project's answer parser (no LLM
judge: TYPE is 'Video-MCQ'); per-question records are written next to the predictions so the
leaderboard can re-aggregate them and bootstrap intervals.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image
from vlmeval.dataset.video_base import VideoBaseDataset
from vlmeval.smp import LMUDataRoot, load

from ..benchmarks import PEERS
from ..data import DataSourceError, doc_to_sample, load_local, sample_to_doc
from ..data_peers import load_benchmark
from ..metrics import mean_of_tasks, score_output, summarize
from ..prompts import DEFAULT_POST_PROMPT, frames_order_line, question_text, video_header, video_order_line
from ..video_decoder import VideoDecodeError, probe_video, sample_video
from .names import DATASET_ENV, META_SUFFIX, RECORDS_SUFFIX, base_name, dataset_names

INFER_FAIL = "Failed to obtain answer"  # VLMEvalKit's marker for a failed inference


def resolve_root(dataset: str, data_root: str | os.PathLike | None = None) -> Path:
    """The canonical folder of a dataset: the constructor's ``data_root``, else its env var."""
    env, _ = DATASET_ENV[base_name(dataset)]
    root = data_root or os.environ.get(env)
    peer = peer_of(dataset)
    if not root and peer is not None:  # the hub cache, as the lmms-eval tasks read it
        from ..data_hub import fetch_hub_dataset

        return fetch_hub_dataset(peer.hub_repo, peer.cache_dir, name=peer.name, env=peer.env).resolve()
    if not root:
        raise DataSourceError(f"{dataset}: no data folder; set {env}=<folder with data.jsonl and videos> "
                              f"or pass data_root=... (generate MVX-Synth with `mvx-bench synth --out DIR`)")
    return Path(root).resolve()


def peer_of(dataset: str):
    """The peer benchmark record behind a dataset name, or None for MVX-Bench / MVX-Synth."""
    name = DATASET_ENV[base_name(dataset)][1]
    return next((bm for bm in PEERS if bm.name == name), None)


def first_per_task(samples: list, limit: int) -> list:
    """The first ``limit`` questions of each task, in file order (like lmms-eval's per-task --limit)."""
    seen: Counter[str] = Counter()
    out = []
    for s in samples:
        if seen[s.task] < limit:
            out.append(s)
            seen[s.task] += 1
    return out


class MVXVideoMCQ(VideoBaseDataset):
    """Multi-video multiple-choice questions, one row per question."""

    TYPE = "Video-MCQ"
    MODALITY = "VIDEO"

    def __init__(self, dataset: str = "MVX_Bench", nframe: int = 8, fps: float = -1, pack: bool = False,
                 data_root: str | None = None, limit: int | None = None, strict: bool | None = None,
                 **kwargs: Any) -> None:
        # VLMEvalKit's runner passes all its CLI arguments as kwargs; only ``limit`` is used here.
        # ``strict`` (default $MVX_DATA_STRICT): a peer's row that cannot be mapped is an error, not a skip.
        self.strict = strict
        if fps and fps > 0:
            raise ValueError(f"{dataset}: fps sampling is not supported; use nframe (e.g. {dataset}_8frame)")
        self.root = resolve_root(dataset, data_root)
        self.limit = int(limit) if limit else None
        self.benchmark = DATASET_ENV[base_name(dataset)][1]
        self.peer = peer_of(dataset)
        super().__init__(dataset=dataset, pack=False, nframe=nframe, fps=-1)

    @classmethod
    def supported_datasets(cls) -> list[str]:
        return dataset_names()

    # ------------------------------------------------------------------ data

    def prepare_dataset(self, dataset: str) -> dict[str, str]:
        """Write the questions (first ``limit`` per task) as a TSV VLMEvalKit can load."""
        peer = peer_of(dataset)  # read the authors' files (or a canonical folder) through the record
        samples = load_benchmark(peer, self.root, strict=self.strict) if peer else load_local(self.root)
        if self.limit:
            samples = first_per_task(samples, self.limit)
        rows = []
        for i, s in enumerate(samples):
            doc = sample_to_doc(s, self.root)
            doc.pop("meta")
            rows.append({"index": i, **doc, "video": s.id})
        tag = hashlib.sha1(f"{self.root}|{self.limit}".encode()).hexdigest()[:10]
        out = Path(LMUDataRoot()) / "mvx" / f"{dataset}_{tag}.tsv"
        out.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(out, sep="\t", index=False)
        return {"root": str(self.root), "data_file": str(out)}

    def _row(self, line: Any) -> dict[str, Any]:
        if isinstance(line, (int, np.integer)):
            line = self.data.iloc[int(line)]
        return dict(line)

    # ------------------------------------------------------------------ frames

    def video_frames(self, path: str) -> list[str]:
        """``nframe`` uniformly sampled frames of one video as JPEG files (cached on disk)."""
        key = hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:16]
        folder = Path(self.frame_root) / key
        index = folder / f"frames-{self.nframe}.json"
        if index.is_file():
            paths = json.loads(index.read_text(encoding="utf-8"))
            if all(Path(p).is_file() for p in paths):
                return paths
        frames, _ = sample_video(path, self.nframe)  # decodes only these frames
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for i, frame in enumerate(frames, 1):
            p = folder / f"frame-{i}-of-{self.nframe}.jpg"
            tmp = p.with_suffix(".tmp.jpg")
            Image.fromarray(frame).save(tmp, quality=95)
            tmp.replace(p)
            paths.append(str(p))
        index.write_text(json.dumps(paths), encoding="utf-8")
        return paths

    # ------------------------------------------------------------------ prompt

    def build_prompt(self, line: Any, video_llm: bool = False) -> list[dict[str, str]]:
        """Labelled messages: ``<label>:`` then the video (or its frames), per video; then the question."""
        sample = doc_to_sample(self._row(line))
        shown: list[tuple[str, list[str]]] = []
        for v in sample.videos:
            if probe_video(v.path) is not None:
                continue  # an unreadable video is left out; evaluate() marks the question failed
            try:
                shown.append((v.label, [v.path] if video_llm else self.video_frames(v.path)))
            except VideoDecodeError:
                continue
        labels = [label for label, _ in shown]
        if video_llm:
            order = video_order_line(labels)
        else:
            order = frames_order_line(labels, [len(f) for _, f in shown])
        message: list[dict[str, str]] = []
        header = self.peer.header if self.peer else None  # the authors' text before each video
        for i, (label, items) in enumerate(shown, 1):
            message.append({"type": "text", "value": video_header(label, i, header)})
            message.extend({"type": "video" if video_llm else "image", "value": p} for p in items)
        post = self.peer.post_prompt if self.peer else DEFAULT_POST_PROMPT
        message.append({"type": "text", "value": question_text(sample, order_line=order, post_prompt=post)})
        return message

    # ------------------------------------------------------------------ scoring

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> dict[str, float]:
        """Rule-score every prediction; write per-question records; return Overall, per level and per task."""
        data = load(eval_file)
        records = []
        for _, row in data.iterrows():
            pred = row.get("prediction")
            pred = pred if isinstance(pred, str) else ""
            videos = json.loads(row["videos"])
            problems = [f"{v['label']}: {p}" for v in videos if (p := probe_video(v["path"]))]
            if INFER_FAIL in pred:
                problems.append("inference failed")
            records.append(score_output(str(row["id"]), str(row["task"]), pred, json.loads(row["options"]),
                                        str(row["answer"]), failed="; ".join(problems) or None).to_dict())
        stem = str(Path(eval_file).with_suffix(""))
        with open(stem + RECORDS_SUFFIX, "w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        model = Path(stem).name
        suffix = f"_{self.dataset_name}"
        model = model[: -len(suffix)] if model.endswith(suffix) else model
        Path(stem + META_SUFFIX).write_text(json.dumps(
            {"model": model, "dataset": self.dataset_name, "benchmark": self.benchmark, "nframe": self.nframe,
             "n": len(records)}, indent=2), encoding="utf-8")
        s = summarize(records)
        out = {"Overall": s.overall, "Chance": s.chance_overall}
        if self.peer is not None and self.peer.aggregation == "tasks" and s.per_task:
            out["Overall"] = mean_of_tasks(s.per_task)  # the paper's mean over tasks
            out["Chance"] = mean_of_tasks(s.chance_per_task)
        out.update({level.capitalize(): acc for level, acc in s.per_level.items()})
        out.update(s.per_task)
        return out
