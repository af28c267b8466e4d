"""`--model sama` leaves `<trace_dir>/run_stats/rank<r>.json`: this rank's questions, distinct videos,
resumed / answered / failed, its decodes and frame-cache hits and the tool cache's hits and misses
(what benchmarks/scale.py reads for decodes per video and the tool-cache hit rate)."""
from __future__ import annotations

import json

import pytest
from harness_run import run_lmms_eval

pytestmark = pytest.mark.slow


def test_run_stats_first_run_and_resumed_rerun(tmp_path):
    from mvx_tasks.synth import generate

    data = generate(tmp_path / "synth", per_task=2, seed=5, tasks=["SPR"], progress=False, workers=1)
    traces, cache = tmp_path / "out" / "traces", tmp_path / "cache"
    args = ["--model", "sama", "--model_args", f"profile=offline,workers=1,cache_dir={cache},trace_dir={traces}",
            "--tasks", "mvx_synth_spr"]
    run_lmms_eval(args, tmp_path / "out", env={"MVX_SYNTH_DATA": str(data)}, timeout=900)
    first = json.loads((traces / "run_stats" / "rank0.json").read_text())
    assert (first["rank"], first["world_size"], first["questions"], first["videos"]) == (0, 1, 2, 10)
    assert (first["resumed"], first["answered"], first["failed"]) == (0, 2, 0)
    assert 1 <= first["decode"]["decodes"] + first["decode"]["window_decodes"]
    assert first["tool_cache"]["hits"] == 0 and first["tool_cache"]["misses"] > 0
    # the record sits beside the traces without being taken for one
    assert sorted(p.name for p in traces.glob("*.json")) == ["synth-spr-0000.json", "synth-spr-0001.json"]

    run_lmms_eval(args, tmp_path / "out", env={"MVX_SYNTH_DATA": str(data)}, timeout=900)
    again = json.loads((traces / "run_stats" / "rank0.json").read_text())
    assert (again["questions"], again["resumed"], again["answered"], again["failed"]) == (2, 2, 0, 0)
    assert again["decode"]["decodes"] == 0 and again["tool_cache"] == {"hits": 0, "misses": 0, "corrupt": 0,
                                                                         "write_errors": 0}
