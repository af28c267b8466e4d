"""MVX-Bench through the real lmms-eval CLI with the built-in qwen2_5_vl adapter and a tiny random Qwen2.5-VL.

Checks the protocol, not accuracy: every video of each question reaches the model's processor,
and the results file holds the 11 task accuracies and the question-weighted overall.
"""
import json
import os
from pathlib import Path

import pytest

from fixtures import make_dataset
from harness_run import run_lmms_eval, samples
from mvx_tasks.registry import bench_tasks

pytestmark = pytest.mark.slow
SPY = Path(__file__).parent / "processor_spy"


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory):
    pytest.importorskip("torchvision")
    from tiny_models import build_tiny_qwen2_5_vl

    return build_tiny_qwen2_5_vl(tmp_path_factory.mktemp("qwen") / "tiny-qwen2.5-vl")


def test_every_video_reaches_qwen2_5_vl_and_results_hold_all_tasks(tiny_qwen, tmp_path):
    data = make_dataset(tmp_path / "data", tasks=[t.code for t in bench_tasks()], per_task=1, video_frames=8)
    rows = [json.loads(x) for x in (data / "data.jsonl").read_text().splitlines()]
    log = tmp_path / "spy.jsonl"
    model_args = f"pretrained={tiny_qwen},attn_implementation=sdpa,device=cpu,device_map=cpu,max_num_frames=4"
    res, out = run_lmms_eval(
        ["--model", "qwen2_5_vl", "--model_args", model_args, "--tasks", "mvx_bench", "--batch_size", "1",
         "--gen_kwargs", "max_new_tokens=4"], tmp_path / "out",
        env={"MVX_BENCH_DATA": str(data), "MVX_SPY_LOG": str(log),
             "PYTHONPATH": os.pathsep.join([str(SPY), os.environ.get("PYTHONPATH", "")])})
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    assert not [c for c in calls if "spy_error" in c]
    # one processor call per question, each with all of that question's videos
    assert sorted(c["videos"] for c in calls) == sorted(len(r["videos"]) for r in rows)
    assert sum(c["videos"] for c in calls) == sum(len(r["videos"]) for r in rows) == 43  # 7 tasks x 5 videos + 4 tasks x 2
    for t in bench_tasks():
        acc = res["results"][f"mvx_bench_{t.slug}"]["mvx_acc,none"]
        assert 0.0 <= acc <= 100.0
        [rec] = [s["mvx_acc"] for s in samples(out, f"mvx_bench_{t.slug}")]
        assert rec["task"] == t.code and rec["failed"] is None
    n_correct = sum(s["mvx_acc"]["correct"] for t in bench_tasks() for s in samples(out, f"mvx_bench_{t.slug}"))
    assert res["groups"]["mvx_bench"]["mvx_acc,none"] == pytest.approx(100 * n_correct / 11)


def test_frames_group_gives_the_model_every_videos_frames(tiny_qwen, tmp_path):
    data = make_dataset(tmp_path / "data", tasks=["CNT", "FD"], per_task=1, video_frames=8)
    log = tmp_path / "spy.jsonl"
    model_args = f"pretrained={tiny_qwen},attn_implementation=sdpa,device=cpu,device_map=cpu"
    res, out = run_lmms_eval(
        ["--model", "qwen2_5_vl", "--model_args", model_args, "--tasks", "mvx_bench_frames_cnt,mvx_bench_frames_fd",
         "--batch_size", "1", "--gen_kwargs", "max_new_tokens=4"], tmp_path / "out",
        env={"MVX_BENCH_DATA": str(data), "MVX_SPY_LOG": str(log),
             "PYTHONPATH": os.pathsep.join([str(SPY), os.environ.get("PYTHONPATH", "")])})
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    # 8 labelled frames per video: 5 videos for CNT, 2 for FD
    assert sorted((c["videos"], c["images"]) for c in calls) == [(0, 16), (0, 40)]
    assert set(res["results"]) >= {"mvx_bench_frames_cnt", "mvx_bench_frames_fd"}


def test_mvx_synth_group_runs_end_to_end_on_tiny_qwen(tiny_qwen, tmp_path):
    """`lmms-eval --tasks mvx_synth --model qwen2_5_vl` on a small generated MVX-Synth."""
    from mvx_tasks.synth import generate

    data = generate(tmp_path / "synth", per_task=1, seed=4, progress=False, workers=1)
    model_args = f"pretrained={tiny_qwen},attn_implementation=sdpa,device=cpu,device_map=cpu,max_num_frames=4"
    res, out = run_lmms_eval(
        ["--model", "qwen2_5_vl", "--model_args", model_args, "--tasks", "mvx_synth", "--batch_size", "1",
         "--gen_kwargs", "max_new_tokens=4"], tmp_path / "out", env={"MVX_SYNTH_DATA": str(data)})
    for t in bench_tasks():
        [rec] = [s["mvx_acc"] for s in samples(out, f"mvx_synth_{t.slug}")]
        assert rec["id"] == f"synth-{t.slug}-0000" and rec["failed"] is None
    assert "mvx_acc,none" in res["groups"]["mvx_synth"]
