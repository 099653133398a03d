"""Noise ceiling of the binarised accuracy (Methods; Supplementary Results).

For every trial (participant x pair):

- **lower bound**: the participant's choice is predicted by the majority vote of the *other*
  participants who saw the same pair (leave-one-subject-out);
- **upper bound**: the majority vote includes the participant.

Both are averaged like a model's accuracy (over the trials of a selection, per unit).

Ties in the vote: the paper's code breaks a tied upper-bound vote with ``random.choice`` and
stops with an error on a tied lower-bound vote (which cannot occur in its data: 9 or 29 other
participants, an odd number).  Here a tied vote scores 0.5 for both bounds, the expected value
of the paper's random tie-break, so results are deterministic; without ties the definitions are
identical.  A pair that no other participant saw has no lower bound: ValueError names it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def _vote_accuracy(n_second: np.ndarray, n_voters: np.ndarray, chose_second: np.ndarray) -> np.ndarray:
    share = n_second / n_voters
    vote_second = share > 0.5
    acc = (vote_second == chose_second).astype(np.float64)
    acc[share == 0.5] = 0.5
    return acc


def accuracy_ceiling_per_trial(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per-trial (lower, upper) noise-ceiling accuracies.

    ``frame`` is the oriented trials frame of
    :func:`contstim_bench.analysis.trials.prepare_trials` (columns ``pair_id``,
    ``chose_second``).  Votes are pooled over every participant who saw the pair, as in the
    paper's code.
    """
    chose = frame["chose_second"].to_numpy(dtype=bool)
    by_pair = frame.groupby("pair_id")["chose_second"]
    n_second = by_pair.transform("sum").to_numpy(dtype=np.float64)
    n_all = by_pair.transform("size").to_numpy(dtype=np.float64)
    lonely = np.flatnonzero(n_all < 2)
    if lonely.size:
        i = int(lonely[0])
        raise ValueError(
            f"pair {frame['pair_id'].iloc[i]!r} was rated only by participant "
            f"{frame['participant'].iloc[i]!r}; the lower noise ceiling needs at least two "
            "participants per pair"
        )
    upper = _vote_accuracy(n_second, n_all, chose)
    lower = _vote_accuracy(n_second - chose, n_all - 1.0, chose)
    return lower, upper


def normalised_accuracy(accuracy: float, lower: float) -> float:
    """Accuracy divided by the lower noise ceiling of the accuracy (1.0: the model predicts each
    participant as well as the other participants do); NaN when the lower ceiling is 0.  The one
    normalisation of every door that shows it (the leaderboard, the lm-eval task group)."""
    return accuracy / lower if lower > 0 else float("nan")
