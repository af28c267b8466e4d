"""Write the real-footage composite set: ``data.jsonl`` + ``videos/`` in MVX-Synth's schema.

    python -m mvx_tasks.real_composite OUT [--per-task 12] [--seed 1] [--crf 20] [--tasks CNT,AM,RID]

The same seed gives the same frames at any ``--crf``: re-encoding the set at another quality
changes only codec noise, which is how answer stability under re-encoding is measured.
Seeds used while fitting the lite backends' constants are listed in :data:`FITTING_SEEDS`;
report accuracy on other seeds.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ..schema import Sample, Video, validate_sample, write_jsonl
from ..synth.common import QuestionContext, get_difficulty, jsonable, slug
from ..synth.encode import encode_mp4
from .footage import FPS, check_footage
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
#: seeds looked at while fitting the lite backends' constants (7, 1, 3, 4, 8, 9), while choosing
#: between candidate changes (5, 6, and seed 5's RID questions; 101 and 102, RID, 2026-12-02) or to
#: confirm a change (10, AM): never report these. Held out so far: 2, 11, 13, 14, 15 and 16 (used on
#: 2026-12-02 to reject one CNT change and on 2026-12-03 to measure AM's actor-finder change, chosen on
#: seeds 3 and 8), 17 and 18 (first measured on 2026-12-03, for that change), 19 and 20 (first measured
#: on 2026-12-03 at 09:35 on fe31bd8; then, with 21 and 22, to reject a pulse-size change); the eight of
#: 2, 11-16, 19 and 20 regenerated at version 2 and measured on 2026-12-03 (the plate fix, found on
#: seeds 1 and 3; nothing chosen on them); 23 (first measured on 2026-12-03 at 15:33 at CRF 20, 23, 26 and
#: 30, then used to reject an AM weight change); 24 (AM only, first measured on 2026-12-03 at 19:08 at CRF 20
#: and 30 on 4250859, then used to reject AM names with margins); 25 (AM only, generated on 2026-12-04 and
#: read once, with 2, 11-16, 19 and 20's AM, after the flow-read mover's discriminant was fitted on
#: 1, 3, 4, 7, 8 and 9); 26 (all three tasks, read once on 2026-12-04 by the code before and after that
#: change); 27 (all three tasks) and 28-30 (RID only, 40 pairs each), read once on 2026-12-04 evening by the
#: code before and after RID's flow locator (chosen on the fitting seeds); 31-33 (RID) and 34 (all three
#: tasks), read once before and after RID's texture score; 35 (all three tasks), read once on 2026-12-04 by
#: the code that marks fragile answers; 36-58 are accounted for in results/real_footage_composite.md (47-58
#: at version 3; 47, 48, 50 and 52-55 were looked at while choosing CNT's count rule of 2026-12-05 16:00);
#: 59-61 (all three tasks, version 4, 2026-12-05 19:28) read once, by the tools of 13f9a55; 62 (version 4)
#: read by 1183832 and 3fad91c; 63 (version 4, at CRF 20, 23, 26 and 30) read once by 61b7e5d on 2026-12-05
#: at 23:13 and once more, at all four, by 222ca76 on 2026-12-06; 64 (version 5) read once by 0005a0d and once by
#: cee8149 on 2026-12-06 at 00:48; 65 and 66 (version 5, CRF 20 and 30) read once by 222ca76 on 2026-12-06 at
#: 02:16; 67 and 68 (RID only, 40 pairs each, CRF 20 and 30) read once by 222ca76 and once by a gate ramp for RID
#: (not kept) on 2026-12-06 at 02:42; 69 (3 questions a task) read once by 222ca76, the first run of
#: benchmarks/codec_stability.py; 70 and 71 (all three tasks, version 5, CRF 20 and 30) read once by b60fc99's tools
#: through benchmarks/codec_stability.py on 2026-12-06 at 05:23 (their CNT, with 63-66's, read again by
#: benchmarks/count_stability.py at 07:59, nothing chosen); 72 (all three tasks, version 5, CRF 20 and 30) read once by
#: d6ceaba's tools on 2026-12-06 at 08:14; 73-78 (RID only, 40 pairs each, CRF 20 and 30) read once by d6ceaba's
#: identity reads, once by a changed upright turn and cut box (not kept) at 08:27 and once by
#: benchmarks/identity_stability.py at 08:41; 79-84 (CNT only, 20 questions each, CRF 20 and 30) read once by the
#: shipped count and once by a camera fitted again off the foreground (not kept) at 09:16; 85-87 (CNT only, 20
#: questions each, CRF 20 and 30, generated on 2026-12-06 at 10:24) read once by e413e61's count and by the followed
#: count (an experiment's candidates with an ensemble fitted on 1, 3, 4, 7, 8 and 9, then the shipped code); 88-93
#: (all three tasks, CRF 20 and 30) read once through the agent by the followed count's code (8a9cc0f); 94 (CNT, 2
#: questions) only to try benchmarks/fit_follow_classes.py as a new user would; 95-97 (RID only, 40 pairs each, CRF 20
#: and 30) read once by e88195d's identity and once by the stack view (subject_stack.py) on 2026-12-06 at 13:43-14:02;
#: 98, 99, 100 and 103 (all three tasks, CRF 20 and 30) read once through the agent by that change; 104 (RID, 3
#: pairs) only to try benchmarks/fit_stack_score.py as a new user would; 105 and 106 (all three tasks, CRF 20 and 30,
#: 2026-12-06 15:55) read through the agent by f3852e1 and by a CNT variant, which also read the CNT sets of 79-87,
#: 98, 99, 100 and 103 again at the backend level; 107 (all three tasks, CRF 20 and 30, 2026-12-06 17:16) read
#: through the agent by d57f611 and by the segmenter change (38b5ea2); 108 and 109 (all three tasks, CRF 20 and 30,
#: 17:48) read once through the agent by 38b5ea2, then two of 108's RID pairs by a subject-size variant (not kept);
#: CNT's match probability (fa53c1a) was chosen on the CNT readings of 79-84, checked on 85-87, 98, 99, 100 and 103
#: (its fragile mark's constants chosen on all of those), and read with 1, 3, 4, 7, 8, 9 and 105-109's CNT at the
#: backend level; 110, 111 and 112 (all three tasks, CRF 20 and 30, 2026-12-06 19:12) read once through the agent by
#: fa53c1a and their CNT by the code before at the backend level; 113, 114 and 115 (all three tasks, CRF 20 and 30,
#: 19:50-19:59) likewise; 98-109 read again through the agent by fa53c1a. RID's stack extent (edf45fc) was chosen on
#: 98-109's RID pairs and checked on 110-115's; CNT's second reading on all of 105-115's CNT (no constant chosen);
#: 116-121 (all three tasks, CRF 20 and 30, 2026-12-06 21:03-21:10) read once through the agent by edf45fc, their CNT
#: at the backend level and their RID pairs replayed by both sides of each change, and 117's CRF 30 CNT timed by
#: three revisions; their RID stack pairs (with 98-115's) replayed again on 2026-12-07 00:00-00:50 with second and third
#: stack readings on shifted frames (RID's second reading, a9cf90a, chosen on 98-115, checked on 116-121); 122-129 (all
#: three tasks, CRF 20 and 30, 2026-12-06 21:10-21:40): 122-125 read through the agent by 6c29535 (a double stack read,
#: not kept), their RID by 69ed903, and 122-127 by a9cf90a on 2026-12-07 from 00:49, 128 and 129 by the same code at
#: 01:34 (after it was chosen), then 116-121 by it. Every generated seed is read: confirm the next change on new
#: seeds, 130 or later.
FITTING_SEEDS = (7, 1, 3, 4, 5, 6, 8, 9, 10, 101, 102)


def question_id(code: str, index: int) -> str:
    return f"realcomp-{code.lower()}-{index:04d}"


def build_question(code: str, index: int, seed: int, crf: int, out_dir: str | None) -> dict:
    """Plan one question and, when ``out_dir`` is given, render and encode its videos there."""
    ctx = QuestionContext(code, int(index), int(seed), get_difficulty("default"))
    planned = BUILDERS[code](ctx)
    qid = question_id(code, index)
    videos = [Video(job.label, f"videos/{qid}_{slug(job.label)}.mp4", None) for job in planned.videos]
    meta = {**planned.meta, "real_composite": {"seed": seed, "index": index, "crf": crf, "version": GENERATOR_VERSION}}
    raw = Sample(qid, code, planned.question, planned.options, planned.answer, tuple(videos), jsonable(meta)).to_dict()
    sample = validate_sample(raw, where=f"real-composite {code} #{index}")
    if out_dir is not None:
        for job, video in zip(planned.videos, sample.videos):
            encode_mp4(job.render(), Path(out_dir) / video.path, fps=FPS, crf=crf)
    return sample.to_dict()


def _job(args: tuple) -> dict:
    import cv2

    cv2.setNumThreads(1)
    return build_question(*args)


def generate(out_dir: str | Path, per_task: int = 12, seed: int = 1, crf: int = 20, tasks: str | None = None,
             workers: int | None = None) -> Path:
    """Write the set into ``out_dir`` and return it."""
    check_footage()
    codes = [c.strip().upper() for c in (tasks or ",".join(BUILDERS)).split(",") if c.strip()]
    unknown = [c for c in codes if c not in BUILDERS]
    if unknown:
        raise ValueError(f"the real-footage composite set has no task(s) {unknown}; it covers {', '.join(BUILDERS)}")
    out = Path(out_dir)
    (out / "videos").mkdir(parents=True, exist_ok=True)
    jobs = [(c, i, int(seed), int(crf), str(out)) for c in codes for i in range(per_task)]
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        results = [_job(j) for j in jobs]
    else:
        method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
        with ProcessPoolExecutor(workers, mp_context=mp.get_context(method)) as pool:
            results = list(pool.map(_job, jobs, chunksize=1))
    write_jsonl([Sample.from_dict(r) for r in results], out / "data.jsonl")
    (out / MANIFEST).write_text(json.dumps({"per_task": per_task, "seed": int(seed), "crf": int(crf), "tasks": codes,
                                            "version": GENERATOR_VERSION}, indent=1), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--per-task", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--crf", type=int, default=20)
    ap.add_argument("--tasks", default=None)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)
    if args.seed in FITTING_SEEDS:
        print(f"note: seed {args.seed} was used while fitting; report other seeds", file=sys.stderr)
    out = generate(args.out, args.per_task, args.seed, args.crf, args.tasks, args.workers)
    print(out)
    return 0
