"""video_reader: natural-language answers about a time window of one video (an LVLM in the paper)."""
from __future__ import annotations

from typing import Any

from .base import Tool, fmt_window, with_sampling


class VideoReaderTool(Tool):
    name = "video_reader"

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
        return f"{args['video']} ({fmt_window(args)}, {args['n_frames']} frames) '{args['query']}': {data.get('answer', '')}"
