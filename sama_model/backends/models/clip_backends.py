"""CLIP (open_clip) backends: visual similarity (the paper's) and text-to-frame temporal grounding.

Per-video frame embeddings are computed once per process: every video gets one embedding pass
over a fixed grid of its decoded frames (``frames_per_video``, uniform over the whole video), cached
under (video path, size, mtime, decoded frame count, model). Any window, tool or question then
selects grid frames from that cache, so ``visual_similarity`` and ``temporal_grounding`` on the same
video with the same CLIP share one encoder pass.

``ClipTemporalGrounding`` replaces the paper's LanguageBind (a video-language encoder that is not on
PyPI) with frame-level CLIP text/image similarity, peak picking and merging into time spans; the
``languagebind`` backend uses LanguageBind itself when its package is installed.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from mvx_tasks.video import VideoClip, uniform_indices

from ..lite.similarity import LiteVisualSimilarity
from ._common import change_points, cos_to_unit, spans_from_scores, window_bounds
from ._runtime import (MODELS, MissingWeightsError, SharedModels, hub_offline, import_or_explain, looks_local,
                       select_device, select_dtype)

__all__ = ["OpenClipEncoder", "ClipVisualSimilarity", "ClipTemporalGrounding", "EMBEDDINGS", "video_key"]

EMBEDDINGS = SharedModels(maxsize=int(os.environ.get("MVX_EMBED_CACHE_SIZE", "512")))


def video_key(clip: VideoClip) -> tuple:
    """Identity of a decoded video: path, file size and mtime, and the decoded frame grid."""
    try:
        st = Path(clip.path).stat()
        ident: tuple = (str(Path(clip.path).resolve()), st.st_size, st.st_mtime_ns)
    except OSError:  # an in-memory clip: fall back to its pixels
        import hashlib

        ident = (clip.path, hashlib.sha1(clip.frames[:: max(1, clip.n_frames // 8)].tobytes()).hexdigest())
    return ident + (clip.n_frames, tuple(clip.frames.shape[1:3]))


class OpenClipEncoder:
    """An open_clip model and tokenizer, loaded once per process; encodes frames and texts."""

    def __init__(self, model_name: str = "ViT-L-14", pretrained: str | None = "openai", device: str = "auto",
                 dtype: str = "auto", batch_size: int = 32, backend: str = "clip") -> None:
        self.model_name, self.pretrained = model_name, (pretrained or None)
        self.device = select_device(device)
        self.dtype = select_dtype(self.device, dtype)
        self.batch_size = int(batch_size)
        self.backend = backend
        self.image_batches = 0  # encoder passes (tests and benchmarks read these)
        self._lock = threading.Lock()

    @property
    def key(self) -> tuple:
        return ("open_clip", self.model_name, self.pretrained, self.device, str(self.dtype))

    def _check_weights(self, open_clip: Any) -> str | None:
        """The ``pretrained`` argument to pass, after failing fast on an uncached tag when offline."""
        tag = self.pretrained
        if tag is None:
            return None
        if looks_local(tag):
            if not Path(tag).expanduser().is_file():
                raise MissingWeightsError(tag, self.backend, "Pass an existing checkpoint file or an open_clip "
                                          "pretrained tag as `pretrained`.", reason="no such file")
            return str(Path(tag).expanduser())
        cfg = open_clip.get_pretrained_cfg(self.model_name, tag)
        if not cfg:
            known = ", ".join(open_clip.list_pretrained_tags_by_model(self.model_name)) or "none"
            raise MissingWeightsError(f"{self.model_name}/{tag}", self.backend,
                                      f"Known tags for {self.model_name}: {known}.", reason="unknown pretrained tag")
        if not hub_offline():
            return tag
        hub = (cfg.get("hf_hub") or "").strip("/")
        if hub:
            from huggingface_hub import try_to_load_from_cache

            repo = "/".join(hub.split("/")[:2])
            for fname in ("open_clip_model.safetensors", "open_clip_pytorch_model.bin"):
                if isinstance(try_to_load_from_cache(repo, fname), str):
                    return tag
            how = (f"Download it with `huggingface-cli download {repo}` or pass a local checkpoint file as "
                   f"`pretrained` (e.g. pretrained=/models/{self.model_name}.pt).")
        else:
            url = cfg.get("url", "")
            if url and (Path.home() / ".cache" / "clip" / os.path.basename(url)).is_file():
                return tag
            how = f"Download {url} and pass the file as `pretrained`."
        raise MissingWeightsError(f"{self.model_name}/{tag}", self.backend, how,
                                  reason="not cached and the hub is offline (HF_HUB_OFFLINE)")

    def _load(self) -> tuple[Any, Any, Any]:
        open_clip = import_or_explain("open_clip", self.backend, "open-clip-torch --no-deps timm ftfy regex")
        pretrained = self._check_weights(open_clip)
        import torch

        precision = {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(self.dtype, "fp32")
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                self.model_name, pretrained=pretrained, device=self.device, precision=precision)
        except RuntimeError as exc:
            raise MissingWeightsError(f"{self.model_name}/{pretrained}", self.backend,
                                      "Check the model name and `pretrained` tag/file, or download the weights.",
                                      reason=str(exc)[:200]) from exc
        return model.eval(), preprocess, open_clip.get_tokenizer(self.model_name)

    def loaded(self) -> tuple[Any, Any, Any]:
        return MODELS.get(self.key, self._load)

    def encode_frames(self, frames: np.ndarray) -> np.ndarray:
        """L2-normalised image embeddings [n, d] (float32) of RGB uint8 frames, in batches."""
        import torch
        from PIL import Image

        model, preprocess, _ = self.loaded()
        out = []
        for i in range(0, len(frames), self.batch_size):
            batch = torch.stack([preprocess(Image.fromarray(f)) for f in frames[i:i + self.batch_size]])
            with torch.inference_mode():
                emb = model.encode_image(batch.to(self.device, dtype=self.dtype))
            with self._lock:
                self.image_batches += 1
            out.append(torch.nn.functional.normalize(emb.float(), dim=-1).cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)

    def encode_texts(self, texts: list[str]) -> np.ndarray:
        import torch

        model, _, tokenizer = self.loaded()
        with torch.inference_mode():
            emb = model.encode_text(tokenizer(texts).to(self.device))
        return torch.nn.functional.normalize(emb.float(), dim=-1).cpu().numpy()


class _ClipBase:
    """Shared per-video embedding grid for the CLIP backends."""

    backend = "clip"

    def __init__(self, model_name: str = "ViT-L-14", pretrained: str | None = "openai", device: str = "auto",
                 dtype: str = "auto", frames_per_video: int = 64, batch_size: int = 32) -> None:
        self.encoder = MODELS.get(("open_clip-encoder", model_name, pretrained or None, select_device(device), dtype),
                                  lambda: OpenClipEncoder(model_name, pretrained, device, dtype, batch_size,
                                                          backend=self.backend))
        self.frames_per_video = int(frames_per_video)

    def _grid(self, clip: VideoClip) -> tuple[np.ndarray, np.ndarray]:
        """(timestamps [n], embeddings [n, d]) on the video's frame grid, computed once per process."""
        key = video_key(clip) + (self.encoder.key, self.frames_per_video)

        def compute():
            idx = uniform_indices(clip.n_frames, self.frames_per_video)
            return clip.timestamps[idx].astype(float), self.encoder.encode_frames(clip.frames[idx])

        return EMBEDDINGS.get(key, compute)

    def _window(self, clip: VideoClip, window) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
        times, emb = self._grid(clip)
        s, e = window_bounds(clip, window)
        sel = np.nonzero((times >= s - 1e-6) & (times <= e + 1e-6))[0]
        if sel.size == 0 and times.size:
            sel = np.array([int(np.argmin(np.abs(times - (s + e) / 2)))])
        return times[sel], emb[sel], (s, e)


_ACTIVITY = LiteVisualSimilarity()  # pixels only, no weights: the "motion" aspect of any backend


class ClipVisualSimilarity(_ClipBase):
    """CLIP frame embeddings and cosine similarity between two clips' windows (score in [0, 1]).

    ``aspect`` is accepted and reported, but CLIP's embedding mixes content and style; the paper
    uses it for both (e.g. the art-style task). ``aspect="motion"`` (when things move) is not a
    CLIP question: it is answered by the pixel activity profile shared with the lite backend.
    """

    backend = "visual_similarity/clip"

    def embed(self, clip: VideoClip, window=(None, None), aspect: str = "content") -> np.ndarray:
        if aspect == "motion":
            return _ACTIVITY.embed(clip, window, "motion")
        return self._window(clip, window)[1]

    def compare_embeddings(self, ea: np.ndarray, eb: np.ndarray, aspect: str) -> dict | None:
        """The activity correlation for ``motion``; None (cosine by the tool) for CLIP embeddings."""
        return _ACTIVITY.compare_embeddings(ea, eb, "motion") if aspect == "motion" else None

    def compare(self, a: VideoClip, b: VideoClip, window_a=(None, None), window_b=(None, None),
                aspect: str = "content") -> dict:
        if aspect == "motion":
            return _ACTIVITY.compare(a, b, window_a, window_b, "motion")
        ta, ea, wa = self._window(a, window_a)
        tb, eb, wb = self._window(b, window_b)
        ma, mb = ea.mean(0), eb.mean(0)
        cos = float(ma @ mb / (np.linalg.norm(ma) * np.linalg.norm(mb) + 1e-12))
        frame = cos_to_unit((ea @ eb.T).max(axis=1))
        return {"score": round(cos_to_unit(cos), 4), "cosine": round(cos, 4),
                "frame_scores": [round(float(x), 4) for x in frame], "frame_times": [round(float(t), 3) for t in ta],
                "window_a": [round(wa[0], 3), round(wa[1], 3)], "window_b": [round(wb[0], 3), round(wb[1], 3)],
                "frames_a": int(len(ta)), "frames_b": int(len(tb)), "aspect": aspect,
                "model": f"{self.encoder.model_name}/{self.encoder.pretrained}"}


class ClipTemporalGrounding(_ClipBase):
    """Localises a described event by CLIP text-frame similarity (replaces the paper's LanguageBind)."""

    backend = "temporal_grounding/clip"

    def __init__(self, *args: Any, top_k: int = 5, rel_threshold: float = 0.5, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.top_k, self.rel_threshold = int(top_k), float(rel_threshold)

    def ground(self, clip: VideoClip, query: str, window=(None, None)) -> dict:
        times, emb, bounds = self._window(clip, window)
        text = self.encoder.encode_texts([query.strip() or "a video frame"])[0]
        sims = emb @ text
        spans = spans_from_scores(times, sims, bounds, top_k=self.top_k, rel_threshold=self.rel_threshold)
        return {"spans": spans, "boundaries": change_points(times, emb), "window": [round(bounds[0], 3),
                round(bounds[1], 3)], "frames_scored": int(len(times)),
                "frame_scores": [[round(float(t), 3), round(float(cos_to_unit(float(x))), 4)] for t, x in zip(times, sims)],
                "model": f"{self.encoder.model_name}/{self.encoder.pretrained}"}
