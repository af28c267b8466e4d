"""The lite tools' per-frame memo keeps results of live frame arrays only (a long run's memory stays flat)."""
from __future__ import annotations

import gc

import numpy as np

from sama_model.backends.lite.shared.frame_memo import FrameMemo


def test_entries_of_a_garbage_array_are_dropped_at_the_next_store():
    memo = FrameMemo(size=100)
    calls = []

    def fn(frame):
        calls.append(1)
        return float(frame.sum())

    kept = np.ones((3, 4, 4), np.uint8)
    gone = np.full((3, 4, 4), 2, np.uint8)
    assert memo.get(kept, 0, "sum", fn) == 16.0
    assert memo.get(gone, 0, "sum", fn) == 32.0 and memo.get(gone, 1, "sum", fn) == 32.0
    assert len(memo._data) == 3
    del gone
    gc.collect()
    assert memo.get(kept, 1, "sum", fn) == 16.0  # a store purges the dead array's two entries
    assert len(memo._data) == 2 and len(calls) == 4
    assert memo.get(kept, 0, "sum", fn) == 16.0 and len(calls) == 4  # the live array's entries stay (a hit)


def test_a_reused_id_never_returns_the_dead_arrays_results():
    memo = FrameMemo(size=100)
    for value in range(20):  # fresh arrays, often at a recycled address
        frames = np.full((1, 2, 2), value, np.uint8)
        assert memo.get(frames, 0, "v", lambda f: int(f[0, 0])) == value
        del frames
    gc.collect()
    memo.get(np.zeros((1, 2, 2), np.uint8), 0, "v", lambda f: 0)
    assert len(memo._data) == 1  # every earlier array died; the next store dropped its entry
