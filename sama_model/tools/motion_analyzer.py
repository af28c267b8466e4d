"""motion_analyzer: camera and object motion from optical flow, and clip-to-clip continuity.

Beyond the paper's six tools; profiles can switch it off.
"""
from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from mvx_tasks.video_decoder import VideoClip

from .base import BackendSpec, Tool, Window, fmt_window, with_sampling


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


class MotionAnalyzerTool(Tool):
    name = "motion_analyzer"
    contract = MotionAnalyzerBackend
    backend_classes: ClassVar[dict[str, str]] = {
        "lite": "sama_model.backends.lite.motion_analyzer:LiteMotionAnalyzer",
    }
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {
        "offline": BackendSpec("lite"),
        "paper": None,
    }
    video_args = ("video", "next_video")

    def forward(self, video: str, start: float | None = None, end: float | None = None,
                next_video: str | None = None) -> dict[str, Any]:
        """Measure camera motion trends (pan, tilt, zoom, static) and object motion patterns in one video; or, when
        next_video is given, score how plausibly next_video continues video in time (0-1).

        Args:
            video: Label of the video to analyse (or the earlier clip, with next_video).
            start: Window start in seconds; null for the beginning (ignored with next_video).
            end: Window end in seconds; null for the end (ignored with next_video).
            next_video: Label of a clip that might directly follow video; null to analyse motion instead.
        """
        if next_video is not None:
            return {"continuity": self.call_backend("continuity", self.videos.clip(video), self.videos.clip(next_video))}
        clip = self.videos.clip(video, *self.window(start, end))
        return with_sampling(self.call_backend("analyze", clip, self.window(start, end)), clip)

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        if args.get("next_video"):
            return f"continuity {args['video']} -> {args['next_video']}: {data['continuity'].get('score', 0):.3f}"
        cam = data.get("camera") or {}
        pats = ", ".join(sorted({o.get("pattern", "?") for o in data.get("objects", [])}))
        return (f"{args['video']} ({fmt_window(args)}): camera {', '.join(cam.get('trends', [])) or 'unknown'}"
                f" (pan {cam.get('pan', 0):.2f}, tilt {cam.get('tilt', 0):.2f}, zoom {cam.get('zoom', 0):.2f})"
                + (f"; objects {pats}" if pats else "")
                + (f"; main mover {data['mover'].get('action')} (p {max(data['mover'].get('action_probs', {0: 0}).values()):.2f})"
                   if data.get("mover") else "")
                + (f"; main actor (by its motion) {'/'.join(data['actor'].get('patterns', []))}" if data.get("actor") else ""))
