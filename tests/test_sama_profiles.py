"""Profiles as data and the model-argument parser."""
from __future__ import annotations

import pytest

from sama_model.profiles import ConfigError, build_config, profile_names


def test_offline_is_the_default():
    cfg = build_config()
    assert (cfg.profile, cfg.planner, cfg.max_iterations, cfg.motion) == ("offline", "scripted", 10, True)
    assert {t: s.name for t, s in cfg.active_backends().items()} == {
        "video_reader": "lite", "temporal_grounding": "lite", "scene_graph": "lite", "object_tracker": "lite",
        "visual_similarity": "lite", "subtitle_retriever": "lite", "motion_analyzer": "lite",
        "manipulation_detector": "lite"}
    assert (cfg.skills, cfg.conflict, cfg.aggregation) == (True, True, True)


def test_paper_profiles():
    assert profile_names() == ["offline", "paper-gpt", "paper-deepseek"]
    gpt = build_config(profile="paper-gpt")
    assert (gpt.planner, gpt.planner_options) == ("openai", {
        "model": "gpt-5.2", "api_key_env": "OPENAI_API_KEY", "reasoning_effort": "none", "temperature": 0, "seed": 42,
        "max_completion_tokens": 4096})
    assert {t: (s.name, s.options) if s else None for t, s in gpt.active_backends().items()} == {
        "video_reader": ("transformers", {"model": "Qwen/Qwen2.5-VL-7B-Instruct"}),
        "temporal_grounding": ("clip", {"model": "timm/vit_large_patch14_clip_224.openai"}),
        "scene_graph": ("grounding_dino", {"model": "IDEA-Research/grounding-dino-base"}),
        "object_tracker": ("yolo", {"model": "yolov8m.pt"}),
        "visual_similarity": ("clip", {"model": "timm/vit_large_patch14_clip_224.openai"}),
        "subtitle_retriever": ("sentence_transformers", {"model": "BAAI/bge-m3"}),
        "motion_analyzer": None, "manipulation_detector": None}
    ds = build_config(profile="paper-deepseek")
    assert ds.planner_options == {"model": "deepseek-v4-pro", "base_url": "https://api.deepseek.com",
                                  "api_key_env": "DEEPSEEK_API_KEY", "temperature": 0, "max_tokens": 4096}
    assert ds.active_backends() == gpt.active_backends()


def test_overrides_and_ablation_switches():
    cfg = build_config(profile="paper-gpt", **{"backend.video_reader": "endpoint",
                                               "backend.video_reader.base_url": "http://h/v1",
                                               "backend.scene_graph.box_threshold": "0.3"},
                       skills="off", conflict="false", aggregation=0, max_iterations="4", workers=8,
                       batch_size="1", device="cuda")
    b = cfg.active_backends()
    assert (b["video_reader"].name, b["video_reader"].options) == ("endpoint", {"base_url": "http://h/v1"})
    assert b["scene_graph"].options == {"model": "IDEA-Research/grounding-dino-base", "box_threshold": 0.3}
    assert (cfg.skills, cfg.conflict, cfg.aggregation, cfg.max_iterations, cfg.workers) == (False, False, False, 4, 8)
    # another planner drops the profile's planner options
    assert build_config(profile="paper-gpt", planner="scripted").planner_options == {}
    # fingerprints follow behaviour, not bookkeeping
    assert build_config(workers=1).fingerprint() == build_config(workers=9, trace_dir="x").fingerprint()
    assert build_config().fingerprint() != build_config(conflict="off").fingerprint()
    # a budget or a price file never changes an answer: a rerun with a higher budget resumes
    budget = build_config(max_cost_usd="2.5", max_tokens_run="1000", prices="p.yaml")
    assert (budget.max_cost_usd, budget.max_tokens_run, budget.prices) == (2.5, 1000, "p.yaml")
    assert budget.fingerprint() == build_config().fingerprint()
    assert build_config(motion="off").active_backends()["motion_analyzer"] is None


@pytest.mark.parametrize("args,message", [
    ({"profile": "nope"}, "unknown profile 'nope'"),
    ({"backend.camera": "lite"}, "unknown tool 'camera'"),
    ({"skills": "maybe"}, "skills='maybe': use on or off"),
    ({"max_iterations": "0"}, "max_iterations must be at least 1"),
    ({"profile": "paper-gpt", "motion": "on"}, "motion=on needs a motion_analyzer backend"),
    ({"backend.motion_analyzer": "off", "backend.motion_analyzer.x": 1}, "switched off"),
])
def test_config_errors(args, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("?", r"\?")):
        build_config(**args)


def test_each_tool_declares_its_contract_and_backends_once():
    """The registries are derived from the tool classes: the backend table, the contracts, the tool names."""
    from sama_model.tools import TOOL_CLASSES
    from sama_model.tools.backends import _LAZY, TOOL_NAMES
    from sama_model.tools.contracts import CONTRACTS

    assert TOOL_NAMES == tuple(TOOL_CLASSES)
    for name, cls in TOOL_CLASSES.items():
        assert CONTRACTS[name] is cls.contract and cls.contract.__name__.endswith("Backend"), name
        assert {b: p for (t, b), p in _LAZY.items() if t == name} == cls.backend_classes
        for kind, spec in cls.default_backends.items():
            assert spec is None or spec.name in cls.backend_classes, (name, kind, spec)
    assert len(_LAZY) == sum(len(c.backend_classes) for c in TOOL_CLASSES.values())


def test_profile_backends_come_from_the_tools_defaults_for_its_kind(tmp_path, monkeypatch):
    """A profile needs no entry per tool: each tool takes its default backend for the profile's kind; a profile's
    own entries override it, a child's tool by tool; an unknown kind or tool is refused."""
    from sama_model import profiles

    (tmp_path / "p.yaml").write_text(
        "base: {kind: paper, backends: {video_reader: {name: lite}, motion_analyzer: {name: lite}}}\n"
        "child: {extends: base, backends: {scene_graph: null}}\n"
        "plain: {}\n"
        "odd: {kind: cloud}\n"
        "stray: {backends: {teleporter: {name: lite}}}\n")
    monkeypatch.setattr(profiles, "PROFILE_FILE", tmp_path / "p.yaml")
    profiles._raw_profiles.cache_clear()
    try:
        child = profiles.load_profile("child")["backends"]
        assert child["video_reader"] == {"name": "lite"} and child["motion_analyzer"] == {"name": "lite"}
        assert child["scene_graph"] is None and child["manipulation_detector"] is None
        assert child["object_tracker"] == {"name": "yolo", "options": {"model": "yolov8m.pt"}}
        plain = profiles.load_profile("plain")
        assert plain["kind"] == "offline" and {b["name"] for b in plain["backends"].values()} == {"lite"}
        with pytest.raises(ConfigError, match="unknown kind 'cloud'; kinds the tools declare: offline, paper"):
            profiles.load_profile("odd")
        with pytest.raises(ConfigError, match=r"backends for unknown tools \['teleporter'\]"):
            profiles.load_profile("stray")
    finally:
        profiles._raw_profiles.cache_clear()
