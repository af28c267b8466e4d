"""Issue 19, bounded cost: the faster forms of lite computations give exactly the values of the plain
forms they replace (a sorting network for per-pixel medians, whole-pixel warps as copies, colour
codes by a sorted hue look-up, the waveform fits' phase grid, colour rarity's 16-bit box sums and
masked label writes, downscaled frames remembered by content, the dense flow skipped where no camera
fit can follow), on constructed inputs with ties, borders and every hue bucket's edges."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from sama_model.backends.lite.perception.colours import _color_codes_plain, color_codes, color_name
from sama_model.backends.lite.shared.frame_memo import FRAME_MEMO
from sama_model.backends.lite.shared.order_stats import median_u8, order_stats
from sama_model.backends.lite.shared.sampling import resize_max
from sama_model.backends.lite.movers.camera import _warp
from sama_model.backends.lite.perception.colour_rarity import colour_centres, colour_rarity
from sama_model.backends.lite.perception.segmentation import Segmenter
from sama_model.backends.lite.motion.trajectory import OSC_FREQS_HZ, OSC_PHASES, _phases


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


def _colour_rarity_plain(lab: np.ndarray, clusters: int = 16, inner: int = 31, outer: int = 91, sigma: float = 9.0,
                         sample: int = 3000) -> np.ndarray:
    """:func:`colour_rarity` written plainly (labels by argmin, float32 box sums, one cluster at a time)."""
    h, w = lab.shape[:2]
    x = lab.reshape(-1, 3)
    n = len(x)
    centres = colour_centres(x, clusters, sample)  # the same quantisation: the fast path is what differs
    k = len(centres)
    diff = x[None, :, :] - centres[:, None, :]
    d2 = (diff[..., 0] * diff[..., 0] + diff[..., 1] * diff[..., 1]) + diff[..., 2] * diff[..., 2]
    lbl = np.argmin(d2, axis=0)
    weight = np.exp(d2 * np.float32(-0.5 / sigma**2))
    inner, outer = min(inner, h, w) | 1, min(outer, 2 * max(h, w) + 1) | 1
    norm = float(outer * outer - inner * inner)
    ring = np.zeros((h, w), np.float32)
    glob = np.zeros(n, np.float32)
    for j in range(k):
        count = int((lbl == j).sum())
        if count == 0:
            continue
        ind = (lbl == j).reshape(h, w).astype(np.uint8)
        big = cv2.boxFilter(ind, cv2.CV_32F, (outer, outer), normalize=False, borderType=cv2.BORDER_REFLECT)
        small = cv2.boxFilter(ind, cv2.CV_32F, (inner, inner), normalize=False, borderType=cv2.BORDER_REFLECT)
        ring += weight[j].reshape(h, w) * (big - small) / np.float32(norm)
        glob += weight[j] * np.float32(float(np.float32(count) / np.float32(n)))
    return np.minimum(ring, glob.reshape(h, w))


@pytest.mark.parametrize("size, outer", [((60, 80), 91), ((96, 128), 91), ((150, 140), 257), ((20, 24), 91)])
def test_colour_rarity_matches_the_plain_form(size: tuple[int, int], outer: int) -> None:
    # Lab images as the segmenter makes them (8-bit codes through its table): patches of a few colours
    # (ties between equally near centres, clusters absent from whole regions) over noise; 16-bit box
    # sums (outer box < 256 px) and float32 ones (outer box 257 px, 66049 pixels)
    rng = np.random.default_rng(size[0])
    h, w = size
    rgb = rng.integers(0, 256, (h, w, 3)).astype(np.uint8)
    rgb[: h // 2, : w // 3] = (200, 30, 40)
    rgb[h // 3:, w // 2:] = (20, 90, 200)
    rgb[h // 4: h // 2, w // 4: w // 2] = (128, 128, 128)
    lab = Segmenter._lab(rgb)
    want = _colour_rarity_plain(lab, outer=outer)
    got = colour_rarity(lab, outer=outer)
    assert got.dtype == np.float32 and np.array_equal(got, want)
    flat = np.zeros((40, 50, 3), np.float32)  # one colour: a single non-empty cluster
    assert np.array_equal(colour_rarity(flat, clusters=4), _colour_rarity_plain(flat, clusters=4))


def test_resized_copies_are_remembered_by_content() -> None:
    rng = np.random.default_rng(5)
    frames = rng.integers(0, 256, (3, 168, 224, 3)).astype(np.uint8)
    want = cv2.resize(frames[1], (160, 120), interpolation=cv2.INTER_AREA)
    FRAME_MEMO.clear()
    first, scale = resize_max(frames[1], 160)
    assert scale == pytest.approx(160 / 224) and np.array_equal(first, want)
    first[:] = 0  # a caller's copy: changing it changes nothing remembered
    again, _ = resize_max(frames[1], 160)
    assert np.array_equal(again, want) and again is not first
    frames[1, 10, 20] = frames[1, 10, 20] ^ 255  # the same buffer changed in place: resized afresh
    changed, _ = resize_max(frames[1], 160)
    assert np.array_equal(changed, cv2.resize(frames[1], (160, 120), interpolation=cv2.INTER_AREA))
    assert not np.array_equal(changed, want)
    strided = frames[2, ::2, ::2]  # a view with other strides and shape
    assert np.array_equal(resize_max(strided, 60)[0], cv2.resize(strided, (60, 45), interpolation=cv2.INTER_AREA))
    small = frames[0, :50, :60]
    assert resize_max(small, 160)[0] is small  # no downscale: the frame itself, as before
    FRAME_MEMO.clear()
    assert not FRAME_MEMO._resized and FRAME_MEMO._resized_bytes == 0


def test_texture_poor_pairs_skip_the_dense_flow(monkeypatch: pytest.MonkeyPatch) -> None:
    # a flat grey frame with one small square: too few corners and too few textured grid points for a
    # camera fit, decided (STATIC) before any dense flow is computed
    import sama_model.backends.lite.motion.flow as flow

    calls = []
    real = flow.dense_flow
    monkeypatch.setattr(flow, "dense_flow", lambda g0, g1: calls.append(1) or real(g0, g1))
    f0 = np.full((120, 160), 128, np.uint8)
    f0[50:60, 70:80] = 200
    f1 = np.roll(f0, 2, axis=1)
    assert flow.global_motion(f0, f1) == flow.STATIC and calls == []
    # vertical stripes: gradients on most grid points but no corners, so the dense flow is sampled
    # there, as the plain order (dense flow first, then the grid test) does
    x = np.arange(160)
    g0 = np.repeat((128 + 60 * np.sin(x / 5.0))[None, :], 120, axis=0).astype(np.uint8)
    g1 = np.repeat((128 + 60 * np.sin((x - 2) / 5.0))[None, :], 120, axis=0).astype(np.uint8)
    m = flow.global_motion(g0, g1)
    dense = real(g0, g1)
    ys, xs = np.mgrid[4:116:6, 4:156:6]
    keep = cv2.magnitude(cv2.Sobel(g0, cv2.CV_32F, 1, 0), cv2.Sobel(g0, cv2.CV_32F, 0, 1))[ys, xs] > 8
    p0 = np.stack([xs[keep], ys[keep]], 1).astype(np.float32)
    params, inl = flow.fit_similarity(p0.astype(np.float64), (p0 + dense[ys[keep], xs[keep]]).astype(np.float64),
                                      (79.5, 59.5))
    assert calls == [1] and m.points == int(keep.sum()) == 475
    assert (m.dx, m.dy, m.inliers) == (float(params[2]) / 160, float(params[3]) / 120, float(inl.mean()))


def test_track_prediction_reads_only_the_last_two_observations() -> None:
    from sama_model.backends.lite.perception.segment import Segment
    from sama_model.backends.lite.motion.tracks import Track

    def seg(x: float, y: float) -> Segment:
        return Segment(box=(x - 2, y - 2, x + 2, y + 2), centroid=(x, y), area=16.0, color="red", shape="circle",
                       rgb=(200, 0, 0), circularity=1.0, solidity=1.0, vertices=0, aspect=1.0)

    track = Track(id=1, steps=[0, 2, 5], segments=[seg(1.0, 2.0), seg(10.3, 4.1), seg(17.2, 9.7)])
    c = track.centroids()
    want = c[-1] + (c[-1] - c[-2]) / 3 * (8 - 5)  # the plain form: constant velocity over all centroids' last two
    assert np.array_equal(track.predict(8), want) and track.predict(8).dtype == np.float64
    single = Track(id=2, steps=[4], segments=[seg(3.5, 6.25)])
    assert single.predict(9).tolist() == [3.5, 6.25]


def test_an_entry_being_computed_is_waited_for_not_computed_again() -> None:
    """Three threads ask for one entry while the first computes it (as the three counting tools of one
    video do): it is computed once and all three get that value; a computation that fails is met again by
    a waiting thread, which computes it itself; an entry of another frames array is its own."""
    import threading
    import time

    from sama_model.backends.lite.shared.frame_memo import FrameMemo

    memo = FrameMemo()
    frames = np.zeros((2, 4, 4, 3), np.uint8)
    calls: list[int] = []

    def slow(frame: np.ndarray) -> list[int]:
        calls.append(1)
        time.sleep(0.2)
        return [len(calls)]

    got: list[list[int]] = []
    threads = [threading.Thread(target=lambda: got.append(memo.get(frames, 1, "k", slow))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and got == [[1], [1], [1]] and got[0] is got[1] is got[2]
    other = frames.copy()
    assert memo.get(other, 1, "k", slow) == [2]

    failures: list[str] = []

    def broken(frame: np.ndarray) -> None:
        calls.append(1)
        time.sleep(0.1)
        raise ValueError("unreadable")

    def ask() -> None:
        try:
            memo.get(frames, 0, "bad", broken)
        except ValueError as exc:
            failures.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == ["unreadable", "unreadable"] and len(calls) == 4 and not memo._pending
