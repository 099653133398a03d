"""wilcoxon_p's vectorized sign-flip permutation test (n <= 13 differences with ties or zeros) gives
scipy's own p-value, bit for bit, and scipy's path is kept everywhere else."""
from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import wilcoxon

from contstim_bench.analysis.inference import signed_rank_plus, wilcoxon_p


def scipy_p(x, y) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(wilcoxon(x, y, zero_method="zsplit", alternative="two-sided").pvalue)


def test_signed_rank_plus_by_hand():
    # |d| = 1, 2, 2, 0 -> average ranks 2, 3.5, 3.5, 1; R+ = 2 + 3.5 (positives) + 1/2 (the zero)
    assert signed_rank_plus(np.array([1.0, -2.0, 2.0, 0.0])) == 6.0
    assert list(signed_rank_plus(np.array([[1.0, 2.0], [-1.0, 2.0]]))) == [3.0, 2.0]


def test_same_p_as_scipy_on_tied_small_samples_and_beyond():
    rng = np.random.default_rng(3)
    for n in (2, 5, 8, 14, 20):
        for _ in range(3):
            x, y = rng.integers(0, 3, n) / 2.0, rng.integers(0, 3, n) / 2.0  # ties and zeros
            if not np.all(x == y):
                assert wilcoxon_p(x, y) == scipy_p(x, y), (x, y)
        x = rng.normal(size=n)  # no ties: scipy's exact or normal path, unchanged
        assert wilcoxon_p(x, np.zeros(n)) == scipy_p(x, np.zeros(n))
    assert wilcoxon_p([0.5, 0.5, 1.0], [0.5, 0.5, 0.5]) == scipy_p([0.5, 0.5, 1.0], [0.5, 0.5, 0.5]) == 1.0
