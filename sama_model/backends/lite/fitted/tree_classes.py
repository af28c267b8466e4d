"""A boosted tree ensemble over named measures, stored as JSON: one probability of "yes" per row.

Why beside :mod:`.fitted.linear_classes`: whether a followed candidate is an object moving on its own
(:mod:`.movers.follow`) turns on measures that interact (a steady follow means an object on a still
plate, but a background patch under a hand-held camera follows as steadily), which a linear score
over the same measures separated worse (real-footage composite, fitting seeds, leave one seed out:
counts exact 77 % against 82 %). The ensemble is fitted by a script in ``benchmarks/`` with
scikit-learn's histogram gradient boosting and written here as plain arrays, so the tools evaluate it
with numpy alone and the file says in ``fitted_on`` what it was fitted on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Tree:
    """One regression tree: per node the measure's index, its threshold (a row goes left when its value is at
    most the threshold, or when it is missing and ``missing_left``), the children, and a leaf's value."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    value: np.ndarray
    missing_left: np.ndarray

    def values(self, x: np.ndarray) -> np.ndarray:
        """The leaf value each row of ``x`` [rows, measures] lands on."""
        node = np.zeros(len(x), np.int64)
        rows = np.arange(len(x))
        while True:
            inner = ~self.leaf[node]
            if not inner.any():
                return self.value[node]
            r, n = rows[inner], node[inner]
            v = x[r, self.feature[n]]
            go_left = np.where(np.isnan(v), self.missing_left[n], v <= self.threshold[n])
            node[r] = np.where(go_left, self.left[n], self.right[n])

    def to_json(self) -> dict:
        # thresholds unrounded: the fitted ones are quantiles of the fitting rows' values, so a rounded one would
        # send a value equal to it the other way
        return {"feature": self.feature.tolist(), "threshold": self.threshold.tolist(), "left": self.left.tolist(),
                "right": self.right.tolist(), "leaf": self.leaf.astype(int).tolist(), "value": self.value.tolist(),
                "missing_left": self.missing_left.astype(int).tolist()}

    @classmethod
    def from_json(cls, d: dict) -> Tree:
        return cls(np.asarray(d["feature"], np.int64), np.asarray(d["threshold"], np.float64),
                   np.asarray(d["left"], np.int64), np.asarray(d["right"], np.int64), np.asarray(d["leaf"], bool),
                   np.asarray(d["value"], np.float64), np.asarray(d["missing_left"], bool))


@dataclass(frozen=True)
class TreeClasses:
    """P(yes) = logistic(``baseline`` + the sum of every tree's leaf value) over the named ``measures``."""

    measures: tuple[str, ...]
    baseline: float
    trees: tuple[Tree, ...]
    fitted_on: str

    def matrix(self, rows: list[dict[str, float]]) -> np.ndarray:
        """Rows of measures as an array in :attr:`measures` order (a missing measure is NaN)."""
        return np.array([[float(r.get(m, np.nan)) for m in self.measures] for r in rows], np.float64).reshape(
            len(rows), len(self.measures))

    def probabilities(self, rows: list[dict[str, float]]) -> np.ndarray:
        x = self.matrix(rows)
        raw = np.full(len(x), self.baseline)
        for t in self.trees:
            raw += t.values(x)
        return 1.0 / (1.0 + np.exp(-raw))

    def to_json(self) -> dict:
        return {"measures": list(self.measures), "baseline": self.baseline, "fitted_on": self.fitted_on,
                "trees": [t.to_json() for t in self.trees]}

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), separators=(",", ":")) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> TreeClasses:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def from_json(cls, d: dict) -> TreeClasses:
        return cls(tuple(d["measures"]), float(d["baseline"]), tuple(Tree.from_json(t) for t in d["trees"]),
                   str(d.get("fitted_on", "")))

    @classmethod
    def from_sklearn(cls, model, measures: list[str], fitted_on: str) -> TreeClasses:
        """From a fitted binary ``sklearn.ensemble.HistGradientBoostingClassifier`` (numeric measures only).
        Reads the fitted predictors' node arrays; the fitting script checks the probabilities agree."""
        trees = []
        for (predictor,) in model._predictors:
            nodes = predictor.nodes
            trees.append(Tree(nodes["feature_idx"].astype(np.int64), nodes["num_threshold"].astype(np.float64),
                              nodes["left"].astype(np.int64), nodes["right"].astype(np.int64),
                              nodes["is_leaf"].astype(bool), nodes["value"].astype(np.float64),
                              nodes["missing_go_to_left"].astype(bool)))
        return cls(tuple(measures), float(np.ravel(model._baseline_prediction)[0]), tuple(trees), fitted_on)
