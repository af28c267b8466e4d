"""The one per-process memo of per-frame results and downscaled copies that every lite tool shares."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable, Hashable

import cv2
import numpy as np


class FrameMemo:
    """Per-frame results (segments, embeddings) keyed by (frames array, index, kind), shared by
    all lite tools in a process.

    Several tools look at the same decoded frames within one question; computing each frame's
    measurements once saves most of their time. Entries are keyed by the array's id and checked
    through a weak reference, so a recycled id never returns another clip's results; once an array is
    garbage its entries are dropped (at the next store), so the memo holds results of live arrays only instead
    of filling up to :attr:`size` entries of dead ones. The agent runs
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
        # ids of arrays that became garbage, queued by weakref callbacks (which may run inside any
        # allocation, even under ``_lock``: so they only append, and :meth:`_drop_dead` purges under the lock)
        self._dead: deque[int] = deque()
        self._keys_of: dict[int, list[tuple]] = {}

    def _ref(self, frames: np.ndarray) -> weakref.ref:
        fid, dead = id(frames), self._dead
        return weakref.ref(frames, lambda _ref: dead.append(fid))

    def _drop_dead(self) -> None:
        """Drop the entries of arrays that are garbage (called with ``_lock`` held)."""
        while self._dead:
            fid = self._dead.popleft()
            alive = []
            for key in self._keys_of.pop(fid, ()):
                entry = self._data.get(key)
                if entry is None:
                    continue
                if entry[0]() is None:
                    del self._data[key]
                else:  # the id was reused by a live array: its entries stay
                    alive.append(key)
            if alive:
                self._keys_of[fid] = alive

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
                self._drop_dead()
                if key not in self._data:
                    self._keys_of.setdefault(key[0], []).append(key)
                self._data[key] = (self._ref(frames), value)
                while len(self._data) > self.size:
                    old, _ = self._data.popitem(last=False)
                    keys = self._keys_of.get(old[0])
                    if keys is not None and old in keys:
                        keys.remove(old)
                        if not keys:
                            del self._keys_of[old[0]]
            return value
        finally:
            with self._lock:
                if self._pending.get(key) is mine:
                    del self._pending[key]
            done.set()

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._keys_of.clear()
            self._dead.clear()
            self._resized.clear()
            self._resized_bytes = 0


FRAME_MEMO = FrameMemo()
