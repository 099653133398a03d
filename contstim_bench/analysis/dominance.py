"""Which model is significantly better than which: the dominance circles beside the bars of
Golan et al. (2023), Figs. 1, 3 and 4 (a filled circle where the row model's per-unit score is
significantly above the column model's).

Models are compared where they were scored on the same trials: both on every trial of the
condition (selection ``all``) over the same units, as the result's own like-for-like comparisons;
a model scored on the trials that target it (a reference model on its own synthetic pairs) is
compared with none.  Per pair: the two-sided Wilcoxon signed-rank test of the paired per-unit
values (:func:`.inference.wilcoxon_p`), Benjamini-Hochberg over every tested pair of the condition
(:func:`.inference.bh_adjust`); q < .05 makes the better model dominate the other.
"""
from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np

from ..significance import ALPHA
from .inference import bh_adjust, wilcoxon_p


def dominance(models: Mapping[str, Mapping], measure: str) -> dict:
    """``{"models", "pairs"}`` for the model blocks of one condition of a result's ``panels``
    (model -> block with ``selection`` and ``{measure}_by_unit``; ``measure``: ``accuracy`` or
    ``srcs``).  ``pairs``: one dict per tested pair (``a``, ``b``, ``n_units``, ``mean_a``,
    ``mean_b``: per-unit means, ``p``, ``q``: BH-adjusted, ``better``: the model with the higher mean
    or None when equal, ``dominates``: q < .05); models on other trials are in none."""
    names = list(models)
    tested = []
    for a, b in combinations(names, 2):
        ma, mb = models[a], models[b]
        if ma.get("selection") != "all" or mb.get("selection") != "all" or ma.get("degenerate") or mb.get("degenerate"):
            continue
        ua, ub = ma[f"{measure}_by_unit"], mb[f"{measure}_by_unit"]
        units = sorted(set(ua) & set(ub))
        if not units or set(ua) != set(ub):
            continue
        x = np.array([ua[u] for u in units], dtype=np.float64)
        y = np.array([ub[u] for u in units], dtype=np.float64)
        mean_a, mean_b = float(x.mean()), float(y.mean())
        better = a if mean_a > mean_b else b if mean_b > mean_a else None
        tested.append({"a": a, "b": b, "n_units": len(units), "mean_a": mean_a, "mean_b": mean_b,
                       "p": wilcoxon_p(x, y), "better": better})
    for pair, q in zip(tested, bh_adjust([t["p"] for t in tested])):
        pair["q"] = float(q)
        pair["dominates"] = bool(q < ALPHA and pair["better"] is not None)
    return {"models": names, "pairs": tested}
