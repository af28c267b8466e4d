"""Tracker identities and unique counts; scene-graph per-frame objects, relations and counts."""

import numpy as np
import pytest

from scenes import Mover, render_scene
from sama_model.backends.lite.scene_graph import LiteSceneGraph
from sama_model.backends.lite.perception.segment import box_iou
from sama_model.backends.lite.motion.tracks import _BIG
from sama_model.backends.lite.object_tracker import LiteObjectTracker

MOVERS = [
    Mover("circle", "red", (30, 40), (5, 0), 12),
    Mover("circle", "red", (200, 110), (-5, 0), 12),
    Mover("square", "blue", (100, 200), (0, -4), 14),
    Mover("triangle", "green", (40, 180), (0, 0), 15, appear=8),
    Mover("star", "yellow", (160, 160), (0, 0), 20, spin=10),
]
CLIP = render_scene(MOVERS, n_frames=24, bg="noise")


def test_tracks_have_stable_ids_and_exact_counts():
    res = LiteObjectTracker().track(CLIP)
    assert res["counts"] == {"circle": 2, "square": 1, "star": 1, "triangle": 1}
    assert res["counts_by_name"] == {"blue square": 1, "green triangle": 1, "red circle": 2, "yellow star": 1}
    assert res["max_per_frame"] == {"circle": 2, "square": 1, "star": 1, "triangle": 1}
    by_start = {(t["color"], t["label"], tuple(round(v) for v in t["centroids"][0])): t for t in res["tracks"]}
    left = by_start[("red", "circle", (30, 40))]
    # one identity follows the left red circle through all 24 frames, moving 5 px per frame
    assert len(left["times"]) == 24 and left["displacement"] == pytest.approx([115.0, 0.0], abs=1.5)
    xs = [c[0] for c in left["centroids"]]
    assert np.allclose(np.diff(xs), 5, atol=0.8)
    tri = by_start[("green", "triangle", (40, 180))]
    assert tri["times"][0] == pytest.approx(1.0)  # appears at frame 8 of an 8-fps clip
    assert sorted(t["id"] for t in res["tracks"]) == [1, 2, 3, 4, 5]


def test_query_filters_tracks():
    res = LiteObjectTracker().track(CLIP, "how many red circles?")
    assert res["counts"] == {"circle": 2} and {t["color"] for t in res["tracks"]} == {"red"}
    assert LiteObjectTracker().track(CLIP, "purple stars")["counts"] == {}


def test_unique_count_exceeds_per_frame_count_when_objects_replace_each_other():
    movers = [
        Mover("circle", "blue", (60, 100), (0, 0), 14, vanish=8),
        Mover("circle", "blue", (160, 100), (0, 0), 14, appear=8, vanish=16),
        Mover("circle", "blue", (110, 180), (0, 0), 14, appear=16),
    ]
    res = LiteObjectTracker().track(render_scene(movers, n_frames=24))
    assert res["counts"] == {"circle": 3} and res["max_per_frame"] == {"circle": 1}


def test_window_restricts_tracking():
    res = LiteObjectTracker().track(CLIP, window=(0.0, 0.5))
    assert res["counts"] == {"circle": 2, "square": 1, "star": 1}  # the triangle appears at 1.0 s
    assert max(t for tr in res["tracks"] for t in tr["times"]) <= 0.5


def test_scene_graph_objects_relations_and_counts():
    res = LiteSceneGraph().graph(CLIP, n_frames=8)
    assert len(res["frames"]) == 8
    assert res["counts"] == {"circle": 2, "square": 1, "star": 1, "triangle": 1}  # triangle in 5 of 8 frames
    assert res["counts_by_name"]["red circle"] == 2
    first = res["frames"][0]  # t = 0.125: the triangle has not appeared yet
    assert first["t"] == pytest.approx(0.125)
    labels = sorted(o["label"] for o in first["objects"])
    assert labels == ["circle", "circle", "square", "star"]
    objs = {o["id"]: o for o in first["objects"]}
    sq = next(o for o in first["objects"] if o["label"] == "square")
    star = next(o for o in first["objects"] if o["label"] == "star")
    rel = {(r["subject"], r["object"]): r["predicate"] for r in first["relations"]}
    pred = (
        rel.get((sq["id"], star["id"]))
        or {"left of": "right of", "right of": "left of", "above": "below", "below": "above"}[
            rel[(star["id"], sq["id"])]
        ]
    )
    assert pred == "left of"  # square at x~100, star at x~160, similar heights
    assert all(0 <= o["score"] <= 1 and o["attributes"]["size"] in ("small", "medium", "large") for o in objs.values())
    x1, y1, x2, y2 = sq["box"]
    assert (x1 + x2) / 2 == pytest.approx(100, abs=1.5) and (y1 + y2) / 2 == pytest.approx(196, abs=1.5)


def test_scene_graph_query_and_overlap():
    movers = [
        Mover("square", "red", (100, 100), (0, 0), 30),
        Mover("circle", "blue", (125, 100), (0, 0), 14),
        Mover("circle", "blue", (40, 40), (0, 0), 10),
    ]
    res = LiteSceneGraph().graph(render_scene(movers, n_frames=4, bg="plain"), "blue circles", n_frames=4)
    assert res["counts"] == {"circle": 2} and res["query_filter"] == "blue circle"
    res = LiteSceneGraph().graph(render_scene(movers, n_frames=4, bg="plain"), n_frames=4)
    assert res["counts"] == {"circle": 2, "square": 1}
    f = res["frames"][0]
    square = next(o["id"] for o in f["objects"] if o["label"] == "square")
    touching = next(o["id"] for o in f["objects"] if o["label"] == "circle" and o["box"][0] > 80)
    far = next(o["id"] for o in f["objects"] if o["label"] == "circle" and o["box"][0] < 80)
    rel = {frozenset((r["subject"], r["object"])): r["predicate"] for r in f["relations"]}
    assert rel[frozenset((square, touching))] == "overlapping"
    assert rel[frozenset((square, far))] != "overlapping"


def _cost_plain(track, seg, step: int, diag: float, gate: float, colour_weight: float = 1.0, pred=None) -> float:
    """tracker._cost as first written (the reference its faster form is checked against)."""
    last = track.segments[-1]
    size = max(np.sqrt(last.area), np.sqrt(seg.area), 0.02 * diag)
    pred = track.predict(step) if pred is None else pred
    d_pred = float(np.linalg.norm(pred - np.asarray(seg.centroid))) / size
    d_last = float(np.linalg.norm(np.asarray(last.centroid) - np.asarray(seg.centroid))) / size
    d = min(d_pred, d_last + 0.25)
    colour = colour_weight * float(np.linalg.norm(np.subtract(last.rgb, seg.rgb))) / 100.0
    size_change = abs(float(np.log(max(seg.area, 1.0) / max(last.area, 1.0))))
    if d > gate * (1 + 0.5 * (step - track.steps[-1] - 1)) or colour > 1.2 or size_change > 1.2:
        return _BIG
    return d + colour + 0.5 * size_change + 0.5 * (1.0 - box_iou(last.box, seg.box))


def test_association_cost_is_the_plain_form_bit_for_bit():
    """tracker._cost (early gate exits, norm as sqrt(v.dot(v)), whole-number colour distance summed as
    integers) gives _cost_plain's value exactly, on pairs of constructed segments past and within each
    gate, with float, numpy float32 and float rgb fields."""
    from sama_model.backends.lite.perception.segment import Segment
    from sama_model.backends.lite.motion.tracks import Track, _cost

    rng = np.random.default_rng(3)

    def seg(k: int) -> Segment:
        cx, cy = (float(v) for v in rng.uniform(0, 300, 2))
        area = float(rng.uniform(0, 3000)) if k % 7 else 0.0
        rgb = tuple(int(v) for v in rng.integers(0, 256, 3)) if k % 5 else tuple(float(v) for v in rng.uniform(0, 255, 3))
        centroid = (cx, cy) if k % 3 else (np.float32(cx), np.float32(cy))
        r = float(rng.uniform(1, 40))
        return Segment(box=(cx - r, cy - r, cx + r, cy + r), centroid=centroid, area=area, color="red",
                       shape="circle", rgb=rgb, circularity=1.0, solidity=1.0, vertices=0, aspect=1.0)

    segs = [seg(k) for k in range(40)]
    n = 0
    for i, a in enumerate(segs):
        for b in segs[::3]:
            track = Track(id=1, steps=[0, 2], segments=[segs[(i + 1) % len(segs)], a])
            for step, gate, weight in ((3, 2.5, 1.0), (6, 3.0, 0.0), (3, 1e9, 1.0)):
                got, want = _cost(track, b, step, 400.0, gate, weight), _cost_plain(track, b, step, 400.0, gate, weight)
                assert got == want, (i, step, gate)
                n += got < 1e6
    assert n > 100  # many pairs within the gates, not only the early exits


def test_rescue_gate_links_a_fast_turn_only_among_the_unmatched():
    """A red object sliding 20 px a step turns down 60 px (3.3 sizes from where it was, past the 2.5 gate)
    next to a still red object of its size: with ``rescue_gate`` its track continues and the still
    object's track is untouched; without it the turn starts a new track."""
    from sama_model.backends.lite.perception.segment import Segment
    from sama_model.backends.lite.motion.tracks import associate

    def seg(x: float, y: float) -> Segment:
        return Segment(box=(x - 10, y - 10, x + 10, y + 10), centroid=(x, y), area=400.0, color="red",
                       shape="circle", rgb=(200, 30, 30), circularity=1.0, solidity=1.0, vertices=0, aspect=1.0)

    mover = [(50, 100), (70, 100), (90, 100), (80, 160), (75, 190)]
    frames = [[seg(*p), seg(80, 150)] for p in mover]
    split = associate(frames, 400.0, gate=2.5)
    assert sorted(len(t.steps) for t in split) == [2, 3, 5]
    tracks = associate(frames, 400.0, gate=2.5, rescue_gate=4.0)
    assert len(tracks) == 2
    by_start = {tuple(t.segments[0].centroid): t for t in tracks}
    assert [tuple(s.centroid) for s in by_start[(50, 100)].segments] == mover
    assert [tuple(s.centroid) for s in by_start[(80, 150)].segments] == [(80, 150)] * 5
    # a wider gate for every pair is no rescue: a rescue gate not above the gate changes nothing
    assert sorted(len(t.steps) for t in associate(frames, 400.0, gate=2.5, rescue_gate=2.5)) == [2, 3, 5]
