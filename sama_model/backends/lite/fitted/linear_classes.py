"""A linear classifier over named measures, stored as JSON: standardised measures, class scores
``W z + b``, probabilities by their softmax.

Why one class: the motion analyzer's action names (:mod:`.motion.motion_field`) and the shape namer
(:mod:`.perception.shapes`) both turn a handful of measures of pixels into a class name with weights fitted by a
script in ``benchmarks/``; each JSON file says in ``fitted_on`` what it was fitted on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

Rows = list[tuple[dict[str, float], str]]  # (measures, class name)


@dataclass(frozen=True)
class LinearClasses:
    """Class scores ``weights @ z + bias`` of the standardised measures ``z`` (those named in
    ``log_measures`` on a log scale first)."""

    names: tuple[str, ...]
    measures: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    fitted_on: str
    log_measures: frozenset[str] = frozenset()
    #: what one fitting row is, for the error that names a class without any ("video of the action")
    EXAMPLE: ClassVar[str] = "example of the name"

    def raw(self, measures: dict[str, float]) -> np.ndarray:
        return _matrix([measures], self.measures, self.log_measures)[0]

    def vector(self, measures: dict[str, float]) -> np.ndarray:
        return (self.raw(measures) - self.mean) / self.scale

    def scores(self, measures: dict[str, float]) -> np.ndarray:
        return self.weights @ self.vector(measures) + self.bias

    def probabilities(self, measures: dict[str, float]) -> dict[str, float]:
        s = self.scores(measures)
        p = np.exp(s - s.max())
        p /= p.sum()
        return {n: float(v) for n, v in zip(self.names, p)}

    def likeliest(self, measures: dict[str, float]) -> str:
        return self.names[int(np.argmax(self.scores(measures)))]

    def to_json(self) -> dict:
        return {"names": list(self.names), "measures": list(self.measures), "mean": self.mean.tolist(),
                "scale": self.scale.tolist(), "weights": self.weights.tolist(), "bias": self.bias.tolist(),
                "log_measures": sorted(self.log_measures), "fitted_on": self.fitted_on}

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> LinearClasses:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def from_json(cls, d: dict) -> LinearClasses:
        """A file without ``log_measures`` uses the class's own default (files written before the key)."""
        log = frozenset(d["log_measures"]) if "log_measures" in d else cls.__dataclass_fields__["log_measures"].default
        return cls(tuple(d["names"]), tuple(d["measures"]), np.asarray(d["mean"], np.float64),
                   np.asarray(d["scale"], np.float64), np.asarray(d["weights"], np.float64),
                   np.asarray(d["bias"], np.float64), str(d.get("fitted_on", "")), log)

    @classmethod
    def _prepare(cls, rows: Rows, names: tuple[str, ...], log_measures: frozenset[str] | None):
        missing = [n for n in names if n not in {name for _, name in rows}]
        if missing:
            raise ValueError(f"no {cls.EXAMPLE}(s) {missing} among the {len(rows)} given: the fit needs "
                             "examples of every class (fit on more data)")
        log = cls.__dataclass_fields__["log_measures"].default if log_measures is None else frozenset(log_measures)
        measures = tuple(rows[0][0])
        x = _matrix([m for m, _ in rows], measures, log)
        y = np.array([names.index(n) for _, n in rows])
        mean, scale = x.mean(0), x.std(0) + 1e-9
        return measures, log, (x - mean) / scale, y, mean, scale

    @classmethod
    def fit(cls, rows: Rows, names: tuple[str, ...], fitted_on: str,
            log_measures: frozenset[str] | None = None) -> LinearClasses:
        """Class means and the pooled covariance of standardised measures (Fisher's linear discriminant,
        equal priors)."""
        measures, log, z, y, mean, scale = cls._prepare(rows, names, log_measures)
        centres = np.array([z[y == c].mean(0) for c in range(len(names))])
        resid = z - centres[y]
        cov = resid.T @ resid / max(len(z) - len(names), 1)
        weights = centres @ np.linalg.inv(cov + 1e-6 * np.eye(len(measures)))
        bias = -0.5 * np.sum(weights * centres, 1)
        return cls(tuple(names), measures, mean, scale, weights, bias, fitted_on, log)

    @classmethod
    def fit_logistic(cls, rows: Rows, names: tuple[str, ...], fitted_on: str,
                     log_measures: frozenset[str] | None = None, l2: float = 1e-3) -> LinearClasses:
        """Multinomial logistic regression (mean cross-entropy plus ``l2`` times the squared weights,
        L-BFGS): no assumption that every class spreads alike, which Fisher's discriminant makes."""
        from scipy.optimize import minimize

        measures, log, z, y, mean, scale = cls._prepare(rows, names, log_measures)
        k, d = len(names), z.shape[1]
        onehot = np.eye(k)[y]

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            w, b = theta[:k * d].reshape(k, d), theta[k * d:]
            s = z @ w.T + b
            s -= s.max(1, keepdims=True)
            p = np.exp(s)
            p /= p.sum(1, keepdims=True)
            nll = -np.mean(np.log(p[np.arange(len(y)), y] + 1e-12)) + l2 * np.sum(w * w)
            g = (p - onehot) / len(y)
            return float(nll), np.concatenate([(g.T @ z + 2 * l2 * w).ravel(), g.sum(0)])

        got = minimize(loss, np.zeros(k * d + k), jac=True, method="L-BFGS-B", options={"maxiter": 2000})
        w, b = got.x[:k * d].reshape(k, d), got.x[k * d:]
        return cls(tuple(names), measures, mean, scale, w, b, fitted_on, log)


def _matrix(rows: list[dict[str, float]], measures: tuple[str, ...], log: frozenset[str]) -> np.ndarray:
    return np.array([[np.log(m[k] + 1e-2) if k in log else m[k] for k in measures] for m in rows], np.float64)
