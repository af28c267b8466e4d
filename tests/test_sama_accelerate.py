"""`--model sama` under `accelerate launch` with two processes: every question answered once, one trace
each, and the same answers, question by question, as one process (rank and device come from the
launcher, which lmms-eval before 0.7.3 never hands to the model).

Two processes on CPUs: `accelerate launch --cpu --num_processes 2` starts ONE process on one machine
(its simple launcher; several CPU processes need MPI), so the test uses accelerate's torchrun launcher
(`--multi_gpu --num_processes 2`) with `ACCELERATE_USE_CPU=true`: two ranks on a gloo process group,
the way a GPU node runs NCCL ranks."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from harness_run import run_lmms_eval, samples

pytestmark = pytest.mark.slow

FIGURES = ("mvx_tokens", "mvx_iterations", "mvx_tool_calls", "mvx_agent_failed", "mvx_src_planner",
           "mvx_src_forced", "mvx_src_fallback", "mvx_src_rule")


def _answers(folder: Path, task: str) -> dict[str, tuple]:
    """question id -> (raw output, parsed letter, correct, per-answer figures) from a samples file."""
    out = {}
    for s in samples(folder, task):
        rec = s["mvx_acc"]
        assert rec["id"] not in out, f"{rec['id']} answered twice"
        out[rec["id"]] = (rec["raw_output"], rec["parsed"], rec["correct"], tuple(s[k] for k in FIGURES))
    return out


def test_two_processes_answer_like_one(tmp_path):
    from mvx_tasks.synth import generate

    data = generate(tmp_path / "synth", per_task=4, seed=2, tasks=["CNT", "SEQ"], progress=False, workers=1)
    tasks = "mvx_synth_cnt,mvx_synth_seq"
    env = {**os.environ, "MVX_SYNTH_DATA": str(data), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

    out = tmp_path / "two"
    accelerate = Path(sys.executable).with_name("accelerate")
    cmd = [str(accelerate), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "lmms_eval", "--model", "sama",
           "--model_args", f"profile=offline,cache_dir={tmp_path / 'cache2'},trace_dir={out / 'traces'}",
           "--tasks", tasks, "--output_path", str(out), "--log_samples"]
    proc = subprocess.run(cmd, env={**env, "ACCELERATE_USE_CPU": "true"}, capture_output=True, text=True, timeout=900,
                          check=False)
    log = proc.stdout + proc.stderr
    assert list(out.rglob("*_results.json")), log[-3000:]
    # two processes ran, and each SAMA knew its rank (its progress bar names it)
    assert "Running on rank 1 (local rank 1)" in log, log[-3000:]
    assert "SAMA rank 0/2" in log and "SAMA rank 1/2" in log, log[-3000:]

    one = tmp_path / "one"
    run_lmms_eval(["--model", "sama", "--model_args",
                   f"profile=offline,cache_dir={tmp_path / 'cache1'},trace_dir={one / 'traces'}",
                   "--tasks", tasks], one, env={"MVX_SYNTH_DATA": str(data)}, timeout=900)

    for task, code in (("mvx_synth_cnt", "cnt"), ("mvx_synth_seq", "seq")):
        two_procs, one_proc = _answers(out, task), _answers(one, task)
        assert sorted(two_procs) == [f"synth-{code}-{i:04d}" for i in range(4)]
        assert two_procs == one_proc  # the same answer, letter and figures for every question
        assert all(a[0].startswith("Answer: ") and a[1] is not None for a in two_procs.values())
    names = sorted(p.name for p in (out / "traces").glob("*.json"))
    assert names == sorted(f"synth-{c}-{i:04d}.json" for c in ("cnt", "seq") for i in range(4))
