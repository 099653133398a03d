"""Statistical inference across units (participant groups in main, participants in pll).

- Two-sided Wilcoxon signed-rank test on paired per-unit values (``scipy.stats.wilcoxon``
  with ``zero_method="zsplit"``, as in the paper's code; scipy's default choice between the
  exact and the normal-approximation null distribution, and for n <= 13 differences with ties or
  zeros scipy's exact sign-flip permutation test, here given a vectorized statistic: the same
  p-value, hundreds of times faster).
- Benjamini-Hochberg adjustment across the comparisons of one panel
  (``scipy.stats.false_discovery_control``, ``method="bh"``).

scipy.stats is imported by the functions that use it (it takes about 1.7 CPU-seconds to import),
so that the commands that only read this module's constants (``contstim score`` through the
result schema) do not pay for it.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd

from ..significance import ALPHA, p_text, stars  # noqa: F401  (the analysis' names for them)
from ..uncertainty import standard_error  # noqa: F401  (the same)


def paired(x: pd.Series, y: pd.Series, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Values of ``x`` and ``y`` on the units both have (ValueError if they share none)."""
    if len(x) and x.index.equals(y.index) and x.index.is_unique and x.index.is_monotonic_increasing:
        # the same sorted units (the common case): the values as they are
        return x.to_numpy(dtype=np.float64), y.to_numpy(dtype=np.float64)
    units = x.index.intersection(y.index)
    if len(units) == 0:
        raise ValueError(f"{what}: the two sets of per-unit values share no unit")
    units = units.sort_values()
    return x.loc[units].to_numpy(dtype=np.float64), y.loc[units].to_numpy(dtype=np.float64)


PERMUTATION_MAX_N = 13
"""Largest sample scipy's ``wilcoxon(method="auto")`` tests by enumerating all sign flips when the
differences have ties or zeros (2**13 <= its 9,999 resamples)."""


def signed_rank_plus(d: np.ndarray, axis: int = -1) -> np.ndarray:
    """Wilcoxon's R+ with ``zero_method="zsplit"`` along ``axis``: the sum of the average ranks of
    |d| over the positive differences plus half the ranks of the zero differences (as scipy's)."""
    from scipy.stats import rankdata

    d = np.moveaxis(np.asarray(d, dtype=np.float64), axis, -1)
    r = rankdata(np.abs(d), axis=-1)
    return np.sum(np.where(d > 0, r, 0.0), axis=-1) + np.sum(np.where(d == 0, r, 0.0), axis=-1) / 2


def wilcoxon_p(x, y) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired samples ``x`` vs ``y``.

    All-zero differences (identical samples) give p = 1.0.  The p-values of 1-d samples are
    remembered by their float64 bytes (the panels of every result test the same reference
    models against each other again; the test is deterministic, so the value is the same).
    The test itself is :func:`wilcoxon_p_rows`, on one row.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.shape} vs {y.shape}")
    if x.ndim != 1:
        raise ValueError(f"wilcoxon_p takes two 1-d samples (wilcoxon_p_rows tests many at once), got shape {x.shape}")
    if not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)):
        raise ValueError("paired samples contain NaN or infinite values")
    return _remembered_p(np.ascontiguousarray(x).tobytes(), np.ascontiguousarray(y).tobytes())


@functools.lru_cache(maxsize=8192)
def _remembered_p(x: bytes, y: bytes) -> float:
    d = np.frombuffer(x, dtype=np.float64) - np.frombuffer(y, dtype=np.float64)
    return float(wilcoxon_p_rows(d[None, :])[0])


def _has_ties_or_zeros(d: np.ndarray) -> np.ndarray:
    """Per row of ``d``: whether it has a zero difference or two equal |differences|."""
    a = np.sort(np.abs(d), axis=-1)
    return np.any(d == 0, axis=-1) | np.any(a[:, 1:] == a[:, :-1], axis=-1)


PERMUTATION_CELLS = 1 << 22
"""Most values (rows x sign flips x differences) one permutation batch holds (32 MiB of float64)."""


def _positive_sum(signed_ranks: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.sum(np.where(signed_ranks > 0, signed_ranks, 0.0), axis=axis)


def _permutation_p(d: np.ndarray) -> np.ndarray:
    """scipy's exact sign-flip permutation test of the rows of ``d`` (n <= 13 with ties or zeros).

    The statistic is Wilcoxon's R+ (:func:`signed_rank_plus`) without the half ranks of the zero
    differences, a constant under every sign flip, computed on the signed average ranks of |d|
    (which no sign flip changes): the same null distribution and p-value as R+ on ``d``, without
    ranking every one of the 2**n flipped samples again."""
    from scipy.stats import permutation_test, rankdata

    r = rankdata(np.abs(d), axis=-1)
    signed = np.where(d > 0, r, np.where(d < 0, -r, 0.0))
    n = d.shape[-1]
    rows = max(1, PERMUTATION_CELLS // ((1 << n) * n))
    out = np.empty(len(d))
    for start in range(0, len(d), rows):
        res = permutation_test((signed[start:start + rows],), _positive_sum, permutation_type="samples",
                               vectorized=True, n_resamples=9999, alternative="two-sided", axis=-1)
        out[start:start + rows] = res.pvalue
    return out


def wilcoxon_p_rows(d) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-value of each row of paired differences ``d`` (shape
    ``(rows, n)``; one test per row, as :func:`wilcoxon_p` runs it on ``x - y``): the one
    implementation of the package's test, which a planned round's simulated experiments run
    thousands at a time.

    Per row, scipy's own choice (``scipy.stats.wilcoxon``, ``zero_method="zsplit"``,
    ``method="auto"``): all-zero differences give 1.0; n <= 13 differences with ties or zeros the
    exact sign-flip permutation test (:func:`_permutation_p`, scipy's ``permutation_test``); the
    others scipy's exact (n <= 50, no ties or zeros) or normal-approximation p-value.  Rows are
    tested in groups that scipy decides the same way, so each p-value is the one scipy gives that
    row alone, bit for bit.  ValueError for NaN or infinite values or a row of no difference.
    """
    d = np.asarray(d, dtype=np.float64)
    if d.ndim != 2 or d.shape[1] == 0:
        raise ValueError(f"wilcoxon_p_rows takes a 2-d array of rows of differences, got shape {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("paired samples contain NaN or infinite values")
    if len(d) > 1:  # a p-value depends on the multiset of differences only: test each one once
        unique, back = np.unique(np.sort(d, axis=-1), axis=0, return_inverse=True)
        if len(unique) < len(d):
            return _wilcoxon_p_distinct(unique)[back.reshape(-1)]
    return _wilcoxon_p_distinct(d)


def _wilcoxon_p_distinct(d: np.ndarray) -> np.ndarray:
    from scipy.stats import wilcoxon

    out = np.ones(len(d), dtype=np.float64)
    ties = _has_ties_or_zeros(d)
    tested = ~np.all(d == 0, axis=-1)
    n = d.shape[1]
    small = tested & ties & (n <= PERMUTATION_MAX_N)
    if small.any():
        out[small] = _permutation_p(d[small])
    for group in (tested & ties & ~small, tested & ~ties):
        if group.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", category=RuntimeWarning)  # small-sample notes
                res = wilcoxon(d[group], zero_method="zsplit", alternative="two-sided", axis=-1)
            out[group] = np.asarray(res.pvalue, dtype=np.float64)
    return out


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (same order); empty input gives an empty array.  A 2-d
    array is adjusted row by row (each row one family: a simulated round's model pairs)."""
    from scipy.stats import false_discovery_control

    p = np.asarray(pvalues if isinstance(pvalues, np.ndarray) else list(pvalues), dtype=np.float64)
    if p.size == 0:
        return p
    return np.asarray(false_discovery_control(p, method="bh", axis=-1), dtype=np.float64)
