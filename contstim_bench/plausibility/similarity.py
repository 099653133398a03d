"""Fit of a model's SocialN400 response pattern to the human one: Kauf et al. (2024), Appendix E
(Tables 8-11), as the authors' ``SocialN400-stats`` notebook computes it.

Per source (the model, the humans) every response of the items compared (both perspectives,
all three conditions) is min-max scaled to [0, 1] together.  Per item, the three-condition
vectors (Control, Critical, SemAnom) are compared by Euclidean distance, turned into a
similarity ``1 - distance / sqrt(3)`` (``sqrt(3)``: the largest distance between two points of
the unit cube, so the similarity is in [0, 1]), for the four combinations of perspective:
human context vs model context, human no context vs model no context (*matched*), human context
vs model no context and human no context vs model context (*unmatched*).  Each is averaged over
items; ``matched`` / ``unmatched`` are the means of their two combinations; a paired t-test
(:func:`scipy.stats.ttest_rel`) compares the 2 x n matched similarities with the 2 x n unmatched
ones paired item by item (human context with human context, human no context with human no
context), as the notebook does.

Model responses are the target-word log-probabilities (Table 8, Figure 3), the sentence
log-probabilities (Figure 9), or the binary Yes answers of the Appendix F prompts (Table 9,
Figure 4); human responses are the proportions of "makes sense" judgments per item, condition
and perspective.  A source whose responses are all equal cannot be min-max scaled (the
notebook divides 0 by 0): its similarity is undefined and reported as such.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from .metrics import CONDITIONS, _by_condition

PERSPECTIVES = ("context", "no_context")
COMBINATIONS = {
    "human_context_model_context": ("context", "context"),
    "human_no_context_model_no_context": ("no_context", "no_context"),
    "human_context_model_no_context": ("context", "no_context"),
    "human_no_context_model_context": ("no_context", "context"),
}
MATCHED = ("human_context_model_context", "human_no_context_model_no_context")
UNMATCHED = ("human_context_model_no_context", "human_no_context_model_context")


def min_max_scale(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame] | None:
    """Every table of one source scaled by the minimum and maximum over all of them; None when
    all values are equal (no scaling exists)."""
    values = np.concatenate([t.to_numpy(dtype=np.float64).ravel() for t in tables.values()])
    lo, hi = float(values.min()), float(values.max())
    if hi == lo:
        return None
    return {k: (t - lo) / (hi - lo) for k, t in tables.items()}


def euclidean_similarity(a, b) -> float:
    """``1 - ||a - b|| / sqrt(len(a))``: 1 for identical vectors, 0 for opposite corners of the
    unit cube (for vectors in [0, 1]^n)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"expected two vectors of one length, got shapes {a.shape} and {b.shape}")
    return float(1.0 - np.linalg.norm(a - b) / math.sqrt(a.size))


def pattern_similarity(model: pd.DataFrame, model_columns: dict[str, str],
                       human: pd.DataFrame, human_columns: dict[str, str]) -> dict:
    """Appendix E similarity of ``model`` to ``human`` (see the module doc).

    ``model`` / ``human``: one row per item x condition with ``item``, ``condition`` and a value
    column per perspective, named by ``model_columns`` / ``human_columns`` (``{"context": col,
    "no_context": col}``).  Only the items of ``model`` are compared (``human`` must have them).

    Returns ``{"n_items", "defined", <the four combinations>, "matched", "unmatched",
    "t_statistic", "p_value", "df"}``; with ``defined`` False (a constant source, named in
    ``"undefined_because"``) the similarity entries are None.
    """
    for name, cols in (("model", model_columns), ("human", human_columns)):
        if set(cols) != set(PERSPECTIVES):
            raise ValueError(f"{name} columns must name both perspectives {PERSPECTIVES}, got {sorted(cols)}")
    m = {p: _by_condition(model, c) for p, c in model_columns.items()}
    items = m["context"].index
    h_all = {p: _by_condition(human, c) for p, c in human_columns.items()}
    missing = sorted(set(items) - set(h_all["context"].index))
    if missing:
        raise ValueError(f"human responses lack item(s) {missing[:5]}")
    h = {p: t.loc[items] for p, t in h_all.items()}
    out: dict = {"n_items": int(len(items)), "conditions": list(CONDITIONS)}
    scaled_m, scaled_h = min_max_scale(m), min_max_scale(h)
    if scaled_m is None or scaled_h is None:
        which = "model" if scaled_m is None else "human"
        out.update({"defined": False, "undefined_because": f"every {which} response is the same value, "
                                                             "so min-max scaling is undefined"})
        out.update({k: None for k in (*COMBINATIONS, "matched", "unmatched", "t_statistic", "p_value", "df")})
        return out
    per_item = {
        key: np.array([euclidean_similarity(scaled_h[hp].loc[i], scaled_m[mp].loc[i]) for i in items])
        for key, (hp, mp) in COMBINATIONS.items()
    }
    out["defined"] = True
    out.update({key: float(v.mean()) for key, v in per_item.items()})
    out["matched"] = float(np.mean([out[k] for k in MATCHED]))
    out["unmatched"] = float(np.mean([out[k] for k in UNMATCHED]))
    same = np.concatenate([per_item[k] for k in MATCHED])
    other = np.concatenate([per_item[k] for k in UNMATCHED])
    if len(items) < 2 or np.all(same - other == 0):
        out.update({"t_statistic": None, "p_value": None, "df": int(same.size - 1)})
    else:
        test = stats.ttest_rel(same, other)
        out.update({"t_statistic": float(test.statistic), "p_value": float(test.pvalue), "df": int(same.size - 1)})
    return out
