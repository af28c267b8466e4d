"""LiteTemporalGrounding: when does the queried event happen?

Events are read off measurements rather than matched semantically: tracks starting/ending
(appears / disappears), two tracks' boxes meeting (collides / touches), a track's speed dropping
to rest or rising from rest (stops / starts moving), a track's colour changing, and global
changes (colour-histogram jumps: cuts, flashes). The query's colour/shape words pick the tracks.
A query with no recognised event word gets the spans where its objects are visible, or else
the strongest moments of change as low-confidence hints.
"""

from __future__ import annotations

import re
from collections import Counter

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from .motion.tracks import SegmentTracker, Track
from .shared.frame_memo import FRAME_MEMO
from .shared.query import Query, parse_query
from .shared.sampling import TRACK_FRAMES, Window, resize_max, window_span


def _hist(frame: np.ndarray) -> np.ndarray:
    small, _ = resize_max(frame, 96)
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    h = cv2.calcHist([hsv], [0, 1, 2], None, [12, 4, 4], [0, 180, 0, 256, 0, 256]).ravel()
    return (h / max(h.sum(), 1)).astype(np.float32)


def change_signal(clip: VideoClip, idx: np.ndarray) -> np.ndarray:
    """Histogram change (Hellinger distance, in [0, 1]) between consecutive sampled frames."""
    hs = [FRAME_MEMO.get(clip.frames, int(i), "hist-hsv", _hist) for i in idx]
    return np.array([float(np.sqrt(max(0.0, 1.0 - np.sum(np.sqrt(a * b))))) for a, b in zip(hs[:-1], hs[1:])])


def _event_kinds(q: Query) -> set[str]:
    low = q.text.lower()
    kinds = {k for k in ("appear", "disappear", "collide", "stop", "change") if k in q.kinds}
    if re.search(r"\bstart(s|ed|ing)?\s+(to\s+)?mov|\bbegins?\s+(to\s+)?mov", low):
        kinds.discard("appear")
        kinds.add("start_moving")
    if "stop" in kinds and "start_moving" in kinds and low.find("stop") > low.find("start"):
        kinds.discard("start_moving")
    if re.search(r"colou?r", low) and "change" in kinds:
        kinds.discard("change")
        kinds.add("color_change")
    if "end" in low and "disappear" in kinds and not re.search(r"disappear|leave|exit|vanish", low):
        kinds.discard("disappear")  # "at the end" is not an exit
    return kinds


class LiteTemporalGrounding:
    """Options: ``max_frames`` (frames of the window examined), ``rest_speed`` (object speed,
    in object sizes per second, below which it counts as at rest), ``cut_threshold`` (histogram
    change that marks a global change), plus tracker options prefixed ``track_``."""

    OPTION_PREFIXES = ("track_",)  # **options forwarded by prefix; others are rejected at start

    def __init__(
        self,
        max_frames: int = TRACK_FRAMES,
        rest_speed: float = 0.25,
        cut_threshold: float = 0.25,
        **track_options: float,
    ) -> None:
        self.max_frames = int(max_frames)
        self.rest_speed = float(rest_speed)
        self.cut_threshold = float(cut_threshold)
        self.tracker = SegmentTracker(
            max_frames=self.max_frames, **{k[6:]: v for k, v in track_options.items() if k.startswith("track_")}
        )

    def ground(self, clip: VideoClip, query: str, window: Window = (None, None)) -> dict:
        q = parse_query(query)
        tracks, idx, times = self.tracker.tracks_for(clip, window)
        tracks = self.tracker.confirmed(tracks, len(idx))
        n = len(idx)
        step = float(np.median(np.diff(times))) if n > 1 else 1.0 / max(clip.fps, 1.0)
        change = change_signal(clip, idx) if n > 1 else np.zeros(0)
        cut_steps = [  # local maxima of the histogram change above the threshold
            i
            for i in range(len(change))
            if change[i] >= self.cut_threshold and change[i] == change[max(0, i - 1) : i + 2].max()
        ]
        cuts = [float(times[i + 1]) for i in cut_steps]
        events = self._events(tracks, times, step, clip)
        kinds = _event_kinds(q)
        chosen = [t for t in tracks if q.matches(t.color, t.label)]
        spans: list[dict] = []
        for kind, t_event, tracks_of in events:
            if kind not in kinds:
                continue
            named = sum(1 for tr in tracks_of if tr in chosen)
            if (q.colors or q.shapes) and not named:
                continue
            score = 0.95 if (q.colors or q.shapes) else 0.7
            spans.append(
                self._span(t_event, step, times, score, kind, [f"{tr.color} {tr.label} #{tr.id}" for tr in tracks_of])
            )
        if "change" in kinds:
            for i in cut_steps:
                spans.append(
                    self._span(float(times[i + 1]), step, times, float(min(1.0, 0.5 + change[i])), "change", [])
                )
        note = None
        if not spans and not kinds and (q.colors or q.shapes):
            spans = self._presence(chosen, times, step)
            note = "no event word recognised; spans are where the named objects are visible"
        if not spans and not kinds and not (q.colors or q.shapes):
            order = np.argsort(-change, kind="stable")[:3] if len(change) else []
            spans = [
                self._span(float(times[i + 1]), step, times, float(min(0.5, change[i])), "change", [])
                for i in order
                if change[i] > 0.02
            ]
            note = "query not understood by the lite grounder; spans are the largest visual changes (hints only)"
        if not spans and note is None:
            note = "no matching event found"
        spans.sort(key=lambda s: (-s["score"], s["start"]))
        boundaries = sorted(
            {round(float(times[tr.steps[0]]), 3) for tr in tracks if tr.steps[0] > 0}
            | {round(float(times[tr.steps[-1]]) + step, 3) for tr in tracks if tr.steps[-1] < n - 1}
            | {round(c, 3) for c in cuts}
        )
        out = {
            "spans": spans,
            "boundaries": boundaries,
            "frames_used": int(n),
            "frame_times": [round(float(t), 3) for t in times],
            "window": window_span(clip, window),
            "events_found": dict(Counter(k for k, _, _ in events)),
        }
        if note:
            out["note"] = note
        return out

    @staticmethod
    def _span(t: float, step: float, times: np.ndarray, score: float, kind: str, objects: list[str]) -> dict:
        lo, hi = float(times[0]), float(times[-1]) + step
        return {
            "start": round(max(lo, t - step / 2), 3),
            "end": round(min(hi, t + step / 2), 3),
            "time": round(t, 3),
            "score": round(float(np.clip(score, 0.0, 1.0)), 3),
            "event": kind,
            "objects": objects,
        }

    def _events(
        self, tracks: list[Track], times: np.ndarray, step: float, clip: VideoClip
    ) -> list[tuple[str, float, list[Track]]]:
        """(kind, time, tracks involved) for every measurable event in the window."""
        n = len(times)
        _h, _w = clip.frames.shape[1:3]
        ev: list[tuple[str, float, list[Track]]] = []
        for tr in tracks:
            if tr.steps[0] > 0:
                ev.append(("appear", float(times[tr.steps[0]]), [tr]))
            if tr.steps[-1] < n - 1:
                ev.append(("disappear", float(times[tr.steps[-1]]) + step, [tr]))
            if len(tr.steps) >= 4:
                c = tr.centroids()
                dt = np.diff(times[tr.steps])
                speed = (
                    np.linalg.norm(np.diff(c, axis=0), axis=1)
                    / np.maximum(dt, 1e-6)
                    / max(np.sqrt(np.median(tr.areas())), 1.0)
                )
                moving = speed > self.rest_speed
                for k in range(1, len(moving) - 1):
                    if moving[k - 1] and not moving[k] and not moving[k + 1]:
                        ev.append(("stop", float(times[tr.steps[k]]), [tr]))
                    if not moving[k - 1] and moving[k] and (k + 1 >= len(moving) or moving[k + 1]):
                        ev.append(("start_moving", float(times[tr.steps[k]]), [tr]))
                cols = [s.color for s in tr.segments]
                for k in range(2, len(cols) - 1):
                    if cols[k] != cols[k - 1] and cols[k] == cols[k + 1] and cols[k - 1] == cols[k - 2]:
                        ev.append(("color_change", float(times[tr.steps[k]]), [tr]))
        for a in range(len(tracks)):
            for b in range(a + 1, len(tracks)):
                t_hit = self._contact(tracks[a], tracks[b], times)
                if t_hit is not None:
                    ev.append(("collide", t_hit, [tracks[a], tracks[b]]))
        return ev

    @staticmethod
    def _contact(a: Track, b: Track, times: np.ndarray) -> float | None:
        """First time two tracks' boxes touch after being apart."""
        sa = dict(zip(a.steps, a.segments))
        sb = dict(zip(b.steps, b.segments))
        apart_seen = False
        for st in sorted(set(sa) & set(sb)):
            x, y = sa[st].box, sb[st].box
            size = min(np.sqrt(sa[st].area), np.sqrt(sb[st].area))
            gap = max(x[0] - y[2], y[0] - x[2], x[1] - y[3], y[1] - x[3])
            if gap > 0.3 * size:
                apart_seen = True
            elif apart_seen and gap <= 0.15 * size:
                return float(times[st])
        return None

    @staticmethod
    def _presence(chosen: list[Track], times: np.ndarray, step: float) -> list[dict]:
        """Contiguous spans where any of the chosen tracks is visible, scored by coverage."""
        if not chosen:
            return []
        visible = np.zeros(len(times), bool)
        for tr in chosen:  # a track is visible from its first to its last step (gaps are misses)
            visible[tr.steps[0] : tr.steps[-1] + 1] = True
        spans, start = [], None
        for i, v in enumerate(list(visible) + [False]):
            if v and start is None:
                start = i
            if not v and start is not None:
                frac = (i - start) / len(times)
                spans.append(
                    {
                        "start": round(float(times[start]), 3),
                        "end": round(float(times[i - 1]) + step, 3),
                        "time": round(float(times[start]), 3),
                        "score": round(0.5 + 0.4 * frac, 3),
                        "event": "visible",
                        "objects": [f"{t.color} {t.label} #{t.id}" for t in chosen],
                    }
                )
                start = None
        return spans
