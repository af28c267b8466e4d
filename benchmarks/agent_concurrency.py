"""Measures SAMA's question-level concurrency and the tool cache.

1. Concurrency: N questions answered by the ``openai`` planner against a local endpoint that
   injects a fixed latency per chat completion (as an API-bound planner mostly waits), with
   1, 4 and 16 workers; reports wall time and speed-up over 1 worker.
2. Cache: the same videos as counting questions with the scripted planner, cold (empty tool cache) and rerun with a
   fresh trace folder but the same cache (every tool result reused), plus a resumed rerun
   (finished traces, nothing recomputed). Backends here are small in-script engines whose
   per-call cost is a fixed sleep standing in for model inference (``--tool-cost``).

    python benchmarks/agent_concurrency.py [--questions 16] [--latency 0.2] [--tool-cost 0.05]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test server lives with the tests

from mvx_tasks.video_decoder import load_video  # noqa: E402
from sama_model.agent import SamaAgent  # noqa: E402
from fake_endpoint import FakeChatEndpoint, completion  # noqa: E402
from sama_model.profiles import build_config  # noqa: E402
from sama_model.question import AgentQuestion, VideoRef  # noqa: E402
from sama_model.runner import RunStats, run_questions  # noqa: E402
from sama_model.tools.backends import TOOL_NAMES, register_backend  # noqa: E402
from sama_model.tools.visual_similarity import clear_embedding_cache  # noqa: E402

TOOL_COST = 0.05


class _Cost:
    thread_safe = True

    def _work(self) -> None:
        time.sleep(TOOL_COST)


@register_backend("scene_graph", "bench")
class BenchSceneGraph(_Cost):
    def graph(self, clip, query="", window=(None, None), n_frames=8):
        self._work()
        frames, times = clip.sample(n_frames, *window)
        bright = [int((f.mean(axis=2) > 200).sum() > 20) for f in frames]
        return {"frames": [{"t": float(t), "objects": [], "relations": []} for t in times],
                "counts": {"square": int(np.median(bright))}}


@register_backend("object_tracker", "bench")
class BenchTracker(_Cost):
    def track(self, clip, query="", window=(None, None)):
        self._work()
        return {"tracks": [], "counts": {"square": 1}, "max_per_frame": {"square": 1}}


@register_backend("video_reader", "bench")
class BenchReader(_Cost):
    def read(self, clip, query, window=(None, None), n_frames=8):
        self._work()
        frames, _ = clip.sample(n_frames, *window)
        r, g, b = frames.reshape(-1, 3).mean(0)
        return {"answer": f"Mean colour r={r:.0f} g={g:.0f} b={b:.0f}; one square.", "window": list(window),
                "frames_used": int(len(frames))}


@register_backend("visual_similarity", "bench")
class BenchSimilarity(_Cost):
    def embed(self, clip, window=(None, None), aspect="content"):
        self._work()
        frames, _ = clip.sample(8, *window)
        return frames.reshape(len(frames), -1, 3).mean(1) / 255.0


def make_video(path: Path, color: tuple[int, int, int]) -> None:
    import av

    with av.open(str(path), "w") as out:
        s = out.add_stream("libx264", rate=10)
        s.width = s.height = 64
        s.pix_fmt = "yuv420p"
        for i in range(30):
            img = np.full((64, 64, 3), color, np.uint8)
            img[10:20, i % 50:i % 50 + 10] = 255
            for p in s.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(p)
        for p in s.encode():
            out.mux(p)


def make_questions(root: Path, n: int) -> list[AgentQuestion]:
    (root / "videos").mkdir(parents=True)
    labels = ["Reference", "Video A", "Video B", "Video C", "Video D"]
    qs = []
    for i in range(n):
        refs = []
        for j, label in enumerate(labels):
            p = root / "videos" / f"q{i}_{j}.mp4"
            make_video(p, ((37 * i + 60 * j) % 200, (91 * j) % 200, (13 * i) % 200))
            refs.append(VideoRef(label, f"videos/{p.name}"))
        qs.append(AgentQuestion(f"q{i}", "Which candidate is a near-duplicate of the reference?",
                                {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}, tuple(refs),
                                task="VS", root=str(root)))
    return qs


def responder(body: dict) -> tuple[int, dict]:
    """Turn 1: compare the reference with every candidate; afterwards: answer."""
    if "Iteration 1 of" in body["messages"][-1]["content"]:
        return 200, completion(tool_calls=[("visual_similarity", {"video_a": "Reference", "video_b": c})
                                           for c in ("Video A", "Video B", "Video C", "Video D")])
    return 200, completion(content="Answer: A")


def backends() -> dict[str, str]:
    args = {f"backend.{t}": "off" for t in TOOL_NAMES}
    args.update({f"backend.{t}": "bench" for t in ("scene_graph", "object_tracker", "video_reader",
                                                  "visual_similarity")})
    return {**args, "motion": "off"}


def timed(agent: SamaAgent, qs: list[AgentQuestion], trace_dir: Path, workers: int) -> tuple[float, RunStats]:
    stats = RunStats()
    t0 = time.perf_counter()
    outs = run_questions(agent, qs, trace_dir, workers=workers, progress=False, stats=stats)
    elapsed = time.perf_counter() - t0
    assert all(o.startswith("Answer: ") for o in outs), outs
    return elapsed, stats


def main() -> None:
    global TOOL_COST
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per chat completion")
    ap.add_argument("--tool-cost", type=float, default=0.05, help="seconds per backend call")
    a = ap.parse_args()
    TOOL_COST = a.tool_cost
    os.environ["SAMA_BENCH_KEY"] = "bench-key"
    report: dict = {"questions": a.questions, "latency_s": a.latency, "tool_cost_s": a.tool_cost}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        qs = make_questions(root / "data", a.questions)
        for q in qs:  # decode once up front so every worker count starts with warm frames
            for v in q.videos:
                load_video(Path(q.root) / v.path)
        with FakeChatEndpoint(responder, latency=a.latency) as ep:
            conc = {}
            for workers in (1, 4, 16):
                clear_embedding_cache()  # every worker count computes its embeddings afresh
                agent = SamaAgent(build_config(planner="openai", model="bench", base_url=ep.base_url,
                                               api_key_env="SAMA_BENCH_KEY", cache_dir=str(root / f"c{workers}"),
                                               **backends()))
                elapsed, _ = timed(agent, qs, root / f"t{workers}", workers)
                conc[workers] = elapsed
            report["concurrency_wall_s"] = {w: round(t, 3) for w, t in conc.items()}
            report["concurrency_speedup"] = {w: round(conc[1] / t, 2) for w, t in conc.items()}
            report["planner_requests"] = len(ep.requests)
        clear_embedding_cache()
        counting = [replace(q, task="CNT", question="Which video has the same number of squares as the reference?")
                    for q in qs]
        agent = SamaAgent(build_config(cache_dir=str(root / "cache"), **backends()))
        cold, _ = timed(agent, counting, root / "cold", 4)
        warm, s_warm = timed(agent, counting, root / "warm", 4)
        resumed, s_res = timed(agent, counting, root / "warm", 4)
        report["cache"] = {"cold_s": round(cold, 3), "cached_rerun_s": round(warm, 3),
                           "cached_rerun_ratio": round(warm / cold, 3), "hits": agent.cache.stats()["hits"],
                           "resumed_rerun_s": round(resumed, 4), "resumed_questions": s_res.resumed}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
