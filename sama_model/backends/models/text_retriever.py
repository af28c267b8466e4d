"""Subtitle retrieval with sentence-transformers (the paper: BGE-M3) and extraction by time range.

Segment embeddings are cached per subtitle track (by its text and timing), so the many queries
an agent asks about one video's subtitles encode the track once.
"""
from __future__ import annotations

import hashlib
import math
from typing import Any, Sequence

import numpy as np

from mvx_tasks.subtitles import SubtitleSegment

from ._runtime import MODELS, SharedModels, import_or_explain, resolve_hf_weights, select_device, wrap_load_error

__all__ = ["SentenceTransformerSubtitleRetriever", "DEFAULT_MODEL"]

DEFAULT_MODEL = "BAAI/bge-m3"
BACKEND = "subtitle_retriever/sentence_transformers"
_TRACKS = SharedModels(maxsize=256)


def _track_key(segments: Sequence[SubtitleSegment]) -> str:
    h = hashlib.sha1()
    for s in segments:
        h.update(f"{s.start:.3f}|{s.end:.3f}|{s.text}\n".encode("utf-8", "replace"))
    return h.hexdigest()


def _seg(s: SubtitleSegment) -> dict:
    end = None if math.isinf(s.end) else round(float(s.end), 3)
    return {"start": round(float(s.start), 3), "end": end, "text": s.text}


class SentenceTransformerSubtitleRetriever:
    """Dense retrieval of subtitle segments for a query; ``score`` is cosine similarity."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "auto", batch_size: int = 32,
                 local_files_only: bool = False, query_prompt: str = "") -> None:
        self.model_name = model
        self.device = select_device(device)
        self.batch_size = int(batch_size)
        self.local_files_only = local_files_only
        self.query_prompt = query_prompt  # e.g. an instruction prefix for E5/BGE-en style models
        self._warm = False

    def _load(self) -> Any:
        st = import_or_explain("sentence_transformers", BACKEND, "sentence-transformers")
        path = resolve_hf_weights(self.model_name, BACKEND, local_files_only=self.local_files_only)
        how = f"Pass a local folder as `model` or run `huggingface-cli download {self.model_name}`."
        kwargs = {"model_kwargs": {"dtype": "bfloat16"}} if self.device.startswith("cuda") else {}
        return wrap_load_error(self.model_name, BACKEND, how,
                               lambda: st.SentenceTransformer(path, device=self.device, **kwargs))

    @property
    def model(self) -> Any:
        return MODELS.get(("sentence-transformers", self.model_name, self.device), self._load)

    def warm_up(self) -> None:
        """Load the model and run it once, before a run's first question (:func:`sama_model.tools.toolkit.warm_up`):
        the first inference sets up its kernels and buffers."""
        if not self._warm:  # once (VLMEvalKit's adapter runs one question at a time)
            self._encode(["warm up"])
            self._warm = True

    def _encode(self, texts: list[str]) -> np.ndarray:
        emb = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(emb, dtype=np.float32)

    def segment_embeddings(self, segments: Sequence[SubtitleSegment]) -> np.ndarray:
        """Embeddings [n, d] of a subtitle track, computed once per process per track."""
        key = (self.model_name, _track_key(segments))
        return _TRACKS.get(key, lambda: self._encode([s.text for s in segments]))

    def retrieve(self, segments: Sequence[SubtitleSegment], query: str, top_k: int = 3) -> dict:
        segments = list(segments)
        if not segments or not query.strip():
            return {"hits": [], "model": self.model_name}
        emb = self.segment_embeddings(segments)
        q = self._encode([self.query_prompt + query.strip()])[0]
        scores = emb @ q
        order = np.argsort(-scores, kind="stable")[: max(0, int(top_k))]
        hits = [dict(_seg(segments[i]), score=round(float(scores[i]), 4)) for i in order]
        return {"hits": hits, "model": self.model_name}

    def extract(self, segments: Sequence[SubtitleSegment], window=(None, None)) -> dict:
        start, end = window or (None, None)
        s = -math.inf if start is None else float(start)
        e = math.inf if end is None else float(end)
        if e < s:
            s, e = e, s
        picked = [seg for seg in segments if seg.start <= e and seg.end >= s]
        return {"text": " ".join(p.text for p in picked), "segments": [_seg(p) for p in picked],
                "window": [start, end]}
