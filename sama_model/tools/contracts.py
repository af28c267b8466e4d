"""Backend contracts for SAMA's tools: what a backend receives and must return.

A *tool* (``sama_model.tools.<name>``) is what the planner calls: it has a name, a description,
a JSON schema and addresses videos by their question labels. A *backend* is the engine behind
it (``lite`` classical vision, or a model such as Qwen2.5-VL / CLIP / YOLO). Tools resolve
labels to decoded :class:`mvx_tasks.video_decoder.VideoClip` objects (one decode per video, shared) and
hand clips to backends. Backends see pixels, timestamps, subtitles and the query text only,
never a sample's ``answer`` or ``meta``.

Every backend method returns a JSON-serialisable ``dict`` (lists, numbers, strings), so results
can be cached on disk and written to traces. Times are seconds from the video's start; a window
``(start, end)`` of ``None`` means the whole video.

Backends are registered by ``(tool name, backend name)`` in :mod:`sama_model.tools.backends`
and constructed with keyword options from the profile; heavy models load lazily on first use
and are shared across questions within a process.
"""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from mvx_tasks.subtitles import SubtitleSegment
from mvx_tasks.video_decoder import VideoClip

Window = tuple[float | None, float | None]


@runtime_checkable
class VideoReaderBackend(Protocol):
    """Answers a natural-language query about a time window of one video.

    Returns ``{"answer": str, "window": [start, end], "frames_used": int, ...}``; lite backends add
    a structured ``"description"`` (objects, counts, colours, motion, style statistics).
    """

    def read(self, clip: VideoClip, query: str, window: Window = (None, None), n_frames: int = 8) -> dict: ...


@runtime_checkable
class TemporalGroundingBackend(Protocol):
    """Localises a queried event: ``{"spans": [{"start": s, "end": e, "score": x in [0,1]}, ...]}``,
    best first, plus ``"boundaries": [t, ...]`` (moments of change) where the backend finds them."""

    def ground(self, clip: VideoClip, query: str, window: Window = (None, None)) -> dict: ...


@runtime_checkable
class SceneGraphBackend(Protocol):
    """Per-frame objects and relations::

        {"frames": [{"t": float, "objects": [{"id": int, "label": str, "box": [x1, y1, x2, y2],
                                              "score": float, "color": str, "attributes": {...}}],
                     "relations": [{"subject": id, "predicate": "left of", "object": id}]}],
         "counts": {label: int}}   # typical (median) per-frame count of each label

    Boxes are in pixels of the decoded frame. ``query`` names the objects of interest (may be "").
    """

    def graph(self, clip: VideoClip, query: str = "", window: Window = (None, None), n_frames: int = 8) -> dict: ...


@runtime_checkable
class ObjectTrackerBackend(Protocol):
    """Detections associated across frames::

        {"tracks": [{"id": int, "label": str, "times": [t...], "boxes": [[x1,y1,x2,y2]...]}],
         "counts": {label: unique track count}, "max_per_frame": {label: int}}

    Optional: ``"graded_count"`` (float), a count of moving objects with its doubt kept as a fraction
    (the lite backend's, see :func:`sama_model.backends.lite.movers.count.followed_grade`); the
    CNT policy breaks ties of the counts with it.
    ``"count_probabilities"`` (list of floats), each followed object's probability of being one that
    moves on its own (the lite backend's); the CNT policy then picks the candidate most likely to meet
    the relation (:func:`sama_model.skills.multi_video_comparison.cnt.match_scores`).
    """

    def track(self, clip: VideoClip, query: str = "", window: Window = (None, None)) -> dict: ...


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


@runtime_checkable
class SubtitleBackend(Protocol):
    """Semantic retrieval over a video's subtitle segments and extraction by time range.

    ``retrieve`` -> ``{"hits": [{"start", "end", "text", "score"}...]}`` best first;
    ``extract`` -> ``{"text": str, "segments": [...]}`` for segments overlapping the window.
    """

    def retrieve(self, segments: Sequence[SubtitleSegment], query: str, top_k: int = 3) -> dict: ...

    def extract(self, segments: Sequence[SubtitleSegment], window: Window = (None, None)) -> dict: ...


@runtime_checkable
class MotionAnalyzerBackend(Protocol):
    """Camera and object motion from optical flow (the seventh tool, beyond the paper).

    ``analyze`` -> ``{"camera": {"trends": ["pan_left", "zoom_in", ...] or ["static"],
    "pan": float, "tilt": float, "zoom": float, "per_segment": [...]}, "objects": [{"pattern":
    "bouncing"|"spinning"|..., ...}]}``, optionally ``"mover": {"action": str, "action_probs":
    {action: float summing to 1}, ...}`` (the main mover's action, what AM compares when every video
    has one); ``continuity`` -> ``{"score": float in [0,1]}`` for how
    well clip ``b`` continues clip ``a`` (its first frames against ``a``'s last frames).
    """

    def analyze(self, clip: VideoClip, window: Window = (None, None)) -> dict: ...

    def continuity(self, a: VideoClip, b: VideoClip) -> dict: ...


@runtime_checkable
class ManipulationDetectorBackend(Protocol):
    """Forensics (beyond the paper): ``detect`` -> ``{"score": float in [0, 1] (higher = more likely
    edited after recording), "cues": {cue: float}, ...}`` for one clip's window."""

    def detect(self, clip: VideoClip, window: Window = (None, None)) -> dict: ...


#: tool name -> the protocol its backends implement (checked when a backend is built)
CONTRACTS: dict[str, type] = {
    "video_reader": VideoReaderBackend, "temporal_grounding": TemporalGroundingBackend,
    "scene_graph": SceneGraphBackend, "object_tracker": ObjectTrackerBackend,
    "visual_similarity": VisualSimilarityBackend, "subtitle_retriever": SubtitleBackend,
    "motion_analyzer": MotionAnalyzerBackend, "manipulation_detector": ManipulationDetectorBackend,
}


def missing_methods(tool: str, backend: object) -> list[str]:
    """The contract methods of ``tool`` that ``backend`` lacks (empty when it honours the contract)."""
    proto = CONTRACTS.get(tool)
    if proto is None or isinstance(backend, proto):
        return []
    wanted = [k for k, v in vars(proto).items() if callable(v) and not k.startswith("_")]
    return [k for k in wanted if not callable(getattr(backend, k, None))]

