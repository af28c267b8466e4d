"""The video-visibility probe: its data, its report, and a real adapter run through it."""
import json
import os
from pathlib import Path

import pytest

from mvx_tasks.data import load_local
from mvx_tasks.data_verify import verify
from mvx_tasks.probe import generate_probe, visibility_report
from mvx_tasks.video_decoder import load_video


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    return generate_probe(tmp_path_factory.mktemp("probe"))


def test_probe_questions_cover_every_position_and_need_the_named_video(probe):
    samples = load_local(probe)
    assert len(samples) == 2 + 3 + 4 + 5
    assert [s.id for s in samples][:3] == ["prb-000-v1of2", "prb-001-v2of2", "prb-002-v1of3"]
    assert verify(probe).ok
    for s in samples:
        pos = s.meta["asked"]
        asked = s.videos[pos - 1]
        assert s.question == f"What is the background colour of {asked.label}?"
        frame = load_video(probe / asked.path).frames[0]
        corner = frame[:6, -6:].reshape(-1, 3).mean(0)  # background pixel, away from the square
        from mvx_tasks.probe import COLOURS
        want = COLOURS[s.options[s.answer].lower()]
        assert max(abs(corner - want)) < 25, (s.id, corner, want)
        # the first video's colour is an option, so a model that only sees it picks a wrong letter
        first = s.meta["colours"][0].capitalize()
        assert first in s.options.values()
        assert (first == s.options[s.answer]) == (pos == 1)


def _rec(sid, correct):
    return {"id": sid, "correct": correct}


def test_report_catches_a_model_that_only_sees_the_first_video(probe):
    samples = load_local(probe)
    first_only = [_rec(s.id, s.meta["asked"] == 1) for s in samples]
    rep = visibility_report(first_only)
    assert rep["accuracy_by_position"] == {1: 100.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 0.0}
    assert rep["verdict"].startswith("drops videos")
    assert visibility_report([_rec(s.id, True) for s in samples])["verdict"] == "sees every video"
    assert visibility_report([_rec(s.id, False) for s in samples])["verdict"].startswith("inconclusive")


@pytest.mark.slow
def test_tiny_qwen_receives_every_probe_video(probe, tmp_path):
    from harness_run import run_lmms_eval, samples as read_samples
    from tiny_models import build_tiny_qwen2_5_vl

    model = build_tiny_qwen2_5_vl(tmp_path / "qwen")
    log = tmp_path / "spy.jsonl"
    spy = Path(__file__).parent / "processor_spy"
    res, out = run_lmms_eval(
        ["--model", "qwen2_5_vl", "--model_args",
         f"pretrained={model},attn_implementation=sdpa,device=cpu,device_map=cpu,max_num_frames=4",
         "--tasks", "mvx_probe", "--batch_size", "1", "--gen_kwargs", "max_new_tokens=4"], tmp_path / "out",
        env={"MVX_PROBE_DATA": str(probe), "MVX_SPY_LOG": str(log),
             "PYTHONPATH": os.pathsep.join([str(spy), os.environ.get("PYTHONPATH", "")])})
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    assert sorted(c["videos"] for c in calls) == sorted([2] * 2 + [3] * 3 + [4] * 4 + [5] * 5)
    assert len(read_samples(out, "mvx_probe")) == 14
    assert "mvx_acc,none" in res["results"]["mvx_probe"]
