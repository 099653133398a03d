"""Signed-rank cosine similarity (Supplementary Methods, Eq. 7-11) and its noise ceiling.

For one participant and one model, over the trials of a selection:

- the model's log-ratio ``LR = log p(s2|m) - log p(s1|m)`` (Eq. 7) and the participant's
  zero-centred rating ``y0 = rating - 3.5`` (-2.5..+2.5) are each replaced by signed ranks
  ``sign(x) * R(|x|)`` (Eq. 8-9), ranks taken among the non-zero entries;
- Eq. 10 is the cosine of the two signed-rank vectors under random tie-breaking; Eq. 11 is its
  exact expectation: average ranks for ties (``scipy.stats.rankdata``) in the numerator and
  ``sqrt(sum_{k=1..n} k^2)`` per vector in the denominator, ``n`` = number of non-zero entries
  (a zero log-ratio or zero rating gets signed rank 0 and is left out of ``n``, as in the
  paper's code, so the closed form stays the exact mean of Eq. 10).

The cosine is undefined when one vector is all zeros (e.g. a model that assigns every pair
of a participant's selection a log-ratio of exactly 0); the paper's code returns NaN there
(it never happens in its data), this package returns 0.0: a model with no preference predicts
nothing.

Noise ceiling (per participant, within the selection and the participant's group):

- lower bound: Eq. 11 between the participant's ratings and the across-participant average of
  the *other* participants' normalised expected signed-rank vectors ``r / sqrt(sum k^2)``,
  which is signed-ranked again like a model's predictions.  Before that ranking the average is
  rounded to 12 decimals so that equal averages tie exactly whatever the summation order (the
  paper's code averages in floating point, where rounding noise can split exact ties: on the
  pll pairs targeting RoBERTa its lower bound is 0.659182 against the exact 0.659187);
- upper bound: the dot product of the participant's normalised expected signed-rank vector
  with the L2-normalised average of *all* participants' normalised vectors (including the
  participant), not ranked again (``calc_semi_signed_rank_cosine_similarity`` upstream).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

CENTRE = 3.5
"""Zero-centring of the 1..6 ratings: (-2.5, -1.5, -0.5, +0.5, +1.5, +2.5)."""


def rank_norm(n: int) -> float:
    """``sqrt(sum_{k=1..n} k^2)``: the norm of any signed-rank vector with ``n`` non-zero entries."""
    return float(np.sqrt(n * (n + 1) * (2 * n + 1) / 6.0))


def signed_ranks(x) -> np.ndarray:
    """``sign(x) * R(|x|)`` with average ranks for ties among the non-zero entries; zeros -> 0."""
    from scipy.stats import rankdata  # imported when used: see analysis/inference.py

    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    nz = x != 0
    if nz.any():
        out[nz] = np.sign(x[nz]) * rankdata(np.abs(x[nz]), method="average")
    return out


def normalized_signed_ranks(x) -> np.ndarray:
    """Expected signed-rank vector divided by ``rank_norm(n_nonzero)`` (all zeros stay zeros)."""
    r = signed_ranks(x)
    n = int(np.count_nonzero(r))
    return r / rank_norm(n) if n else r


def srcs(a, b) -> float:
    """Expected signed-rank cosine similarity of two equal-length vectors (Eq. 11).

    Returns 0.0 when either vector is all zeros (cosine undefined; see module docstring).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"srcs needs two 1-d vectors of equal length, got {a.shape} and {b.shape}")
    na, nb = np.count_nonzero(a), np.count_nonzero(b)
    if na == 0 or nb == 0:
        return 0.0
    return float(np.dot(signed_ranks(a), signed_ranks(b)) / (rank_norm(na) * rank_norm(nb)))


def semi_srcs(a, b) -> float:
    """Dot product of ``a``'s normalised expected signed ranks with ``b / ||b||`` (``b`` not ranked)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"semi_srcs needs two 1-d vectors of equal length, got {a.shape} and {b.shape}")
    return _dot_normalised(normalized_signed_ranks(a), b)


def _dot_normalised(pattern: np.ndarray, b: np.ndarray) -> float:
    """``pattern . b / ||b||`` (0.0 when ``pattern`` is all zeros or ``b`` is): :func:`semi_srcs`
    of a vector whose normalised signed ranks are ``pattern``."""
    norm_b = float(np.linalg.norm(b))
    if not np.any(pattern) or norm_b == 0.0:
        return 0.0
    return float(np.dot(pattern, b) / norm_b)


def srcs_random_tiebreak(a, b, rng: np.random.Generator) -> float:
    """One draw of Eq. 10: signed ranks with ties broken at random (for validating Eq. 11)."""
    from scipy.stats import rankdata

    def draw(x: np.ndarray) -> np.ndarray:
        out = np.zeros_like(x)
        nz = np.flatnonzero(x != 0)
        if nz.size:
            perm = rng.permutation(nz.size)
            ranks = np.empty(nz.size)
            # ordinal ranks of a random permutation break ties uniformly at random
            ranks[perm] = rankdata(np.abs(x[nz])[perm], method="ordinal")
            out[nz] = np.sign(x[nz]) * ranks
        return out

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ra, rb = draw(a), draw(b)
    denom = np.linalg.norm(ra) * np.linalg.norm(rb)
    return float(np.dot(ra, rb) / denom) if denom else 0.0


def grouped_signed_ranks(x, codes: np.ndarray) -> np.ndarray:
    """:func:`signed_ranks` of ``x`` within each group of ``codes`` (non-negative ints), at once.

    The average ranks of ties are ``(first + last) / 2`` of the tied ordinal ranks, exactly
    the values (half-integers) that ``scipy.stats.rankdata(method="average")`` gives."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    nz = np.flatnonzero(x != 0)
    if nz.size == 0:
        return out
    mag = np.abs(x[nz])
    order = np.lexsort((mag, codes[nz]))
    mag, grp = mag[order], codes[nz][order]
    pos = np.arange(mag.size)
    new_group = np.r_[True, grp[1:] != grp[:-1]]
    run_start = new_group | np.r_[True, mag[1:] != mag[:-1]]
    ordinal = pos - np.maximum.accumulate(np.where(new_group, pos, 0)) + 1
    run = np.cumsum(run_start) - 1
    first = ordinal[run_start]
    last = ordinal[np.r_[run_start[1:], True]]
    rows = nz[order]
    out[rows] = np.sign(x[rows]) * (0.5 * (first + last).astype(np.float64))[run]
    return out


def grouped_rank_norms(x, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """:func:`rank_norm` of each group's number of non-zero entries of ``x`` (0.0 for none)."""
    n = np.bincount(codes[np.asarray(x) != 0], minlength=n_groups).astype(np.int64)
    return np.sqrt(n * (n + 1) * (2 * n + 1) / 6.0)


def grouped_srcs(a, b, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """:func:`srcs` of ``a`` and ``b`` within each group of ``codes`` (0.0 for a group where one
    vector is all zeros).  The dot products of signed ranks (multiples of 1/4) are exact in
    float64, so every value equals :func:`srcs` on the group's rows bit for bit."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    dots = np.bincount(codes, weights=grouped_signed_ranks(a, codes) * grouped_signed_ranks(b, codes),
                       minlength=n_groups)
    norm_a, norm_b = grouped_rank_norms(a, codes, n_groups), grouped_rank_norms(b, codes, n_groups)
    defined = (norm_a > 0) & (norm_b > 0)
    out = np.zeros(n_groups)
    out[defined] = dots[defined] / (norm_a[defined] * norm_b[defined])
    return out


def participant_codes(frame: pd.DataFrame) -> tuple[np.ndarray, pd.Index]:
    """(integer code of each row's participant, the participants in sorted order)."""
    codes, names = pd.factorize(frame["participant"], sort=True)
    return np.asarray(codes, dtype=np.int64), pd.Index(names)


def srcs_of_participants(log_ratio, centred: np.ndarray, codes: np.ndarray, names: pd.Index) -> pd.Series:
    """Eq. 11 per participant of ``codes`` (rows' codes into ``names``; ``centred``: the rows'
    zero-centred oriented ratings), indexed by the participants that have rows."""
    present = np.flatnonzero(np.bincount(codes, minlength=len(names)))
    values = grouped_srcs(log_ratio, centred, codes, len(names))[present]
    return pd.Series(values, index=names[present], dtype=np.float64)


def srcs_by_participant(frame: pd.DataFrame, log_ratio: np.ndarray) -> pd.Series:
    """Eq. 11 between each participant's ratings and the model's log-ratios on their trials.

    ``frame`` is an oriented trials frame (already restricted to a selection) and
    ``log_ratio`` the model's oriented per-trial log-ratios, aligned with its rows.
    """
    centred = frame["rating_oriented"].to_numpy(dtype=np.float64) - CENTRE
    return srcs_of_participants(log_ratio, centred, *participant_codes(frame))


def srcs_ceiling_by_participant(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(lower, upper) noise-ceiling bounds of the SRCS per participant (see module docstring).

    ``frame`` is an oriented trials frame restricted to a selection.  Averages run over the
    participants of the same group who rated the same pair; ValueError names a pair that no
    other participant of the group rated.
    """
    centred = frame["rating_oriented"].to_numpy(dtype=np.float64) - CENTRE
    codes, names = participant_codes(frame)
    norms = grouped_rank_norms(centred, codes, len(names))
    ranks = grouped_signed_ranks(centred, codes)
    pattern = np.divide(ranks, norms[codes], out=np.zeros_like(ranks), where=norms[codes] > 0)
    keys = [frame["group"].to_numpy(), frame["pair_id"].to_numpy()]
    total = pd.Series(pattern).groupby(keys).transform("sum").to_numpy()
    count = pd.Series(pattern).groupby(keys).transform("size").to_numpy().astype(np.float64)
    alone = np.flatnonzero(count < 2)
    if alone.size:
        i = int(alone[0])
        raise ValueError(
            f"pair {frame['pair_id'].iloc[i]!r} was rated only by participant "
            f"{frame['participant'].iloc[i]!r} in group {int(frame['group'].iloc[i])}; the lower "
            "noise ceiling needs at least two participants per pair"
        )
    mean_all = total / count
    others = np.round((total - pattern) / (count - 1.0), 12)
    lower = grouped_srcs(others, centred, codes, len(names))
    rows = np.split(np.argsort(codes, kind="stable"), np.cumsum(np.bincount(codes))[:-1])
    upper = [_dot_normalised(pattern[idx], mean_all[idx]) for idx in rows]  # semi_srcs(centred[idx], ...)
    return (
        pd.Series(lower, index=names, dtype=np.float64),
        pd.Series(upper, index=names, dtype=np.float64),
    )
