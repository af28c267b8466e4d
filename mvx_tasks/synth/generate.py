"""The MVX-Synth runner: plan every question, render its videos in a process pool, write data.jsonl.

Questions are independent (each seeded by (seed, task, index)), so they are rendered in
parallel and sorted afterwards; the output bytes do not depend on scheduling.
"""
from __future__ import annotations

import importlib
import json
import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterable

from ..registry import BENCH_CODES, get_task
from ..schema import Sample, Video, validate_sample, write_jsonl
from .common import Planned, QuestionContext, get_difficulty, jsonable, slug
from .encode import CRF, encode_mp4, write_srt

GENERATOR_VERSION = 1
#: written beside data.jsonl: the parameters the folder was generated with
MANIFEST = "synth.json"
TASK_MODULES = {code: code.lower() for code in BENCH_CODES}


def _parse_tasks(tasks: str | Iterable[str] | None) -> list[str]:
    if tasks is None:
        return list(BENCH_CODES)
    if isinstance(tasks, str):
        tasks = [t for t in tasks.split(",") if t.strip()]
    codes = [get_task(t).code for t in tasks]
    missing = [c for c in codes if c not in TASK_MODULES]
    if missing:
        raise ValueError(f"MVX-Synth has no generator for task(s) {missing}; it covers {', '.join(TASK_MODULES)}")
    return list(dict.fromkeys(codes))


def plan_question(code: str, index: int, seed: int = 0, difficulty: str = "default") -> Planned:
    """Plan one question (no rendering): text, options, answer, meta and render closures."""
    module = importlib.import_module(f"{__package__}.{TASK_MODULES[code]}")
    return module.build(QuestionContext(code, int(index), int(seed), get_difficulty(difficulty)))


def video_path(qid: str, label: str, ext: str = ".mp4") -> str:
    return f"videos/{qid}_{slug(label)}{ext}"


def _to_sample(code: str, index: int, seed: int, difficulty: str, planned: Planned) -> Sample:
    ctx = QuestionContext(code, index, seed, get_difficulty(difficulty))
    videos = [Video(job.label, video_path(ctx.qid, job.label),
                    video_path(ctx.qid, job.label, ".srt") if job.subtitle else None) for job in planned.videos]
    meta = {**planned.meta, "synth": {"seed": seed, "index": index, "difficulty": ctx.difficulty.name,
                                      "version": GENERATOR_VERSION}}
    raw = Sample(ctx.qid, code, planned.question, planned.options, planned.answer, tuple(videos), jsonable(meta)).to_dict()
    return validate_sample(raw, where=f"mvx-synth {code} #{index}")


def build_question(code: str, index: int, seed: int, difficulty: str, out_dir: str | None) -> dict:
    """Plan one question and, when ``out_dir`` is given, render and encode its videos there."""
    planned = plan_question(code, index, seed, difficulty)
    sample = _to_sample(code, index, seed, difficulty, planned)
    if out_dir is not None:
        root = Path(out_dir)
        for job, video in zip(planned.videos, sample.videos):
            encode_mp4(job.render(), root / video.path, crf=job.crf or CRF)
            if job.subtitle:
                write_srt(job.subtitle, root / video.subtitle)
    return sample.to_dict()


def _job(args: tuple) -> dict:
    return build_question(*args)


def _init_worker() -> None:
    import cv2

    cv2.setNumThreads(1)


#: ``per_task`` value meaning "each task's question count in the full benchmark" (the registry's
#: ``n_questions``: 1,442 questions over the 11 tasks, as in the paper)
PAPER = "paper"


def task_counts(per_task: int | str = 20, tasks=None) -> dict[str, int]:
    """Questions to generate per task code: ``per_task`` each, or the paper's counts for ``"paper"``."""
    codes = _parse_tasks(tasks)
    if per_task == PAPER:
        return {code: get_task(code).n_questions for code in codes}
    if isinstance(per_task, str) or int(per_task) < 1:
        raise ValueError(f"per_task must be at least 1 or {PAPER!r}, got {per_task!r}")
    return {code: int(per_task) for code in codes}


def plan(per_task: int | str = 20, seed: int = 0, difficulty: str = "default", tasks=None) -> list[Sample]:
    """Dry run: every question exactly as :func:`generate` writes it, without rendering a frame."""
    return [Sample.from_dict(build_question(code, i, seed, difficulty, None))
            for code, n in task_counts(per_task, tasks).items() for i in range(n)]


def generate(out_dir, per_task: int | str = 20, seed: int = 0, difficulty: str = "default", tasks=None,
             progress: bool = True, workers: int | None = None) -> Path:
    """Write an MVX-Synth dataset (``data.jsonl`` + ``videos/``) into ``out_dir`` and return it.

    ``per_task="paper"`` gives every task its question count in the paper (:func:`task_counts`)."""
    counts = task_counts(per_task, tasks)
    codes = list(counts)
    get_difficulty(difficulty)
    out = Path(out_dir)
    (out / "videos").mkdir(parents=True, exist_ok=True)
    jobs = [(code, i, int(seed), str(difficulty), str(out)) for code, n in counts.items() for i in range(n)]
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc="MVX-Synth", unit="q")
    results: list[dict] = []
    try:
        if workers <= 1:
            _init_worker()
            for j in jobs:
                results.append(_job(j))
                bar and bar.update()
        else:
            # not "fork": the caller may hold threads (torch, OpenCV, a harness), and a forked child
            # inheriting a held lock deadlocks; forkserver/spawn start clean interpreters.
            method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
            with ProcessPoolExecutor(workers, mp_context=mp.get_context(method), initializer=_init_worker) as pool:
                for r in pool.map(_job, jobs, chunksize=1):
                    results.append(r)
                    bar and bar.update()
    finally:
        if bar is not None:
            bar.close()
    write_jsonl([Sample.from_dict(r) for r in results], out / "data.jsonl")
    (out / MANIFEST).write_text(json.dumps({"per_task": per_task, "seed": int(seed), "difficulty": str(difficulty),
                                            "tasks": list(codes), "counts": counts}, indent=1), encoding="utf-8")
    return out


def read_manifest(folder) -> dict | None:
    """The parameters a generated folder was made with (``synth.json``), or None."""
    try:
        data = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


