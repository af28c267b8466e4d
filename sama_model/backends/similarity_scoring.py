"""How a pair of embedded clips is scored and read again: shared by the ``visual_similarity`` tool
(:mod:`sama_model.tools.visual_similarity`) and its backends, below both so that a backend never imports the tool.

:func:`default_compare` is the score of a backend that has no ``compare_embeddings`` of its own; :func:`reread_pair`
runs a backend's ``pair_aspects`` (a side embedded again, under another aspect, once its partner is known).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


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
