"""Every harness config parses, routes every video to the model, resolves to an installed lmms-eval
adapter that accepts its arguments, and turns into the exact lmms-eval command."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from mvx_tasks.harness_configs import (
    CONFIG_DIR,
    TASKS_DIR,
    ConfigError,
    build_command,
    load_config,
    load_configs,
    paper_rows,
    resolve_model,
    run_configs,
)

BASELINES = {  # Table 1 row -> config name (every open/proprietary row has exactly one config)
    "GPT-4o": "gpt_4o", "GPT-5.2": "gpt_5_2", "InternVL3.5-38B": "internvl3_5_38b",
    "Qwen2.5-VL-32B": "qwen2_5_vl_32b", "InternVL3.5-14B": "internvl3_5_14b", "Gemma-3-27B-IT": "gemma_3_27b_it",
    "Qwen3.6-27B": "qwen3_6_27b", "Qwen3.6-27B-Thinking": "qwen3_6_27b_thinking", "Gemma-3-12B-IT": "gemma_3_12b_it",
    "Pixtral-12B": "pixtral_12b", "InternVL3.5-8B": "internvl3_5_8b", "MiniCPM-V-2": "minicpm_v_2_6_8b",
    "Bee-8B": "bee_8b", "Qwen2.5-VL-7B": "qwen2_5_vl_7b", "LLaVA-OneVision-7B": "llava_onevision_7b",
    "Idefics3-8B-Llama3": "idefics3_8b_llama3", "InternVL3.5-4B": "internvl3_5_4b", "Qwen2.5-VL-3B": "qwen2_5_vl_3b",
    "Gemma-3-4B-IT": "gemma_3_4b_it", "Phi-3.5-Vision": "phi_3_5_vision", "Phi-4-Multimodal": "phi_4_multimodal",
    "SAMA (Qwen2.5-VL-7B + DeepSeek-V4-Pro)": "sama_paper_deepseek", "SAMA (Qwen2.5-VL-7B + GPT-5.2)": "sama_paper_gpt",
}
# Adapters that drop every video after the first, or take images only (harness.md): never on the video route.
NOT_MULTI_VIDEO = {"llava_onevision", "idefics2", "internvl3", "internvl3_5", "minicpm_v", "phi3v", "mistral3_vl"}


@pytest.fixture(scope="module")
def configs():
    return load_configs()


def test_every_paper_row_has_one_config_and_ablations_exist(configs):
    by_row = {c.paper_row: c.name for c in configs if c.paper_row}
    assert by_row == BASELINES
    assert sorted(c.name for c in configs if c.paper_row is None) == [
        "sama_no_aggregation", "sama_no_conflict", "sama_no_skills", "sama_offline"]
    assert {c.paper_ablation for c in configs if c.paper_ablation} == {
        "w/o-Skills", "w/o-Conflict", "w/o-Evidence Aggregation"}
    assert all(c.generation["temperature"] == 0 and c.seed == 42 for c in configs)


def test_routes_send_every_video(configs):
    for c in configs:
        assert c.tasks == {"video": "mvx_bench", "frames": "mvx_bench_frames", "agent": "mvx_bench"}[c.route], c.name
        if c.route == "video":
            assert c.model not in NOT_MULTI_VIDEO, c.name
    assert {c.name for c in configs if c.route == "frames"} == {
        "pixtral_12b", "minicpm_v_2_6_8b", "bee_8b", "phi_3_5_vision", "gpt_4o", "gpt_5_2"}
    # the plugin's own adapter carries Gemma-3, Idefics3, LLaVA-OneVision, InternVL and Phi-4 on the video route
    assert {c.name for c in configs if c.model == "mvx_hf_chat"} == {
        "gemma_3_4b_it", "gemma_3_12b_it", "gemma_3_27b_it", "idefics3_8b_llama3", "llava_onevision_7b",
        "internvl3_5_4b", "internvl3_5_8b", "internvl3_5_14b", "internvl3_5_38b", "phi_4_multimodal"}
    # every open baseline names its architecture (the route check builds it) or says why it cannot be checked
    for c in configs:
        if c.route != "agent":
            assert bool(c.architecture) != bool(c.offline_reason), c.name
    assert {c.model for c in configs if c.route == "agent"} == {"sama"}


def test_models_resolve_to_installed_lmms_eval_adapters(configs):
    from mvx_tasks.lmms_eval_plugin import plugin_models

    plugins = {m: e["class_path"] for m, e in plugin_models().items()}
    checked = {}
    for c in configs:
        check = resolve_model(c)
        if c.model in plugins:
            assert check.class_path == plugins[c.model] and c.class_path in (None, check.class_path), c.name
        else:
            assert check.registered and check.class_path.startswith("lmms_eval.models."), c.name
        checked[c.name] = check.args_checked
    # adapters importable here had their constructor compared with model_args
    assert checked["qwen2_5_vl_7b"] and checked["internvl3_5_38b"] and checked["gpt_4o"] and checked["gemma_3_4b_it"]
    assert checked["pixtral_12b"] and checked["llava_onevision_7b"]


def _write(tmp_path: Path, name: str, **changes) -> Path:
    raw = yaml.safe_load((CONFIG_DIR / "qwen2_5_vl_7b.yaml").read_text())
    raw.update(changes)
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump(raw))
    return p


@pytest.mark.parametrize("changes, message", [
    ({"route": "frames"}, "needs task group 'mvx_bench_frames'"),
    ({"paper_row": "Qwen2.5-VL-72B"}, "not a Table 1 row"),
    ({"generation": {"temperature": 0.7, "max_new_tokens": 16}}, "temperature: 0"),
    ({"seed": 0}, "seed must be 42"),
    ({"frames": 8}, "unknown fields \\['frames'\\]"),
])
def test_invalid_configs_are_refused(tmp_path, changes, message):
    with pytest.raises(ConfigError, match=message):
        load_config(_write(tmp_path, "bad", **changes), known_rows=paper_rows())


def test_frame_budget_must_match_frames_per_video(tmp_path):
    raw = yaml.safe_load((CONFIG_DIR / "qwen2_5_vl_7b.yaml").read_text())
    raw["model_args"]["max_num_frames"] = 16
    p = tmp_path / "budget.yaml"
    p.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match="disagrees with frames_per_video: 8"):
        load_config(p)


def test_unknown_model_arg_is_refused(tmp_path):
    cfg = load_config(_write(tmp_path, "typo", model_args={"pretrained": "Qwen/Qwen2.5-VL-7B-Instruct",
                                                            "max_frames": 8}))
    with pytest.raises(ConfigError, match=r"does not accept model_args \['max_frames'\]"):
        resolve_model(cfg)


def test_sama_args_are_checked_by_its_own_validator(tmp_path):
    raw = yaml.safe_load((CONFIG_DIR / "sama_no_skills.yaml").read_text())
    assert raw["model_args"] == {"profile": "paper-gpt", "skills": False}
    raw["model_args"] = {"profile": "paper-gpt", "ablate": "skills"}
    p = tmp_path / "sama_bad.yaml"
    p.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match="unknown SAMA model argument 'ablate'"):
        resolve_model(load_config(p))


def test_build_command_is_exact():
    cfg = load_config(CONFIG_DIR / "qwen2_5_vl_7b.yaml")
    cmd = build_command(cfg, limit=5, output="out", extra_args=["--verbosity", "DEBUG"], python="py")
    assert cmd == ["py", "-m", "lmms_eval", "--model", "qwen2_5_vl", "--model_args",
                   "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=8,attn_implementation=flash_attention_2",
                   "--tasks", "mvx_bench", "--include_path", str(TASKS_DIR), "--batch_size", "1", "--seed", "42",
                   "--gen_kwargs", "temperature=0,do_sample=False,max_new_tokens=512",
                   "--output_path", "out/qwen2_5_vl_7b", "--log_samples", "--log_samples_suffix", "qwen2_5_vl_7b",
                   "--limit", "5", "--verbosity", "DEBUG"]
    thinking = build_command(load_config(CONFIG_DIR / "qwen3_6_27b_thinking.yaml"))
    assert "pretrained=Qwen/Qwen3.6-27B,max_num_frames=8,fps=60,enable_thinking=True,attn_implementation=flash_attention_2" \
        in thinking
    assert "temperature=0,do_sample=False,max_new_tokens=16384" in thinking


def test_dry_run_prints_commands_and_runs_nothing(tmp_path, capsys):
    rc = run_configs([CONFIG_DIR / "gpt_4o.yaml", "sama_offline"], dry_run=True, limit=2, output=tmp_path / "o")
    out = capsys.readouterr().out
    assert rc == 0
    assert out.count("-m lmms_eval") == 2 and "--tasks mvx_bench_frames" in out and "--model sama" in out
    assert "MVX_FRAMES_PER_VIDEO=8" in out and "--limit 2" in out
    assert not (tmp_path / "o").exists()


def test_a_run_that_writes_no_results_fails(tmp_path, capsys):
    """lmms-eval exits 0 on a missing task; run_configs must notice the missing results file."""
    cfg_path = _write(tmp_path, "noop")
    rc = run_configs([cfg_path], limit=1, output=tmp_path / "o",
                     extra_args=["--tasks", "mvx_bench_does_not_exist", "--help"])
    assert rc == 1
    side = json.loads((tmp_path / "o" / "qwen2_5_vl_7b" / "mvx_run.json").read_text())
    assert side["paper_row"] == "Qwen2.5-VL-7B" and side["command"][0] == sys.executable
    assert "wrote no results file" in capsys.readouterr().err
