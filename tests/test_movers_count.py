"""Issue 19, CNT on real footage: exact counts of independently moving objects on constructed
clips (textured patches over a textured, panning background; a patch glued to the scene; two
patches that start on top of each other and separate; patches over a flat backdrop, where the camera is
decided still once per clip), and the parts behind them (a group's share of foreground, the join of the
two estimates)."""
from __future__ import annotations

import numpy as np
import pytest

from sama_model.backends.lite.shared.frame_memo import FRAME_MEMO
from sama_model.backends.lite.shared.sampling import window_indices
from sama_model.backends.lite.movers.count import (COUNT_FLOORS, PointTrack, _moves, agreed_count, edge_share,
                                                  foreground_share, most_at_once, mover_counts, rigid_groups,
                                                  target_separation)
from sama_model.backends.lite.object_tracker import LiteObjectTracker
from sama_model.backends.lite.scene_graph import LiteSceneGraph
from sama_model.backends.lite.shared.query import named_kind, parse_query
from sama_model.backends.lite.video_reader import LiteVideoReader
from sama_model.tools.base import not_separable
from sama_model.backends.lite.movers.camera import camera_chain
from sama_model.backends.lite.movers.regions import movers
from sama_model.backends.lite.perception.segment import Segment
from sama_model.backends.lite.motion.tracks import Track
from scenes import make_clip, textured_image

SIDE = 224


def _pan_clip(starts: list[tuple[float, float]], vels: list[tuple[float, float]], n_frames: int = 24,
              seed: int = 5, pan: float = 2.0):
    """Textured 36-px patches over a textured world filmed by a camera panning ``pan`` px per frame;
    patch k starts at ``starts[k]`` (world pixels) and moves ``vels[k]`` px per frame (0: glued)."""
    world = textured_image(SIDE * 2, SIDE * 2, seed)
    patches = [textured_image(36, 36, seed + 20 + k) for k in range(len(starts))]
    frames = []
    for i in range(n_frames):
        canvas = world.copy()
        for p, s, v in zip(patches, starts, vels):
            x, y = (np.array(s) + np.array(v) * i).astype(int)
            canvas[y:y + 36, x:x + 36] = p
        x0 = int(SIDE * 0.4 + pan * i)
        frames.append(canvas[SIDE // 2:SIDE // 2 + SIDE, x0:x0 + SIDE].copy())
    return make_clip(frames)


#: patches whose paths stay apart and inside the view (world pixels: the view's left edge goes from
#: x=89 to x=135, its top is y=112), and one glued to the scene between them
_STARTS = [(110, 130), (110, 230), (230, 130), (240, 260)]
_VELS = [(3, 0), (3, 1), (2, 2.5), (2.5, 1)]
_GLUED = (180, 180)


@pytest.mark.parametrize("n_moving", [1, 2, 3, 4])
def test_count_is_exact_with_a_glued_patch(n_moving):
    """N travelling patches and one glued to the panning scene: N, by the count and both estimates."""
    FRAME_MEMO.clear()
    starts = _STARTS[:n_moving] + [_GLUED]
    clip = _pan_clip(starts, _VELS[:n_moving] + [(0, 0)])
    got = mover_counts(clip)
    assert got["count"] == n_moving
    assert got["estimates"] == {"followed": n_moving, "regions": n_moving, "points": n_moving}
    assert "estimates" not in got["near_threshold"]
    readings = got["regions_by_floor"]
    assert list(readings) == ["10", "12", "14", "16", "19", "22", "26"] == [f"{f:g}" for f in COUNT_FLOORS]
    assert got["estimates"]["regions"] == agreed_count(list(readings.values()))


def test_named_kind_is_what_a_query_counts_beyond_moving_objects():
    """The kind a count query names: the phrase after a count cue (or the query's start), articles and motion
    adjectives dropped, cut at a verb or preposition, each word singular; None for whatever moves or a colour/shape."""
    cases = {"": None, "moving object": None, "moving objects": None, "things that move": None,
             "objects move across the footage": None, "How many objects are visible? Answer with a number.": None,
             "red circle": None, "circles": None, "moving cut-out": "cut-out", "moving patches": "patch",
             "pasted photo cut-outs": "pasted photo cut-out", "person": "person", "cars": "car",
             "people walking": "people", "cup, person": "cup", "large objects": "large object",
             "How many moving cut-outs are visible? Answer with a number.": "cut-out",
             "Count the people in each video": "people", "the number of distinct cars in the street": "car"}
    assert {text: named_kind(parse_query(text)) for text in cases} == cases
    assert target_separation(parse_query("moving cut-out"), 2) == {"counted_as": "moving regions",
                                                                   "target_separable": False, "asked_kind": "cut-out"}
    assert target_separation(parse_query("moving cut-out"), 0)["target_separable"] is True  # no mover: none of them
    assert target_separation(parse_query("moving objects"), 3) == {"counted_as": "moving regions",
                                                                   "target_separable": True, "asked_kind": None}


def test_count_tools_say_when_they_cannot_tell_the_queried_kind():
    """Two travelling patches over a panning scene: every lite count tool counts 2 moving regions, asked for moving
    objects that is what was asked; asked for cut-outs or people it says it cannot tell them from other movers."""
    FRAME_MEMO.clear()
    clip = _pan_clip(_STARTS[:2], _VELS[:2])
    tracker = LiteObjectTracker().track(clip, "moving cut-out")
    assert tracker["counts"] == {"moving object": 2}
    assert (tracker["counted_as"], tracker["target_separable"], tracker["asked_kind"]) == ("moving regions", False,
                                                                                          "cut-out")
    generic = LiteSceneGraph().graph(clip, "moving object")
    assert (generic["counts"], generic["target_separable"], generic["asked_kind"]) == ({"moving object": 2}, True, None)
    reader = LiteVideoReader().read(clip, "How many people are visible? Answer with a number.")
    assert (reader["target_separable"], reader["asked_kind"]) == (False, "people")
    assert reader["answer"] == "2 moving objects (tracked, moving on their own)."
    # one phrasing for the planner, in every count tool's text (sama_model/tools/base.py)
    assert not_separable(reader) == "; counts moving regions: cannot tell people from other movers"
    assert not_separable(generic) == ""


def test_patches_that_start_together_and_separate_count_two():
    """One patch over another at the start (one region), apart later: two objects."""
    FRAME_MEMO.clear()
    clip = _pan_clip([(150, 190), (160, 196)], [(4, 1.5), (-1, -2)])
    got = mover_counts(clip)
    assert got["count"] == 2


def test_most_at_once_counts_a_lost_and_found_object_once():
    assert most_at_once(24, [(0, 10), (12, 24)]) == 1
    assert most_at_once(24, [(0, 10), (8, 24), (12, 20)]) == 2
    assert most_at_once(24, []) == 0


def test_a_handover_step_is_not_two_objects():
    """One object's track ends where the next begins, both alive for one step (the background model split
    its region there): two at once untrimmed, one with a step trimmed from the inner ends; spans that reach
    the window's bounds keep them, and two objects alive together for longer stay two."""
    assert most_at_once(24, [(0, 10), (9, 24)]) == 2
    assert most_at_once(24, [(0, 10), (9, 24)], trim=1) == 1
    assert most_at_once(24, [(0, 24), (0, 24)], trim=1) == 2
    assert most_at_once(24, [(0, 12), (8, 24)], trim=1) == 2
    assert most_at_once(24, [(5, 6)], trim=1) == 0  # a one-step span trims to nothing


def test_agreed_count_is_the_largest_two_floors_reach():
    assert agreed_count([3, 3, 2, 2, 2, 1, 1]) == 3
    assert agreed_count([4, 3, 3, 3, 2, 2, 2]) == 3  # one floor alone reading 4 is not trusted
    assert agreed_count([2, 5, 1, 5, 0, 0, 0]) == 5  # order does not matter
    assert agreed_count([2, 1, 1, 1, 1, 1, 1], agree=1) == 2
    assert agreed_count([4]) == 4 and agreed_count([]) == 0


def _pt(start: int, path: np.ndarray) -> PointTrack:
    return PointTrack(start, path.copy(), path.copy())


def test_rigid_groups_join_points_sharing_one_scene_path():
    """Two objects of 4 corners each, translating differently, and 6 still background corners: two
    groups; a background corner covered half-way by a passing object (still, then moving) is no
    object's point."""
    t = np.arange(12, dtype=float)[:, None]
    a = [_pt(0, np.array([10.0 + dx, 10.0 + dy]) + t * [1.5, 0.5]) for dx, dy in ((0, 0), (4, 0), (0, 4), (4, 4))]
    b = [_pt(0, np.array([60.0 + dx, 40.0 + dy]) + t * [-1.0, 1.0]) for dx, dy in ((0, 0), (5, 1), (1, 5), (5, 5))]
    still = [_pt(0, np.repeat([[100.0 + 7 * k, 100.0]], 12, 0)) for k in range(6)]
    covered = np.repeat([[30.0, 30.0]], 12, 0)
    covered[7:] += (t[7:] - 6) * [1.5, 0.5]
    assert not _moves(_pt(0, covered)) and _moves(a[0])
    groups = rigid_groups(a + b + still + [_pt(0, covered)])
    assert sorted(len(g) for g in groups) == [4, 4]
    assert {id(p) for g in groups for p in g} == {id(p) for p in a + b}


def test_points_moving_with_their_surroundings_are_background():
    """Four corners moving together amid corners that move nearly the same way (a rotating globe's
    lights, whose motion the camera fit leaves a little of): background, not an object; the same
    four corners amid still ones are an object."""
    t = np.arange(12, dtype=float)[:, None]
    group = [_pt(0, np.array([40.0 + dx, 40.0 + dy]) + t * [1.0, 0.0]) for dx, dy in ((0, 0), (4, 0), (0, 4), (4, 4))]
    ring = [_pt(0, np.array([40.0 + 12 * np.cos(a), 40.0 + 12 * np.sin(a)]) + t * [1.3, 0.0])
            for a in np.linspace(0, 2 * np.pi, 5, endpoint=False)]
    assert rigid_groups(group + ring) == []
    still = [_pt(0, np.repeat([[40.0 + 12 * np.cos(a), 40.0 + 12 * np.sin(a)]], 12, 0))
             for a in np.linspace(0, 2 * np.pi, 5, endpoint=False)]
    assert [len(g) for g in rigid_groups(group + still)] == [4]


def _flat_clip(starts: list[tuple[int, int]], vels: list[tuple[float, float]], n_frames: int = 24, side: int = 26,
               seed: int = 5):
    """Textured ``side``-px patches over a flat grey backdrop with sensor noise, still camera (a slate):
    the only corners are the patches' own."""
    rng = np.random.default_rng(seed)
    patches = [textured_image(side, side, seed + 20 + k) for k in range(len(starts))]
    frames = []
    for i in range(n_frames):
        noise = rng.normal(0, 2, (168, SIDE, 3))
        canvas = np.clip(np.full((168, SIDE, 3), (120, 125, 130), np.float64) + noise, 0, 255).astype(np.uint8)
        for p, s, v in zip(patches, starts, vels):
            x, y = (np.array(s) + np.array(v) * i).astype(int)
            canvas[y:y + side, x:x + side] = p
        frames.append(canvas)
    return make_clip(frames)


@pytest.mark.parametrize("n_moving", [1, 2])
def test_flat_backdrop_is_a_still_camera(n_moving):
    """On a flat backdrop the camera fit has only the patches' corners: the clip is decided still once
    (every pair the identity), so neither patch's path picks up the other's motion; N patches, N movers."""
    FRAME_MEMO.clear()
    clip = _flat_clip([(10, 20), (170, 110)][:n_moving], [(3, 1), (0, -3)][:n_moving])
    chain = camera_chain(clip, window_indices(clip, (None, None), 24))
    assert all(np.array_equal(m, np.eye(3)) for m in chain)
    got = mover_counts(clip)
    assert got["count"] == n_moving
    assert got["estimates"] == {"followed": n_moving, "regions": n_moving, "points": n_moving}
    # the tracker's generic count carries every followed object's probability, for the CNT policy's match
    from sama_model.backends.lite.movers.follow import COUNT_PROBABILITY
    from sama_model.backends.lite.object_tracker import LiteObjectTracker

    tracked = LiteObjectTracker().track(clip, "moving objects")
    assert tracked["count_probabilities"] == got["probabilities"]
    counted = sum(p >= COUNT_PROBABILITY for p in tracked["count_probabilities"])
    assert counted == tracked["counts"]["moving object"] == n_moving


def test_texture_share_counts_the_pixels_a_camera_fit_could_register_on():
    """A uniform frame has none; a step of 100 grey levels, after the small copy's 3x3 blur (25, 75 on
    either side), has a gradient above 1 grey level per pixel on 4 of 160 columns (12.5, 37.5, 37.5,
    12.5); a textured world has it almost everywhere."""
    from sama_model.backends.lite.movers.camera import small_grey, texture_share

    flat = np.full((120, 160, 3), 90, np.uint8)
    assert texture_share(small_grey(flat)) == 0.0
    step = flat.copy()
    step[:, 80:] = 190
    assert texture_share(small_grey(step)) == 4 / 160
    assert texture_share(small_grey(textured_image(120, 160, 3))) > 0.9


def test_many_patches_over_a_flat_backdrop_are_still_decided_by_texture():
    """Five textured patches spread over a flat, noisy backdrop put the pair fits' inliers in 5-14 of the 16
    cells (median 11, above FLAT_CELLS): the cell rule alone followed the patches (23 of 23 pairs moved and
    the count read 4). The backdrop's texture share (0.13, under FLAT_TEXTURE) decides the camera still
    before any pair is fitted, and the count is 5 by both estimates."""
    from sama_model.backends.lite.movers import camera as movers_mod

    FRAME_MEMO.clear()
    clip = _flat_clip([(10, 20), (170, 110), (100, 60), (20, 120), (170, 15)],
                      [(3, 1), (0, -3), (-2, 2), (2, -1), (-2, 2)])
    idx = window_indices(clip, (None, None), 24)
    greys = [movers_mod.small_grey(clip.frames[int(i)]) for i in idx]
    cells = [movers_mod._pair(a, b)[2] for a, b in zip(greys[:-1], greys[1:])]
    assert float(np.median(cells)) >= movers_mod.FLAT_CELLS
    assert movers_mod.flat_backdrop(clip, idx)
    assert all(np.array_equal(m, np.eye(3)) for m in camera_chain(clip, idx))
    got = mover_counts(clip)
    assert got["count"] == 5
    assert got["estimates"] == {"followed": 5, "regions": 5, "points": 5}
    FRAME_MEMO.clear()


def test_foreground_share_of_a_group():
    """Points inside the foreground (dilated by 2 px) count, points off it do not: a group of texture
    moving in the background model's median (a rotating globe's lights) has a share near 0."""
    masks = [np.zeros((40, 40), np.uint8) for _ in range(4)]
    for m in masks:
        m[10:20, 10:20] = 1
    on = [_pt(0, np.array([[12.0, 12.0]] * 4)), _pt(0, np.array([[21.0, 15.0]] * 4))]  # 21: within the dilation
    off = [_pt(0, np.array([[30.0, 30.0]] * 4)), _pt(2, np.array([[35.0, 5.0]] * 2))]
    assert foreground_share(on, masks) == 1.0
    assert foreground_share(off, masks) == 0.0
    assert foreground_share(on + off, masks) == 8 / 14


def _box_track(boxes: list[tuple[float, float, float, float]]) -> Track:
    segs = [Segment(box=b, centroid=((b[0] + b[2]) / 2, (b[1] + b[3]) / 2), area=(b[2] - b[0]) * (b[3] - b[1]),
                    color="grey", shape="blob", rgb=(128, 128, 128), circularity=0.5, solidity=0.9, vertices=0,
                    aspect=1.0) for b in boxes]
    return Track(id=1, steps=list(range(len(boxes))), segments=segs)


def test_edge_share_counts_frames_whose_box_touches_the_edge():
    """320x240 frame, margin 1 % of the width (3.2 px): a box at x0=3 or y1=237 touches, one 4 px in does not."""
    t = _box_track([(3, 50, 40, 90), (4, 50, 41, 90), (100, 200, 140, 237), (100, 196, 140, 236), (280, 0, 316, 30)])
    assert edge_share(t, 320, 240) == 3 / 5
    assert edge_share(_box_track([(10, 10, 50, 50)] * 4), 320, 240) == 0.0


@pytest.mark.parametrize("n_moving", [1, 2])
def test_a_patch_cut_by_the_frame_edge_is_no_region_mover(n_moving):
    """N patches in view and one sliding along the bottom edge, half out of view in every frame (where the
    background model rests on the fewest frames): its region track is found but not counted, so the
    regions estimate is N; its corners still make a rigid group (the points estimate N + 1); the followed count
    is N (the half-seen patch's candidates read as no object)."""
    FRAME_MEMO.clear()
    clip = _pan_clip(_STARTS[:n_moving] + [(120, 318)], _VELS[:n_moving] + [(3, 0)])
    edge = [t for t in movers(clip).tracks if len(t.steps) == 24 and edge_share(t, SIDE, SIDE) == 1.0]
    assert len(edge) == 1
    got = mover_counts(clip)
    assert got["estimates"] == {"followed": n_moving, "regions": n_moving, "points": n_moving + 1}
    assert got["count"] == n_moving and len(got["tracks"]) == n_moving
    assert "estimates" not in got["near_threshold"]  # said when the count and the regions' estimate differ
    assert edge[0].id not in {t["id"] for t in got["tracks"]}


def _camera_chain_plain(cells: list[int]) -> list[np.ndarray]:
    """camera_chain's rule with every pair fitted: identities when the median pair lies in fewer than
    FLAT_CELLS cells, else each pair's own map (here the identity scaled by its index + 2)."""
    from sama_model.backends.lite.movers.camera import FLAT_CELLS

    if cells and float(np.median(cells)) < FLAT_CELLS:
        return [np.eye(3) for _ in cells]
    return [np.eye(3) * (k + 2) for k in range(len(cells))]


def test_camera_chain_decides_a_flat_backdrop_as_soon_as_it_is_certain(monkeypatch):
    """The flat decision taken once more than half of the pairs lie in few cells gives the very maps of
    the plain rule (fit every pair, take the median), on every cell count pattern of 1-8 pairs around
    FLAT_CELLS (ties at the cut-off, even counts whose middle values straddle it), and fits fewer pairs."""
    import itertools

    from sama_model.backends.lite.movers import camera as movers_mod

    # (textured frames: a uniform one is decided still by its texture before any pair is fitted)
    clip = make_clip([np.random.default_rng(k).integers(0, 256, (8, 8, 3), dtype=np.uint8) for k in range(9)])
    plan: list[tuple[np.ndarray, float, int]] = []  # the scripted fits, pair by pair
    fitted: list[int] = []

    def pair(g0, g1):
        fitted.append(len(fitted))
        return plan[fitted[-1]]

    monkeypatch.setattr(movers_mod, "_pair", pair)
    for n in range(1, 9):
        for cells in itertools.product([5, 6, 7] if n > 5 else [0, 5, 6, 7, 16], repeat=n):
            FRAME_MEMO.clear()
            fitted.clear()
            plan[:] = [(np.eye(3) * (k + 2), 0.5, c) for k, c in enumerate(cells)]
            got = camera_chain(clip, np.arange(n + 1))
            want = _camera_chain_plain(list(cells))
            assert len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want)), cells
            few = [c < movers_mod.FLAT_CELLS for c in cells]
            assert len(fitted) == (next((k + 1 for k in range(n) if sum(few[:k + 1]) > n // 2), n))
    FRAME_MEMO.clear()


def _cells_plain(q: np.ndarray, w: int, h: int) -> int:
    """movers._cells one point at a time (the rule it must match)."""
    from sama_model.backends.lite.movers.camera import GRID_CELLS

    return len({(int(y * GRID_CELLS // h), int(x * GRID_CELLS // w)) for x, y in q})


def test_inlier_cells_match_the_point_by_point_rule():
    from sama_model.backends.lite.movers.camera import _cells

    rng = np.random.default_rng(0)
    for trial in range(400):
        h, w = [(120, 160), (90, 160), (160, 120), (168, 224), (7, 5)][trial % 5]
        q = (rng.random((int(rng.integers(0, 120)), 2)) * [w, h]).astype(np.float32)
        edges = (rng.integers(0, 5, (min(len(q), 12), 2)) * [w / 4, h / 4]).astype(np.float32)
        q[:len(edges)] = edges  # on the cell borders (and on the frame's far edge)
        q[12:24] = np.nextafter(q[12:24], np.float32(0))  # just below them
        assert _cells(q, w, h) == _cells_plain(q, w, h)


def _foreground_plain(clip, idx, maps, local):
    """movers' background subtraction and local test as they were written before the shared per-map
    background and the still pairs' differences (issue 19): every frame and neighbour computed afresh."""
    import cv2

    from sama_model.backends.lite.shared.order_stats import fast_median, median_u8, order_stats
    from sama_model.backends.lite.movers.camera import _small
    from sama_model.backends.lite.movers.foreground import (DIFF_FLOOR, EDGE_WEIGHT, LOCAL_STEPS, NOISE_FACTOR, _absdiff_max)

    smalls = [_small(clip.frames[int(i)]) for i in idx]
    n = len(idx)
    h, w = smalls[0].shape[:2]
    pad_x, pad_y = int(0.25 * w), int(0.25 * h)
    shift = np.array([[1, 0, pad_x], [0, 1, pad_y], [0, 0, 1]], np.float64)
    cw, ch = w + 2 * pad_x, h + 2 * pad_y
    stack = np.empty((n, ch, cw, 3), np.uint8)
    valid = np.zeros((ch, cw), np.int16)
    ones = np.full((h, w), 255, np.uint8)
    for k in range(n):
        m = shift @ maps[k]
        stack[k] = cv2.warpPerspective(smalls[k], m, (cw, ch), flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        inside = cv2.warpPerspective(ones, m, (cw, ch), flags=cv2.INTER_NEAREST) > 0
        valid += inside
        stack[k][~inside] = 0 if k % 2 == 0 else 255
    mosaic = median_u8(stack)
    seen = (valid >= max(3, n // 3)).astype(np.uint8) * 255
    k5, k3 = np.ones((5, 5), np.uint8), np.ones((3, 3), np.uint8)
    masks = []
    for k in range(n):
        back = np.linalg.inv(shift @ maps[k])
        bg = cv2.warpPerspective(mosaic, back, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        ok = cv2.erode(cv2.warpPerspective(seen, back, (w, h), flags=cv2.INTER_NEAREST), k5) > 0
        d = cv2.erode(_absdiff_max(smalls[k], bg), k5)
        d[~ok] = 0
        thr = max(DIFF_FLOOR, NOISE_FACTOR * float(fast_median(d[ok]))) if ok.any() else 255.0
        gb = cv2.cvtColor(bg, cv2.COLOR_RGB2GRAY)
        edge = cv2.dilate(cv2.magnitude(cv2.Sobel(gb, cv2.CV_32F, 1, 0, ksize=3),
                                        cv2.Sobel(gb, cv2.CV_32F, 0, 1, ksize=3)) / 8.0, k5)
        fg = d > thr + EDGE_WEIGHT * np.maximum(edge - float(fast_median(edge[ok])) if ok.any() else edge, 0)
        if local:
            near = []
            for j in (k + s for s in LOCAL_STEPS if 0 <= k + s < n):
                m = np.linalg.inv(shift @ maps[k]) @ shift @ maps[j]
                warped = cv2.warpPerspective(smalls[j], m, (w, h), flags=cv2.INTER_LINEAR,
                                             borderMode=cv2.BORDER_REPLICATE)
                near.append(cv2.erode(_absdiff_max(smalls[k], warped), k5))
            if len(near) >= 2:
                lo = order_stats(near, (len(near) // 2 - 1 if len(near) > 2 else 0,))[0]
                lo[~ok] = 0
                fg |= lo > max(DIFF_FLOOR, NOISE_FACTOR * float(fast_median(lo[ok]))) if ok.any() else False
        fg = cv2.dilate(fg.astype(np.uint8), k5)
        masks.append(cv2.morphologyEx(fg, cv2.MORPH_OPEN, k3))
    return masks


@pytest.mark.parametrize("camera", ["still", "whole pixels", "moving", "some equal"])
def test_foreground_masks_match_the_plain_form(camera):
    """The background per distinct map and the still pairs' differences made once give the plain form's
    masks bit for bit (local or not): a still camera (every map the identity), whole-pixel moves, a
    moving camera (sub-pixel similarities) and maps equal in runs (a camera that stops and moves)."""
    from sama_model.backends.lite.movers.foreground import foreground_masks

    n_moving = 2
    clip = _pan_clip(_STARTS[:n_moving], _VELS[:n_moving], n_frames=13, pan=0.0)
    idx = np.arange(13)
    rng = np.random.default_rng(3)
    if camera == "still":
        maps = [np.eye(3) for _ in idx]
    elif camera == "whole pixels":
        maps = [np.array([[1.0, 0, float(rng.integers(-3, 4))], [0, 1, float(rng.integers(-3, 4))], [0, 0, 1]])
                for _ in idx]
    else:
        maps = []
        for k in idx:
            a = 1 + 0.01 * rng.standard_normal()
            b = 0.01 * rng.standard_normal()
            maps.append(np.array([[a, -b, rng.normal(0, 2)], [b, a, rng.normal(0, 2)], [0, 0, 1]]))
        if camera == "some equal":
            maps = [maps[k // 4] if k % 3 else np.eye(3) for k in idx]
    for local in (False, True):
        FRAME_MEMO.clear()
        got = foreground_masks(clip, idx, maps, local)
        want = _foreground_plain(clip, idx, maps, local)
        assert all(np.array_equal(a, b) for a, b in zip(got, want)) and len(got) == len(want)
        assert sum(int(m.sum()) for m in got) > 0
    FRAME_MEMO.clear()


def test_with_core_keeps_the_parts_that_hold_a_strong_pixel():
    """Two 8-connected parts of a mask; only the one holding a strong pixel stays, whole."""
    from sama_model.backends.lite.movers.foreground import _with_core

    fg = np.zeros((10, 12), bool)
    fg[1:4, 1:4] = True  # part 1 (9 px)
    fg[5:9, 6:11] = True  # part 2 (20 px)
    fg[4, 5] = True  # touches part 2 diagonally only: 8-connected, so part 2
    strong = np.zeros_like(fg)
    strong[7, 8] = True  # inside part 2
    strong[0, 11] = True  # outside every part: keeps nothing
    out = _with_core(fg, strong)
    assert out.sum() == 21 and not out[1:4, 1:4].any() and out[4, 5]
    assert not _with_core(fg, np.zeros_like(fg)).any()
    assert not _with_core(np.zeros_like(fg), strong).any()


def _faint_and_clear_clip(faint: int = 15, clear: int = 60, n_frames: int = 24):
    """A flat grey backdrop (still camera) with two 30-px squares sliding across it: one ``clear`` grey levels
    brighter than the backdrop, one only ``faint`` levels brighter."""
    frames = []
    for i in range(n_frames):
        f = np.full((SIDE, SIDE, 3), 100, np.uint8)
        x = 10 + 7 * i
        f[30:60, x:x + 30] = 100 + clear
        f[150:180, SIDE - 40 - 7 * i:SIDE - 10 - 7 * i] = 100 + faint
        frames.append(f)
    return make_clip(frames)


def test_hysteresis_reads_an_objects_existence_above_the_floor():
    """A square 15 grey levels above a flat backdrop is foreground at floors 10, 12 and 14 without a core, so
    two floors read 2; with the count's core (1.5 x the floor: 15, 18, 21) no floor keeps it, and the clear
    square alone is counted, whole (its mask the same with or without the core)."""
    from sama_model.backends.lite.movers.count import COUNT_CORE, _region_count

    FRAME_MEMO.clear()
    clip = _faint_and_clear_clip()
    plain = {f: _region_count(movers(clip, local=True, floor=f), SIDE, SIDE) for f in COUNT_FLOORS}
    cored = {f: _region_count(movers(clip, local=True, floor=f, core=COUNT_CORE), SIDE, SIDE) for f in COUNT_FLOORS}
    assert plain == {10.0: 2, 12.0: 2, 14.0: 2, 16.0: 1, 19.0: 1, 22.0: 1, 26.0: 1}
    assert cored == dict.fromkeys(COUNT_FLOORS, 1)
    assert mover_counts(clip)["count"] == 1
    a, b = movers(clip, local=True, floor=10.0), movers(clip, local=True, floor=10.0, core=COUNT_CORE)
    assert all(np.array_equal(ma[:100], mb[:100]) for ma, mb in zip(a.masks, b.masks))  # the clear square's rows


def test_a_second_count_of_the_same_clip_follows_nothing_again(monkeypatch):
    """The three tools that count one video for a question share its followed candidates (memoised per clip and
    sampled frames): the second count follows nothing again and says the same."""
    import sama_model.backends.lite.movers.count as mc

    FRAME_MEMO.clear()
    calls = []
    real = mc.followed
    monkeypatch.setattr(mc, "followed", lambda clip, reads: calls.append(1) or real(clip, reads))
    clip = _pan_clip(_STARTS[:2], _VELS[:2])
    first = mover_counts(clip)
    assert mover_counts(clip) == first and len(calls) == 1 and first["count"] == 2
