"""Validate human trials and put every sentence pair in one shared orientation.

The analysis needs, per participant x trial row, the columns :data:`ANALYSIS_COLUMNS` of
:data:`contstim_bench.study.TRIAL_COLUMNS` (``rating`` 1..6, 6 = strongest preference for
``sentence2``).  Different participants may have seen the same pair with the sentences on
opposite sides; the noise ceilings compare participants, so :func:`prepare_trials` orients every
pair the same way (the lexicographically smaller sentence first, as the paper's code does) and
mirrors the rating (``7 - r``) and the model log-ratio of the trials it flips.  Every measure of
the package is computed on this oriented view, so all of them are invariant to swapping
``sentence1``/``sentence2`` in any trial together with mirroring its rating.

Bad input raises :class:`ValueError` naming the row, column or value; nothing is dropped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..study import RATING_MAX, RATING_MIN, TARGET_COLUMNS, TRIAL_TYPES

ANALYSIS_COLUMNS = (
    "participant",
    "group",
    "pair_id",
    "sentence1",
    "sentence2",
    "trial_type",
    *TARGET_COLUMNS,
    "rating",
)
"""Columns of the trials frame that the analysis reads (others are ignored)."""


@dataclass(frozen=True)
class PreparedTrials:
    """Validated trials in the shared pair orientation (one row per participant x trial).

    ``frame`` has the original columns plus ``flipped`` (bool: the trial was shown in the
    opposite orientation), ``rating_oriented`` (1..6, 6 = preference for the pair's
    lexicographically larger sentence) and ``chose_second`` (bool, ``rating_oriented >= 4``).
    ``unit`` names the column that units are read from (``participant`` or ``group``).
    """

    frame: pd.DataFrame
    unit: str

    @property
    def n(self) -> int:
        return len(self.frame)

    def orient(self, log_ratio: np.ndarray) -> np.ndarray:
        """A per-trial log-ratio ``log p(sentence2) - log p(sentence1)`` in the shared orientation."""
        return np.where(self.frame["flipped"].to_numpy(), -log_ratio, log_ratio)


def _row_label(frame: pd.DataFrame, i: int) -> str:
    row = frame.iloc[i]
    return f"row {i} (participant {row.get('participant')!r}, pair {row.get('pair_id')!r})"


def _check_strings(frame: pd.DataFrame, column: str, allow_null: bool) -> None:
    values = frame[column].to_numpy(dtype=object)  # Python objects: iterating pandas' str arrays is slow
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
            if allow_null:
                continue
            raise ValueError(f"{_row_label(frame, i)}: column {column!r} is missing (null)")
        if not isinstance(v, str):
            raise ValueError(
                f"{_row_label(frame, i)}: column {column!r} must be a string, got {type(v).__name__} {v!r}"
            )
        if not v.strip():
            raise ValueError(f"{_row_label(frame, i)}: column {column!r} is empty")


def _plain_integers(column: pd.Series, low: float, high: float) -> np.ndarray | None:
    """The column as int64 when it is an integer column without nulls whose values lie in
    ``low..high`` (what the element-wise checks would return, at numpy speed), else None."""
    dtype = column.dtype
    if not pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype) or column.isna().any():
        return None
    values = column.to_numpy(dtype=np.int64)
    return values if bool(np.all((values >= low) & (values <= high))) else None


def _normalise_ratings(frame: pd.DataFrame) -> np.ndarray:
    fast = _plain_integers(frame["rating"], RATING_MIN, RATING_MAX)
    if fast is not None:
        return fast
    raw = frame["rating"].to_numpy(dtype=object)
    out = np.empty(len(raw), dtype=np.int64)
    for i, v in enumerate(raw):
        if isinstance(v, (bool, np.bool_)) or v is None or v is pd.NA:
            raise ValueError(f"{_row_label(frame, i)}: rating {v!r} is not a number in 1..6")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{_row_label(frame, i)}: rating {v!r} is not a number in 1..6") from None
        if not np.isfinite(f) or f != int(f) or not RATING_MIN <= f <= RATING_MAX:
            raise ValueError(
                f"{_row_label(frame, i)}: rating {v!r} is outside {RATING_MIN}..{RATING_MAX} "
                "(integers; 6 = strongest preference for sentence2)"
            )
        out[i] = int(f)
    return out


def _integer_groups(frame: pd.DataFrame) -> np.ndarray:
    """The ``group`` column as int64; ValueError names the first value that is not an integer
    (a group of 3.5 is an error, never truncated to 3)."""
    fast = _plain_integers(frame["group"], -(2.0**53), 2.0**53)  # exact as floats, as below
    if fast is not None:
        return fast
    raw = frame["group"].to_numpy(dtype=object)
    out = np.empty(len(raw), dtype=np.int64)
    for i, v in enumerate(raw):
        try:
            f = float(v) if not isinstance(v, (bool, np.bool_, str)) else math.nan
        except (TypeError, ValueError):
            f = math.nan
        if not math.isfinite(f) or f != math.floor(f):
            raise ValueError(f"{_row_label(frame, i)}: group {v!r} is not an integer")
        out[i] = int(f)
    return out


def default_unit(frame: pd.DataFrame) -> str:
    """``group`` when the trials come from more than one participant group (main), else
    ``participant`` (pll: one group of 30)."""
    return "group" if frame["group"].nunique() > 1 else "participant"


def prepare_trials(trials: pd.DataFrame, unit: str | None = None) -> PreparedTrials:
    """Validate ``trials`` and return them in the shared pair orientation.

    ``unit`` is ``"participant"`` or ``"group"`` (default: :func:`default_unit`).  Raises
    ValueError for: an empty frame, missing columns, null/blank participants or sentences,
    ratings outside 1..6, unknown trial types, a participant in two groups, a pair id used for
    two different sentence pairs or trial types, identical sentences in one trial, and
    duplicated (participant, pair_id) rows.
    """
    if not isinstance(trials, pd.DataFrame):
        raise TypeError(f"trials must be a pandas DataFrame, got {type(trials).__name__}")
    if len(trials) == 0:
        raise ValueError("no trials: the trials frame is empty")
    missing = [c for c in ANALYSIS_COLUMNS if c not in trials.columns]
    if missing:
        raise ValueError(f"trials are missing column(s) {missing}; required: {list(ANALYSIS_COLUMNS)}")
    frame = trials.reset_index(drop=True).copy()

    for col in ("participant", "pair_id", "sentence1", "sentence2", "trial_type"):
        _check_strings(frame, col, allow_null=False)
    for col in TARGET_COLUMNS:
        _check_strings(frame, col, allow_null=True)
        frame[col] = frame[col].astype(object).where(frame[col].notna(), None)

    unknown = ~frame["trial_type"].isin(TRIAL_TYPES)
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise ValueError(
            f"{_row_label(frame, i)}: unknown trial type {frame['trial_type'].iloc[i]!r}; "
            f"known: {', '.join(TRIAL_TYPES)}"
        )
    same = frame["sentence1"] == frame["sentence2"]
    if same.any():
        i = int(np.flatnonzero(same.to_numpy())[0])
        raise ValueError(f"{_row_label(frame, i)}: sentence1 and sentence2 are the same sentence")

    groups = frame["group"]
    if groups.isna().any():
        i = int(np.flatnonzero(groups.isna().to_numpy())[0])
        raise ValueError(f"{_row_label(frame, i)}: column 'group' is missing (null)")
    frame["group"] = _integer_groups(frame)
    n_groups = frame.groupby("participant")["group"].nunique()
    if (n_groups > 1).any():
        p = n_groups.index[n_groups.to_numpy() > 1][0]
        raise ValueError(f"participant {p!r} appears in more than one group")

    frame["rating"] = _normalise_ratings(frame)

    dup = frame.duplicated(["participant", "pair_id"], keep=False)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(
            f"duplicated trial: participant {frame['participant'].iloc[i]!r} has more than one row "
            f"for pair {frame['pair_id'].iloc[i]!r}"
        )

    flipped = (frame["sentence1"] > frame["sentence2"]).to_numpy()
    first = np.where(flipped, frame["sentence2"], frame["sentence1"])
    second = np.where(flipped, frame["sentence1"], frame["sentence2"])
    key = pd.DataFrame({"pair_id": frame["pair_id"], "a": first, "b": second, "t": frame["trial_type"]})
    per_pair = key.drop_duplicates().groupby("pair_id").size()
    if (per_pair > 1).any():
        bad = per_pair.index[per_pair.to_numpy() > 1][0]
        raise ValueError(
            f"pair id {bad!r} is used for more than one sentence pair or trial type; "
            "a pair id must identify one unordered sentence pair"
        )
    frame["flipped"] = flipped
    frame["rating_oriented"] = np.where(flipped, 7 - frame["rating"], frame["rating"]).astype(np.int64)
    frame["chose_second"] = frame["rating_oriented"].to_numpy() >= 4

    unit = unit or default_unit(frame)
    if unit not in ("participant", "group"):
        raise ValueError(f"unit must be 'participant' or 'group', got {unit!r}")
    return PreparedTrials(frame=frame, unit=unit)


def check_logprob(value, sentence: str, model_name: str) -> float:
    """``value`` as a finite float; ValueError names the sentence otherwise."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{model_name}: log-probability of sentence {sentence!r} is a bool ({value!r})")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{model_name}: log-probability of sentence {sentence!r} is not a number: {value!r}"
        ) from None
    if not np.isfinite(f):
        raise ValueError(f"{model_name}: log-probability of sentence {sentence!r} is not finite ({f})")
    return f


def check_log_ratios(values, n: int, model_name: str) -> np.ndarray:
    """Per-trial log-ratios as float64; ValueError on a wrong length or non-finite entries."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{model_name}: expected {n} per-trial log-ratios, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(
            f"{model_name}: log-ratio of trial {int(bad[0])} is not finite ({arr[bad[0]]}); "
            "NaN or infinite log-probabilities are not allowed"
        )
    return arr


def pair_votes(trials: pd.DataFrame) -> dict[str, dict]:
    """One entry per sentence pair (by ``pair_id``, in trial order): its two sentences ``a`` and
    ``b`` as first shown, its ``trial_type`` and ``votes`` {sentence: participants who chose it}
    (a rating of 4..6 chooses ``sentence2``)."""
    chose2 = trials["rating"].to_numpy() >= 4
    chosen = np.where(chose2, trials["sentence2"].to_numpy(), trials["sentence1"].to_numpy())
    pairs: dict[str, dict] = {}
    for pid, s1, s2, tt, c in zip(trials["pair_id"], trials["sentence1"], trials["sentence2"],
                                  trials["trial_type"], chosen):
        rec = pairs.setdefault(str(pid), {"a": s1, "b": s2, "trial_type": tt, "votes": {}})
        rec["votes"][c] = rec["votes"].get(c, 0) + 1
    return pairs
