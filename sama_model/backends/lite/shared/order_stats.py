"""Medians and order statistics of frame stacks, bit for bit numpy's, without its per-call and per-lane costs."""

from __future__ import annotations

import numpy as np


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
