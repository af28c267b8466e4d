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
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from mvx_tasks.video_decoder import VideoClip, uniform_indices

from ..lite.visual_similarity import LiteVisualSimilarity
from ..similarity_scoring import default_compare
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
    """An open_clip model and tokenizer, loaded once per process; encodes frames and texts.

    ``model_name``/``pretrained`` are open_clip's own arguments (``resolve_clip_model`` turns the
    backends' ``model`` option into them). The encoder is shared by every backend on the same CLIP,
    so its errors name no tool: each backend relabels them with its own name (:func:`_as_backend`).
    """

    def __init__(self, model_name: str = "ViT-L-14", pretrained: str | None = "openai", device: str = "auto",
                 dtype: str = "auto", batch_size: int = 32, backend: str = "clip encoder") -> None:
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
                raise MissingWeightsError(tag, self.backend, "Pass an existing checkpoint file as `model` (with "
                                          "`arch`) or an open_clip pretrained tag as `tag`.", reason="no such file")
            return str(Path(tag).expanduser())
        cfg = open_clip.get_pretrained_cfg(self.model_name, tag)
        if not cfg:
            known = ", ".join(open_clip.list_pretrained_tags_by_model(self.model_name)) or "none"
            raise MissingWeightsError(f"{self.model_name}/{tag}", self.backend,
                                      f"Known tags for {self.model_name} (the `tag` option): {known}; or pass a "
                                      f"local open_clip folder as `model`.", reason="unknown pretrained tag")
        if not hub_offline():
            return tag
        hub = (cfg.get("hf_hub") or "").strip("/")
        if hub:
            from huggingface_hub import try_to_load_from_cache

            repo = "/".join(hub.split("/")[:2])
            for fname in ("open_clip_model.safetensors", "open_clip_pytorch_model.bin"):
                if isinstance(try_to_load_from_cache(repo, fname), str):
                    return tag
            how = (f"Download it with `huggingface-cli download {repo}` (then pass model={repo}, or the "
                   f"downloaded folder as `model`), or pass a local checkpoint file as `model` with "
                   f"arch={self.model_name}.")
        else:
            url = cfg.get("url", "")
            if url and (Path.home() / ".cache" / "clip" / os.path.basename(url)).is_file():
                return tag
            how = f"Download {url} and pass the file as `model` with arch={self.model_name}."
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
        except (RuntimeError, OSError, ValueError) as exc:
            raise MissingWeightsError(self.describe(), self.backend,
                                      "Check the backend's `model` (an open_clip folder with open_clip_config.json "
                                      "and weights, a hub id, or an architecture name with `tag`/a checkpoint file "
                                      "with `arch`), or download the weights.", reason=str(exc)[:200]) from exc
        return model.eval(), preprocess, open_clip.get_tokenizer(self.model_name)

    def loaded(self) -> tuple[Any, Any, Any]:
        return MODELS.get(self.key, self._load)

    def describe(self) -> str:
        """What was loaded: the folder / hub id, or architecture/tag-or-file."""
        name = self.model_name.split(":", 1)[1] if self.model_name.startswith(("local-dir:", "hf-hub:")) \
            else self.model_name
        return f"{name}/{self.pretrained}" if self.pretrained else name

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


DEFAULT_MODEL = "timm/vit_large_patch14_clip_224.openai"  # CLIP ViT-L/14 (OpenAI weights), the paper's
_CKPT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors", ".ckpt")


def clip_model_kind(model: str) -> str:
    """What a CLIP backend's ``model`` names: ``folder`` (open_clip_config.json + weights), ``file``
    (a checkpoint, needs ``arch``), ``schema`` (open_clip's ``local-dir:``/``hf-hub:``), ``hub`` (a hub
    id ``org/name``) or ``arch`` (an open_clip architecture name such as ``ViT-L-14``, with ``tag``)."""
    if model.startswith(("local-dir:", "hf-hub:")):
        return "schema"
    p = Path(model).expanduser()
    if p.is_dir():
        return "folder"
    if p.is_file() or model.lower().endswith(_CKPT_SUFFIXES):
        return "file"
    if looks_local(model):
        return "folder"  # a path that does not exist (yet): reported when loading
    return "hub" if "/" in model else "arch"


def resolve_clip_model(model: str, tag: str | None, arch: str | None, backend: str) -> tuple[str, str | None]:
    """open_clip's ``(model_name, pretrained)`` for a backend's ``model`` (+ ``tag`` / ``arch``).

    A folder must hold ``open_clip_config.json`` and the weights; a hub id is looked up in the HF cache
    first (so it works offline once downloaded) and otherwise downloaded by open_clip.
    """
    kind = clip_model_kind(model)
    if kind == "schema":
        return model, None
    if kind == "folder":
        p = Path(model).expanduser()
        if not (p / "open_clip_config.json").is_file():
            raise MissingWeightsError(model, backend, "A CLIP folder holds open_clip_config.json and the weights "
                                      "(open_clip_model.safetensors or open_clip_pytorch_model.bin), as written by "
                                      "open_clip's push_to_hf_hub / save; pass such a folder, a hub id, or an "
                                      "architecture name with `tag`.",
                                      reason="no such folder" if not p.exists() else "no open_clip_config.json")
        return f"local-dir:{p}", None
    if kind == "file":
        return str(arch), str(Path(model).expanduser())
    if kind == "hub":
        from huggingface_hub import snapshot_download

        try:
            return f"local-dir:{snapshot_download(repo_id=model, local_files_only=True)}", None
        except Exception as exc:
            if hub_offline():
                raise MissingWeightsError(model, backend, f"Download it with `huggingface-cli download {model}` "
                                          "(on a machine with internet, then copy the HF cache) or pass a local "
                                          "open_clip folder as `model`.", reason="not in the Hugging Face cache "
                                          "and the hub is offline (HF_HUB_OFFLINE)") from exc
        return f"hf-hub:{model}", None
    return model, tag


def check_clip_options(options: dict[str, Any]) -> None:
    """Options that cannot take effect for the given ``model`` (raises ValueError; nothing is loaded)."""
    opts = dict(options)
    model, tag, arch = _legacy(opts.get("model"), opts.get("tag"), opts.get("arch"),
                               opts.get("model_name"), opts.get("pretrained", _UNSET), warn=False)
    kind = clip_model_kind(model)
    if tag is not None and kind != "arch":
        raise ValueError(f"tag={tag!r} cannot take effect: it selects open_clip weights for an architecture name "
                         f"(model=ViT-L-14,tag=openai), but model={model!r} is a {_KIND_WORDS[kind]} that carries "
                         f"its own weights; drop tag")
    if arch is not None and kind != "file":
        raise ValueError(f"arch={arch!r} cannot take effect: it names the architecture of a checkpoint file given "
                         f"as model, but model={model!r} is a {_KIND_WORDS[kind]}; drop arch")
    if kind == "file" and arch is None:
        raise ValueError(f"model={model!r} is a checkpoint file: name its open_clip architecture with arch= "
                         f"(e.g. arch=ViT-L-14), or pass a folder holding open_clip_config.json and the weights")


_KIND_WORDS = {"folder": "local folder", "schema": "local-dir:/hf-hub: location", "hub": "hub id",
               "file": "checkpoint file", "arch": "architecture name"}
_UNSET: Any = object()


def _legacy(model: str | None, tag: str | None, arch: str | None, model_name: str | None, pretrained: Any,
            warn: bool = True) -> tuple[str, str | None, str | None]:
    """Map the deprecated ``model_name``/``pretrained`` options onto ``model``/``tag``/``arch``."""
    if model_name is not None:
        model = None  # the old name was given explicitly (profiles use model=): it wins over a profile's model
    if model_name is not None or pretrained is not _UNSET:
        if warn:
            warnings.warn("the CLIP backends' model_name= and pretrained= options are deprecated: use model= (an "
                          "open_clip folder, a hub id, a checkpoint file with arch=, or an architecture name with "
                          "tag=)", DeprecationWarning, stacklevel=3)
        if model is None:
            name = model_name or "ViT-L-14"
            if pretrained is _UNSET:  # the old default: OpenAI weights for an architecture name
                pretrained = "openai" if clip_model_kind(name) == "arch" else None
            if pretrained and looks_local(str(pretrained)):
                model, arch = str(pretrained), arch or name
            else:
                model, tag = name, (tag or pretrained or None)
        elif pretrained is not None and pretrained is not _UNSET:  # only pretrained=, beside model=
            if looks_local(str(pretrained)):
                model, arch = str(pretrained), arch or (model if clip_model_kind(model) == "arch" else None)
            else:
                tag = tag or str(pretrained)
    return (model or DEFAULT_MODEL), tag, arch


def _as_backend(exc: Exception, backend: str) -> Exception:
    """The shared encoder's error, relabelled with the backend (tool) that called it."""
    if isinstance(exc, MissingWeightsError):
        return exc if exc.backend == backend else MissingWeightsError(exc.weight, backend, exc.how, exc.reason)
    text = str(exc)
    if text.startswith(f"{backend}: "):
        return exc
    try:
        return type(exc)(f"{backend}: {text}")
    except Exception:
        return RuntimeError(f"{backend}: {type(exc).__name__}: {text}")


class _ClipBase:
    """Shared per-video embedding grid for the CLIP backends.

    Options: ``model`` (an open_clip folder with open_clip_config.json + weights, a hub id such as
    ``timm/vit_large_patch14_clip_224.openai``, a checkpoint file with ``arch``, or an open_clip
    architecture name with ``tag``), ``tag``, ``arch``, ``device``, ``dtype``, ``frames_per_video``,
    ``batch_size``. ``model_name``/``pretrained`` are deprecated aliases.
    """

    backend = "clip"
    DEPRECATED_OPTIONS = {"model_name": "model", "pretrained": "model (a file or folder) or tag"}
    check_options = staticmethod(check_clip_options)

    def __init__(self, model: str | None = None, tag: str | None = None, arch: str | None = None,
                 device: str = "auto", dtype: str = "auto", frames_per_video: int = 64, batch_size: int = 32,
                 model_name: str | None = None, pretrained: Any = _UNSET) -> None:
        model, tag, arch = _legacy(model, tag, arch, model_name, pretrained)
        self.model, self.tag, self.arch = model, tag, arch
        self._device, self._dtype, self._batch = device, dtype, batch_size
        self._encoder: OpenClipEncoder | None = None
        self.frames_per_video = int(frames_per_video)

    @property
    def encoder(self) -> OpenClipEncoder:
        """The process-wide encoder for this model (shared with every other backend on the same CLIP)."""
        if self._encoder is None:
            try:
                name, pretrained = resolve_clip_model(self.model, self.tag, self.arch, self.backend)
            except Exception as exc:
                raise _as_backend(exc, self.backend) from exc
            self._encoder = MODELS.get(("open_clip-encoder", name, pretrained, select_device(self._device),
                                        self._dtype),
                                       lambda: OpenClipEncoder(name, pretrained, self._device, self._dtype,
                                                               self._batch))
        return self._encoder

    def _encode(self, fn, *args):
        """Call the shared encoder; its errors name this backend's tool, not whichever built it first."""
        try:
            return fn(*args)
        except Exception as exc:
            raise _as_backend(exc, self.backend) from exc

    def model_used(self) -> str:
        """The folder, hub id or file (with its architecture) actually loaded, for results and traces."""
        return self.encoder.describe()

    def _grid(self, clip: VideoClip) -> tuple[np.ndarray, np.ndarray]:
        """(timestamps [n], embeddings [n, d]) on the video's frame grid, computed once per process."""
        encoder = self._encode(lambda: self.encoder)
        key = video_key(clip) + (encoder.key, self.frames_per_video)

        def compute():
            idx = uniform_indices(clip.n_frames, self.frames_per_video)
            return clip.timestamps[idx].astype(float), encoder.encode_frames(clip.frames[idx])

        # the grid (and a failed load) is cached for every backend on this CLIP: relabel per caller
        return self._encode(EMBEDDINGS.get, key, compute)

    def _window(self, clip: VideoClip, window) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
        times, emb = self._grid(clip)
        s, e = window_bounds(clip, window)
        sel = np.nonzero((times >= s - 1e-6) & (times <= e + 1e-6))[0]
        if sel.size == 0 and times.size:
            sel = np.array([int(np.argmin(np.abs(times - (s + e) / 2)))])
        return times[sel], emb[sel], (s, e)


_ACTIVITY = LiteVisualSimilarity()  # pixels only, no weights: the "motion" aspect of any backend


class ClipVisualSimilarity(_ClipBase):
    """CLIP frame embeddings and cosine similarity between two clips' windows (score: cosine clipped to [0, 1]).

    ``aspect`` is accepted and reported, but CLIP's embedding mixes content and style; the paper
    uses it for both (e.g. the art-style task). ``aspect="motion"`` (when things move) is not a
    CLIP question: it is answered by the pixel activity profile shared with the lite backend.
    """

    backend = "visual_similarity/clip"

    def embed(self, clip: VideoClip, window=(None, None), aspect: str = "content") -> np.ndarray:
        if aspect == "motion":
            return _ACTIVITY.embed(clip, window, "motion")
        return self._window(clip, window)[1]

    def compare_embeddings(self, ea: np.ndarray, eb: np.ndarray, aspect: str) -> dict:
        """The one scoring path (the visual_similarity tool calls it, and so does :meth:`compare`): the
        activity correlation for ``motion``; otherwise the cosine of the mean CLIP embeddings clipped to
        [0, 1] (``score``, and ``cosine`` unclipped) and, per frame of ``a``, its best match in ``b``."""
        if aspect == "motion":
            return _ACTIVITY.compare_embeddings(ea, eb, "motion")
        out = default_compare(ea, eb)
        ma, mb = np.asarray(ea, float).mean(0), np.asarray(eb, float).mean(0)
        out["cosine"] = round(float(ma @ mb / (np.linalg.norm(ma) * np.linalg.norm(mb) + 1e-12)), 6)
        out["model"] = self.model_used()
        return out

    def compare(self, a: VideoClip, b: VideoClip, window_a=(None, None), window_b=(None, None),
                aspect: str = "content") -> dict:
        if aspect == "motion":
            return _ACTIVITY.compare(a, b, window_a, window_b, "motion")
        ta, ea, wa = self._window(a, window_a)
        tb, eb, wb = self._window(b, window_b)
        out = self.compare_embeddings(ea, eb, aspect)
        return {**out, "frame_times": [round(float(t), 3) for t in ta],
                "window_a": [round(wa[0], 3), round(wa[1], 3)], "window_b": [round(wb[0], 3), round(wb[1], 3)],
                "frames_a": int(len(ta)), "frames_b": int(len(tb)), "aspect": aspect}


class ClipTemporalGrounding(_ClipBase):
    """Localises a described event by CLIP text-frame similarity (replaces the paper's LanguageBind)."""

    backend = "temporal_grounding/clip"

    def __init__(self, model: str | None = None, tag: str | None = None, arch: str | None = None,
                 device: str = "auto", dtype: str = "auto", frames_per_video: int = 64, batch_size: int = 32,
                 top_k: int = 5, rel_threshold: float = 0.5, model_name: str | None = None,
                 pretrained: Any = _UNSET) -> None:
        super().__init__(model, tag, arch, device, dtype, frames_per_video, batch_size, model_name=model_name,
                         pretrained=pretrained)
        self.top_k, self.rel_threshold = int(top_k), float(rel_threshold)

    def ground(self, clip: VideoClip, query: str, window=(None, None)) -> dict:
        times, emb, bounds = self._window(clip, window)
        text = self._encode(self.encoder.encode_texts, [query.strip() or "a video frame"])[0]
        sims = emb @ text
        spans = spans_from_scores(times, sims, bounds, top_k=self.top_k, rel_threshold=self.rel_threshold)
        return {"spans": spans, "boundaries": change_points(times, emb), "window": [round(bounds[0], 3),
                round(bounds[1], 3)], "frames_scored": int(len(times)),
                "frame_scores": [[round(float(t), 3), round(float(cos_to_unit(float(x))), 4)] for t, x in zip(times, sims)],
                "model": self.model_used()}
