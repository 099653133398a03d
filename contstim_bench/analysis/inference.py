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

ALPHA = 0.05
"""False-discovery rate at which a comparison is called significant (q < .05)."""


def _missing(p) -> bool:
    return p is None or (isinstance(p, float) and p != p)


def p_text(p: float | None) -> str:
    """A p-value or BH q as every table, page and terminal summary prints it: ``4.0e-04`` below
    .001, else three decimals (``0.012``); empty for None or NaN (no test).  The one p formatter."""
    if _missing(p):
        return ""
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def stars(p: float | None, not_significant: str = "") -> str:
    """The significance mark of a p-value or BH q: ``***`` < .001, ``**`` < .01, ``*`` <
    :data:`ALPHA`, else ``not_significant`` (Kauf & Ivanova's figures: ``n.s.``); empty for None
    or NaN (no test).  The one star formatter."""
    if _missing(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < ALPHA else not_significant


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
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.shape} vs {y.shape}")
    if not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)):
        raise ValueError("paired samples contain NaN or infinite values")
    if x.ndim == 1:
        return _remembered_p(np.ascontiguousarray(x).tobytes(), np.ascontiguousarray(y).tobytes())
    return _wilcoxon_p(x, y)


@functools.lru_cache(maxsize=8192)
def _remembered_p(x: bytes, y: bytes) -> float:
    return _wilcoxon_p(np.frombuffer(x, dtype=np.float64), np.frombuffer(y, dtype=np.float64))


def _wilcoxon_p(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import permutation_test, wilcoxon

    if np.all(x == y):
        return 1.0
    d = x - y
    if d.size <= PERMUTATION_MAX_N and (np.any(d == 0) or np.unique(np.abs(d)).size < d.size):
        # scipy's choice for these samples (method="auto"): a permutation test over all 2**n sign
        # flips, which it runs with a per-row statistic; the same test, vectorized
        res = permutation_test((d,), signed_rank_plus, permutation_type="samples", vectorized=True,
                               n_resamples=9999, alternative="two-sided", axis=-1)
        return float(res.pvalue)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)  # small-sample notes
        res = wilcoxon(x, y, zero_method="zsplit", alternative="two-sided")
    return float(res.pvalue)


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (same order); empty input gives an empty array."""
    from scipy.stats import false_discovery_control

    p = np.asarray(list(pvalues), dtype=np.float64)
    if p.size == 0:
        return p
    return np.asarray(false_discovery_control(p, method="bh"), dtype=np.float64)


STDERR_ESTIMATOR = "across-unit standard error of the mean: sample standard deviation (ddof=1) / sqrt(n_units)"
"""How :func:`standard_error` estimates, as the result files and the docs state it."""


def standard_error(values) -> float | None:
    """Standard error of the mean of per-unit values (``scipy.stats.sem``, ``ddof=1``: the sample
    standard deviation over units divided by the square root of their number), in the units of
    the values (accuracy: a share; SRCS: a cosine).  The one standard error of the package: every
    door (result file, ``evaluate`` summary, metric, leaderboard, report pages, the lm-eval task
    group's ``*_stderr``) shows this figure.  None for fewer than two units (no spread to estimate);
    ValueError for NaN or infinite values."""
    from scipy.stats import sem

    x = np.asarray(values.to_numpy() if isinstance(values, pd.Series) else values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("per-unit values contain NaN or infinite values")
    if x.size < 2:
        return None
    return float(sem(x, ddof=1))
