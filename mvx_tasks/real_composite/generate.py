"""Write the real-footage composite set: ``data.jsonl`` + ``videos/`` in MVX-Synth's schema.

    python -m mvx_tasks.real_composite OUT [--per-task 12] [--seed 1] [--crf 20] [--tasks CNT,AM,RID]
                                           [--footage composite|scene_movers]

``--footage scene_movers`` builds the same questions over other footage, whose own people, vehicles and characters move
too, with cut-outs of other photographs (``footage.SCENE_MOVER_PLATES``): a check that differs in kind from the
composite every offline constant was chosen on.

The same seed gives the same frames at any ``--crf``: re-encoding the set at another quality
changes only codec noise, which is how answer stability under re-encoding is measured.
Every seed read while fitting or choosing the offline profile is listed in ``mvx_tasks/fitting_record.yaml``
(:mod:`mvx_tasks.fitting_record`); a held-out figure needs seeds it does not list.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ..fitting_record import next_free, uses_of
from ..schema import Sample, Video, validate_sample, write_jsonl
from ..synth.common import QuestionContext, get_difficulty, jsonable, slug
from ..synth.encode import encode_mp4
from .footage import FPS, check_footage, select_footage, selected_footage
from .tasks import BUILDERS

#: 2 (2026-12-03): the bike-rack plate ends before bikes.mp4 cuts to another shot (see footage.PLATES)
#: 3 (2026-12-05): the cut-outs follow the footage's own camera motion (footage.content_offsets: a "still"
#: cut-out on Big Buck Bunny's tilting plates slid against the scene), and the turning night globe holds no
#: still cut-out
#: 4 (2026-12-05): the camera over the uniform slate holds still (footage.Plate.textured): its pan, tilt, zoom
#: or wobble moved nothing in the picture, so a "still" cut-out glued to the slate crossed the frame like a
#: mover, and every motion "against the scene" was one against an invisible scene
#: 5 (2026-12-05): the pronoun template reads "more of them" / "fewer of them" (it read "more them"); the
#: videos, answers and labels of every seed are those of version 4
GENERATOR_VERSION = 5
#: the oldest version whose videos this code renders again frame for frame (a later one changed text only):
#: what a benchmark that re-plans a set's cut-outs (benchmarks/count_misses.py) accepts
SAME_VIDEOS_SINCE = 4
MANIFEST = "real_composite.json"


def question_id(code: str, index: int) -> str:
    return f"realcomp-{code.lower()}-{index:04d}"


def build_question(code: str, index: int, seed: int, crf: int, out_dir: str | None) -> dict:
    """Plan one question and, when ``out_dir`` is given, render and encode its videos there."""
    ctx = QuestionContext(code, int(index), int(seed), get_difficulty("default"))
    planned = BUILDERS[code](ctx)
    qid = question_id(code, index)
    videos = [Video(job.label, f"videos/{qid}_{slug(job.label)}.mp4", None) for job in planned.videos]
    made = {"seed": seed, "index": index, "crf": crf, "version": GENERATOR_VERSION}
    if selected_footage() != "composite":  # (the composite's questions stay as they were)
        made["footage"] = selected_footage()
    meta = {**planned.meta, "real_composite": made}
    raw = Sample(qid, code, planned.question, planned.options, planned.answer, tuple(videos), jsonable(meta)).to_dict()
    sample = validate_sample(raw, where=f"real-composite {code} #{index}")
    if out_dir is not None:
        for job, video in zip(planned.videos, sample.videos):
            encode_mp4(job.render(), Path(out_dir) / video.path, fps=FPS, crf=crf)
    return sample.to_dict()


def _job(args: tuple) -> dict:
    import cv2

    cv2.setNumThreads(1)
    *question, footage = args
    select_footage(footage)
    return build_question(*question)


def generate(out_dir: str | Path, per_task: int = 12, seed: int = 1, crf: int = 20, tasks: str | None = None,
             workers: int | None = None, footage: str = "composite") -> Path:
    """Write the set into ``out_dir`` and return it (``footage``: a set of :data:`.footage.FOOTAGE_SETS`)."""
    before = selected_footage()
    select_footage(footage)
    try:
        return _generate(Path(out_dir), per_task, seed, crf, tasks, workers, footage)
    finally:
        select_footage(before)


def _generate(out: Path, per_task: int, seed: int, crf: int, tasks: str | None, workers: int | None,
              footage: str) -> Path:
    check_footage()
    codes = [c.strip().upper() for c in (tasks or ",".join(BUILDERS)).split(",") if c.strip()]
    unknown = [c for c in codes if c not in BUILDERS]
    if unknown:
        raise ValueError(f"the real-footage composite set has no task(s) {unknown}; it covers {', '.join(BUILDERS)}")
    (out / "videos").mkdir(parents=True, exist_ok=True)
    jobs = [(c, i, int(seed), int(crf), str(out), footage) for c in codes for i in range(per_task)]
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        results = [_job(j) for j in jobs]
    else:
        method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
        with ProcessPoolExecutor(workers, mp_context=mp.get_context(method)) as pool:
            results = list(pool.map(_job, jobs, chunksize=1))
    write_jsonl([Sample.from_dict(r) for r in results], out / "data.jsonl")
    manifest = {"per_task": per_task, "seed": int(seed), "crf": int(crf), "tasks": codes, "version": GENERATOR_VERSION}
    if footage != "composite":  # (the composite's manifests stay as they were)
        manifest["footage"] = footage
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--per-task", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--crf", type=int, default=20)
    ap.add_argument("--tasks", default=None)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--footage", default="composite", choices=["composite", "scene_movers"],
                    help="the composite's footage, or other footage whose own people and vehicles move too")
    args = ap.parse_args(argv)
    record_set = "real_composite" if args.footage == "composite" else args.footage
    if uses_of(record_set, args.seed):
        print(f"note: seed {args.seed} is in the fitting record (used while fitting or choosing the offline profile): "
              f"not held out; `python -m mvx_tasks.fitting_record {record_set} {args.seed}` says how, and "
              f"{next_free(record_set)} is the first seed it does not list", file=sys.stderr)
    out = generate(args.out, args.per_task, args.seed, args.crf, args.tasks, args.workers, args.footage)
    print(out)
    return 0
