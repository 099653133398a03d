"""Binarised prediction accuracy (Methods, "Evaluation of model-human consistency").

A trial is predicted correctly when the sentence the model assigns the higher probability is
the one the participant chose (rating 4..6 = sentence2, 1..3 = sentence1), whatever the
magnitude of the probability difference or the participant's confidence.

Model ties (equal log-probabilities, log-ratio exactly 0: identical sentences, or equal scores)
count as 0.5 by default (``ties="half"``): the expected accuracy of breaking the tie at random.
The other conventions (:data:`TIES`) count a tie as a miss (``"miss"``, BLiMP's convention) or as
a hit (``"hit"``).  The paper's code asserts that no ties occur (there are none in its data), so
on that data every convention gives the same numbers.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

TIES = {"half": 0.5, "miss": 0.0, "hit": 1.0}
"""What a model tie (log-ratio exactly 0) scores, per convention; ``"half"`` is the default."""
DEFAULT_TIES = "half"


def tie_value(ties: str) -> float:
    """The score of a model tie under the convention ``ties``; ValueError lists the known ones."""
    if ties not in TIES:
        raise ValueError(f"unknown tie convention {ties!r}; known: {', '.join(TIES)}")
    return TIES[ties]


def trial_accuracy(log_ratio: np.ndarray, chose_second: np.ndarray, ties: str = DEFAULT_TIES) -> np.ndarray:
    """Per-trial correctness (1.0, 0.0, or the value of a model tie under ``ties``).

    ``log_ratio`` = ``log p(s2|m) - log p(s1|m)`` (natural log) and ``chose_second`` (bool) must
    be in the same orientation.
    """
    lr = np.asarray(log_ratio, dtype=np.float64)
    human = np.asarray(chose_second, dtype=bool)
    correct = ((lr > 0) == human).astype(np.float64)
    correct[lr == 0] = tie_value(ties)
    return correct


def unit_means(values: np.ndarray, units: pd.Series) -> pd.Series:
    """Mean of per-trial ``values`` within each unit (participant or group), index sorted."""
    s = pd.Series(np.asarray(values, dtype=np.float64), index=units.to_numpy())
    return s.groupby(level=0, sort=True).mean()
