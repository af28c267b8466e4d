"""Small helpers shared by the model backends: windows, query nouns, colour names, time spans."""
from __future__ import annotations

import re

import numpy as np

from mvx_tasks.video_decoder import VideoClip

__all__ = ["window_bounds", "sample_window", "query_nouns", "FALLBACK_VOCABULARY", "color_name",
           "spans_from_scores", "change_points", "cos_to_unit"]

# Objects asked about most in MVX-Bench questions (COCO-like); used when a query names none.
FALLBACK_VOCABULARY: tuple[str, ...] = (
    "person", "car", "bicycle", "motorcycle", "bus", "truck", "dog", "cat", "horse", "bird", "ball",
    "chair", "table", "cup", "bottle", "bag", "phone", "book", "tree", "building")

_STOP = set("""a an the this that these those of in on at to from for with by and or but not no is are was were be
been being do does did doing have has had what which who whom whose when where why how many much more most
less least any some each every all both either neither video videos clip clips frame frames scene scenes shown
show shows appear appears appearing seen visible there here it its they them their he she his her you your
we our i me my than then first second third last before after during while between same different other
count number total times time color colour left right top bottom above below near next behind front
does option options answer choose select describe happens happen happening change changes reference
candidate one two three four five six seven eight nine ten can could would should will most red blue green
yellow black white orange purple pink brown gray grey big small large little tall short moving move moves
walking walks running runs holding holds wearing wears looking looks""".split())


def window_bounds(clip: VideoClip, window=(None, None)) -> tuple[float, float]:
    """A window with ``None`` ends resolved to the video's start/end (ordered, clamped)."""
    start, end = (window or (None, None))
    s = 0.0 if start is None else max(0.0, float(start))
    e = clip.duration if end is None else min(float(end), clip.duration) if clip.duration else float(end)
    if e < s:
        s, e = e, s
    return s, e


def sample_window(clip: VideoClip, n: int, window=(None, None)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Up to ``n`` frames over the window: (frames, timestamps, indices into ``clip.frames``)."""
    from mvx_tasks.video_decoder import uniform_indices

    s, e = window_bounds(clip, window)
    idx = clip.window(s, e)
    pick = idx[uniform_indices(len(idx), n)]
    return clip.frames[pick], clip.timestamps[pick], pick


def query_nouns(query: str, vocabulary: tuple[str, ...] | list[str] | None = None, limit: int = 8) -> list[str]:
    """Object words of a query (a stop-word filter, plural -> singular), or ``[]``.

    With a ``vocabulary`` (e.g. a detector's class names) only words in it are kept, matching
    singular and plural forms and multi-word names ("traffic light").
    """
    text = (query or "").lower()
    if vocabulary is not None:
        found = []
        for name in vocabulary:
            n = name.lower()
            if re.search(rf"\b{re.escape(n)}(s|es)?\b", text) and name not in found:
                found.append(name)
        return found[:limit]
    words = re.findall(r"[a-z][a-z\-]+", text)
    out: list[str] = []
    for w in words:
        if w in _STOP or len(w) < 3:
            continue
        if w in _IRREGULAR:
            w = _IRREGULAR[w]
        elif w.endswith("ies") and len(w) > 4:
            w = w[:-3] + "y"
        elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
            w = w[:-2]
        elif w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        if w not in out and w not in _STOP:
            out.append(w)
    return out[:limit]


_IRREGULAR = {"people": "person", "men": "man", "women": "woman", "children": "child", "mice": "mouse",
              "geese": "goose", "feet": "foot", "teeth": "tooth", "knives": "knife", "leaves": "leaf",
              "shelves": "shelf", "wolves": "wolf", "buses": "bus", "glasses": "glasses", "sheep": "sheep",
              "fish": "fish", "bus": "bus", "grass": "grass"}

_HUES = ((10, "red"), (22, "orange"), (34, "yellow"), (78, "green"), (100, "cyan"), (130, "blue"),
         (150, "purple"), (170, "pink"), (180, "red"))


def color_name(pixels: np.ndarray) -> str:
    """Dominant colour name of RGB pixels (OpenCV HSV: hue 0-180), by majority vote of named bins."""
    import cv2

    px = np.asarray(pixels, dtype=np.uint8).reshape(-1, 1, 3)
    if px.size == 0:
        return "unknown"
    if px.shape[0] > 4096:
        px = px[np.linspace(0, px.shape[0] - 1, 4096).astype(int)]
    hsv = cv2.cvtColor(px, cv2.COLOR_RGB2HSV).reshape(-1, 3).astype(int)
    h, s, v = hsv[:, 0], hsv[:, 1], hsv[:, 2]
    names = np.empty(len(h), dtype=object)
    names[:] = "gray"
    names[v < 50] = "black"
    names[(s < 40) & (v >= 200)] = "white"
    chroma = (s >= 40) & (v >= 50)
    for upper, name in reversed(_HUES):
        names[chroma & (h <= upper)] = name
    brown = chroma & (names == "orange") & (v < 150)
    names[brown] = "brown"
    labels, counts = np.unique(names.astype(str), return_counts=True)
    return str(labels[int(np.argmax(counts))])


def cos_to_unit(cos: np.ndarray | float) -> np.ndarray | float:
    """Cosine similarity [-1, 1] mapped to a score in [0, 1]."""
    return np.clip((np.asarray(cos, dtype=float) + 1.0) / 2.0, 0.0, 1.0) if isinstance(cos, np.ndarray) \
        else float(min(1.0, max(0.0, (float(cos) + 1.0) / 2.0)))


def spans_from_scores(times: np.ndarray, sims: np.ndarray, bounds: tuple[float, float], *,
                      top_k: int = 5, rel_threshold: float = 0.5, smooth: int = 3) -> list[dict]:
    """Turn per-time text similarities into ranked time spans (peak picking + merging).

    Similarities are smoothed, frames scoring above ``min + rel_threshold * (max - min)`` are kept,
    contiguous kept frames merge into one span that extends half-way to the neighbouring samples,
    and each span's score is its peak cosine mapped to [0, 1]. Best first.
    """
    times = np.asarray(times, dtype=float)
    sims = np.asarray(sims, dtype=float)
    if times.size == 0:
        return []
    if smooth > 1 and sims.size >= smooth:
        kernel = np.ones(smooth) / smooth
        padded = np.pad(sims, (smooth // 2, smooth - 1 - smooth // 2), mode="edge")
        sm = np.convolve(padded, kernel, mode="valid")
    else:
        sm = sims
    lo, hi = float(sm.min()), float(sm.max())
    keep = sm >= lo + rel_threshold * (hi - lo) if hi > lo else np.ones_like(sm, dtype=bool)
    mids = (times[:-1] + times[1:]) / 2
    left_edges = np.concatenate([[bounds[0]], mids])
    right_edges = np.concatenate([mids, [bounds[1]]])
    spans, i = [], 0
    while i < len(sm):
        if not keep[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(sm) and keep[j + 1]:
            j += 1
        peak = i + int(np.argmax(sims[i:j + 1]))
        spans.append({"start": round(float(left_edges[i]), 3), "end": round(float(right_edges[j]), 3),
                      "score": round(float(cos_to_unit(float(sims[peak]))), 4), "peak": round(float(times[peak]), 3)})
        i = j + 1
    spans.sort(key=lambda d: -d["score"])
    return spans[:top_k]


def change_points(times: np.ndarray, embeddings: np.ndarray, *, z: float = 2.0, max_points: int = 10) -> list[float]:
    """Moments where consecutive (L2-normalised) frame embeddings change most: scene boundaries."""
    if len(times) < 3:
        return []
    d = 1.0 - np.sum(embeddings[1:] * embeddings[:-1], axis=1)
    thr = float(d.mean() + z * d.std())
    idx = [i for i in np.argsort(-d)[:max_points] if d[i] > thr and d[i] > 1e-3]
    return sorted(round(float((times[i] + times[i + 1]) / 2), 3) for i in idx)
