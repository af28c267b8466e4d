"""scene_graph: per-frame objects with boxes, colours and relations (GroundingDINO in the paper)."""
from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Protocol, runtime_checkable

from mvx_tasks.video_decoder import VideoClip

from .base import BackendSpec, Tool, Window, fmt_window, not_separable, with_sampling


def majority_colors(data: dict[str, Any]) -> dict[str, str]:
    """The most frequent colour of each object label over all frames (evidence key: frames[].objects[].color)."""
    votes: dict[str, Counter] = {}
    for frame in data.get("frames", []):
        for obj in frame.get("objects", []):
            if obj.get("color"):
                votes.setdefault(str(obj["label"]), Counter())[str(obj["color"])] += 1
    return {label: c.most_common(1)[0][0] for label, c in votes.items()}


@runtime_checkable
class SceneGraphBackend(Protocol):
    """Per-frame objects and relations::

        {"frames": [{"t": float, "objects": [{"id": int, "label": str, "box": [x1, y1, x2, y2],
                                              "score": float, "color": str, "attributes": {...}}],
                     "relations": [{"subject": id, "predicate": "left of", "object": id}]}],
         "counts": {label: int}}   # typical (median) per-frame count of each label

    Boxes are in pixels of the decoded frame. ``query`` names the objects of interest (may be "").
    Optional: ``"counted_as"``, ``"target_separable"`` and ``"asked_kind"``, as the object tracker's
    (:class:`sama_model.tools.object_tracker.ObjectTrackerBackend`).
    """

    def graph(self, clip: VideoClip, query: str = "", window: Window = (None, None), n_frames: int = 8) -> dict: ...


class SceneGraphTool(Tool):
    name = "scene_graph"
    contract = SceneGraphBackend
    backend_classes: ClassVar[dict[str, str]] = {
        "lite": "sama_model.backends.lite.scene_graph:LiteSceneGraph",
        "grounding_dino": "sama_model.backends.models.grounding_dino:GroundingDinoSceneGraph",
    }
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {
        "offline": BackendSpec("lite"),
        "paper": BackendSpec("grounding_dino", {"model": "IDEA-Research/grounding-dino-base"}),
    }

    def forward(self, video: str, query: str = "", start: float | None = None, end: float | None = None,
                n_frames: int = 8) -> dict[str, Any]:
        """Detect objects per frame with boxes, colours and spatial relations, and report the typical per-frame
        count of each object label. Use it for counts, colours and presence.

        Args:
            video: Label of the video to analyse, e.g. "Reference".
            query: Object names of interest, e.g. "cup, person"; empty for all objects.
            start: Window start in seconds; null for the beginning.
            end: Window end in seconds; null for the end.
            n_frames: How many frames to analyse in the window.
        """
        n = max(1, min(int(n_frames), 64))
        clip = self.videos.clip(video, *self.window(start, end), n_frames=n)
        return with_sampling(self.call_backend("graph", clip, query, self.window(start, end), n), clip)

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        counts = ", ".join(f"{k}: {v}" for k, v in sorted((data.get("counts") or {}).items()))
        colors = ", ".join(f"{k}: {v}" for k, v in sorted(majority_colors(data).items()))
        return (f"{args['video']} ({fmt_window(args)}, {args['n_frames']} frames): counts {{{counts}}}"
                + (f"; colours {{{colors}}}" if colors else "") + not_separable(data))
