"""Issue 20, end to end: the paper configuration on local folders through the real lmms-eval CLI.

Tiny random models of every tool's model backend are saved into folders (Qwen2.5-VL reader, open_clip
for temporal grounding and similarity, GroundingDINO, YOLOv8, a MiniLM-style sentence model); the run
names each with ``backend.<tool>.model=<folder or file>`` only, and a local OpenAI-compatible server
plays the planner, calling all six tools. Every tool must be served by its model backend (the trace
names the folder or file used), with no failed question and no failed tool call.
"""
from __future__ import annotations

import json
import os
import tempfile

import pytest
from fake_endpoint import FakeChatEndpoint, tools_then_answer
from fixtures import SIX_TOOL_CALLS, add_subtitles, make_dataset
from harness_run import run_lmms_eval, samples

pytestmark = pytest.mark.slow

TOOL_CALLS = SIX_TOOL_CALLS

# first turn: all six tools at once; once their results are in: the answer
_planner = tools_then_answer(TOOL_CALLS, "The evidence points to the first video. Answer: A")


@pytest.fixture(scope="module")
def local_models(tmp_path_factory):
    pytest.importorskip("open_clip")
    pytest.importorskip("ultralytics")
    pytest.importorskip("sentence_transformers")
    os.environ.setdefault("YOLO_CONFIG_DIR", tempfile.mkdtemp(prefix="yolo-cfg-"))
    import tiny_models as T

    root = tmp_path_factory.mktemp("weights")
    return {"video_reader": T.build_tiny_qwen2_5_vl(root / "qwen2.5-vl"),
            "temporal_grounding": T.build_tiny_open_clip(root / "open-clip"),
            "visual_similarity": root / "open-clip",
            "scene_graph": T.build_tiny_grounding_dino(root / "grounding-dino"),
            "object_tracker": T.build_tiny_yolo(root / "yolo"),
            "subtitle_retriever": T.build_tiny_sentence_transformer(root / "minilm")}


def test_paper_configuration_on_local_folders_through_lmms_eval(local_models, tmp_path):
    data = add_subtitles(make_dataset(tmp_path / "data", tasks=["FD"], per_task=2, video_frames=16))

    args = {"profile": "paper-gpt", "model": "local-planner", "api_key_env": "MVX_TEST_PLANNER_KEY",
            "workers": 1, "trace_dir": str(tmp_path / "traces"), "cache_dir": "none"}
    for tool, path in local_models.items():
        args[f"backend.{tool}.model"] = str(path)
        args[f"backend.{tool}.device"] = "cpu"
    args.update({"backend.video_reader.max_new_tokens": 4, "backend.temporal_grounding.frames_per_video": 8,
                 "backend.visual_similarity.frames_per_video": 8, "backend.object_tracker.imgsz": 128,
                 "backend.object_tracker.max_frames": 4})
    with FakeChatEndpoint(_planner) as ep:
        args["base_url"] = ep.base_url
        model_args = ",".join(f"{k}={v}" for k, v in args.items())
        res, out = run_lmms_eval(["--model", "sama", "--model_args", model_args, "--tasks", "mvx_bench_fd",
                                  "--batch_size", "1"], tmp_path / "out",
                                 env={"MVX_BENCH_DATA": str(data), "MVX_TEST_PLANNER_KEY": "sk-local",
                                      "YOLO_CONFIG_DIR": os.environ["YOLO_CONFIG_DIR"]}, timeout=900)
        assert len([r for r in ep.requests if not any(m.get("role") == "tool" for m in r["messages"])]) >= 2

    r = res["results"]["mvx_bench_fd"]
    assert r["mvx_agent_failed,none"] == 0 and r["mvx_unparsed,none"] == 0 and r["mvx_failed,none"] == 0
    recs = [s["mvx_acc"] for s in samples(out, "mvx_bench_fd")]
    assert len(recs) == 2 and all(x["parsed"] == "A" and x["agent_failed"] is None for x in recs)
    # the run folder is named after the planner's model=, never "null"
    assert out.name == "local-planner"

    traces = sorted((tmp_path / "traces").glob("*.json"))
    assert len(traces) == 2
    for path in traces:
        trace = json.loads(path.read_text())
        assert trace["status"] == "finished", trace.get("failure")
        steps = [s for s in trace["steps"] if s.get("kind") == "tool"]
        served = {s["tool"]: s for s in steps}
        assert set(served) == set(local_models), sorted(served)
        for s in steps:
            assert s["error"] is None, (s["tool"], s["error"])
        for tool, step in served.items():
            assert step["backend"] == {"video_reader": "transformers", "temporal_grounding": "clip",
                                       "visual_similarity": "clip", "scene_graph": "grounding_dino",
                                       "object_tracker": "yolo", "subtitle_retriever": "sentence_transformers"}[tool]
            assert step["data"]["model"] == str(local_models[tool]), (tool, step["data"].get("model"))
        assert served["subtitle_retriever"]["data"]["hits"], "the subtitle tool found no subtitles"
