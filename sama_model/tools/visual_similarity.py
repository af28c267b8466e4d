"""visual_similarity: how alike two labelled videos look (CLIP embeddings in the paper).

Each video's frame embeddings are computed once per process per backend (and window and
aspect) and reused for every comparison: comparing a reference with four candidates embeds
five videos, not eight. A backend whose reading of one video depends on its partner (the lite
identity descriptor reads a still camera's clip again when its partner's camera clearly moves)
says so with ``pair_aspects``; the side it names is embedded again, under another cached aspect, and the
backend asked again (:func:`reread_pair`).
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from .base import Tool, check_shift, fmt_shift, fmt_window

_EMBEDDINGS: dict[tuple, np.ndarray] = {}
_EMB_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}


def clear_embedding_cache() -> None:
    with _EMB_LOCK:
        _EMBEDDINGS.clear()


def default_compare(ea: np.ndarray, eb: np.ndarray) -> dict[str, Any]:
    """Cosine similarity of the mean embeddings (clipped to [0, 1]) and, per frame of ``a``, its
    best match in ``b``; used when a backend has no ``compare_embeddings``."""
    def unit(x: np.ndarray) -> np.ndarray:
        n = np.linalg.norm(x, axis=-1, keepdims=True)
        return x / np.where(n == 0, 1, n)

    a, b = unit(np.asarray(ea, float).reshape(len(ea), -1)), unit(np.asarray(eb, float).reshape(len(eb), -1))
    score = float(np.clip(unit(a.mean(0)) @ unit(b.mean(0)), 0.0, 1.0))
    frame_scores = np.clip(a @ b.T, 0.0, 1.0).max(axis=1)
    return {"score": round(score, 6), "frame_scores": [round(float(x), 6) for x in frame_scores]}


#: rounds of ``pair_aspects`` a pair may take (the lite identity's: stack views, then a moving camera's cuts and a
#: still clip's second read)
MAX_REREAD_ROUNDS = 3


def reread_pair(ea: np.ndarray, eb: np.ndarray, pair_aspects: Callable[[np.ndarray, np.ndarray, str], tuple[str, str]],
                aspect: str, embed_a: Callable[[str], np.ndarray],
                embed_b: Callable[[str], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The embeddings a pair is compared on: while the backend's ``pair_aspects`` asks for a side to be embedded
    under an aspect that side has not been read under yet, it is embedded again (unless that read is empty, then the
    last one stays) and the backend asked again with the new pair; at most :data:`MAX_REREAD_ROUNDS` rounds."""
    e, embed, seen = [ea, eb], (embed_a, embed_b), ({aspect}, {aspect})
    for _ in range(MAX_REREAD_ROUNDS):
        asked = [(i, asp) for i, asp in enumerate(pair_aspects(e[0], e[1], aspect)) if asp not in seen[i]]
        if not asked:
            break
        for i, asp in asked:
            seen[i].add(asp)
            again = np.asarray(embed[i](asp))
            e[i] = again if again.any() else e[i]
    return e[0], e[1]


class VisualSimilarityTool(Tool):
    name = "visual_similarity"
    video_args = ("video_a", "video_b")

    def embeddings(self, label: str, window: tuple[float | None, float | None], aspect: str) -> np.ndarray:
        key = (self.backend_name, json.dumps(self.backend_options, sort_keys=True, default=repr),
               self.videos.content_hash(label), window, aspect)
        with _EMB_LOCK:
            if key in _EMBEDDINGS:
                return _EMBEDDINGS[key]
            lock = _KEY_LOCKS.setdefault(key, threading.Lock())
        with lock:
            with _EMB_LOCK:
                if key in _EMBEDDINGS:
                    return _EMBEDDINGS[key]
            emb = np.asarray(self.call_backend("embed", self.videos.clip(label), window, aspect))
            with _EMB_LOCK:
                _EMBEDDINGS[key] = emb
            return emb

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
