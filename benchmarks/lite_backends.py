"""Time each lite backend on a generated clip: seconds per call (cold = first call on a clip,
warm = repeated call served partly from the per-frame memo) and decodes per video.

Run: PYTHONPATH=. HF_HUB_OFFLINE=1 python benchmarks/lite_backends.py [--frames 24] [--side 224] [--repeats 3]

The clip is written to a temporary MP4 and loaded through ``mvx_tasks.video_decoder.load_video`` so the
decode count is the real one; every backend then shares that single decode.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _write_clip(path: Path, frames: np.ndarray, fps: float) -> None:
    import av

    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=int(fps))
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        for f in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(f, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def _scene(n: int, side: int, seed: int) -> np.ndarray:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # scene drawing lives with the tests
    from scenes import background, draw_shape

    rng = np.random.default_rng(seed)
    big = background(side * 2, side * 2, "noise", seed=seed)
    movers = [
        (
            str(rng.choice(["circle", "square", "triangle", "star"])),
            str(rng.choice(["red", "blue", "green", "yellow"])),
            rng.uniform(side * 0.6, side * 1.4, 2),
            rng.uniform(-4, 4, 2),
            float(rng.uniform(10, 18)),
        )
        for _ in range(6)
    ]
    frames = []
    for i in range(n):
        img = big.copy()
        for shape, colour, p, v, r in movers:
            draw_shape(img, shape, colour, tuple(p + v * i), r)
        x0 = int(side * 0.5 + 2 * i)  # a slow pan to the right
        frames.append(img[side // 2 : side // 2 + side, x0 : x0 + side].copy())
    return np.stack(frames)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--side", type=int, default=224)
    ap.add_argument("--fps", type=float, default=8.0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    from mvx_tasks.subtitles import SubtitleSegment
    from mvx_tasks.video_decoder import decode_stats, load_video
    from sama_model.backends.lite.shared.frame_memo import FRAME_MEMO
    from sama_model.tools.backends import create_backend

    tmp = Path(tempfile.mkdtemp())
    paths = []
    for k in range(2):
        p = tmp / f"clip{k}.mp4"
        _write_clip(p, _scene(args.frames, args.side, seed=k), args.fps)
        paths.append(p)
    subs = [
        SubtitleSegment(2.0 * i, 2.0 * i + 2, t)
        for i, t in enumerate(
            [
                "a red ball rolls to the left",
                "two squares meet in the middle",
                "the camera slowly pans right",
                "a yellow star spins in place",
                "everything stops moving",
            ]
            * 8
        )
    ]

    backends = {
        t: create_backend(t, "lite")
        for t in (
            "video_reader",
            "temporal_grounding",
            "scene_graph",
            "object_tracker",
            "visual_similarity",
            "motion_analyzer",
            "subtitle_retriever",
        )
    }
    calls = {
        "video_reader.read": lambda a, b: backends["video_reader"].read(a, "how many red circles?"),
        "temporal_grounding.ground": lambda a, b: backends["temporal_grounding"].ground(
            a, "when does the red circle stop?"
        ),
        "scene_graph.graph": lambda a, b: backends["scene_graph"].graph(a, ""),
        "object_tracker.track": lambda a, b: backends["object_tracker"].track(a, ""),
        "visual_similarity.compare(content)": lambda a, b: backends["visual_similarity"].compare(a, b),
        "visual_similarity.compare(style)": lambda a, b: backends["visual_similarity"].compare(a, b, aspect="style"),
        "motion_analyzer.analyze": lambda a, b: backends["motion_analyzer"].analyze(a),
        "motion_analyzer.continuity": lambda a, b: backends["motion_analyzer"].continuity(a, b),
        # a fresh retriever per call: its per-text embedding cache would otherwise make this free
        "subtitle_retriever.retrieve(40 segs)": lambda a, b: create_backend(
            "subtitle_retriever", "lite", shared=False
        ).retrieve(subs, "a spinning star"),
    }
    # warm-up: library initialisation (OpenCV colour tables, the MiniLM model) is paid once per process
    warm = load_video(paths[0])
    for fn in calls.values():
        fn(warm, warm)

    rows = []
    for name, fn in calls.items():
        cold, hot = [], []
        for _ in range(args.repeats):
            FRAME_MEMO.clear()
            a, b = load_video(paths[0]), load_video(paths[1])
            t0 = time.perf_counter()
            fn(a, b)
            cold.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            fn(a, b)
            hot.append(time.perf_counter() - t0)
        rows.append((name, statistics.median(cold), statistics.median(hot)))
    FRAME_MEMO.clear()
    a, b = load_video(paths[0]), load_video(paths[1])
    t0 = time.perf_counter()
    for fn in calls.values():
        fn(a, b)
    all_tools = time.perf_counter() - t0

    clip = load_video(paths[0])
    print(f"clip: {clip.n_frames} frames, {clip.frames.shape[2]}x{clip.frames.shape[1]} px, {clip.duration:.1f} s")
    print(f"{'backend call':40s} {'cold s/call':>12s} {'warm s/call':>12s}")
    for name, c, h in rows:
        print(f"{name:40s} {c:12.3f} {h:12.3f}")
    print(f"{'all calls above on fresh clips':40s} {all_tools:12.3f}")
    stats = decode_stats()
    print(f"decodes: {stats['decodes']} for {len(paths)} videos (cache hits {stats['hits']})")


if __name__ == "__main__":
    main()
