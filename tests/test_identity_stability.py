"""benchmarks/identity_stability.py: the verdict figures of two encodings' identity scores."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import identity_stability


def test_pair_figures_count_right_flipped_and_marked_verdicts():
    """Five pairs at threshold 0.5, margin 0.15: one flip inside the margin (0.45 -> 0.55), one outside
    it in both encodings (0.9 -> 0.2), one marked in one encoding only (0.6), two steady far from it."""
    a = [0.45, 0.9, 0.6, 0.95, 0.05]
    b = [0.55, 0.2, 0.7, 0.97, 0.10]
    same = [True, True, True, True, False]
    assert identity_stability.pair_figures(a, b, same, 0.5, 0.15) == {
        "right_a": 4, "right_b": 4, "flipped": 2, "marked": 2, "flipped_marked": 1}
