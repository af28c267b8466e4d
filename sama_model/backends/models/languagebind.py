"""Temporal grounding with LanguageBind-Video (the paper's grounding model), when it is installed.

LanguageBind is an optional install: the PyPI package ``languagebind`` (0.1.0) requires
``transformers<5``, so it lives in its own environment (``pip install languagebind[video]``).
Without it this backend fails at once and says to install it or to use the ``clip`` backend
(:class:`~sama_model.backends.models.clip_backends.ClipTemporalGrounding`), which needs no extra
package. The video is tiled into overlapping segments (``segment_seconds``, half overlap); each
segment's frames are embedded by LanguageBind-Video once per process and scored against the
query text; spans come from the same peak picking and merging as the CLIP backend.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ._common import spans_from_scores, window_bounds
from ._runtime import MODELS, import_or_explain, resolve_hf_weights, select_device, select_dtype, wrap_load_error
from .clip_backends import EMBEDDINGS, video_key

__all__ = ["LanguageBindTemporalGrounding", "DEFAULT_MODEL", "frames_to_pixel_values", "segment_grid"]

DEFAULT_MODEL = "LanguageBind/LanguageBind_Video_FT"
BACKEND = "temporal_grounding/languagebind"
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)


def frames_to_pixel_values(frames: np.ndarray, size: int = 224):
    """RGB uint8 frames [T, H, W, 3] -> LanguageBind video input [3, T, size, size] (its eval transform:
    /255, OpenAI CLIP normalisation, short side to ``size``, centre crop; no random flip)."""
    import torch
    import torch.nn.functional as F

    x = torch.from_numpy(np.ascontiguousarray(frames)).float().div(255.0).permute(0, 3, 1, 2)  # T,3,H,W
    mean = torch.tensor(OPENAI_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(OPENAI_STD).view(1, 3, 1, 1)
    x = (x - mean) / std
    h, w = x.shape[-2:]
    scale = size / min(h, w)
    x = F.interpolate(x, size=(max(size, round(h * scale)), max(size, round(w * scale))), mode="bilinear",
                      align_corners=False)
    h, w = x.shape[-2:]
    top, left = (h - size) // 2, (w - size) // 2
    return x[:, :, top:top + size, left:left + size].permute(1, 0, 2, 3).contiguous()


def segment_grid(duration: float, seconds: float) -> list[tuple[float, float]]:
    """Half-overlapping segments of ``seconds`` tiling [0, duration] (at least one)."""
    seconds = max(1e-3, float(seconds))
    if duration <= seconds:
        return [(0.0, float(duration))]
    starts = np.arange(0.0, max(1e-9, duration - seconds) + 1e-9, seconds / 2)
    segs = [(float(s), float(min(duration, s + seconds))) for s in starts]
    if segs[-1][1] < duration:
        segs.append((float(duration - seconds), float(duration)))
    return segs


class LanguageBindTemporalGrounding:
    """Localises a described event with LanguageBind video-text similarity over video segments."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "auto", dtype: str = "auto",
                 segment_seconds: float = 2.0, batch_size: int = 8, top_k: int = 5, rel_threshold: float = 0.5,
                 local_files_only: bool = False) -> None:
        self.model_name = model
        self.device = select_device(device)
        self.dtype = select_dtype(self.device, dtype)
        self.segment_seconds, self.batch_size = float(segment_seconds), int(batch_size)
        self.top_k, self.rel_threshold = int(top_k), float(rel_threshold)
        self.local_files_only = local_files_only

    def _load(self) -> tuple[Any, Any]:
        lb = import_or_explain("languagebind", BACKEND, "'languagebind[video]'",
                               alternative="use the `clip` temporal_grounding backend, which needs no extra package "
                               "(languagebind requires transformers<5, so it needs its own environment)")
        path = resolve_hf_weights(self.model_name, BACKEND, local_files_only=self.local_files_only)
        how = f"Pass a local folder as `model` or run `huggingface-cli download {self.model_name}`."

        def load():
            model = lb.LanguageBindVideo.from_pretrained(path, torch_dtype=self.dtype)
            tokenizer = lb.LanguageBindVideoTokenizer.from_pretrained(path)
            return model.to(self.device).eval(), tokenizer

        return wrap_load_error(self.model_name, BACKEND, how, load)

    def loaded(self) -> tuple[Any, Any]:
        return MODELS.get(("languagebind", self.model_name, self.device, str(self.dtype)), self._load)

    def _segments(self, clip: VideoClip) -> tuple[list[tuple[float, float]], np.ndarray]:
        """The video's segment grid and its L2-normalised embeddings, computed once per process."""
        import torch

        model, _ = self.loaded()
        n_frames = int(getattr(model.config.vision_config, "num_frames", 8))
        segs = segment_grid(clip.duration, self.segment_seconds)

        def compute() -> np.ndarray:
            out = []
            for i in range(0, len(segs), self.batch_size):
                batch = []
                for s, e in segs[i:i + self.batch_size]:
                    frames, _ = clip.sample(n_frames, s, e)
                    if len(frames) < n_frames:  # short segment: repeat frames to the model's length
                        frames = frames[np.linspace(0, len(frames) - 1, n_frames).round().astype(int)]
                    batch.append(frames_to_pixel_values(frames))
                pixels = torch.stack(batch).to(self.device, dtype=self.dtype)
                with torch.inference_mode():
                    emb = model.get_image_features(pixel_values=pixels)
                out.append(torch.nn.functional.normalize(emb.float(), dim=-1).cpu().numpy())
            return np.concatenate(out)

        key = video_key(clip) + ("languagebind", self.model_name, self.segment_seconds)
        return segs, EMBEDDINGS.get(key, compute)

    def ground(self, clip: VideoClip, query: str, window=(None, None)) -> dict:
        import torch

        model, tokenizer = self.loaded()
        segs, emb = self._segments(clip)
        s, e = window_bounds(clip, window)
        sel = [i for i, (a, b) in enumerate(segs) if a < e and b > s] or [0]
        tokens = tokenizer([query.strip() or "a video"], max_length=77, padding="max_length", truncation=True,
                           return_tensors="pt").to(self.device)
        with torch.inference_mode():
            text = model.get_text_features(**tokens)
        text = torch.nn.functional.normalize(text.float(), dim=-1).cpu().numpy()[0]
        sims = emb[sel] @ text
        centers = np.array([(segs[i][0] + segs[i][1]) / 2 for i in sel])
        spans = spans_from_scores(centers, sims, (s, e), top_k=self.top_k, rel_threshold=self.rel_threshold, smooth=1)
        return {"spans": spans, "boundaries": [], "window": [round(s, 3), round(e, 3)],
                "segments_scored": len(sel), "model": self.model_name}
