"""LiteVideoReader: a measured description of a time window, and answers where it covers the query.

The description is built from the other lite measurements (segmented objects and their
counts, tracked motion patterns, camera motion, style statistics) and rendered as text. Query
answering is shallow parsing (count / colour / camera / motion / position / style / describe);
anything the measurements do not cover is answered "unknown" rather than guessed.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from mvx_tasks.video_decoder import VideoClip

from .motion_analyzer import LiteMotionAnalyzer
from .movers.count import is_generic, mover_counts, target_separation
from .perception.colours import dominant_color, palette
from .perception.features import style_stats
from .perception.segment import Segment
from .perception.segmentation import segment_indices
from .shared.order_stats import median_int
from .shared.query import Query, parse_query
from .shared.sampling import TRACK_FRAMES, Window, window_indices, window_span


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"1 {word}"
    return f"{n} {word}es" if word.endswith(("x", "s", "ch")) else f"{n} {word}s"


def background_color(frames: np.ndarray, ring: float = 0.08) -> str:
    """Colour name of the frames' border ring (where the background shows), by majority vote."""
    h, w = frames.shape[1:3]
    b = max(1, int(round(min(h, w) * ring)))
    edge = np.concatenate([frames[:, :b].reshape(-1, 3), frames[:, -b:].reshape(-1, 3),
                           frames[:, b:-b, :b].reshape(-1, 3), frames[:, b:-b, -b:].reshape(-1, 3)])
    return dominant_color(edge[:: max(1, len(edge) // 20000)])[0]


def _where(seg: Segment, w: int, h: int) -> str:
    cx, cy = seg.centroid
    col = "left" if cx < w / 3 else ("right" if cx > 2 * w / 3 else "centre")
    row = "top" if cy < h / 3 else ("bottom" if cy > 2 * h / 3 else "middle")
    return "centre" if (row, col) == ("middle", "centre") else f"{row} {col}" if row != "middle" else col


class LiteVideoReader:
    """Options: ``motion_frames`` (frames used for motion/tracking; 0 disables motion), plus
    :class:`LiteMotionAnalyzer` options (``pan_threshold`` ...)."""

    def __init__(self, motion_frames: int = TRACK_FRAMES, **motion_options: float) -> None:
        self.motion_frames = int(motion_frames)
        # the reader describes tracked objects; the motion-found actor and the flow-read mover (AM's
        # evidence) are not needed here
        self.motion = LiteMotionAnalyzer(max_frames=max(2, self.motion_frames), actor=False, mover=False,
                                         **motion_options)

    # -- description ---------------------------------------------------------------------------
    def describe(self, clip: VideoClip, window: Window = (None, None), n_frames: int = 8) -> dict:
        """Structured measurements of the window (JSON-serialisable)."""
        idx = window_indices(clip, window, max(1, int(n_frames)))
        h, w = clip.frames.shape[1:3]
        per_frame = segment_indices(clip.frames, idx, self.motion.tracker.segmenter)
        names = sorted({(s.color, s.shape) for segs in per_frame for s in segs})
        objects = []
        for color, shape in names:
            counts = [sum(1 for s in segs if (s.color, s.shape) == (color, shape)) for segs in per_frame]
            n = median_int(counts)
            if n == 0 and max(counts) == 0:
                continue
            examples = [s for segs in per_frame for s in segs if (s.color, s.shape) == (color, shape)]
            sizes = Counter(s.size_name(h * w) for s in examples).most_common(1)[0][0]
            places = Counter(_where(s, w, h) for s in examples).most_common(2)
            objects.append(
                {
                    "color": color,
                    "shape": shape,
                    "count": n,
                    "max_count": int(max(counts)),
                    "frames_seen": int(sum(1 for c in counts if c)),
                    "size": sizes,
                    "positions": [p for p, _ in places],
                }
            )
        objects.sort(key=lambda o: (-o["count"], -o["frames_seen"], o["color"], o["shape"]))
        stats = [style_stats(clip.frames[i]) for i in idx]
        style = {k: round(float(np.mean([s[k] for s in stats])), 3) for k in stats[0]} if stats else {}
        times = clip.timestamps[idx]
        trend = "steady"
        if len(stats) >= 3 and float(times[-1] - times[0]) > 0:
            slope = float(np.polyfit(times, [s["brightness"] for s in stats], 1)[0]) * float(times[-1] - times[0])
            trend = "brighter" if slope > 0.08 else ("darker" if slope < -0.08 else "steady")
        pal = Counter()
        for i in idx:
            for name, share in palette(clip.frames[i]):
                pal[name] += share / len(idx)
        desc = {
            "window": window_span(clip, window),
            "frames_used": int(len(idx)),
            "frame_times": [round(float(t), 3) for t in times],
            "objects": objects,
            "objects_per_frame": median_int([len(s) for s in per_frame]),
            "style": style,
            "palette": [[k, round(v, 3)] for k, v in pal.most_common(4)],
            "background": background_color(clip.frames[idx]) if len(idx) else None,
            "brightness_trend": trend,
        }
        if self.motion_frames > 1 and clip.n_frames > 1:
            mo = self.motion.analyze(clip, window)
            desc["camera"] = {
                k: mo["camera"][k] for k in ("trends", "pan", "tilt", "zoom", "roll") if k in mo["camera"]
            }
            desc["object_motion"] = [
                {
                    k: o[k]
                    for k in ("id", "color", "label", "pattern", "patterns", "direction", "start", "end")
                    if k in o
                }
                for o in mo["objects"]
            ]
        return desc

    @staticmethod
    def render(desc: dict) -> str:
        """The description as a few plain sentences."""
        parts = []
        objs = [o for o in desc["objects"] if o["count"] > 0]
        brief = [o for o in desc["objects"] if o["count"] == 0]
        if objs:
            items = ", ".join(
                f"{_plural(o['count'], o['color'] + ' ' + o['shape'])} ({o['size']}, {'/'.join(o['positions'])})"
                for o in objs[:8]
            )
            parts.append(f"About {desc['objects_per_frame']} objects per frame: {items}.")
        else:
            parts.append("No distinct flat-coloured objects were segmented.")
        if brief:
            parts.append(
                "Briefly seen (under half of the frames): "
                + ", ".join(
                    f"{o['color']} {o['shape']} in {o['frames_seen']} of {desc['frames_used']} frames"
                    for o in brief[:5]
                )
                + "."
            )
        if "camera" in desc:
            cam = desc["camera"]
            parts.append("Camera: " + (", ".join(t.replace("_", " ") for t in cam["trends"])) + ".")
        for o in desc.get("object_motion", [])[:8]:
            d = f" towards {o['direction']}" if o.get("direction") not in (None, "none") else ""
            parts.append(f"The {o['color']} {o['label']} (#{o['id']}) is {', '.join(o['patterns'])}{d}.")
        st = desc["style"]
        if st:
            look = (
                "flat, cartoon-like"
                if st["flatness"] > 0.75
                else ("detailed/textured" if st["edge_density"] > 0.12 else "smooth")
            )
            sat = "vivid" if st["saturation"] > 0.45 else ("muted" if st["saturation"] > 0.15 else "nearly grey")
            pal = ", ".join(k for k, _ in desc["palette"])
            parts.append(
                f"Style: {look}, {sat} colours (saturation {st['saturation']:.2f}), edge density "
                f"{st['edge_density']:.3f}, brightness {st['brightness']:.2f} ({desc['brightness_trend']}); "
                f"palette: {pal}."
            )
        return " ".join(parts)

    # -- answering -----------------------------------------------------------------------------
    def _matching(self, desc: dict, q: Query) -> list[dict]:
        return [o for o in desc["objects"] if q.matches(o["color"], o["shape"])]

    def answer(self, desc: dict, q: Query) -> str:
        """A short answer from the description, or a sentence starting "unknown"."""
        k = q.kinds
        match = self._matching(desc, q)
        target = q.target or "objects"
        if "count" in k:
            if not (q.colors or q.shapes):
                return f"{desc['objects_per_frame']} objects per frame (median)."
            n = sum(o["count"] for o in match)
            mx = sum(o["max_count"] for o in match)
            extra = f"; up to {mx} in one frame" if mx != n else ""
            tracked = [m for m in desc.get("object_motion", []) if q.matches(m["color"], m["label"])]
            seen = f"; {len(tracked)} distinct tracked over the window" if "object_motion" in desc else ""
            return f"{n} {target} per frame (median){extra}{seen}."
        if "color" in k and "background" in q.words and desc.get("background"):
            return f"{desc['background']} (background)."
        if "color" in k:
            if not match:
                return f"unknown: no {target} segmented."
            cols = Counter()
            for o in match:
                cols[o["color"]] += o["count"] or 1
            return "; ".join(f"{c} ({n})" for c, n in cols.most_common()) + "."
        if "camera" in k and "camera" in desc:
            cam = desc["camera"]
            return (
                "The camera is "
                + " and ".join(t.replace("_", " ") for t in cam["trends"])
                + f" (pan {cam['pan']:+.3f}, tilt {cam['tilt']:+.3f}, zoom {cam['zoom']:+.3f} per s)."
            )
        if "motion" in k and "object_motion" in desc:
            mv = [m for m in desc["object_motion"] if q.matches(m["color"], m["label"])]
            if not mv:
                return f"unknown: no tracked {target}."
            return " ".join(
                f"{m['color']} {m['label']} #{m['id']}: {', '.join(m['patterns'])}"
                f"{' towards ' + m['direction'] if m.get('direction') not in (None, 'none') else ''}."
                for m in mv[:6]
            )
        if "where" in k:
            if not match:
                return f"unknown: no {target} segmented."
            return "; ".join(f"{o['color']} {o['shape']}: {'/'.join(o['positions'])}" for o in match) + "."
        if "style" in k:
            return self.render({**desc, "objects": desc["objects"], "object_motion": []}).split("Style: ")[-1]
        if "describe" in k or (not k and (q.colors or q.shapes)):
            if (q.colors or q.shapes) and not match:
                return f"No {target} segmented in this window."
            return self.render(desc)
        return (
            "unknown: the lite reader measures objects' colours, shapes, counts, positions and motion, "
            "camera motion and visual style; it cannot answer this directly."
        )

    def read(self, clip: VideoClip, query: str, window: Window = (None, None), n_frames: int = 8) -> dict:
        q = parse_query(query)
        if "count" in q.kinds and is_generic(q):
            # things named without colour or shape: objects moving on their own; the colour/shape
            # description (segmentation of every sampled frame) is not needed for that answer
            got = mover_counts(clip, window)
            near = f" ({len(got['near_threshold'])} near the cut-off)" if got["near_threshold"] else ""
            answer = f"{got['count']} moving objects (tracked, moving on their own){near}."
            return {"answer": answer, "window": window_span(clip, window), "frames_used": got["frames_used"],
                    "frame_times": got["frame_times"], "text": answer, **target_separation(q, got["count"]),
                    "description": {"moving_objects": got["count"], "near_threshold": got["near_threshold"]}}
        desc = self.describe(clip, window, n_frames)
        return {
            "answer": self.answer(desc, q),
            "window": desc["window"],
            "frames_used": desc["frames_used"],
            "frame_times": desc["frame_times"],
            "description": desc,
            "text": self.render(desc),
        }
