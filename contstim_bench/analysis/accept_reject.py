"""Natural vs synthetic pairs by optimisation condition (Golan et al. 2023, Fig. S5).

A synthetic sentence ``s`` was made from a natural sentence ``n`` to be *accepted* by one model
(``p(s|m_accept) >= p(n|m_accept)``) and *rejected* by another (``p(s|m_reject)`` minimised).
For every ordered pair (m_accept, m_reject): over the natural-vs-synthetic trials made under that
condition on which the two models prefer different sentences, the share of participants' choices
that agreed with m_accept (pooled over the participant x trial rows, as the authors' code
computes the figure), with the number of trials.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd


def accept_reject_matrix(
    frame: pd.DataFrame, log_ratios: Mapping[str, np.ndarray], models: Sequence[str]
) -> dict[str, dict[str, dict]]:
    """``{m_accept: {m_reject: {"share", "n_trials", "n_pairs"}}}`` (see the module docstring).

    ``frame`` is a prepared trials frame, ``log_ratios`` the models' oriented per-trial log-ratios.
    ``share`` is None when no trial was made under the condition (or the models never disagree).
    """
    nat_syn = (frame["trial_type"] == "natural_vs_synthetic").to_numpy()
    chose_second = frame["chose_second"].to_numpy(dtype=bool)
    out: dict[str, dict[str, dict]] = {}
    for acc in models:
        out[acc] = {}
        for rej in models:
            if acc == rej:
                continue
            made = nat_syn & (
                ((frame["sentence1_accept_model"] == acc) & (frame["sentence1_reject_model"] == rej))
                | ((frame["sentence2_accept_model"] == acc) & (frame["sentence2_reject_model"] == rej))
            ).to_numpy()
            la, lr = log_ratios[acc], log_ratios[rej]
            disagree = made & (np.sign(la) * np.sign(lr) < 0)
            aligned = chose_second[disagree] == (la[disagree] > 0)
            out[acc][rej] = {
                "share": float(aligned.mean()) if disagree.any() else None,
                "n_trials": int(disagree.sum()),
                "n_pairs": int(frame["pair_id"][disagree].nunique()),
            }
    return out
