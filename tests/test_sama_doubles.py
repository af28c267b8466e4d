"""Test doubles for SAMA (no tests here): tiny PyAV videos and scripted tool backends.

The doubles answer from per-video scripts keyed by the video file's stem, which the tests
write; they never see a sample's answer (there is none in an AgentQuestion).
"""
from __future__ import annotations

import copy
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from sama_model.question import AgentQuestion, VideoRef
from sama_model.tools.backends import register_backend

CALLS: Counter = Counter()
_LOCK = threading.Lock()
SCRIPT: dict[str, dict[str, Any]] = {}  # video stem -> behaviour


def count(name: str) -> None:
    with _LOCK:
        CALLS[name] += 1


def reset(script: dict[str, dict[str, Any]] | None = None) -> None:
    """Clear call counts and set the per-video scripts."""
    CALLS.clear()
    SCRIPT.clear()
    SCRIPT.update(copy.deepcopy(script or {}))
    from sama_model.tools import visual_similarity

    visual_similarity.clear_embedding_cache()


def make_video(path: Path, color: tuple[int, int, int], n_frames: int = 10, fps: int = 5, size: int = 32) -> Path:
    """A tiny H.264 video of a flat colour with a moving square (PyAV)."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width = stream.height = size
        stream.pix_fmt = "yuv420p"
        for i in range(n_frames):
            img = np.zeros((size, size, 3), np.uint8)
            img[:] = color
            img[4:12, (i * 2) % (size - 8):(i * 2) % (size - 8) + 8] = 255
            for pkt in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(pkt)
        for pkt in stream.encode():
            out.mux(pkt)
    return path



# A CNT question with a scripted count per video (Video C matches the reference), shared by tests.
CUPS_Q = "Which video has the same number of cups as the reference video?"
CUPS_OPTIONS = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}
CUPS_STEMS = {"Reference": "ref", "Video A": "a", "Video B": "b", "Video C": "c", "Video D": "d"}
CUPS_SCRIPT = {"ref": {"sg": 2, "reader": "two cups"}, "a": {"sg": 1, "reader": "one cup"},
               "b": {"sg": 3, "reader": "three cups"}, "c": {"sg": 2, "reader": "two cups"},
               "d": {"sg": 4, "reader": "four cups"}}


def make_question(root: Path, qid: str, task: str | None, question: str, options: dict[str, str],
                  stems: dict[str, str], subtitles: dict[str, str] | None = None) -> AgentQuestion:
    """A question whose videos (label -> stem) are generated in ``root/videos`` (distinct colours)."""
    videos = []
    for i, (label, stem) in enumerate(stems.items()):
        p = root / "videos" / f"{stem}.mp4"
        if not p.exists():
            make_video(p, ((40 * (sum(map(ord, stem)) % 6) + 20) % 256, (70 * i + 30) % 256, (25 * len(stem)) % 256))
        sub = None
        if subtitles and label in subtitles:
            sp = root / "videos" / f"{stem}.srt"
            sp.write_text(subtitles[label], encoding="utf-8")
            sub = f"videos/{stem}.srt"
        videos.append(VideoRef(label, f"videos/{stem}.mp4", sub))
    return AgentQuestion(id=qid, question=question, options=options, videos=tuple(videos), task=task, root=str(root))


def _s(clip) -> dict[str, Any]:
    return SCRIPT.get(Path(clip.path).stem, {})


def _narrow(window) -> bool:
    return window != (None, None)


@register_backend("video_reader", "double")
class DoubleReader:
    thread_safe = True

    def read(self, clip, query, window=(None, None), n_frames=8):
        count("video_reader")
        s = _s(clip)
        if s.get("reader_raises"):
            raise RuntimeError("reader exploded")
        answer = s.get("reader_narrow") if _narrow(window) and "reader_narrow" in s else s.get("reader", "nothing")
        return {"answer": answer, "window": list(window), "frames_used": n_frames}


@register_backend("scene_graph", "double")
class DoubleSceneGraph:
    thread_safe = True

    def graph(self, clip, query="", window=(None, None), n_frames=8):
        count("scene_graph")
        s = _s(clip)
        n = s.get("sg_narrow", s.get("sg", 0)) if _narrow(window) else s.get("sg", 0)
        label = s.get("label", "cup")
        times = s.get("times", [0.2, 0.4, 0.6])
        frames = [{"t": t, "objects": [{"id": k, "label": label, "box": [0, 0, 4, 4], "score": 0.9,
                                        "color": s.get("color", "red")} for k in range(n)], "relations": []}
                  for t in times]
        return {"frames": frames, "counts": {label: n} if n else {}}


@register_backend("object_tracker", "double")
class DoubleTracker:
    thread_safe = True

    def track(self, clip, query="", window=(None, None)):
        count("object_tracker")
        s = _s(clip)
        n = s.get("tr", s.get("sg", 0))
        label = s.get("label", "cup")
        out = {"tracks": [{"id": k, "label": label, "times": [0.2], "boxes": [[0, 0, 4, 4]]} for k in range(n)],
               "counts": {label: n} if n else {}, "max_per_frame": {label: n} if n else {}}
        if "estimates" in s:  # the lite tracker's two count estimates behind a generic count
            out["estimates"] = s["estimates"]
        if "separable" in s:  # the lite tracker's word on whether its count tells the queried kind apart
            out.update(counted_as="moving regions", target_separable=s["separable"], asked_kind=s.get("kind"))
        if "probs" in s:  # the lite tracker's followed objects' probabilities behind a generic count
            shifted = window[0] is not None and "probs_shifted" in s  # a second reading on shifted frames
            out["count_probabilities"] = s["probs_shifted" if shifted else "probs"]
        return out


@register_backend("visual_similarity", "double")
class DoubleSimilarity:
    thread_safe = True

    def embed(self, clip, window=(None, None), aspect="content"):
        count("embed")
        shifted = window[0] is not None and f"emb_{aspect}_shifted" in _s(clip)  # a second reading on shifted frames
        vec = np.asarray(_s(clip).get(f"emb_{aspect}_shifted" if shifted else f"emb_{aspect}",
                                      _s(clip).get("emb", [1.0, 0.0, 0.0])), float)
        return np.stack([vec, vec])

    def compare(self, a, b, window_a=(None, None), window_b=(None, None), aspect="content"):
        raise AssertionError("the tool layer compares cached embeddings")

    def compare_embeddings(self, ea, eb, aspect):
        """Like the lite backend: an all-zero identity embedding means "no subject found"; a script entry
        "_gate": {"gate_score": x} adds the score on the other side of the lite backend's camera gate, and
        "_stack": {"stack_texture": t} says the subjects were read from their stacks."""
        if aspect == "identity" and not (np.asarray(ea).any() and np.asarray(eb).any()):
            return {"score": 0.5, "identity_similarity": None}
        if aspect == "identity" and ("_gate" in SCRIPT or "_stack" in SCRIPT):
            from sama_model.backends.similarity_scoring import default_compare

            return {**default_compare(ea, eb), **SCRIPT.get("_gate", {}), **SCRIPT.get("_stack", {})}
        return None  # cosine


@register_backend("temporal_grounding", "double")
class DoubleGrounding:
    thread_safe = True

    def ground(self, clip, query, window=(None, None)):
        count("temporal_grounding")
        s = _s(clip)
        return {"spans": s.get("spans", []), "boundaries": s.get("boundaries", [])}


@register_backend("subtitle_retriever", "double")
class DoubleSubtitles:
    thread_safe = True

    def retrieve(self, segments, query, top_k=3):
        count("subtitle_retrieve")
        q = set(query.lower().split())
        scored = sorted(segments, key=lambda s: -len(q & set(s.text.lower().split())))
        return {"hits": [{**s.to_dict(), "score": float(len(q & set(s.text.lower().split())))} for s in scored[:top_k]]}

    def extract(self, segments, window=(None, None)):
        count("subtitle_extract")
        lo = -1e9 if window[0] is None else window[0]
        hi = 1e9 if window[1] is None else window[1]
        segs = [s for s in segments if s.end >= lo and s.start <= hi]
        return {"text": " ".join(s.text for s in segs), "segments": [s.to_dict() for s in segs]}


@register_backend("motion_analyzer", "double")
class DoubleMotion:
    thread_safe = True

    def analyze(self, clip, window=(None, None)):
        count("motion")
        s = _s(clip)
        return {"camera": {"trends": s.get("trends", ["static"]), "pan": s.get("pan", 0.0), "tilt": 0.0, "zoom": 0.0},
                "objects": [{"pattern": p} for p in s.get("patterns", [])]}

    def continuity(self, a, b):
        count("continuity")
        return {"score": float(_s(a).get("next", {}).get(Path(b.path).stem, 0.1))}


@register_backend("manipulation_detector", "double")
class DoubleManipulation:
    """A scripted manipulation score ("manip"); no score when the script names none."""

    thread_safe = True

    def detect(self, clip, window=(None, None)):
        count("manipulation")
        s = _s(clip)
        return {"score": float(s["manip"])} if "manip" in s else {"note": "no score scripted"}


DOUBLE_ARGS = {f"backend.{t}": "double" for t in ("video_reader", "temporal_grounding", "scene_graph", "object_tracker",
                                                  "visual_similarity", "subtitle_retriever", "motion_analyzer",
                                                  "manipulation_detector")}
