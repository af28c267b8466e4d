"""LiteObjectTracker: how many distinct objects a window shows, and their tracks.

Named objects (a colour or a shape in the query) are counted as the window's segment tracks
(:class:`.motion.tracks.SegmentTracker`) long enough to be real; a generic count ("how many objects move")
is the count of objects moving on their own (:func:`.movers.count.mover_counts`).
"""

from __future__ import annotations

from collections import Counter

from mvx_tasks.video_decoder import VideoClip

from .motion.tracks import SegmentTracker
from .movers.count import is_generic, mover_counts, target_separation
from .shared.query import parse_query
from .shared.sampling import Window, window_span


class LiteObjectTracker(SegmentTracker):
    """The ``object_tracker`` tool's lite backend; options as :class:`.motion.tracks.SegmentTracker`'s."""

    # -- contract ------------------------------------------------------------------------------
    def track(self, clip: VideoClip, query: str = "", window: Window = (None, None)) -> dict:
        q = parse_query(query)
        if is_generic(q):  # things named without colour or shape: objects moving on their own
            got = mover_counts(clip, window)
            return {"tracks": got["tracks"], "counts": {"moving object": got["count"]},
                    "counts_by_name": {}, "near_threshold": got["near_threshold"], "frames_used": got["frames_used"],
                    "estimates": got["estimates"], "graded_count": got["graded_count"],
                    "count_probabilities": got["probabilities"], "frame_times": got["frame_times"],
                    "window": window_span(clip, window),
                    "query_filter": "moving object", **target_separation(q, got["count"]),
                    "method": "motion (camera-compensated background subtraction, each object followed by its look)"}
        tracks, idx, times = self.tracks_for(clip, window)
        keep = self.confirmed(tracks, len(idx), q)
        counts: Counter[str] = Counter(t.label for t in keep)
        named: Counter[str] = Counter(f"{t.color} {t.label}" for t in keep)
        per_step: dict[str, Counter[int]] = {}
        for t in keep:
            for st in t.steps:
                per_step.setdefault(t.label, Counter())[st] += 1
        max_pf = {lab: max(c.values()) for lab, c in per_step.items()}
        out_tracks = []
        for t in keep:
            c = t.centroids()
            out_tracks.append(
                {
                    "id": t.id,
                    "label": t.label,
                    "color": t.color,
                    "times": [round(float(times[s]), 3) for s in t.steps],
                    "boxes": [[round(v, 1) for v in s.box] for s in t.segments],
                    "centroids": [[round(float(x), 1), round(float(y), 1)] for x, y in c],
                    "displacement": [round(float(c[-1, 0] - c[0, 0]), 1), round(float(c[-1, 1] - c[0, 1]), 1)],
                }
            )
        return {
            "tracks": out_tracks,
            "counts": dict(sorted(counts.items())),
            "counts_by_name": dict(sorted(named.items())),
            "max_per_frame": dict(sorted(max_pf.items())),
            "frames_used": int(len(idx)),
            "frame_times": [round(float(t), 3) for t in times],
            "window": window_span(clip, window),
            "query_filter": q.target or None,
        }
