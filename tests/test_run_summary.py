"""``mvx-bench estimate`` (answer N sampled questions, project the full run's cost) and
``mvx-bench summary`` (accuracy next to tokens, dollars, iterations and tool calls), on a small
MVX-Synth with the openai planner against the hand-written server and a YAML price table."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_endpoint import FakeChatEndpoint, completion

PRICES = "models:\n  priced-model: {input: 1.0, cached_input: 0.5, output: 10.0}\n"


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Path:
    from mvx_tasks.synth import generate

    return generate(tmp_path_factory.mktemp("synth") / "data", per_task=2, seed=4, tasks=["CNT", "FD"],
                    progress=False, workers=1)


def _mvx(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mvx-bench")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})


def test_estimate_projects_the_full_run_and_summary_reads_it(synth, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    reply = completion(content="Answer: A", prompt_tokens=1000, completion_tokens=100)  # $0.002 a question
    with FakeChatEndpoint(lambda body: (200, reply)) as ep:
        args = (f"profile=offline,planner=openai,model=priced-model,base_url={ep.base_url},api_key_env=NO_KEY_HERE,"
                f"planner.protocol=tools,prices={prices},cache_dir={tmp_path / 'cache'}")
        proc = _mvx("estimate", "--source", "synth", "-n", "3", "--seed", "1", "--output", str(tmp_path / "est"),
                    "--model_args", args, "--json", env={"MVX_SYNTH_DATA": str(synth)})
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert len(ep.requests) == 3
    rep = json.loads(proc.stdout)
    assert (rep["sampled"], rep["benchmark_questions"], rep["failed"]) == (3, 4, 0)
    assert (rep["tokens_per_question"], rep["cost_per_question_usd"]) == (1100, 0.002)
    assert (rep["projected_cost_usd"], rep["projected_tokens"]) == (0.008, 4400)
    assert rep["projected_cost_range_usd"] == [0.008, 0.008]  # every question cost the same

    proc = _mvx("summary", str(tmp_path / "est"), "--json")
    assert proc.returncode == 0, proc.stderr
    run = json.loads(proc.stdout)["run"]
    assert (run["questions"], run["finished"], run["tokens"], run["cost_usd"]) == (3, 3, 3300, 0.006)
    assert run["usage_by_source"]["planner"] == {"model": "priced-model", "prompt_tokens": 3000,
                                                 "completion_tokens": 300, "reasoning_tokens": 0,
                                                 "cached_tokens": 0, "calls": 3, "cost_usd": 0.006}
    assert (run["cost_per_100_usd"], run["iterations_per_question"], run["tool_calls_per_question"]) == (0.2, 1.0, 0.0)


def test_summary_puts_cost_next_to_accuracy(tmp_path):
    from sama_model.run_summary import render, summarize

    out = tmp_path / "out" / "sama"
    out.mkdir(parents=True)
    (out / "2026_results.json").write_text(json.dumps({
        "results": {"mvx_synth_cnt": {"mvx_acc,none": 50.0, "mvx_chance,none": 25.0, "mvx_tokens,none": 1200.0,
                                      "mvx_cost_usd,none": 0.015,
                                      "mvx_iterations,none": 3.5, "mvx_tool_calls,none": 4.0},
                    "mvx_synth_cr": {"mvx_acc,none": 25.0, "mvx_src_rule,none": 4, "mvx_src_planner,none": 0},
                    "anyv_single": {"acc,none": 0.75, "acc_stderr,none": 0.1}},
        "n-samples": {"mvx_synth_cnt": {"effective": 4}, "mvx_synth_cr": {"effective": 4},
                      "anyv_single": {"effective": 4}}}))
    summary = summarize(tmp_path / "out")
    rows = {r["task"]: r for r in summary["tasks"]}
    assert rows["mvx_synth_cnt"] == {"task": "mvx_synth_cnt", "acc": 50.0, "chance": 25.0, "n": 4, "mvx_tokens": 1200.0,
                                     "mvx_cost_usd": 0.015, "mvx_iterations": 3.5, "mvx_tool_calls": 4.0}
    assert rows["anyv_single"]["acc"] == 75.0 and rows["anyv_single"]["mvx_cost_usd"] is None
    lines = render(summary).splitlines()
    assert lines[0].split() == ["task", "acc", "%", "chance", "%", "n", "tokens/q", "$/q", "iter/q", "tools/q", "$"]
    assert lines[2].split() == ["mvx_synth_cnt", "50.0", "25.0", "4", "1200", "0.0150", "3.50", "4.00", "0.0600"]
    # every CR answer was the first-option rule: its 25 % is chance, not a result
    assert rows["mvx_synth_cr"]["acc"] == "no solver"
    assert lines[3].split() == ["mvx_synth_cr", "no", "solver", "-", "4", "-", "-", "-", "-", "-"]
    assert lines[-1] == "no SAMA traces found"


def test_summary_finds_the_demo_layout_and_lmms_eval_layout(tmp_path):
    """`mvx-bench demo` writes traces to <out>/traces; lmms-eval runs to <out>/sama_traces/<config>."""
    from sama_model.run_summary import trace_files

    demo = tmp_path / "demo"
    (demo / "traces").mkdir(parents=True)
    (demo / "results").mkdir()
    for name in ("synth-am-0000.json", "synth-am-0001.json"):
        (demo / "traces" / name).write_text("{}")
    (demo / "results" / "x_results.json").write_text("{}")
    assert [p.name for p in trace_files(demo)] == ["synth-am-0000.json", "synth-am-0001.json"]

    lmms = tmp_path / "lmms"
    (lmms / "run" / "sama_traces" / "offline").mkdir(parents=True)
    (lmms / "run" / "sama_traces" / "offline" / "q.json").write_text("{}")
    (lmms / "traces").mkdir()
    (lmms / "traces" / "other.json").write_text("{}")
    assert [p.name for p in trace_files(lmms)] == ["q.json"]

    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "a.json").write_text("{}")
    (flat / "b_results.json").write_text("{}")
    assert [p.name for p in trace_files(flat)] == ["a.json"]
