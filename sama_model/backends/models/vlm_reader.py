"""Video Reader on an in-process transformers video chat model (the paper: Qwen2.5-VL-7B-Instruct).

Works for models that ``AutoModelForImageTextToText`` + ``AutoProcessor`` load and whose processor
takes ``videos=`` (Qwen2.5-VL, Qwen3-VL, InternVL3.5-HF, LLaVA-OneVision-HF). Frames come from the
already decoded :class:`VideoClip` (no second decode); the model loads once per process, lazily and
thread-safely, and is shared by every question; generation is greedy.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ._common import sample_window, window_bounds
from ._runtime import MODELS, resolve_hf_weights, select_device, select_dtype, wrap_load_error

__all__ = ["TransformersVideoReader", "DEFAULT_MODEL"]

DEFAULT_MODEL = "Qwen/Qwen2.5-VL-7B-Instruct"
BACKEND = "video_reader/transformers"
DEFAULT_FRAMES = 8  # when a caller gives no n_frames (the tool always does)
_GENERATE_LOCK = threading.Lock()


class TransformersVideoReader:
    """Answers a query about one window of one video with a local video-LLM."""

    #: options that cannot take effect, with the reason (rejected when the agent is built)
    REJECTED_OPTIONS = {"n_frames": "the video_reader tool's own n_frames argument (chosen per call by the planner, "
                                    "default 8, at most 64) decides how many frames are read"}

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "auto", dtype: str = "auto",
                 max_new_tokens: int = 256, attn_implementation: str | None = None,
                 local_files_only: bool = False, system_prompt: str | None = None) -> None:
        self.model_name = model
        self.device = select_device(device)
        self.dtype = select_dtype(self.device, dtype)
        self.max_new_tokens = int(max_new_tokens)
        self.attn_implementation = attn_implementation
        self.local_files_only = local_files_only
        self.system_prompt = system_prompt

    # -- loading -----------------------------------------------------------------------------
    def _load(self) -> tuple[Any, Any]:
        from transformers import AutoModelForImageTextToText, AutoProcessor

        path = resolve_hf_weights(self.model_name, BACKEND, local_files_only=self.local_files_only)
        how = f"Pass a local folder as `model` or run `huggingface-cli download {self.model_name}`."
        kwargs: dict[str, Any] = {"dtype": self.dtype}
        if self.attn_implementation:
            kwargs["attn_implementation"] = self.attn_implementation

        def load():
            processor = AutoProcessor.from_pretrained(path)
            model = AutoModelForImageTextToText.from_pretrained(path, **kwargs)
            return model.to(self.device).eval(), processor

        return wrap_load_error(self.model_name, BACKEND, how, load)

    def loaded(self) -> tuple[Any, Any]:
        """(model, processor), loaded on first use and shared process-wide."""
        key = ("transformers-vlm", self.model_name, self.device, str(self.dtype), self.attn_implementation)
        return MODELS.get(key, self._load)

    # -- reading -----------------------------------------------------------------------------
    def _messages(self, query: str, start: float, end: float, n: int) -> list[dict]:
        text = (f"The video shows {n} frames sampled from {start:.1f}s to {end:.1f}s of one video. "
                f"{query.strip()}")
        msgs: list[dict] = []
        if self.system_prompt:
            msgs.append({"role": "system", "content": [{"type": "text", "text": self.system_prompt}]})
        msgs.append({"role": "user", "content": [{"type": "video"}, {"type": "text", "text": text}]})
        return msgs

    def read(self, clip: VideoClip, query: str, window=(None, None), n_frames: int | None = None) -> dict:
        import torch

        n = int(n_frames or DEFAULT_FRAMES)
        start, end = window_bounds(clip, window)
        frames, times, _ = sample_window(clip, n, (start, end))
        if len(frames) == 0:
            return {"answer": "", "window": [start, end], "frames_used": 0, "error": "no frames in window"}
        if len(frames) % 2:  # Qwen-style temporal patches pair frames: repeat the last one
            frames = np.concatenate([frames, frames[-1:]])
        span = float(times[-1] - times[0]) if len(times) > 1 else 0.0
        fps = (len(times) - 1) / span if span > 0 else max(1.0, clip.fps)
        model, processor = self.loaded()
        prompt = processor.apply_chat_template(self._messages(query, start, end, len(times)),
                                               add_generation_prompt=True, tokenize=False)
        inputs = processor(text=[prompt], videos=[list(frames)], return_tensors="pt",
                           **_video_kwargs(processor, clip, times, len(frames)))
        inputs = inputs.to(model.device)
        for k, v in inputs.items():  # pixel tensors follow the model's dtype (bf16 on GPU)
            if torch.is_floating_point(v):
                inputs[k] = v.to(model.dtype)
        with _GENERATE_LOCK, torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        new = out[:, inputs["input_ids"].shape[1]:]
        answer = processor.batch_decode(new, skip_special_tokens=True)[0].strip()
        return {"answer": answer, "window": [round(start, 3), round(end, 3)], "frames_used": int(len(times)),
                "timestamps": [round(float(t), 3) for t in times], "fps": round(fps, 4), "model": self.model_name}


def _video_kwargs(processor: Any, clip: VideoClip, times: np.ndarray, n: int) -> dict:
    """Per-call video options: our frames are already sampled, so give the processor their metadata.

    The metadata (native fps and the frames' native indices) is what Qwen2.5-VL turns into
    ``second_per_grid_ts`` and Qwen3-VL into the frame timestamps of its prompt.
    """
    if getattr(processor, "video_processor", None) is None:
        return {}
    from transformers.video_utils import VideoMetadata

    native_fps = float(clip.fps or 25.0)
    idx = [int(round(float(t) * native_fps)) for t in times]
    idx += [idx[-1]] * (n - len(idx))  # the repeated last frame, if any
    # transformers derives the sampled rate as n / total_num_frames * fps, i.e. frames spread over the
    # whole clip: describe the clip as the window the frames cover, so the rate is 1 / frame spacing.
    spacing = float(times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else 1.0 / native_fps
    total = max(n, int(round(n * spacing * native_fps)))
    meta = VideoMetadata(total_num_frames=total, fps=native_fps, duration=total / native_fps, frames_indices=idx,
                         width=int(clip.frames.shape[2]), height=int(clip.frames.shape[1]))
    return {"videos_kwargs": {"do_sample_frames": False, "video_metadata": [meta]}}
