"""The tree ensemble stored as JSON: exact probabilities on a hand-built tree, missing values, round-trips, and
agreement with the scikit-learn model it was read from."""
import json
import math

import numpy as np
import pytest

from sama_model.backends.lite.fitted.tree_classes import Tree, TreeClasses


def _stump(feature: int, threshold: float, low: float, high: float, missing_left: bool = True) -> Tree:
    """Root splits on ``feature`` at ``threshold``: left leaf ``low``, right leaf ``high``."""
    return Tree(np.array([feature, 0, 0]), np.array([threshold, 0.0, 0.0]), np.array([1, 0, 0]), np.array([2, 0, 0]),
                np.array([False, True, True]), np.array([0.0, low, high]), np.array([missing_left, False, False]))


def test_hand_built_ensemble_gives_exact_probabilities():
    classes = TreeClasses(("a", "b"), 0.5, (_stump(0, 1.0, -1.0, 2.0), _stump(1, 0.0, 0.25, -0.25, False)), "test")
    rows = [{"a": 1.0, "b": -1.0}, {"a": 3.0, "b": 5.0}, {"a": float("nan"), "b": float("nan")}, {"b": 1.0}]
    got = classes.probabilities(rows)
    expect = [0.5 - 1.0 + 0.25, 0.5 + 2.0 - 0.25, 0.5 - 1.0 - 0.25, 0.5 - 1.0 - 0.25]  # a missing goes left, b right
    assert got == pytest.approx([1 / (1 + math.exp(-r)) for r in expect], abs=1e-12)


def test_json_round_trip_keeps_every_probability(tmp_path):
    classes = TreeClasses(("a", "b"), -0.1, (_stump(0, 0.123456789012345, -1.0, 2.0),), "fitted on nothing")
    path = tmp_path / "classes.json"
    classes.save(path)
    again = TreeClasses.load(path)
    rows = [{"a": 0.123456789012345, "b": 0.0}, {"a": 0.1234567890124, "b": 0.0}]
    assert np.array_equal(again.probabilities(rows), classes.probabilities(rows))
    assert again.fitted_on == "fitted on nothing" and json.loads(path.read_text())["measures"] == ["a", "b"]


def test_from_sklearn_agrees_with_the_fitted_model_through_json():
    sklearn = pytest.importorskip("sklearn.ensemble")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1500, 4))
    y = x[:, 0] * x[:, 1] + x[:, 2] > 0.2
    x[rng.random(x.shape) < 0.03] = np.nan
    model = sklearn.HistGradientBoostingClassifier(max_iter=30, max_depth=3, random_state=0).fit(x, y)
    classes = TreeClasses.from_json(json.loads(json.dumps(TreeClasses.from_sklearn(model, list("abcd"), "t").to_json())))
    rows = [dict(zip("abcd", r)) for r in x[:400]]
    assert np.abs(classes.probabilities(rows) - model.predict_proba(x[:400])[:, 1]).max() < 1e-12
