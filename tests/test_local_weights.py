"""Issue 20: one option vocabulary for every model backend, checked when the model is built, failures
counted as failures, errors naming the tool, one similarity scoring path."""
from __future__ import annotations

import json
import sys
import warnings

import numpy as np
import pytest

import test_sama_doubles as D
from sama_model.profiles import ConfigError
from sama_model.tools.backends import check_backend_options

pytest.importorskip("open_clip")


def _lmms_sama(tmp_path, monkeypatch, **args):
    from sama_model.adapters.lmms_eval_model import SAMA

    monkeypatch.setattr(sys, "argv", ["lmms-eval", "--model", "sama", "--output_path", str(tmp_path / "out")])
    return SAMA(batch_size="1", device="cpu", trace_dir=str(tmp_path / "traces"), cache_dir="none", **args)


@pytest.mark.parametrize("option,value,message", [
    ("backend.visual_similarity.model_nme", "/x",
     r"backend\.visual_similarity\.model_nme: the visual_similarity backend 'clip' \(ClipVisualSimilarity\) has "
     r"no option 'model_nme'; valid options: model, tag, arch, device, dtype, frames_per_video, batch_size"),
    ("backend.video_reader.n_frames", "4",
     r"backend\.video_reader\.n_frames cannot take effect with the video_reader backend 'transformers' "
     r"\(TransformersVideoReader\): the video_reader tool's own n_frames argument .*; valid options: model, "),
    ("backend.object_tracker.modle", "/x.pt", r"valid options: model, tracker, device, conf, iou, imgsz"),
])
def test_unknown_option_fails_at_construction_before_any_trace(tmp_path, monkeypatch, option, value, message):
    with pytest.raises(ConfigError, match=message):
        _lmms_sama(tmp_path, monkeypatch, profile="paper-gpt", **{option: value})
    assert not (tmp_path / "traces").exists() and not (tmp_path / "out").exists()
    from sama_model.adapters.vlmeval_model import SAMAVLMEval  # the other adapter checks the same way

    with pytest.raises(ConfigError, match=message):
        SAMAVLMEval(profile="paper-gpt", trace_dir=str(tmp_path / "traces"), **{option: value})
    assert not (tmp_path / "traces").exists()


def test_options_that_cannot_take_effect_are_rejected(tmp_path):
    folder = tmp_path / "clip"
    folder.mkdir()
    (folder / "open_clip_config.json").write_text("{}")
    with pytest.raises(ValueError, match=r"tag='openai' cannot take effect: .* is a local folder"):
        check_backend_options("visual_similarity", "clip", {"model": str(folder), "tag": "openai"})
    with pytest.raises(ValueError, match=r"checkpoint file: name its open_clip architecture with arch="):
        check_backend_options("temporal_grounding", "clip", {"model": str(tmp_path / "w.pt")})
    with pytest.raises(ValueError, match=r"arch='ViT-B-32' cannot take effect"):
        check_backend_options("temporal_grounding", "clip", {"model": str(folder), "arch": "ViT-B-32"})
    assert check_backend_options("visual_similarity", "clip", {"model": str(folder)}) == []
    assert check_backend_options("visual_similarity", "clip", {"model": "ViT-B-32", "tag": "openai"}) == []


def test_old_option_names_still_work_with_a_deprecation_note(tmp_path, capsys):
    from sama_model.adapters.common import make_agent
    from sama_model.backends.models.clip_backends import ClipVisualSimilarity
    from sama_model.backends.models.yolo_tracker import YoloObjectTracker

    notes = check_backend_options("object_tracker", "yolo", {"weights": "y.pt"})
    assert notes == ["backend.object_tracker.weights is deprecated; use model (backend.object_tracker.model=...)"]
    with pytest.warns(DeprecationWarning, match="weights= option is deprecated"):
        assert YoloObjectTracker(weights="y.pt", device="cpu").weights == "y.pt"
    with pytest.warns(DeprecationWarning, match="model_name= and pretrained= options are deprecated"):
        old = ClipVisualSimilarity(model_name="ViT-B-32", pretrained="openai", device="cpu")
    assert (old.model, old.tag, old.arch) == ("ViT-B-32", "openai", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old_file = ClipVisualSimilarity(model_name="ViT-B-32", pretrained=str(tmp_path / "w.pt"), device="cpu")
    assert (old_file.model, old_file.tag, old_file.arch) == (str(tmp_path / "w.pt"), None, "ViT-B-32")
    make_agent({"profile": "paper-gpt", "planner": "scripted", "backend.object_tracker.weights": "y.pt",
                "trace_dir": str(tmp_path / "t"),
                "cache_dir": "none"})
    assert "SAMA: backend.object_tracker.weights is deprecated; use model" in capsys.readouterr().err


def _doc(question) -> dict:
    videos = [{"label": v.label, "path": str(question.root) + "/" + v.path, "subtitle": None} for v in question.videos]
    return {"id": question.id, "task": "CNT", "question": question.question, "options": json.dumps(question.options),
            "answer": "A", "videos": json.dumps(videos), "root": question.root, "meta": "{}"}


def test_a_question_whose_every_tool_fails_is_counted_as_failed(tmp_path):
    import test_agent_failures  # noqa: F401  registers the "missing" video_reader backend
    from mvx_tasks.answer_notes import use_store
    from mvx_tasks.harness import process_results
    from sama_model.agent import SamaAgent
    from sama_model.profiles import build_config
    from sama_model.runner import RunStats, answer_questions

    D.reset({})
    opts = {"A": "Video A", "B": "Video B"}
    stems = {"Video A": "a", "Video B": "b"}
    q_fail = D.make_question(tmp_path, "q-all-fail", None, "Which video has more cups?", opts, stems)
    q_ok = D.make_question(tmp_path, "q-ok", None, "Which video has more cups?", opts, stems)
    args = {**D.DOUBLE_ARGS, "skills": "off"}
    for tool in ("scene_graph", "object_tracker", "visual_similarity", "temporal_grounding",
                 "subtitle_retriever", "motion_analyzer"):
        args[f"backend.{tool}"] = "off"
    stats = RunStats()
    (fail,) = answer_questions(SamaAgent(build_config(**{**args, "backend.video_reader": "missing"})), [q_fail],
                               tmp_path / "traces", progress=False, stats=stats)
    (ok_a,) = answer_questions(SamaAgent(build_config(**args)), [q_ok], tmp_path / "traces2", progress=False)
    out, ok_out = [fail.output], [ok_a.output]
    assert out == [""] and ok_out[0].startswith("Answer: ")
    assert fail.note.failure.startswith("every tool call failed; first error: video_reader")
    assert ok_a.note.failure is None
    store = use_store(f"test-failures-{tmp_path.name}")  # what the adapter does with each answer's note
    store.write(_doc(q_fail), fail.output, fail.note)
    store.write(_doc(q_ok), ok_a.output, ok_a.note)
    failed = process_results(_doc(q_fail), [out[0]])
    assert (failed["mvx_agent_failed"], failed["mvx_unparsed"], failed["mvx_failed"]) == (1, 0, 0)
    assert failed["mvx_acc"]["correct"] is False and "every tool call failed" in failed["mvx_acc"]["agent_failed"]
    ok = process_results(_doc(q_ok), [ok_out[0]])
    assert (ok["mvx_agent_failed"], ok["mvx_unparsed"]) == (0, 0) and ok["mvx_acc"]["agent_failed"] is None
    # a baseline's empty output is unparsed, not failed
    other = process_results({**_doc(q_ok), "id": "baseline-q"}, [""])
    assert (other["mvx_agent_failed"], other["mvx_unparsed"]) == (0, 1)
    # the run summary says how many failed and why, grouped by cause
    assert stats.summary().endswith("1 failed (all tools failed: 1)")
    stats.failed, stats.failures = 3, {"a": "planner unavailable: x", "b": "planner unavailable: y",
                                       "c": "RuntimeError: boom"}
    assert stats.summary().endswith("3 failed (planner unavailable: 2, RuntimeError: 1)")


def test_results_table_shows_the_agent_failure_count(tmp_path):
    from mvx_tasks.cli import results_table

    f = tmp_path / "r_results.json"
    f.write_text(json.dumps({"results": {"mvx_synth_cnt": {"mvx_acc,none": 50.0, "mvx_unparsed,none": 0,
                                                           "mvx_failed,none": 0, "mvx_agent_failed,none": 2}},
                             "n-samples": {"mvx_synth_cnt": {"effective": 4}}}))
    lines = results_table(f, "mvx_synth").splitlines()
    assert lines[0].split() == ["task", "acc", "%", "n", "unparsed", "failed", "agent", "failed",
                                "planner", "forced", "fallback", "rule"]
    assert lines[1].split() == ["CNT", "50.0", "4", "0", "0", "2", "-", "-", "-", "-"]
    # answer sources reported; a task answered only by the first-option rule has no solver
    srcs = {"mvx_src_planner,none": 0, "mvx_src_forced,none": 0, "mvx_src_fallback,none": 0, "mvx_src_rule,none": 4}
    f.write_text(json.dumps({"results": {"mvx_synth_cr": {"mvx_acc,none": 25.0, "mvx_unparsed,none": 0,
                                                          "mvx_failed,none": 0, "mvx_agent_failed,none": 0, **srcs}},
                             "n-samples": {"mvx_synth_cr": {"effective": 4}}}))
    assert results_table(f, "mvx_synth").splitlines()[1].split() == ["CR", "no", "solver", "4", "0", "0", "0",
                                                                    "0", "0", "0", "4"]


@pytest.fixture(scope="module")
def clip_video(tmp_path_factory):
    from mvx_tasks.video_decoder import load_video
    from tiny_models import make_test_video

    folder = tmp_path_factory.mktemp("vid")
    return [load_video(make_test_video(folder / f"v{i}.mp4", n_frames=16 + 8 * i, fps=8)) for i in range(2)]


def test_an_error_from_the_shared_clip_encoder_names_the_tool_that_called_it(clip_video, monkeypatch):
    from sama_model.backends.models._runtime import MissingWeightsError
    from sama_model.backends.models.clip_backends import ClipTemporalGrounding, ClipVisualSimilarity

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HOME", "/nonexistent-home")
    opts = dict(model="ViT-B-16", tag="laion2b_s34b_b88k", device="cpu")  # not cached: the encoder fails to load
    grounding, similarity = ClipTemporalGrounding(**opts), ClipVisualSimilarity(**opts)
    assert grounding.encoder is similarity.encoder  # one encoder, built by grounding first
    with pytest.raises(MissingWeightsError, match=r"^temporal_grounding/clip: model weight 'ViT-B-16/laion2b"):
        grounding.ground(clip_video[0], "a red square")
    for call in (lambda: similarity.embed(clip_video[0]), lambda: similarity.compare(*clip_video)):
        with pytest.raises(MissingWeightsError) as err:
            call()
        assert str(err.value).startswith("visual_similarity/clip: model weight 'ViT-B-16/laion2b")
        assert "temporal_grounding" not in str(err.value)


def test_similarity_scale_is_the_same_through_the_tool_and_the_backend(tmp_path, clip_video):
    from sama_model.backends.models.clip_backends import ClipVisualSimilarity
    from sama_model.tools.visual_similarity import VisualSimilarityTool, clear_embedding_cache
    from sama_model.question_videos import QuestionVideos
    from tiny_models import build_tiny_open_clip

    clear_embedding_cache()
    folder = build_tiny_open_clip(tmp_path / "clip")
    opts = {"model": str(folder), "device": "cpu", "frames_per_video": 8}
    backend = ClipVisualSimilarity(**opts)
    D.reset({})
    q = D.make_question(tmp_path, "sim", None, "Which?", {"A": "Video A", "B": "Video B"},
                        {"Video A": "a", "Video B": "b"})
    tool = VisualSimilarityTool(QuestionVideos(q), backend, "clip", opts)
    for window in ((None, None), (0.0, 1.0)):
        for aspect in ("content", "style", "identity"):
            res = tool(video_a="Video A", video_b="Video B", aspect=aspect, start=window[0], end=window[1])
            assert res.ok, res.error
            a, b = tool.videos.clip("Video A"), tool.videos.clip("Video B")
            direct = backend.compare(a, b, window, window, aspect)
            assert res.data["score"] == pytest.approx(direct["score"], abs=1e-6)
            assert res.data["frame_scores"] == pytest.approx(direct["frame_scores"], abs=1e-6)
            assert res.data["score"] == pytest.approx(max(0.0, direct["cosine"]), abs=1e-5)  # cosine clipped to [0, 1]
            assert res.data["model"] == str(folder)
    ea, eb = backend.embed(clip_video[0]), backend.embed(clip_video[1])
    cos = float(np.clip(ea.mean(0) @ eb.mean(0) / np.linalg.norm(ea.mean(0)) / np.linalg.norm(eb.mean(0)), 0, 1))
    assert backend.compare(*clip_video)["score"] == pytest.approx(cos, abs=1e-5)
