"""SPR (spatial relation / camera motion): which candidate shares the reference's camera-motion
trend."""
from __future__ import annotations

import math

from ...actions import ToolCall
from ...claims import text_claims
from ..context import PolicyContext
from .common import Decision, keep, pick

CAMERA_QUERY = "How does the camera move: pan left or right, tilt up or down, zoom in or out, forward, or static?"
_TREND_AXES = ("pan", "tilt", "zoom")


def _camera(ctx: PolicyContext, video: str) -> tuple[set[str], list[float]]:
    """Evidence keys: motion_analyzer data["camera"]["trends"|"pan"|"tilt"|"zoom"]; without the
    motion tool, camera trends parsed from the video_reader's CAMERA_QUERY answer."""
    d = ctx.latest("motion_analyzer", video, next_video=None)
    if d and "camera" in d:
        cam = d["camera"]
        return set(cam.get("trends", [])), [float(cam.get(k, 0.0) or 0.0) for k in _TREND_AXES]
    trends = text_claims(ctx.reader_answer(video, CAMERA_QUERY))["motion"].get("camera", ())
    return set(trends), [0.0, 0.0, 0.0]


def plan(ctx: PolicyContext) -> list[ToolCall]:
    if "motion_analyzer" in ctx.tools:
        return keep([ctx.call("motion_analyzer", video=v) for v in ctx.labels])
    return keep([ctx.call("video_reader", video=v, query=CAMERA_QUERY) for v in ctx.labels])


def decide(ctx: PolicyContext) -> Decision:
    """Candidates sharing the most camera trends with the reference; ties by cosine of the
    (pan, tilt, zoom) vectors."""
    ref_t, ref_v = _camera(ctx, ctx.reference)
    scores = {}
    for c in ctx.candidates:
        t, v = _camera(ctx, c)
        norm = math.hypot(*ref_v) * math.hypot(*v)
        cos = sum(a * b for a, b in zip(ref_v, v)) / norm if norm else 0.0
        scores[c] = len(ref_t & t) + 0.1 * cos
    letter, why = pick(ctx, scores, "shared camera trends")
    return letter, f"reference trends {sorted(ref_t)}; {why}"
