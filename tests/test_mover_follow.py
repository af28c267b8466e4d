"""Following a candidate's own look through the clip (:mod:`sama_model.backends.lite.movers.follow`): exact paths on
constructed frames, the median distance of two paths, and one kept candidate per object."""
import numpy as np
import pytest

from sama_model.backends.lite.movers import follow as mf
from sama_model.backends.lite.fitted.tree_classes import Tree, TreeClasses


def _frames(n: int, start: tuple[int, int], step: tuple[int, int], side: int = 14, gone_from: int | None = None):
    """Flat grey frames (160 x 120) with one random-textured square moving ``step`` pixels a frame; from
    ``gone_from`` on the square is absent."""
    rng = np.random.default_rng(3)
    patch = rng.uniform(0, 255, (side, side, 3)).astype(np.float32)
    out = []
    for k in range(n):
        f = np.full((120, 160, 3), 128, np.float32)
        if gone_from is None or k < gone_from:
            x, y = start[0] + k * step[0], start[1] + k * step[1]
            f[y:y + side, x:x + side] = patch
        out.append(f)
    return out, patch


def test_follow_finds_the_patch_in_every_frame_forward_and_back():
    frames, patch = _frames(12, (20, 30), (4, 2))
    start = 5
    x, y = 20 + 5 * 4, 30 + 5 * 2
    template = frames[start][y + 2:y + 12, x + 2:x + 12]  # the middle 10 x 10 of the square
    steps, centres, match = mf.follow(frames, start, template, (x + 7, y + 7))
    assert steps == list(range(12))
    assert np.allclose(np.array(centres), [[27 + 4 * k, 37 + 2 * k] for k in range(12)])
    assert min(match) > 0.99


def test_follow_stops_where_the_patch_is_gone():
    frames, _ = _frames(12, (20, 30), (3, 0), gone_from=8)
    template = frames[2][32:42, 28:38]
    steps, _, _ = mf.follow(frames, 2, template, (33, 37))
    assert steps == list(range(8))


def _cand(steps, xy, size=10.0, **measures):
    scene = np.array(xy, float)
    return mf.Candidate(np.array(steps), scene.copy(), scene, size, {"m": 0.0, **measures})


def test_distances_are_medians_over_the_common_steps():
    a = _cand([0, 1, 2, 3], [(0, 0), (0, 0), (0, 0), (0, 0)])
    b = _cand([2, 3, 4], [(3, 4), (6, 8), (0, 0)])  # common steps 2, 3: distances 5 and 10
    c = _cand([5, 6], [(0, 0), (0, 0)])
    med, common = mf._distances([a, b, c], 7)
    assert med[0, 1] == pytest.approx(7.5) and common[0, 1] == 2
    assert med[0, 2] == np.inf and common[0, 2] == 0
    assert med[1, 1] == 0 and common[1, 1] == 3


def _by_measure() -> TreeClasses:
    """P = logistic(3) for m > 0.5, logistic(-3) otherwise."""
    tree = Tree(np.array([0, 0, 0]), np.array([0.5, 0, 0]), np.array([1, 0, 0]), np.array([2, 0, 0]),
                np.array([False, True, True]), np.array([0.0, -3.0, 3.0]), np.array([True, False, False]))
    return TreeClasses(("m",), 0.0, (tree,), "test")


def test_heads_keep_one_candidate_per_object_most_probable_first():
    n = 6
    steps = list(range(n))
    obj = [(10 + 3 * k, 20) for k in steps]
    strong = _cand(steps, obj, m=1.0)
    twin = _cand(steps, [(x + 4, y) for x, y in obj], m=1.0)  # 4 px off: within one size of the kept one
    weak_same = _cand(steps, [(x + 2, y) for x, y in obj], m=0.0)
    other = _cand(steps, [(x, y + 40) for x, y in obj], m=0.0)  # another object, improbable
    short = _cand([0, 1], [(90, 90), (91, 90)], m=1.0)  # followed in too few frames
    kept = mf.heads([weak_same, other, twin, strong, short], n, _by_measure())
    assert [k is twin for k in kept] == [True, False]  # the first of the two probable ones listed wins the tie
    assert kept[1] is other
    assert [round(k.probability, 4) for k in kept] == [round(1 / (1 + np.exp(-3)), 4), round(1 / (1 + np.exp(3)), 4)]
