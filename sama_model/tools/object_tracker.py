"""object_tracker: detections linked across frames into identities (YOLOv8 in the paper)."""
from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from mvx_tasks.video_decoder import VideoClip

from .base import BackendSpec, Tool, Window, check_shift, fmt_shift, fmt_window, not_separable, with_sampling


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
    ``"counted_as"`` (str) and ``"target_separable"`` (bool), with ``"asked_kind"`` (str or None): what a count
    actually counts (the lite backend's "moving regions") and whether it can tell the kind of object the query
    names from the scene's other movers (false: the query names a kind, e.g. cut-outs or people, and the count
    found movers it cannot attribute; see :func:`sama_model.backends.lite.movers.count.target_separation`). The
    CNT policy then reports its answer as a guess (a ``rule`` answer). ``scene_graph`` and ``video_reader``
    results carry the same three keys with the same meaning where they count movers.
    """

    def track(self, clip: VideoClip, query: str = "", window: Window = (None, None)) -> dict: ...


class ObjectTrackerTool(Tool):
    name = "object_tracker"
    contract = ObjectTrackerBackend
    backend_classes: ClassVar[dict[str, str]] = {
        "lite": "sama_model.backends.lite.object_tracker:LiteObjectTracker",
        "yolo": "sama_model.backends.models.yolo_tracker:YoloObjectTracker",
    }
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {
        "offline": BackendSpec("lite"),
        "paper": BackendSpec("yolo", {"model": "yolov8m.pt"}),
    }

    def forward(self, video: str, query: str = "", start: float | None = None, end: float | None = None,
                shift_frames: int = 0) -> dict[str, Any]:
        """Track objects across frames of one video: unique identities per label (how many distinct objects appear),
        the most seen at once, and trajectories.

        Args:
            video: Label of the video to track in, e.g. "Video C".
            query: Object names of interest, e.g. "person"; empty for all objects.
            start: Window start in seconds; null for the beginning.
            end: Window end in seconds; null for the end.
            shift_frames: 0 reads the window; n > 0 reads it from its (n+1)-th decoded frame on, so the backend's
                sampled frames fall between the first reading's: a second reading of the same video, which the
                counting skill averages with the first.
        """
        check_shift(shift_frames)
        window = self.window(start, end)
        clip = self.videos.clip(video, *window)
        if shift_frames:
            window = clip.shifted_window(window, shift_frames)
        return with_sampling(self.call_backend("track", clip, query, window), clip)

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        counts = ", ".join(f"{k}: {v}" for k, v in sorted((data.get("counts") or {}).items()))
        peak = ", ".join(f"{k}: {v}" for k, v in sorted((data.get("max_per_frame") or {}).items()))
        return (f"{args['video']} ({fmt_window(args)}{fmt_shift(args)}): unique tracks {{{counts}}}; "
                f"max at once {{{peak}}}" + not_separable(data))
