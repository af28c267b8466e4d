"""object_tracker: detections linked across frames into identities (YOLOv8 in the paper)."""
from __future__ import annotations

from typing import Any

from .base import Tool, fmt_window, with_sampling


class ObjectTrackerTool(Tool):
    name = "object_tracker"

    def forward(self, video: str, query: str = "", start: float | None = None, end: float | None = None) -> dict[str, Any]:
        """Track objects across frames of one video: unique identities per label (how many distinct objects appear),
        the most seen at once, and trajectories.

        Args:
            video: Label of the video to track in, e.g. "Video C".
            query: Object names of interest, e.g. "person"; empty for all objects.
            start: Window start in seconds; null for the beginning.
            end: Window end in seconds; null for the end.
        """
        clip = self.videos.clip(video, *self.window(start, end))
        return with_sampling(self.call_backend("track", clip, query, self.window(start, end)), clip)

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        counts = ", ".join(f"{k}: {v}" for k, v in sorted((data.get("counts") or {}).items()))
        peak = ", ".join(f"{k}: {v}" for k, v in sorted((data.get("max_per_frame") or {}).items()))
        return f"{args['video']} ({fmt_window(args)}): unique tracks {{{counts}}}; max at once {{{peak}}}"
