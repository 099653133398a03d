"""Linguistic features of preferred vs rejected sentences, models vs humans (Golan et al. 2023, Fig. S7).

For a model and the synthetic-vs-synthetic pairs it took part in synthesising (the pairs that
target it): per pair, the sentence the model prefers (higher log-probability) and the one most
participants chose (majority of all who saw the pair; pairs with a tied vote or a model tie are
left out, as in the authors' code).  With a sentence feature ``f`` (GloVe correlation or mean log
word frequency): ``d_model = f(model's preferred) - f(model's rejected)`` and ``d_human`` the
same for the participants' choice.  A paired t-test (``scipy.stats.ttest_1samp`` of
``d_model - d_human`` against 0) asks whether the model leans towards that feature more than
people do; Benjamini-Hochberg across the models (the paper's "FDR across all nine models").
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import ttest_1samp

from .inference import bh_adjust
from .selection import targets


def feature_preferences(
    frame: pd.DataFrame, log_ratio: np.ndarray, model: str, feature: Mapping[str, float]
) -> pd.DataFrame:
    """One row per synthetic pair targeting ``model``: ``pair_id``, the feature of the model's
    preferred and rejected sentence and of the participants' (``model_preferred``,
    ``model_rejected``, ``human_preferred``, ``human_rejected``)."""
    mask = ((frame["trial_type"] == "synthetic_vs_synthetic").to_numpy() & targets(frame, model, "any"))
    sub = frame[mask].assign(lr=np.asarray(log_ratio)[mask])
    rows = []
    for pid, g in sub.groupby("pair_id", sort=True):
        share = g["chose_second"].mean()
        lr = g["lr"].iloc[0]
        if share == 0.5 or lr == 0:
            continue
        first = g.iloc[0]
        a, b = (first["sentence2"], first["sentence1"]) if first["flipped"] else (first["sentence1"], first["sentence2"])
        if a not in feature or b not in feature:
            raise ValueError(f"no feature value for the sentences of pair {pid!r}")
        m_pref, m_rej = (b, a) if lr > 0 else (a, b)
        h_pref, h_rej = (b, a) if share > 0.5 else (a, b)
        rows.append({"pair_id": pid, "model_preferred": feature[m_pref], "model_rejected": feature[m_rej],
                     "human_preferred": feature[h_pref], "human_rejected": feature[h_rej]})
    return pd.DataFrame(rows, columns=["pair_id", "model_preferred", "model_rejected", "human_preferred",
                                       "human_rejected"])


def feature_tests(
    frame: pd.DataFrame, log_ratios: Mapping[str, np.ndarray], models: Sequence[str], feature: Mapping[str, float]
) -> dict[str, dict]:
    """Per model: ``n_pairs``, mean ``d_model`` and ``d_human``, the paired t-test (``t``, ``p``)
    and ``p_bh`` (BH across the models whose test is defined; None otherwise), and the per-pair
    ``values``."""
    out: dict[str, dict] = {}
    for m in models:
        prefs = feature_preferences(frame, log_ratios[m], m, feature)
        if prefs.empty:
            continue
        d_model = (prefs["model_preferred"] - prefs["model_rejected"]).to_numpy()
        d_human = (prefs["human_preferred"] - prefs["human_rejected"]).to_numpy()
        diff = d_model - d_human
        if len(diff) > 1 and np.ptp(diff) > 0:
            res = ttest_1samp(diff, 0.0)
            t, p = float(res.statistic), float(res.pvalue)
        elif np.all(diff == 0):  # models and people always chose alike
            t, p = 0.0, 1.0
        else:  # one pair, or a constant non-zero difference: the t-test is undefined
            t, p = None, None
        out[m] = {"n_pairs": int(len(diff)), "d_model": float(d_model.mean()), "d_human": float(d_human.mean()),
                  "t": t, "p": p, "values": prefs.to_dict(orient="list")}
    tested = [m for m in out if out[m]["p"] is not None]
    for m, q in zip(tested, bh_adjust([out[m]["p"] for m in tested])):
        out[m]["p_bh"] = float(q)
    for m in out:
        out[m].setdefault("p_bh", None)
    return out
