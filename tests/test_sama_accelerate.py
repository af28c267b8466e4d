"""`--model sama` under `accelerate launch` with two processes: every question answered once, one trace each."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_run import samples

pytestmark = pytest.mark.slow


def test_two_process_run_shards_and_gathers(tmp_path):
    from mvx_tasks.synth import generate

    data = generate(tmp_path / "synth", per_task=4, seed=2, tasks=["CNT"], progress=False, workers=1)
    out = tmp_path / "out"
    accelerate = Path(sys.executable).with_name("accelerate")
    cmd = [str(accelerate), "launch", "--num_processes", "2", "--cpu", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "lmms_eval", "--model", "sama",
           "--model_args", f"profile=offline,cache_dir={tmp_path / 'cache'},trace_dir={out / 'traces'}",
           "--tasks", "mvx_synth_cnt", "--output_path", str(out), "--log_samples"]
    env = {**os.environ, "MVX_SYNTH_DATA": str(data), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    results = list(out.glob("*_results.json"))
    assert results, (proc.stdout + proc.stderr)[-3000:]
    recs = [s["mvx_acc"] for s in samples(out, "mvx_synth_cnt")]
    assert sorted(r["id"] for r in recs) == [f"synth-cnt-{i:04d}" for i in range(4)]
    assert sorted(p.name for p in (out / "traces").glob("*.json")) == [f"synth-cnt-{i:04d}.json" for i in range(4)]
    assert all(r["failed"] is None and not r["unparsed"] for r in recs)
