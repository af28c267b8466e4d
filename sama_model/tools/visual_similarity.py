"""visual_similarity: how alike two labelled videos look (CLIP embeddings in the paper).

Each video's frame embeddings are computed once per process per backend (and window and
aspect; the most recent ``MVX_EMBED_CACHE_SIZE`` are kept) and reused for every comparison: comparing a reference with four candidates embeds
five videos, not eight. A backend whose reading of one video depends on its partner (the lite
identity descriptor reads a still camera's clip again when its partner's camera clearly moves)
says so with ``pair_aspects``; the side it names is embedded again, under another cached aspect, and the
backend asked again (:func:`~sama_model.backends.similarity_scoring.reread_pair`).
"""
from __future__ import annotations

import json
import os
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ..backends.models._runtime import SharedModels
from ..backends.similarity_scoring import default_compare, reread_pair
from .base import BackendSpec, Tool, Window, check_shift, fmt_shift, fmt_window

#: embeddings per (backend, options, video content, window, aspect), least recently used out past
#: ``MVX_EMBED_CACHE_SIZE`` entries (default 512). Why bounded: a paper-scale run embeds thousands of videos,
#: and an unbounded dict grew the process by about 0.15 MiB per question (results/scale.md).
_EMBEDDINGS = SharedModels(maxsize=int(os.environ.get("MVX_EMBED_CACHE_SIZE", "512")))


def clear_embedding_cache() -> None:
    _EMBEDDINGS.clear()


@runtime_checkable
class VisualSimilarityBackend(Protocol):
    """Frame/clip embeddings and a similarity score in [0, 1] between two clips' windows.

    ``embed`` returns an array [n, d] of L2-normalised frame embeddings (cached per video by the
    tool layer); ``compare`` returns ``{"score": float, "frame_scores": [...], ...}``; ``aspect`` is
    "content" (what is shown) or "style" (how it is rendered) where a backend distinguishes them.
    Optional: ``compare_embeddings(ea, eb, aspect)`` scores cached embeddings (None: the tool's
    cosine), and ``pair_aspects(ea, eb, aspect) -> (aspect_a, aspect_b)`` names a side to embed again
    under another aspect before the pair is compared (a reading that depends on the partner; asked again with the
    new embeddings until it names nothing new).
    """

    def embed(self, clip: VideoClip, window: Window = (None, None), aspect: str = "content") -> np.ndarray: ...

    def compare(self, a: VideoClip, b: VideoClip, window_a: Window = (None, None),
                window_b: Window = (None, None), aspect: str = "content") -> dict: ...


class VisualSimilarityTool(Tool):
    name = "visual_similarity"
    contract = VisualSimilarityBackend
    backend_classes: ClassVar[dict[str, str]] = {
        "lite": "sama_model.backends.lite.visual_similarity:LiteVisualSimilarity",
        "clip": "sama_model.backends.models.clip_backends:ClipVisualSimilarity",
    }
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {
        "offline": BackendSpec("lite"),
        "paper": BackendSpec("clip", {"model": "timm/vit_large_patch14_clip_224.openai"}),
    }
    video_args = ("video_a", "video_b")

    def embeddings(self, label: str, window: tuple[float | None, float | None], aspect: str) -> np.ndarray:
        key = (self.backend_name, json.dumps(self.backend_options, sort_keys=True, default=repr),
               self.videos.content_hash(label), window, aspect)
        return _EMBEDDINGS.get(key, lambda: np.asarray(self.call_backend("embed", self.videos.clip(label), window,
                                                                         aspect)))

    def forward(self, video_a: str, video_b: str, aspect: Literal["content", "style", "identity", "motion"] = "content",
                start: float | None = None, end: float | None = None, shift_frames: int = 0) -> dict[str, Any]:
        """Score how visually similar two videos are, from 0 (unrelated) to 1 (identical). Use aspect "style" for
        rendering style (palette, lines, shading), "content" for what is shown, "identity" for whether the
        main subject is the same individual (0.5 or more: same), and "motion" for whether the two videos
        record the same event in sync (things move at the same moments; robust to viewpoint and sensor).

        Args:
            video_a: Label of the first video, e.g. "Reference".
            video_b: Label of the second video, e.g. "Video A".
            aspect: "content" compares what is depicted; "style" how it is depicted; "identity" the main subject;
                "motion" when things move.
            start: Window start in seconds applied to both videos; null for the beginning.
            end: Window end in seconds applied to both videos; null for the end.
            shift_frames: 0 reads the window; n > 0 reads each video's window from its (n+1)-th decoded frame on, so
                the backend's sampled frames fall between the first reading's: a second reading of the same pair, which
                the re-identification skill averages with the first.
        """
        check_shift(shift_frames)
        window = self.window(start, end)
        wa, wb = ((self.videos.clip(v).shifted_window(window, shift_frames) for v in (video_a, video_b))
                  if shift_frames else (window, window))
        ea, eb = self.embeddings(video_a, wa, aspect), self.embeddings(video_b, wb, aspect)
        pair = getattr(self.backend, "pair_aspects", None)  # a backend may re-read a side given its partner
        if callable(pair):
            ea, eb = reread_pair(ea, eb, pair, aspect,
                                 lambda asp: self.embeddings(video_a, wa, asp),
                                 lambda asp: self.embeddings(video_b, wb, asp))
        custom = getattr(self.backend, "compare_embeddings", None)
        out = custom(ea, eb, aspect) if callable(custom) else None  # a backend may score only some aspects
        out = dict(out) if out is not None else default_compare(ea, eb)
        out["aspect"] = aspect
        return out

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        gate = data.get("gate_score")  # (a lite identity pair near its camera gate: the other side's score)
        return (f"similarity({args['video_a']}, {args['video_b']}, {args['aspect']}, "
                f"{fmt_window(args)}{fmt_shift(args)})"
                f" = {data.get('score', 0):.3f}" + (f" ({gate:.3f} across the camera gate)" if gate is not None else ""))
