"""TransformersVideoReader on a tiny random Qwen2.5-VL built in the test: contract, sharing, errors."""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torchvision")

from mvx_tasks.video_decoder import load_video  # noqa: E402
from sama_model.backends.models import _runtime  # noqa: E402
from sama_model.backends.models.vlm_reader import TransformersVideoReader, _video_kwargs  # noqa: E402
from sama_model.tools.video_reader import VideoReaderBackend  # noqa: E402
from tiny_models import build_tiny_qwen2_5_vl, build_tiny_qwen3_vl, make_test_video  # noqa: E402


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory):
    return build_tiny_qwen2_5_vl(tmp_path_factory.mktemp("qwen") / "tiny-qwen2.5-vl")


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return load_video(make_test_video(tmp_path_factory.mktemp("vid") / "v.mp4", n_frames=24, fps=8))


def test_read_window_contract(tiny_qwen, clip):
    reader = TransformersVideoReader(model=str(tiny_qwen), device="cpu", max_new_tokens=6)
    assert isinstance(reader, VideoReaderBackend)
    out = reader.read(clip, "What is moving?", window=(0.5, 2.0), n_frames=4)
    assert isinstance(out["answer"], str)
    assert out["window"] == [0.5, 2.0]
    assert out["frames_used"] == 4
    assert all(0.5 - 1e-6 <= t <= 2.0 + 1e-6 for t in out["timestamps"])
    whole = reader.read(clip, "Describe the video.", n_frames=5)  # odd count: last frame repeated for the model
    assert whole["frames_used"] == 5 and whole["window"][0] == 0.0
    assert whole["window"][1] == pytest.approx(clip.duration, abs=1e-3)


def test_model_loads_once_across_threads(tiny_qwen, clip, monkeypatch):
    import transformers

    _runtime.MODELS.clear()
    calls = []
    real = transformers.AutoModelForImageTextToText.from_pretrained

    def counting(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(transformers.AutoModelForImageTextToText, "from_pretrained", counting)
    readers = [TransformersVideoReader(model=str(tiny_qwen), device="cpu", max_new_tokens=3)
               for _ in range(3)]
    results: list[dict] = []
    threads = [threading.Thread(target=lambda r=r: results.append(r.read(clip, "Count the squares.", n_frames=2))) for r in readers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(r["frames_used"] == 2 for r in results)
    assert len(calls) == 1


def test_missing_hub_weight_fails_fast(monkeypatch, clip):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    reader = TransformersVideoReader(model="Qwen/Qwen2.5-VL-7B-Instruct-not-cached", device="cpu")
    t0 = time.time()
    with pytest.raises(_runtime.MissingWeightsError) as err:
        reader.read(clip, "hi")
    assert time.time() - t0 < 10
    msg = str(err.value)
    assert "Qwen/Qwen2.5-VL-7B-Instruct-not-cached" in msg and "video_reader/transformers" in msg
    assert "huggingface-cli download" in msg


def test_missing_local_folder(tmp_path, clip):
    reader = TransformersVideoReader(model=str(tmp_path / "nowhere"), device="cpu")
    with pytest.raises(_runtime.MissingWeightsError, match="no such local path"):
        reader.read(clip, "hi")


def _window_inputs(reader, clip, window, n):
    _, processor = reader.loaded()
    frames, times = clip.sample(n, *window)
    prompt = processor.apply_chat_template(reader._messages("q", *window, n), add_generation_prompt=True, tokenize=False)
    return processor, times, processor(text=[prompt], videos=[list(frames)], return_tensors="pt",
                                       **_video_kwargs(processor, clip, times, n))


def test_qwen2_5_gets_the_window_frame_rate(tiny_qwen, clip):
    reader = TransformersVideoReader(model=str(tiny_qwen), device="cpu")
    _, times, inputs = _window_inputs(reader, clip, (1.0, 2.5), 4)
    spacing = float(times[-1] - times[0]) / 3  # mean seconds between sampled frames, not the native 1/8 s
    assert float(inputs["second_per_grid_ts"][0]) == pytest.approx(2 * spacing, rel=0.05)


def test_qwen3_vl_reads_with_absolute_timestamps(tmp_path, clip):
    folder = build_tiny_qwen3_vl(tmp_path / "tiny-qwen3-vl")
    reader = TransformersVideoReader(model=str(folder), device="cpu", max_new_tokens=4)
    out = reader.read(clip, "What moves?", window=(1.0, 2.5), n_frames=4)
    assert out["frames_used"] == 4 and out["window"] == [1.0, 2.5]
    processor, times, inputs = _window_inputs(reader, clip, (1.0, 2.5), 4)
    prompt = processor.tokenizer.decode(inputs["input_ids"][0])
    for a, b in zip(times[0::2], times[1::2]):  # one timestamp per pair of frames, in video time
        assert f"<{(a + b) / 2:.1f} seconds>" in prompt
