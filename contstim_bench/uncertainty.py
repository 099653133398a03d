"""How the package states the uncertainty of a mean, once for every layer: :func:`standard_error`.

A bottom-layer module (it imports nothing from the package), so that the analysis (accuracy and
SRCS across units), the plausibility statistics of Kauf et al. 2024 (a layer below the analysis:
hits across items) and the results' validator compute the same figure the same way.
"""
from __future__ import annotations

import numpy as np


def standard_error(values) -> float | None:
    """Standard error of the mean of per-unit values (``ddof=1``: the sample standard deviation
    over units divided by the square root of their number), in the units of the values (accuracy
    or a hit: a share; SRCS: a cosine).  The one standard error of the package: every door (result
    file, ``evaluate`` summary, metric, leaderboard, report pages, the lm-eval task group's
    ``*_stderr``) and the plausibility tables show this figure.  ``values``: a sequence, array or
    pandas Series of numbers.  None for fewer than two units (no spread to estimate); ValueError
    for NaN or infinite values.

    The value is ``scipy.stats.sem(x, ddof=1)`` bit for bit (tests/analysis pins it on random
    samples): scipy's own formula, ``std(x, ddof=1) / n ** 0.5``, computed by numpy directly,
    because ``sem``'s checks cost about 0.3 ms a call (25 times the arithmetic), which the
    validator paid again for every model block of every result it read."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("per-unit values contain NaN or infinite values")
    if x.size < 2:
        return None
    return float(np.std(x, ddof=1) / x.size ** 0.5)
