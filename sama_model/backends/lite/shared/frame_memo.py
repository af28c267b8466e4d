"""Helpers every lite backend shares: picking frames of a window and parsing query words.

Query parsing is deliberately shallow (colour words, shape words, number words, a few event
verbs): the lite tools answer what their measurements cover and say "unknown" otherwise.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip, uniform_indices

Window = tuple[float | None, float | None]

# Frames of a window examined by the tracking-based tools (tracker, grounding, motion, reader):
# one shared default means they sample the same frames and share each frame's segmentation.
# 24 is 3 s at 8 fps (every MVX-Synth clip whole); a longer clip is thinned to it, so a call's
# cost does not grow with the clip's length (it was 32: a third more work on real footage).
TRACK_FRAMES = 24

COLOR_WORDS: dict[str, str] = {
    "red": "red",
    "orange": "orange",
    "yellow": "yellow",
    "gold": "yellow",
    "green": "green",
    "lime": "green",
    "cyan": "cyan",
    "teal": "cyan",
    "turquoise": "cyan",
    "blue": "blue",
    "navy": "blue",
    "purple": "purple",
    "violet": "purple",
    "magenta": "pink",
    "pink": "pink",
    "brown": "brown",
    "white": "white",
    "grey": "grey",
    "gray": "grey",
    "black": "black",
}
SHAPE_WORDS: dict[str, str] = {
    "circle": "circle",
    "ball": "circle",
    "dot": "circle",
    "disc": "circle",
    "disk": "circle",
    "sphere": "circle",
    "round": "circle",
    "square": "square",
    "box": "square",
    "cube": "square",
    "rectangle": "rectangle",
    "bar": "rectangle",
    "triangle": "triangle",
    "star": "star",
    "ellipse": "ellipse",
    "oval": "ellipse",
    "pentagon": "pentagon",
    "hexagon": "hexagon",
    "cross": "cross",
    "plus": "cross",
    "ring": "ring",
    "donut": "ring",
    "doughnut": "ring",
    "annulus": "ring",
    "blob": "blob",
    "diamond": "square",
}
NUMBER_WORDS: dict[str, int] = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_WORD = re.compile(r"[a-z]+")


def _singular(word: str) -> str:
    if word.endswith("ches") or word.endswith("xes") or word.endswith("ses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


@dataclass(frozen=True)
class Query:
    """The words of a query that lite measurements can act on."""

    text: str
    words: tuple[str, ...]
    colors: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    numbers: tuple[int, ...] = ()
    kinds: frozenset[str] = field(default_factory=frozenset)

    def matches(self, color: str, shape: str) -> bool:
        """Whether an object of ``color``/``shape`` is among those the query names (all if none)."""
        return (not self.colors or color in self.colors) and (not self.shapes or shape in self.shapes)

    @property
    def target(self) -> str:
        """The queried object as words, e.g. "red circle" (empty when the query names none)."""
        return " ".join(list(self.colors[:1]) + list(self.shapes[:1]))


_KINDS: dict[str, tuple[str, ...]] = {
    "count": ("how many", "count", "number of", "total"),
    "color": ("what colour", "what color", "which colour", "which color", "colour of", "color of"),
    "camera": ("camera", "pan", "panning", "tilt", "zoom", "viewpoint", "shot"),
    "motion": (
        "moving",
        "move",
        "motion",
        "direction",
        "speed",
        "bounce",
        "spin",
        "rotate",
        "orbit",
        "zig",
        "trajectory",
        "path",
    ),
    "describe": ("describe", "what happens", "what is shown", "summar", "what do you see", "scene"),
    "style": ("style", "palette", "colourful", "colorful", "saturat", "bright", "dark", "cartoon", "texture", "look"),
    "appear": ("appear", "enter", "emerge", "show up", "arrive", "start", "begin"),
    "disappear": ("disappear", "leave", "exit", "vanish", "end"),
    "collide": ("collide", "collision", "hit", "touch", "bump", "crash", "meet"),
    "stop": ("stop", "halt", "rest", "still"),
    "change": ("change", "cut", "transition", "switch", "scene change"),
    "where": ("where", "position", "located", "left of", "right of", "above", "below"),
}


def parse_query(text: str) -> Query:
    """Colour, shape and number words plus the kinds of question (count, colour, camera, ...)."""
    low = (text or "").lower()
    words = tuple(_WORD.findall(low))
    colors, shapes, numbers = [], [], []
    for w in words:
        s = _singular(w)
        if w in COLOR_WORDS and COLOR_WORDS[w] not in colors:
            colors.append(COLOR_WORDS[w])
        if s in SHAPE_WORDS and SHAPE_WORDS[s] not in shapes:
            shapes.append(SHAPE_WORDS[s])
        if w in NUMBER_WORDS:
            numbers.append(NUMBER_WORDS[w])
    numbers += [int(n) for n in re.findall(r"\b\d+\b", low)]
    kinds = frozenset(k for k, keys in _KINDS.items() if any(key in low for key in keys))
    return Query(
        text=text or "", words=words, colors=tuple(colors), shapes=tuple(shapes), numbers=tuple(numbers), kinds=kinds
    )


def window_indices(clip: VideoClip, window: Window = (None, None), max_frames: int | None = None) -> np.ndarray:
    """Indices of the clip's decoded frames in ``window``, thinned uniformly to ``max_frames``."""
    start, end = window if window is not None else (None, None)
    idx = clip.window(start, end)
    if max_frames is not None and len(idx) > max_frames:
        idx = idx[uniform_indices(len(idx), max_frames)]
    return idx


def window_span(clip: VideoClip, window: Window = (None, None)) -> list[float]:
    """The window as explicit ``[start, end]`` seconds (None filled from the clip)."""
    start, end = window if window is not None else (None, None)
    s = 0.0 if start is None else float(start)
    e = float(clip.duration) if end is None else float(end)
    return [round(min(s, e), 3), round(max(s, e), 3)]


def resize_max(frame: np.ndarray, max_side: int) -> tuple[np.ndarray, float]:
    """Downscale ``frame`` so its longer side is at most ``max_side``; returns (image, scale)."""
    h, w = frame.shape[:2]
    scale = min(1.0, max_side / float(max(h, w)))
    if scale >= 1.0:
        return frame, 1.0
    size = (max(2, int(round(w * scale))), max(2, int(round(h * scale))))
    return FRAME_MEMO.resized(frame, size), scale


def grey_small(frame: np.ndarray, max_side: int = 160) -> np.ndarray:
    """Greyscale float32 copy at working resolution (flow, hashes, change detection)."""
    small, _ = resize_max(frame, max_side)
    return cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)


def fast_median(a: np.ndarray) -> np.ndarray | float:
    """``np.median(a, axis=0)``, the same values bit for bit, without numpy's generic overhead.

    Why: the segmenter takes the median colour of a few hundred pixels dozens of times per frame
    (object, rim, ring, background); ``np.median``'s dispatch, NaN check and ``np.mean`` cost
    about 70 us a call, more than the partition itself. Same rule as numpy: partition at the
    middle element(s); their mean for an even count, in float64 for integer input. (The median of
    a stack of whole frames is :func:`median_u8`.)
    """
    a = np.asarray(a)
    n = a.shape[0]
    if n == 0:
        return np.median(a, axis=0)  # numpy's empty-input result (NaN with its warning)
    m = n // 2
    if n % 2:
        mid = np.partition(a, m, axis=0)[m]
        return mid.astype(np.float64) if a.dtype.kind in "biu" else mid
    part = np.partition(a, (m - 1, m), axis=0)
    lo, hi = part[m - 1], part[m]
    if a.dtype.kind in "biu":
        return (lo.astype(np.float64) + hi) / 2
    return (lo + hi) / 2


def _network(n: int, wanted: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """Compare-exchange pairs (i < j: the smaller value goes to i) that put the ``wanted`` ranks of
    ``n`` values in place: Batcher's odd-even merge sort for the next power of two, the pairs that
    touch a position >= n dropped (those hold +infinity, which no pair moves) and the pairs that no
    wanted rank depends on dropped."""
    size = 1
    while size < n:
        size *= 2
    pairs = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p) and i + j + k < n:
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    need, kept = set(wanted), []
    for a, b in reversed(pairs):
        if a in need or b in need:
            kept.append((a, b))
            need |= {a, b}
    return tuple(reversed(kept))


_NETWORKS: dict[tuple[int, tuple[int, ...]], tuple[tuple[int, int], ...]] = {}


def order_stats(rows: list[np.ndarray], ranks: tuple[int, ...]) -> list[np.ndarray]:
    """The element-wise ``ranks``-th smallest (0 first) of equally shaped arrays, exactly what
    ``np.sort(np.stack(rows), axis=0)[r]`` gives. Why: numpy sorts or partitions along the
    stacking axis lane by lane (a strided, per-lane loop, ~55 ms for the movers' 24-frame
    median); a sorting network of element-wise minima and maxima does the same in a few ms.
    ``rows`` are reordered in place (pass copies to keep them)."""
    key = (len(rows), tuple(ranks))
    if key not in _NETWORKS:
        _NETWORKS[key] = _network(*key)
    rows = list(rows)
    spare = np.empty_like(rows[0])
    for i, j in _NETWORKS[key]:
        np.minimum(rows[i], rows[j], out=spare)
        np.maximum(rows[i], rows[j], out=rows[j])
        rows[i], spare = spare, rows[i]
    return [rows[r] for r in ranks]


def median_u8(stack: np.ndarray) -> np.ndarray:
    """``np.median(stack, axis=0).astype(np.uint8)`` of a uint8 stack, bit for bit (the mean of the
    two middle values, truncated), by :func:`order_stats`."""
    n = len(stack)
    rows = [stack[k].reshape(-1) for k in range(n)]
    if n % 2:
        return order_stats(rows, (n // 2,))[0].reshape(stack.shape[1:])
    lo, hi = order_stats(rows, (n // 2 - 1, n // 2))
    return ((lo.astype(np.uint16) + hi) >> 1).astype(np.uint8).reshape(stack.shape[1:])


def median_int(values: list[int] | np.ndarray) -> int:
    """Median of counts, rounded half up (a per-frame typical count)."""
    if len(values) == 0:
        return 0
    return int(np.floor(np.median(np.asarray(values, dtype=float)) + 0.5))


class FrameMemo:
    """Per-frame results (segments, embeddings) keyed by (frames array, index, kind), shared by
    all lite tools in a process.

    Several tools look at the same decoded frames within one question; computing each frame's
    measurements once saves most of their time. Entries are keyed by the array's id and checked
    through a weak reference, so a recycled id never returns another clip's results. The agent runs
    a step's tool calls in parallel threads (``scene_graph``, ``object_tracker`` and ``video_reader``
    of one video at once), so a value being computed is waited for, not computed again (see :meth:`get`).
    """

    #: bytes of source images and their downscaled copies that :meth:`resized` keeps
    RESIZED_BYTES = 48 << 20
    #: seconds a thread waits for another thread's computation of the same entry before computing it itself
    #: (a safety valve: no code path waits on itself, but a stuck computation must not stall a run)
    WAIT_S = 120.0

    def __init__(self, size: int = 8192) -> None:
        self.size = size
        self._data: "OrderedDict[tuple, tuple[weakref.ref, Any]]" = OrderedDict()
        # entries being computed: key -> (computing thread, done event, weak reference to the frames)
        self._pending: dict[tuple, tuple[int, threading.Event, weakref.ref]] = {}
        self._resized: "OrderedDict[tuple, tuple[np.ndarray, np.ndarray]]" = OrderedDict()
        self._resized_bytes = 0
        self._lock = threading.Lock()

    def resized(self, image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """``cv2.resize(image, size, interpolation=cv2.INTER_AREA)``, remembered by content.

        Why: one frame is downscaled to the same working size by several tools and steps (the
        camera fit's grey copy, the movers' colour copy, their grey copy and each region's colours:
        four INTER_AREA resizes of every sampled frame per motion_analyzer call, the priciest of
        OpenCV's resize paths at a non-integer ratio). A hit needs the very same pixels (the stored
        copy of the source is compared in full, so a reused buffer or an image changed in place
        is resized afresh); each call gets its own copy of the result."""
        image = np.asarray(image)
        key = (image.__array_interface__["data"][0], image.shape, image.strides, image.dtype.str, tuple(size))
        with self._lock:
            hit = self._resized.get(key)
        if hit is not None and np.array_equal(hit[0], image):
            with self._lock:
                if key in self._resized:
                    self._resized.move_to_end(key)
            return hit[1].copy()
        out = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        entry = (image.copy(), out)
        with self._lock:
            old = self._resized.pop(key, None)
            if old is not None:
                self._resized_bytes -= old[0].nbytes + old[1].nbytes
            self._resized[key] = entry
            self._resized_bytes += entry[0].nbytes + entry[1].nbytes
            while self._resized_bytes > self.RESIZED_BYTES and len(self._resized) > 1:
                _, (src, small) = self._resized.popitem(last=False)
                self._resized_bytes -= src.nbytes + small.nbytes
        return out.copy()

    def get(self, frames: np.ndarray, index: int, kind: Hashable, fn: Callable[[np.ndarray], Any]) -> Any:
        """``fn(frames[index])``, remembered under (frames, index, kind).

        Why the waiting: the three tools that count one video's moving objects run in parallel threads
        and ask for the same background models; without it each computed them (a real-footage CNT
        question's tool calls took twice the time once the count read seven floors). A thread that finds
        the entry being computed by another waits for it (at most :data:`WAIT_S`); if that computation
        failed, it computes the entry itself and meets the error itself."""
        key = (id(frames), int(index), kind)
        me = threading.get_ident()
        while True:
            with self._lock:
                hit = self._data.get(key)
                if hit is not None and hit[0]() is frames:
                    self._data.move_to_end(key)
                    return hit[1]
                busy = self._pending.get(key)
                if busy is None or busy[0] == me or busy[2]() is not frames:
                    done = threading.Event()
                    mine = (me, done, weakref.ref(frames))
                    self._pending[key] = mine
                    break
            if not busy[1].wait(self.WAIT_S):
                return fn(frames[int(index)])  # the other computation is stuck: do not wait for ever
        try:
            value = fn(frames[int(index)])
            with self._lock:
                self._data[key] = (weakref.ref(frames), value)
                while len(self._data) > self.size:
                    self._data.popitem(last=False)
            return value
        finally:
            with self._lock:
                if self._pending.get(key) is mine:
                    del self._pending[key]
            done.set()

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._resized.clear()
            self._resized_bytes = 0


FRAME_MEMO = FrameMemo()
