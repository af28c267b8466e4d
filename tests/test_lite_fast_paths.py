"""Issue 19, bounded cost: the faster forms of lite computations give exactly the values of the plain
forms they replace (a sorting network for per-pixel medians, whole-pixel warps as copies, colour
codes by a sorted hue look-up, the waveform fits' phase grid), on constructed inputs with ties,
borders and every hue bucket's edges."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from sama_model.backends.lite.colours import _color_codes_plain, color_codes, color_name
from sama_model.backends.lite.common import median_u8, order_stats
from sama_model.backends.lite.movers import _warp
from sama_model.backends.lite.trajectory import OSC_FREQS_HZ, OSC_PHASES, _phases


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 13, 23, 24, 25])
def test_order_stats_and_median_match_numpy(n: int) -> None:
    rng = np.random.default_rng(n)
    stack = rng.integers(0, 256, (n, 40, 3)).astype(np.uint8)
    stack[:, :10] = stack[0, :10]  # ties: equal values in every row
    stack[:, 10:15] = rng.integers(0, 2, (n, 5, 3)).astype(np.uint8) * 255  # only black and white
    ordered = np.sort(stack, axis=0)
    for r in range(n):
        assert np.array_equal(order_stats([s.copy() for s in stack], (r,))[0], ordered[r])
    assert np.array_equal(median_u8(stack.copy()), np.median(stack, axis=0).astype(np.uint8))


def test_median_of_two_is_the_truncated_mean() -> None:
    stack = np.array([[[3, 250, 7]], [[4, 255, 7]]], np.uint8)
    assert median_u8(stack).tolist() == [[3, 252, 7]]


@pytest.mark.parametrize("border", [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE])
@pytest.mark.parametrize("flags", [cv2.INTER_LINEAR, cv2.INTER_NEAREST])
def test_whole_pixel_warp_is_the_warp(border: int, flags: int) -> None:
    rng = np.random.default_rng(3)
    src = rng.integers(0, 256, (30, 40, 3)).astype(np.uint8)
    # pasted into a larger canvas, cut out of it, partly outside, the identity, a sub-pixel move
    for (dx, dy), size in [((10, 7), (60, 44)), ((-5, -3), (30, 20)), ((12, -4), (40, 30)), ((0, 0), (40, 30)),
                           ((2.5, 1.0), (40, 30))]:
        m = np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], np.float64)
        want = cv2.warpPerspective(src, m, size, flags=flags, borderMode=border, borderValue=0)
        assert np.array_equal(_warp(src, m, size, flags, border), want)


def test_colour_codes_match_the_plain_rules() -> None:
    # every 8-bit colour whose channels lie on a 15-step grid, plus the values next to the hue,
    # value and saturation cut-offs (42, 70, 165, 200, 255, 295, 15 and 340 degrees; 0.22 ... 0.8)
    levels = sorted(set(range(0, 256, 15)) | {1, 56, 57, 58, 79, 80, 114, 115, 127, 128, 158, 159, 191, 192, 204, 205,
                                              254, 255})
    grid = np.array(np.meshgrid(levels, levels, levels, indexing="ij"), np.uint8).reshape(3, -1).T
    assert np.array_equal(color_codes(grid), _color_codes_plain(grid))
    floats = np.random.default_rng(0).random((20000, 3)).astype(np.float32) * 255
    assert np.array_equal(color_codes(floats), _color_codes_plain(floats))
    assert color_codes(grid.reshape(-1, len(levels), 3)).shape == (len(levels) ** 2, len(levels))
    names = [color_name(c) for c in [(230, 20, 20), (240, 150, 160), (120, 60, 20), (250, 140, 0), (240, 220, 30),
                                     (30, 200, 40), (20, 200, 210), (30, 60, 220), (140, 40, 200), (128, 128, 128),
                                     (250, 250, 250), (10, 10, 10)]]
    assert names == ["red", "pink", "brown", "orange", "yellow", "green", "cyan", "blue", "purple", "grey", "white",
                     "black"]


def test_phase_grid_is_the_remainder() -> None:
    t = np.array([0.0, 0.125, 0.25, 1.0 / 3.0, 1.5, 2.875])
    want = ((t[None, :, None] * OSC_FREQS_HZ[:, None, None]) + (np.arange(OSC_PHASES) / OSC_PHASES)[None, None, :]) % 1.0
    got = _phases(t)
    assert np.array_equal(got, want) and not np.signbit(got).any()
