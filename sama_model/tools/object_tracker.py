"""object_tracker: detections linked across frames into identities (YOLOv8 in the paper)."""
from __future__ import annotations

from typing import Any

from .base import Tool, check_shift, fmt_shift, fmt_window, with_sampling


class ObjectTrackerTool(Tool):
    name = "object_tracker"

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
                f"max at once {{{peak}}}")
