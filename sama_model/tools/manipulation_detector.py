"""manipulation_detector: evidence that part of a video was edited after recording (forensics).

Beyond the paper's six tools, like motion_analyzer; the offline profile serves it with the lite
backend (classical cues, no weights: :mod:`sama_model.backends.lite.manipulation_detector`). Only questions
about manipulation call it (the FD procedure of the temporal_grounding skill).
"""
from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from mvx_tasks.video_decoder import VideoClip

from .base import BackendSpec, Tool, Window, fmt_window, with_sampling


@runtime_checkable
class ManipulationDetectorBackend(Protocol):
    """Forensics (beyond the paper): ``detect`` -> ``{"score": float in [0, 1] (higher = more likely
    edited after recording), "cues": {cue: float}, ...}`` for one clip's window."""

    def detect(self, clip: VideoClip, window: Window = (None, None)) -> dict: ...


class ManipulationDetectorTool(Tool):
    name = "manipulation_detector"
    contract = ManipulationDetectorBackend
    backend_classes: ClassVar[dict[str, str]] = {
        "lite": "sama_model.backends.lite.manipulation_detector:LiteManipulationDetector",
    }
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {
        "offline": BackendSpec("lite"),
        "paper": None,
    }

    def forward(self, video: str, start: float | None = None, end: float | None = None) -> dict[str, Any]:
        """Score how likely one video was manipulated after recording (spliced, frozen, pasted-on or cloned
        regions), 0-1, with the separate cues. Call it only when the question asks whether a video is
        fake, forged, tampered, edited or manipulated; compare the scores of the videos.

        Args:
            video: Label of the video to examine, e.g. "Video 1".
            start: Window start in seconds; null for the beginning.
            end: Window end in seconds; null for the end.
        """
        clip = self.videos.clip(video, *self.window(start, end))
        return with_sampling(self.call_backend("detect", clip, self.window(start, end)), clip)

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        cues = ", ".join(f"{k} {float(v):.2f}" for k, v in (data.get("cues") or {}).items())
        return f"{args['video']} ({fmt_window(args)}): manipulation score {float(data.get('score', 0.0)):.3f}" + \
            (f" (cues: {cues})" if cues else "")
