"""The ids of a prepared trials frame as integer codes, computed once per frame.

A panel scores every model of a condition on several row selections; grouping by the pandas
columns each time (string comparisons, ``groupby``, ``nunique``) was most of its cost.  Here the
unit, participant and pair ids are factorized once (:func:`trial_codes`), and the per-unit
means and distinct counts of a selection are taken over the codes with numpy.

The per-unit means give exactly pandas' ``groupby(...).mean()`` (the float64 bits) for the
values the panels average with them (per-trial accuracies and head-to-head choices: 0, 0.5 or
1): the sums of such values are exact in float64, whatever the order or method of summation.
Other values go through pandas (:func:`group_means` checks).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .trials import PreparedTrials


@dataclass(frozen=True)
class Labels:
    """Integer codes of one id column: ``names[codes[i]]`` is row ``i``'s id (a string);
    ``names`` is sorted, as pandas' ``groupby(sort=True)`` sorts the groups."""

    codes: np.ndarray  # int64, one per row
    names: np.ndarray  # object array of str, sorted


def labels(values) -> Labels:
    """:class:`Labels` of a column of ids (converted to str)."""
    codes, names = pd.factorize(np.asarray(pd.Series(values).astype(str).to_numpy(), dtype=object), sort=True)
    return Labels(codes=np.asarray(codes, dtype=np.int64), names=np.asarray(names, dtype=object))


@dataclass(frozen=True)
class TrialCodes:
    """The columns of a prepared trials frame that the panels read, as numpy arrays."""

    chose_second: np.ndarray  # bool per row
    pair: np.ndarray  # int64 code of the row's pair_id
    unit: Labels  # the unit of each row (participant or group id, as a string)
    pair_labels: Labels  # the row's pair_id as Labels: the units of a by-item test


def trial_codes(prepared: PreparedTrials) -> TrialCodes:
    frame = prepared.frame
    pair, _ = pd.factorize(frame["pair_id"])
    return TrialCodes(
        chose_second=frame["chose_second"].to_numpy(dtype=bool),
        pair=np.asarray(pair, dtype=np.int64),
        unit=labels(frame[prepared.unit]),
        pair_labels=labels(frame["pair_id"]),
    )


def n_distinct(codes: np.ndarray, mask: np.ndarray) -> int:
    """Number of distinct codes on the rows of ``mask``."""
    return int(np.unique(codes[mask]).size)


def _exact_sums(values: np.ndarray) -> bool:
    doubled = values * 2.0
    return bool(np.all(doubled == np.round(doubled)) and np.all(np.abs(values) < 2.0**40))


def group_means(values: np.ndarray, lab: Labels, mask: np.ndarray) -> pd.Series:
    """Mean of ``values`` (one per selected row, in row order) within each id of ``lab`` on the
    rows of ``mask``, indexed by the id (sorted): ``unit_means(values, ids[mask])`` bit for bit."""
    values = np.asarray(values, dtype=np.float64)
    codes = lab.codes[mask]
    if not _exact_sums(values):
        s = pd.Series(values, index=lab.names[codes])
        return s.groupby(level=0, sort=True).mean()
    counts = np.bincount(codes, minlength=len(lab.names))
    sums = np.bincount(codes, weights=values, minlength=len(lab.names))
    present = np.flatnonzero(counts)
    return pd.Series(sums[present] / counts[present], index=pd.Index(lab.names[present]))
