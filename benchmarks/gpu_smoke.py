"""GPU smoke test: the paper profile and one baseline route on CUDA, through lmms-eval, in a few minutes.

Everything is built on the spot, offline: tiny randomly initialised models of every tool backend of
the paper profile (Qwen2.5-VL reader, open_clip for grounding and similarity, GroundingDINO, YOLOv8,
a MiniLM-style sentence model: ``tests/tiny_models.py``) and of a baseline (Gemma-3:
``mvx_tasks/baselines/tiny_models.py``), a small labelled video set, and a local OpenAI-compatible
server that plays the planner (it calls all six tools, then answers). The steps:

1. ``environment``: torch, CUDA and bf16 on the device;
2. ``build``: the tiny models and the data;
3. ``sama-1proc``: ``python -m lmms_eval --model sama`` with ``profile=paper-gpt`` and every backend on
   the device (bf16 on CUDA: each backend's ``dtype=auto``), one process;
4. ``sama-accelerate``: the same under ``accelerate launch --num_processes 1``;
5. ``baseline``: ``--model mvx_hf_chat`` (the gemma_3_4b_it route) on the tiny Gemma-3, on the device.

A step passes when lmms-eval wrote its results file with every question answered (no agent failure,
no failed video), each SAMA question used all six tools with no tool error, and on CUDA the process's
peak CUDA memory is above zero (the models ran on the GPU). Each step's status, time and detail are
printed as a table (and written as JSON with ``--json``); the exit status is 0 when all passed.

    python benchmarks/gpu_smoke.py                  # a machine with one NVIDIA GPU
    python benchmarks/gpu_smoke.py --device cpu     # the same steps on CPU (tests the plumbing)
    python benchmarks/gpu_smoke.py --out results/gpu_smoke.md --json smoke.json   # keep the table

Without CUDA and without ``--device cpu`` it says so and exits 0 without running anything.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the tiny-model builders, the fixture videos, the local planner server

TOOLS = ("video_reader", "temporal_grounding", "scene_graph", "object_tracker", "visual_similarity",
         "subtitle_retriever")
TASK = "mvx_bench_fd"
PEAK = "MVX_SMOKE_CUDA_PEAK_MB"
# lmms-eval run in-process by a tiny launcher that reports the process's peak CUDA memory at exit
LAUNCHER = f'''import atexit, runpy, sys

def _peak():
    try:
        import torch
        if torch.cuda.is_available():
            print("{PEAK}", round(torch.cuda.max_memory_allocated() / 2**20, 1), flush=True)
    except Exception:
        pass

atexit.register(_peak)
sys.argv = ["lmms_eval", *sys.argv[1:]]
runpy.run_module("lmms_eval", run_name="__main__", alter_sys=True)
'''


@dataclass
class Step:
    name: str
    status: str = "not run"  # ok / FAIL / skipped
    seconds: float = 0.0
    detail: str = ""


def environment(device: str) -> str:
    import torch

    if device == "cpu":
        return f"torch {torch.__version__}; CPU run (--device cpu): bf16 and CUDA are not exercised"
    name = torch.cuda.get_device_name(0)
    bf16 = torch.cuda.is_bf16_supported()
    x = torch.ones(8, device="cuda", dtype=torch.bfloat16)
    if float((x * 2).sum()) != 16.0 or not bf16:
        raise RuntimeError(f"bf16 arithmetic on {name} failed (supported: {bf16})")
    return f"torch {torch.__version__}, CUDA {torch.version.cuda}, {name}, bf16 ok"


def build(work: Path) -> dict:
    """Tiny models and the data set; returns their paths."""
    import tiny_models as T
    from fixtures import add_subtitles, make_dataset

    from mvx_tasks.baselines.routes import tiny_model

    os.environ.setdefault("YOLO_CONFIG_DIR", str(work / "yolo-cfg"))
    w = work / "weights"
    models = {"video_reader": T.build_tiny_qwen2_5_vl(w / "qwen2.5-vl"),
              "temporal_grounding": T.build_tiny_open_clip(w / "open-clip"),
              "visual_similarity": w / "open-clip",
              "scene_graph": T.build_tiny_grounding_dino(w / "grounding-dino"),
              "object_tracker": T.build_tiny_yolo(w / "yolo"),
              "subtitle_retriever": T.build_tiny_sentence_transformer(w / "minilm")}
    baseline = tiny_model("gemma3", w)
    data = add_subtitles(make_dataset(work / "data", tasks=["FD"], per_task=2, video_frames=16))
    rows = (data / "data.jsonl").read_text().splitlines()
    return {"models": models, "baseline": baseline, "data": data, "n": len(rows)}


def _run(cmd: list[str], out: Path, env: dict, timeout: int) -> tuple[dict, str]:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    log = proc.stdout + proc.stderr
    found = sorted(out.rglob("*_results.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise RuntimeError(f"lmms-eval wrote no results file (exit {proc.returncode}): "
                           + log[-1200:].replace("\n", " | "))
    return json.loads(found[-1].read_text()), log


def _samples(out: Path) -> list[dict]:
    (f,) = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))[-1:]
    return [json.loads(x) for x in f.read_text().splitlines() if x.strip()]


def _check_answers(res: dict, out: Path, n: int) -> str:
    r = res["results"][TASK]
    bad = {k: r.get(f"{k},none") for k in ("mvx_agent_failed", "mvx_failed") if r.get(f"{k},none")}
    if bad:
        raise RuntimeError(f"questions failed: {bad}; see {out}")
    recs = [s["mvx_acc"] for s in _samples(out)]
    if len(recs) != n:
        raise RuntimeError(f"{len(recs)} of {n} questions in the samples file")
    return f"{n} questions answered, mvx_acc {r['mvx_acc,none']:.1f}"


def _check_traces(trace_dir: Path, n: int) -> str:
    traces = sorted(trace_dir.rglob("*.json"))
    if len(traces) != n:
        raise RuntimeError(f"{len(traces)} traces for {n} questions in {trace_dir}")
    for path in traces:
        t = json.loads(path.read_text())
        if t["status"] != "finished":
            raise RuntimeError(f"{path.name}: {t['status']}: {t.get('failure')}")
        steps = [s for s in t["steps"] if s.get("kind") == "tool"]
        errors = [(s["tool"], s["error"]) for s in steps if s["error"]]
        missing = set(TOOLS) - {s["tool"] for s in steps}
        if errors or missing:
            raise RuntimeError(f"{path.name}: tool errors {errors[:2]}, tools not called {sorted(missing)}")
    return f"{n} traces, each with all {len(TOOLS)} tools served without error"


def _check_peak(log: str, device: str) -> str:
    if device == "cpu":
        return ""
    m = re.findall(rf"{PEAK} ([0-9.]+)", log)
    peak = max((float(x) for x in m), default=0.0)
    if peak <= 0:
        raise RuntimeError("no CUDA memory was allocated: the models did not run on the GPU")
    return f"; peak CUDA memory {peak:.0f} MiB"


def sama_step(built: dict, work: Path, device: str, name: str, accelerate: bool, planner_url: str) -> str:
    out, traces = work / name, work / name / "traces"
    args = {"profile": "paper-gpt", "model": "local-planner", "base_url": planner_url,
            "api_key_env": "MVX_SMOKE_PLANNER_KEY", "workers": 1, "trace_dir": str(traces), "cache_dir": "none",
            "backend.video_reader.max_new_tokens": 4, "backend.temporal_grounding.frames_per_video": 8,
            "backend.visual_similarity.frames_per_video": 8, "backend.object_tracker.imgsz": 128,
            "backend.object_tracker.max_frames": 4}
    for tool, path in built["models"].items():
        args[f"backend.{tool}.model"] = str(path)
        args[f"backend.{tool}.device"] = device
    launcher = work / "lmms_eval_peak.py"
    launcher.write_text(LAUNCHER)
    lmms = [str(launcher), "--model", "sama", "--model_args", ",".join(f"{k}={v}" for k, v in args.items()),
            "--tasks", TASK, "--batch_size", "1", "--output_path", str(out), "--log_samples"]
    if accelerate:
        exe = Path(sys.executable).with_name("accelerate")
        cmd = [str(exe), "launch", "--num_processes", "1", "--num_machines", "1", "--mixed_precision", "no",
               "--dynamo_backend", "no", *(["--cpu"] if device == "cpu" else []), *lmms]
    else:
        cmd = [sys.executable, *lmms]
    env = {**os.environ, "MVX_BENCH_DATA": str(built["data"]), "MVX_SMOKE_PLANNER_KEY": "sk-local",
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "YOLO_CONFIG_DIR": os.environ["YOLO_CONFIG_DIR"]}
    res, log = _run(cmd, out, env, timeout=1500)
    return f"{_check_answers(res, out, built['n'])}; {_check_traces(traces, built['n'])}{_check_peak(log, device)}"


def baseline_step(built: dict, work: Path, device: str) -> str:
    out = work / "baseline"
    launcher = work / "lmms_eval_peak.py"
    launcher.write_text(LAUNCHER)
    model_args = f"pretrained={built['baseline']},frames_per_video=4,attn_implementation=sdpa,device={device}"
    cmd = [sys.executable, str(launcher), "--model", "mvx_hf_chat", "--model_args", model_args, "--tasks", TASK,
           "--batch_size", "1", "--output_path", str(out), "--log_samples"]
    env = {**os.environ, "MVX_BENCH_DATA": str(built["data"]), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    res, log = _run(cmd, out, env, timeout=900)
    counts = [s.get("token_counts") for s in _samples(out)]
    if not all(c and c[0] and c[0].get("input_tokens") for c in counts):
        raise RuntimeError(f"token counts missing from the samples: {counts}")
    return f"{_check_answers(res, out, built['n'])} (tiny random weights: the letters are noise); " \
           f"token counts logged{_check_peak(log, device)}"


def table(steps: list[Step]) -> str:
    rows = ["| step | status | seconds | detail |", "|---|---|---|---|"]
    rows += [f"| {s.name} | {s.status} | {s.seconds:.0f} | {s.detail.replace('|', '/')} |" for s in steps]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--work", type=Path, help="keep everything here (default: a temporary folder, removed)")
    ap.add_argument("--json", type=Path, help="write the steps' results as JSON here")
    ap.add_argument("--out", type=Path, help="write the steps' table as Markdown here (e.g. results/gpu_smoke.md)")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpu_smoke: no CUDA device on this machine; nothing was run. Run it on a machine with an NVIDIA GPU, "
              "or pass --device cpu to run the same steps on the CPU.")
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="mvx-gpu-smoke-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MVX_ANSWER_NOTES", str(work / "answer-notes"))
    os.environ.setdefault("SAMA_CACHE_DIR", str(work / "sama-cache"))
    steps = [Step(n) for n in ("environment", "build", "sama-1proc", "sama-accelerate", "baseline")]
    built: dict = {}
    from fake_endpoint import FakeChatEndpoint, tools_then_answer
    from fixtures import SIX_TOOL_CALLS

    # the planner: all six tools at once, then an answer once their results are in
    planner = tools_then_answer(SIX_TOOL_CALLS, "The evidence points to the first video. Answer: A")

    def do_build() -> str:
        built.update(build(work))
        return f"{len(TOOLS)} tool models and a Gemma-3 built; {built['n']} questions"

    try:
        with FakeChatEndpoint(planner) as ep:
            plan = {"environment": lambda: environment(args.device),
                    "build": do_build,
                    "sama-1proc": lambda: sama_step(built, work, args.device, "sama-1proc", False, ep.base_url),
                    "sama-accelerate": lambda: sama_step(built, work, args.device, "sama-accelerate", True,
                                                         ep.base_url),
                    "baseline": lambda: baseline_step(built, work, args.device)}
            for step in steps:
                if step.name not in ("environment", "build") and not built:
                    step.status, step.detail = "skipped", "the build step failed"
                    continue
                t0 = time.time()
                try:
                    step.detail = plan[step.name]() or ""
                    step.status = "ok"
                except Exception as exc:  # report the step and go on to the next
                    step.status, step.detail = "FAIL", f"{type(exc).__name__}: {exc}"[:1500]
                step.seconds = time.time() - t0
                print(f"[{step.status}] {step.name} ({step.seconds:.0f} s): {step.detail}", flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\ngpu_smoke on {args.device}:\n" + table(steps))
    if args.json:
        args.json.write_text(json.dumps({"device": args.device, "steps": [asdict(s) for s in steps]}, indent=1))
    if args.out:
        import torch as _t

        where = _t.cuda.get_device_name(0) if args.device == "cuda" else "CPU (--device cpu: plumbing only)"
        args.out.write_text(f"# benchmarks/gpu_smoke.py on {where} ({time.strftime('%Y-%m-%d')}, torch "
                            f"{_t.__version__})\n\n{table(steps)}\n")
    return 0 if all(s.status == "ok" for s in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
