"""The statistics of Kauf et al. (2024) §3.4 and Tables 3-4, as pure functions of hit vectors.

A *unit* is what one binary hit is scored on: an Experiment 1 pair (LogProbs, the
single-sentence prompts), or one presentation order of a pair (Sentence Choice I and Word
Comparison, which show each pair twice).  Everything here works on boolean hits per unit:

- accuracy and its **standard error** around the mean (Table 3: "Average performance and
  standard error around the mean"): ``scipy.stats.sem`` of the hits, ``ddof=1`` (the package's
  one standard error, :mod:`contstim_bench.uncertainty`), i.e.
  ``sqrt(p (1 - p) / (n - 1))`` (the authors' ``groupby(...).agg(['mean', 'sem'])`` and seaborn's
  ``errorbar='se'``).  Table 3 is reproduced from the authors' hit counts by these definitions
  (``tests/plausibility/test_plausibility_statistics.py``);
- **model vs human** (Result 2): a paired t-test (``scipy.stats.ttest_rel``) of the model's hits
  against the human hits of the same pairs (the human hit: the mean rating of the plausible
  sentence above that of the implausible one), per dataset, Bonferroni-corrected over the models
  compared in that dataset (:func:`bonferroni`, as ``statsmodels``' ``multipletests``), as the
  authors' ``LogProb-analysis`` notebook (``get_stats_df``);
- **base vs instruct** (Table 4): a dependent (paired) t-test of the two versions' hits on the
  same units, per dataset, uncorrected, marked ``*`` p < .05 and ``**`` p < .01 as Table 4.

A paired t-test is undefined when every unit has the same difference (identical hit vectors, or
one model right exactly where the other is wrong on every unit): ``t`` and ``p`` are then None
with the reason, never an infinite or NaN number.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from .. import uncertainty
from ..significance import STARS, stars

TABLE4_MARKS = ((0.01, "**"), (0.05, "*"))
"""Table 4's marks of a base-vs-instruct difference: p < .01 ``**``, p < .05 ``*``."""
NOTEBOOK_MARKS = STARS
"""The authors' marks of a (corrected) p value in their notebooks (``assign_significance_labels``):
the package's own."""


def _hits(values, what: str = "hits") -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected one value per unit, got shape {arr.shape}")
    if arr.dtype != bool:
        if not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{what}: expected booleans (or 0/1) per unit")
        arr = arr.astype(bool)
    return arr


def standard_error(hits) -> float | None:
    """Standard error of the mean of boolean ``hits`` (as 0/1): the package's one standard error,
    :func:`contstim_bench.uncertainty.standard_error` (``scipy.stats.sem``, ``ddof=1``); None for
    fewer than two units.  ValueError for values that are not hits."""
    return uncertainty.standard_error(_hits(hits).astype(np.float64))


def se_from_counts(hits: int, n: int) -> float | None:
    """:func:`standard_error` of ``hits`` successes out of ``n`` units:
    ``sqrt(p (1 - p) / (n - 1))`` with ``p = hits / n``; None for ``n < 2``."""
    if isinstance(hits, bool) or isinstance(n, bool) or not 0 <= int(hits) <= int(n):
        raise ValueError(f"expected 0 <= hits <= n, got hits={hits!r}, n={n!r}")
    if n < 2:
        return None
    p = hits / n
    return math.sqrt(p * (1.0 - p) / (n - 1))


def summarize(hits) -> dict:
    """``{n, hits, accuracy, se}`` of boolean hits per unit (accuracy None when empty)."""
    h = _hits(hits)
    return {"n": int(h.size), "hits": int(h.sum()), "accuracy": float(h.mean()) if h.size else None,
            "se": standard_error(h)}


def paired_ttest(a, b) -> dict:
    """Paired t-test of two boolean hit vectors on the same units (``scipy.stats.ttest_rel(a, b)``;
    ``t`` > 0 when ``a`` is right more often): ``{n, mean_a, mean_b, mean_difference, t, p, df,
    defined, undefined_because}``."""
    x, y = _hits(a, "first hits"), _hits(b, "second hits")
    if x.shape != y.shape:
        raise ValueError(f"paired t-test: {x.size} and {y.size} units; the two must score the same units")
    out = {"n": int(x.size), "mean_a": float(x.mean()) if x.size else None,
           "mean_b": float(y.mean()) if y.size else None, "df": int(x.size) - 1}
    d = x.astype(np.float64) - y.astype(np.float64)
    out["mean_difference"] = float(d.mean()) if d.size else None
    if x.size < 2:
        why = "fewer than two units"
    elif np.all(d == d[0]):
        why = ("the two hit vectors are identical" if d[0] == 0 else
               "every unit differs by the same amount (no variance of the differences)")
    else:
        res = stats.ttest_rel(x.astype(np.float64), y.astype(np.float64))
        return {**out, "t": float(res.statistic), "p": float(res.pvalue), "defined": True,
                "undefined_because": None}
    return {**out, "t": None, "p": None, "defined": False, "undefined_because": why}


def bonferroni(pvalues: Sequence[float | None]) -> list[float | None]:
    """Bonferroni-adjusted p values, ``min(1, m p)`` over the ``m`` defined ones (None stays None
    and does not count as a test): what the authors' ``statsmodels`` ``multipletests(method=
    "bonferroni")`` gives (statsmodels is not a dependency of the package, and the rule is one line)."""
    m = sum(p is not None for p in pvalues)
    for p in pvalues:
        if p is not None and not 0.0 <= p <= 1.0:
            raise ValueError(f"p value {p!r} is outside [0, 1]")
    return [None if p is None else min(1.0, m * float(p)) for p in pvalues]


def versus_human(model_hits: Sequence, human_hits: Sequence) -> list[dict]:
    """Result 2 for several models in one dataset: a :func:`paired_ttest` of each model's hits
    against the human hits of the same units, with the Bonferroni-adjusted p over the models
    (``p_bonferroni``) and its notebook marks (``marks``)."""
    tests = [paired_ttest(m, h) for m, h in zip(model_hits, human_hits, strict=True)]
    for t, p in zip(tests, bonferroni([t["p"] for t in tests])):
        t["p_bonferroni"] = p
        t["marks"] = stars(p, levels=NOTEBOOK_MARKS)
    return tests


def base_vs_instruct(base_hits, instruct_hits) -> dict:
    """Table 4: the dependent t-test of the base model's hits against the instruction-tuned
    model's on the same units (uncorrected), with Table 4's marks (``marks``) and the version that
    is more accurate (``better``: "base", "instruct" or None on a tie)."""
    test = paired_ttest(base_hits, instruct_hits)
    diff = test["mean_difference"]
    test["better"] = None if not diff else ("base" if diff > 0 else "instruct")
    test["marks"] = stars(test["p"], levels=TABLE4_MARKS)
    return test
