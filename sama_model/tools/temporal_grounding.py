"""temporal_grounding: where in a video a queried event happens (timestamps are hints to verify)."""
from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from mvx_tasks.video_decoder import VideoClip

from .base import BackendSpec, Tool, Window, with_sampling


@runtime_checkable
class TemporalGroundingBackend(Protocol):
    """Localises a queried event: ``{"spans": [{"start": s, "end": e, "score": x in [0,1]}, ...]}``,
    best first, plus ``"boundaries": [t, ...]`` (moments of change) where the backend finds them."""

    def ground(self, clip: VideoClip, query: str, window: Window = (None, None)) -> dict: ...


class TemporalGroundingTool(Tool):
    name = "temporal_grounding"
    contract = TemporalGroundingBackend
    backend_classes: ClassVar[dict[str, str]] = {
        "lite": "sama_model.backends.lite.temporal_grounding:LiteTemporalGrounding",
        "clip": "sama_model.backends.models.clip_backends:ClipTemporalGrounding",
        "languagebind": "sama_model.backends.models.languagebind:LanguageBindTemporalGrounding",
    }
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {
        "offline": BackendSpec("lite"),
        "paper": BackendSpec("clip", {"model": "timm/vit_large_patch14_clip_224.openai"}),
    }

    def forward(self, video: str, query: str, start: float | None = None, end: float | None = None) -> dict[str, Any]:
        """Localise a queried event or action in one video and return candidate time spans (best first) and moments
        of change. The spans are hints: verify them with video_reader before relying on them.

        Args:
            video: Label of the video to search, e.g. "Video A".
            query: The event or action to find, e.g. "a person opens the door".
            start: Search window start in seconds; null for the beginning.
            end: Search window end in seconds; null for the end.
        """
        clip = self.videos.clip(video, *self.window(start, end))
        return with_sampling(self.call_backend("ground", clip, query, self.window(start, end)), clip)

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        spans = ", ".join(f"{s['start']:.1f}-{s['end']:.1f}s ({s.get('score', 0):.2f})" for s in data.get("spans", [])[:3])
        b = data.get("boundaries") or []
        return f"{args['video']} '{args['query']}': spans [{spans or 'none'}]; {len(b)} boundaries"
