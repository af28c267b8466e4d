"""LiteSceneGraph: per-frame objects (shape label, colour, size, box) and spatial relations.

Relations are read off box geometry: "overlapping" when boxes intersect substantially,
otherwise the dominant axis of the centroid offset gives left of / right of / above / below.
Counts are the median per-frame count of each label (robust to a frame where two objects touch
or one is briefly missed), which is what a "how many X are there" question wants.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from mvx_tasks.video_decoder import VideoClip

from .movers.count import is_generic, mover_counts, target_separation
from .perception.segment import Segment, box_iou
from .perception.segmentation import Segmenter, segment_indices
from .shared.order_stats import median_int
from .shared.query import Query, parse_query
from .shared.sampling import Window, window_indices, window_span


def relation(a: Segment, b: Segment) -> str:
    """The spatial predicate of ``a`` relative to ``b`` (image coordinates, y down)."""
    ix = min(a.box[2], b.box[2]) - max(a.box[0], b.box[0])
    iy = min(a.box[3], b.box[3]) - max(a.box[1], b.box[1])
    if ix > 0 and iy > 0 and (box_iou(a.box, b.box) > 0.05 or ix * iy > 0.2 * min(a.area, b.area)):
        return "overlapping"
    dx = a.centroid[0] - b.centroid[0]
    dy = a.centroid[1] - b.centroid[1]
    if abs(dx) >= abs(dy):
        return "left of" if dx < 0 else "right of"
    return "above" if dy < 0 else "below"


class LiteSceneGraph:
    """Options: ``max_relation_objects`` (relations among the largest N objects per frame),
    plus :class:`Segmenter` options prefixed ``seg_``."""

    OPTION_PREFIXES = ("seg_",)  # **options forwarded by prefix; others are rejected at start

    def __init__(self, max_relation_objects: int = 12, **seg_options: float) -> None:
        self.max_relation_objects = int(max_relation_objects)
        self.segmenter = Segmenter(**{k[4:]: v for k, v in seg_options.items() if k.startswith("seg_")})

    def graph(self, clip: VideoClip, query: str = "", window: Window = (None, None), n_frames: int = 8) -> dict:
        q = parse_query(query)
        if is_generic(q):
            return self._movers_graph(clip, window, q)
        idx = window_indices(clip, window, max(1, int(n_frames)))
        per_frame = segment_indices(clip.frames, idx, self.segmenter)
        h, w = clip.frames.shape[1:3]
        frame_area = float(h * w)
        frames, label_counts, name_counts = [], [], []
        for i, segs in zip(idx, per_frame):
            chosen = [s for s in segs if q.matches(s.color, s.shape)]
            objects = []
            for j, s in enumerate(chosen):
                d = s.to_dict(frame_area)
                objects.append(
                    {
                        "id": j,
                        "label": d["label"],
                        "box": d["box"],
                        "score": round(_confidence(s), 3),
                        "color": d["color"],
                        "attributes": d["attributes"],
                    }
                )
            rel_objs = chosen[: self.max_relation_objects]
            relations = [
                {"subject": a, "predicate": relation(rel_objs[a], rel_objs[b]), "object": b}
                for a in range(len(rel_objs))
                for b in range(a + 1, len(rel_objs))
            ]
            frames.append({"t": round(float(clip.timestamps[i]), 3), "objects": objects, "relations": relations})
            label_counts.append(Counter(s.shape for s in chosen))
            name_counts.append(Counter(f"{s.color} {s.shape}" for s in chosen))
        counts = _median_counts(label_counts)
        named = _median_counts(name_counts)
        return {
            "frames": frames,
            "counts": counts,
            "counts_by_name": named,
            "total": median_int([sum(c.values()) for c in label_counts]),
            "frames_used": int(len(idx)),
            "window": window_span(clip, window),
            "query_filter": q.target or None,
        }


    @staticmethod
    def _movers_graph(clip: VideoClip, window: Window, q: Query) -> dict:
        """Things named without colour or shape: per frame, the objects moving on their own (their
        boxes from the shared motion tracks); the count is the number of such objects."""
        got = mover_counts(clip, window)
        frames: dict[float, list] = {}
        for t in got["tracks"]:
            for tm, box in zip(t["times"], t["boxes"]):
                frames.setdefault(tm, []).append({"id": t["id"], "label": "moving object", "box": box,
                                                  "score": 1.0, "color": t["color"], "attributes": {}})
        return {"frames": [{"t": tm, "objects": objs, "relations": []} for tm, objs in sorted(frames.items())],
                "counts": {"moving object": got["count"]}, "counts_by_name": {}, "total": got["count"],
                "graded_count": got["graded_count"], "near_threshold": got["near_threshold"], "frames_used": got["frames_used"],
                "window": window_span(clip, window), "query_filter": "moving object",
                **target_separation(q, got["count"]),
                "method": "motion (camera-compensated background subtraction, each object followed by its look)"}


def _median_counts(per_frame: list[Counter]) -> dict[str, int]:
    labels = sorted({k for c in per_frame for k in c})
    out = {lab: median_int([c.get(lab, 0) for c in per_frame]) for lab in labels}
    return {k: v for k, v in out.items() if v > 0}


def _confidence(s: Segment) -> float:
    """How clearly the outline fits its shape name (solidity and circularity based), in [0, 1]."""
    if s.shape == "blob":
        return 0.3
    if s.shape == "star":
        return float(np.clip(1.2 - s.solidity, 0.3, 1.0))
    return float(np.clip(0.5 + 0.5 * s.solidity * min(1.0, s.circularity / 0.6), 0.0, 1.0))
