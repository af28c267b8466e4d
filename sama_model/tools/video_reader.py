"""video_reader: natural-language answers about a time window of one video (an LVLM in the paper)."""
from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from mvx_tasks.video_decoder import VideoClip

from .base import BackendSpec, Tool, Window, fmt_window, not_separable, with_sampling


@runtime_checkable
class VideoReaderBackend(Protocol):
    """Answers a natural-language query about a time window of one video.

    Returns ``{"answer": str, "window": [start, end], "frames_used": int, ...}``; lite backends add
    a structured ``"description"`` (objects, counts, colours, motion, style statistics). A count of movers may add
    ``"counted_as"``, ``"target_separable"`` and ``"asked_kind"``, as the object tracker's
    (:class:`sama_model.tools.object_tracker.ObjectTrackerBackend`).
    """

    def read(self, clip: VideoClip, query: str, window: Window = (None, None), n_frames: int = 8) -> dict: ...


class VideoReaderTool(Tool):
    name = "video_reader"
    contract = VideoReaderBackend
    backend_classes: ClassVar[dict[str, str]] = {
        "lite": "sama_model.backends.lite.video_reader:LiteVideoReader",
        "transformers": "sama_model.backends.models.vlm_reader:TransformersVideoReader",
        "endpoint": "sama_model.backends.models.endpoint_reader:EndpointVideoReader",
    }
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {
        "offline": BackendSpec("lite"),
        "paper": BackendSpec("transformers", {"model": "Qwen/Qwen2.5-VL-7B-Instruct"}),
    }

    def forward(self, video: str, query: str, start: float | None = None, end: float | None = None,
                n_frames: int = 8) -> dict[str, Any]:
        """Ask a self-contained, descriptive question about one video (or a time window of it) and get a natural-
        language answer. Ask for evidence (what is visible, how many, which colour), not for the final decision.

        Args:
            video: Label of the video to read, e.g. "Reference" or "Video B".
            query: The question to answer from the frames, e.g. "How many cups are on the table?".
            start: Window start in seconds; null for the beginning of the video.
            end: Window end in seconds; null for the end of the video.
            n_frames: How many frames to sample uniformly from the window (more frames read finer detail).
        """
        n = max(1, min(int(n_frames), 64))
        clip = self.videos.clip(video, *self.window(start, end), n_frames=n)
        return with_sampling(self.call_backend("read", clip, query, self.window(start, end), n), clip)

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        return (f"{args['video']} ({fmt_window(args)}, {args['n_frames']} frames) '{args['query']}': "
                f"{data.get('answer', '')}" + not_separable(data))
