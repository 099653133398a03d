"""Accuracy and SRCS of a model on the pll trials, computed here from the trials table and the
model's log-probabilities with pandas and scipy alone, without the package's analysis or driver
(Golan et al. 2023, Supplementary Methods Eq. 7-11, written out again): the values the lm-eval
tests pin their runs to, so that a change in the driver's numbers cannot pass by being made on
both sides of a comparison.

Per participant, over the trials of a condition: the model's log-ratio ``LR = log p(s2) - log
p(s1)`` (natural-log probabilities); the participant's rating (1..6) centred, ``y = rating - 3.5``
(positive: sentence 2 judged more natural); accuracy is the share of trials where ``LR`` and
``y`` have the same sign (a tie ``LR = 0`` counts a half); SRCS is the cosine of the signed ranks
``sign(x) * rank(|x|)`` (average ranks among the non-zero entries), the norm of each being
``sqrt(sum_{k=1..n} k^2)`` over its ``n`` non-zero entries.  The model's value is the mean over
participants, its standard error the standard deviation across participants (ddof 1) over
``sqrt(participants)``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata


def _signed_ranks(x: np.ndarray) -> tuple[np.ndarray, int]:
    out, nonzero = np.zeros_like(x, dtype=np.float64), x != 0
    out[nonzero] = np.sign(x[nonzero]) * rankdata(np.abs(x[nonzero]))
    return out, int(nonzero.sum())


def _norm(n: int) -> float:
    return float(np.sqrt(n * (n + 1) * (2 * n + 1) / 6))


def pll_scores(logprobs: dict[str, float], datasets: Path) -> dict[str, dict[str, float]]:
    """``{condition or "all": {"accuracy", "accuracy_stderr", "srcs", "srcs_stderr"}}`` of a model
    (``logprobs``: sentence -> natural-log probability) on the pll trials of ``datasets``."""
    trials = pd.read_parquet(Path(datasets) / "contstim" / "trials" / "pll.parquet")
    out = {}
    for condition, frame in [*trials.groupby("trial_type"), ("all", trials)]:
        accuracy, srcs = [], []
        for _, mine in frame.groupby("participant"):
            ratio = np.array([logprobs[b] - logprobs[a] for a, b in zip(mine.sentence1, mine.sentence2)])
            centred = mine.rating.to_numpy(dtype=np.float64) - 3.5
            accuracy.append(np.mean(np.where(ratio == 0, 0.5, np.sign(ratio) == np.sign(centred))))
            (a, na), (b, nb) = _signed_ranks(ratio), _signed_ranks(centred)
            srcs.append(float(a @ b) / (_norm(na) * _norm(nb)))
        se = lambda values: float(np.std(values, ddof=1) / np.sqrt(len(values)))  # noqa: E731
        out[condition] = {"accuracy": float(np.mean(accuracy)), "accuracy_stderr": se(accuracy),
                          "srcs": float(np.mean(srcs)), "srcs_stderr": se(srcs)}
    return out
