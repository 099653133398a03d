"""The dominance circles of Golan et al. (2023) Figs. 1/3/4 (analysis/dominance.py), by hand."""
from __future__ import annotations

import pytest

from contstim_bench.analysis.dominance import dominance

UNITS = [f"p{i}" for i in range(6)]


def block(values, selection="all"):
    return {"selection": selection, "accuracy_by_unit": dict(zip(UNITS, values))}


def test_dominance_by_hand():
    """A is above B and above C on each of the 6 units: the exact two-sided Wilcoxon p is 2/2**6 =
    0.03125 for both pairs; B against C: differences +1, -2, +3, -4, +5, -6 (in 0.01), W+ = 1+3+5 = 9,
    W- = 12, p = 0.84375 (exact: 54 of the 64 sign patterns have min(W+, W-) <= 9).  BH over the three:
    q = 0.03125 x 3/2 = 0.046875 for A's two pairs (< .05: A dominates B and C), 0.84375 for B-C.
    D is scored on its own targeted trials: compared with no model."""
    b = [0.5, 0.6, 0.4, 0.7, 0.5, 0.6]
    c = [b[0] - 0.01, b[1] + 0.02, b[2] - 0.03, b[3] + 0.04, b[4] - 0.05, b[5] + 0.06]
    a = [0.9] * 6
    got = dominance({"A": block(a), "B": block(b), "C": block(c), "D": block(a, "targeted")}, "accuracy")
    pairs = {(p["a"], p["b"]): p for p in got["pairs"]}
    assert set(pairs) == {("A", "B"), ("A", "C"), ("B", "C")} and got["models"] == ["A", "B", "C", "D"]
    assert pairs["A", "B"]["p"] == pytest.approx(0.03125) and pairs["A", "B"]["q"] == pytest.approx(0.046875)
    assert pairs["A", "C"]["q"] == pytest.approx(0.046875)
    assert pairs["B", "C"]["p"] == pytest.approx(0.84375) and pairs["B", "C"]["q"] == pytest.approx(0.84375)
    assert [(p["better"], p["dominates"]) for p in got["pairs"]] == [("A", True), ("A", True), ("C", False)]
    assert pairs["A", "B"]["n_units"] == 6 and pairs["A", "B"]["mean_a"] == pytest.approx(0.9)


def test_models_on_other_units_are_not_compared():
    other = {"selection": "all", "accuracy_by_unit": {"q1": 0.5}}
    assert dominance({"A": block([0.9] * 6), "E": other}, "accuracy")["pairs"] == []
