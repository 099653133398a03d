"""The experiment design file: which sentence pairs each participant group sees.

A design is a parquet file (or a folder holding exactly one, e.g. a built dataset with a
``design`` config) with one row per participant group x trial and these columns
(:data:`DESIGN_COLUMNS`, the ``trials`` layout of :data:`contstim_bench.study.TRIAL_COLUMNS`
without experiment, participant, rating, confidence and reaction time):

============================  =======  ==========================================================
column                        type     meaning
============================  =======  ==========================================================
``group``                     int64    participant group (>= 1); every participant sees one group
``trial``                     int64    the group's trial order, 1..n without gaps
``pair_id``                   string   :func:`contstim_bench.data.contstim_trials.pair_id` of the
                                       two sentences (unordered pair id shared with the dataset)
``sentence1``                 string   the sentence on the left in the design's orientation
``sentence2``                 string   the sentence on the right
``sentence1_type``            string   raw stimulus type code (N, S1, S2, N1, N2, R1, R2, C1, C2)
``sentence2_type``            string
``trial_type``                string   one of :data:`contstim_bench.study.TRIAL_TYPES`, consistent
                                       with the two type codes; catch trials are
                                       ``natural_vs_shuffled`` with C1 the natural sentence and C2
                                       its shuffled version
``sentence1_accept_model``    string   model targeted to accept sentence1 (null if none)
``sentence1_reject_model``    string   model targeted to reject sentence1 (null if none)
``sentence2_accept_model``    string
``sentence2_reject_model``    string
============================  =======  ==========================================================

The server re-randomises order and sides per participant unless the export fixes them
(``contstim experiment export --fixed-order/--fixed-sides``); the order and sides written in the
design are then those every participant of the group sees.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .contstim_trials import pair_id as make_pair_id
from .contstim_trials import trial_type_of
from ..study import TARGET_COLUMNS

DESIGN_COLUMNS = {
    "group": "int64",
    "trial": "int64",
    "pair_id": "string",
    "sentence1": "string",
    "sentence2": "string",
    "sentence1_type": "string",
    "sentence2_type": "string",
    "trial_type": "string",
    "sentence1_accept_model": "string",
    "sentence1_reject_model": "string",
    "sentence2_accept_model": "string",
    "sentence2_reject_model": "string",
}
"""Columns of a design file, in order, with their arrow types."""

REQUIRED_STRINGS = ("pair_id", "sentence1", "sentence2", "sentence1_type", "sentence2_type", "trial_type")
CATCH_TRIAL_TYPE = "natural_vs_shuffled"
NATURAL_CATCH_CODE = "C1"
"""In a catch trial the natural sentence has type code C1 and its shuffled version C2."""

PER_PARTICIPANT_COLUMNS = ("experiment", "participant", "rating", "confidence", "reaction_time_ms")
"""Columns of the ``trials`` layout that a design does not have."""


def design_schema() -> pa.Schema:
    return pa.schema([(name, pa.type_for_alias(typ)) for name, typ in DESIGN_COLUMNS.items()])


def _where(frame: pd.DataFrame, i: int) -> str:
    row = frame.iloc[i]
    return f"design row {i} (group {row.get('group')!r}, trial {row.get('trial')!r})"


def _int_column(frame: pd.DataFrame, col: str) -> pd.Series:
    values = frame[col]
    if values.isna().any():
        i = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise ValueError(f"{_where(frame, i)}: column {col!r} is null")
    try:
        ints = values.astype(np.int64)
    except (TypeError, ValueError):
        raise ValueError(f"design column {col!r} must hold integers, got values like {values.iloc[0]!r}") from None
    bad = (ints.to_numpy() != pd.to_numeric(values, errors="coerce").to_numpy()) | (ints.to_numpy() < 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{_where(frame, i)}: column {col!r} must be an integer >= 1, got {values.iloc[i]!r}")
    return ints


def validate_design(design: pd.DataFrame) -> pd.DataFrame:
    """Check a design and return it with exactly :data:`DESIGN_COLUMNS`, sorted by group and trial.

    ValueError (naming the row, group and trial) for: missing columns, null or blank sentences,
    pair ids or type codes, a pair id that is not the pair id of its two sentences, a trial type
    that does not match the type codes, identical sentences in one trial, trial numbers of a
    group that are not 1..n and a pair shown twice to a group.  Catch trials are optional; a
    ``natural_vs_shuffled`` trial must pair type codes C1 (natural) and C2 (shuffled).
    """
    if not isinstance(design, pd.DataFrame):
        raise TypeError(f"a design must be a pandas DataFrame, got {type(design).__name__}")
    if len(design) == 0:
        raise ValueError("the design is empty (no trials)")
    missing = [c for c in DESIGN_COLUMNS if c not in design.columns]
    if missing:
        raise ValueError(f"design is missing column(s) {missing}; required: {list(DESIGN_COLUMNS)}")
    frame = design[list(DESIGN_COLUMNS)].reset_index(drop=True).copy()
    for col in ("group", "trial"):
        frame[col] = _int_column(frame, col)
    for col in REQUIRED_STRINGS:
        values = frame[col]
        bad = values.map(lambda v: not isinstance(v, str) or not v.strip()).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{_where(frame, i)}: column {col!r} must be a non-empty string, got {values.iloc[i]!r}")
    for col in TARGET_COLUMNS:
        values = frame[col].astype(object).where(frame[col].notna(), None)
        bad = values.map(lambda v: v is not None and (not isinstance(v, str) or not v.strip())).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{_where(frame, i)}: column {col!r} must be a model name or null, got {values.iloc[i]!r}")
        frame[col] = values
    for i, row in enumerate(frame.itertuples(index=False)):
        if row.sentence1 == row.sentence2:
            raise ValueError(f"{_where(frame, i)}: sentence1 and sentence2 are the same sentence {row.sentence1!r}")
        expected = make_pair_id(row.sentence1, row.sentence2)
        if row.pair_id != expected:
            raise ValueError(
                f"{_where(frame, i)}: pair_id {row.pair_id!r} is not the pair id of its sentences "
                f"(expected {expected!r}, see contstim_bench.data.contstim_trials.pair_id)"
            )
        kind = trial_type_of(row.sentence1_type, row.sentence2_type, where=f"{_where(frame, i)}: ")
        if kind != row.trial_type:
            raise ValueError(
                f"{_where(frame, i)}: trial_type {row.trial_type!r} does not match the type codes "
                f"({row.sentence1_type!r}, {row.sentence2_type!r}) which mean {kind!r}"
            )
    frame = frame.sort_values(["group", "trial"], kind="stable").reset_index(drop=True)
    for group, rows in frame.groupby("group", sort=True):
        trials = rows["trial"].to_numpy()
        expected = np.arange(1, len(rows) + 1)
        if not np.array_equal(trials, expected):
            dup = rows["trial"][rows["trial"].duplicated()]
            detail = f"trial {int(dup.iloc[0])} occurs twice" if len(dup) else f"got {trials.min()}..{trials.max()} for {len(rows)} trials"
            raise ValueError(f"design group {group}: trial numbers must be 1..{len(rows)} without gaps ({detail})")
        dup = rows["pair_id"].duplicated()
        if dup.any():
            raise ValueError(
                f"design group {group}: pair {rows['pair_id'][dup].iloc[0]!r} is shown twice "
                f"(trial {int(rows['trial'][dup].iloc[0])})"
            )
    return frame


def design_from_trials(trials: pd.DataFrame) -> pd.DataFrame:
    """The design behind a ``trials`` frame: for each group, the trial list (order and sides) of
    that group's first participant in sorted order, validated.

    ValueError when another participant of the same group saw a different set of pairs (the
    group's design would then not be one list).
    """
    if not isinstance(trials, pd.DataFrame):
        raise TypeError(f"trials must be a pandas DataFrame, got {type(trials).__name__}")
    if len(trials) == 0:
        raise ValueError("no trials: the trials frame is empty")
    for col in ("participant", *DESIGN_COLUMNS):
        if col not in trials.columns:
            raise ValueError(f"trials frame is missing column {col!r}")
    rows = []
    for group, g in trials.groupby("group", sort=True):
        participants = sorted(g["participant"].astype(str).unique())
        first = g[g["participant"].astype(str) == participants[0]].sort_values("trial", kind="stable")
        pairs = set(first["pair_id"])
        for p in participants[1:]:
            other = set(g.loc[g["participant"].astype(str) == p, "pair_id"])
            if other != pairs:
                raise ValueError(
                    f"group {group}: participant {p!r} saw {len(other ^ pairs)} pair(s) that participant "
                    f"{participants[0]!r} did not (or the reverse); the group has no single design"
                )
        part = first[list(DESIGN_COLUMNS)].copy()
        part["trial"] = np.arange(1, len(part) + 1)
        rows.append(part)
    return validate_design(pd.concat(rows, ignore_index=True))


def design_table(design: pd.DataFrame) -> pa.Table:
    """A validated design as an arrow table with :func:`design_schema`."""
    frame = validate_design(design)
    return pa.Table.from_pandas(frame, schema=design_schema(), preserve_index=False)


def write_design(design: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Validate ``design`` and write it as one parquet file at ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(design_table(design).replace_schema_metadata(None), path, compression="zstd")
    return path


MAX_DESIGN_BYTES = 1 << 30
"""Largest design file read (bytes)."""


def _design_file(path: Path) -> Path:
    from ..staging import regular_file

    return regular_file(_find_design_file(path), MAX_DESIGN_BYTES, "design file")


def _find_design_file(path: Path) -> Path:
    if path.is_file():
        return path
    if not path.is_dir():
        if path.exists():
            return path  # a FIFO, a device: named by regular_file
        raise FileNotFoundError(f"design {path} does not exist (a parquet file or a folder holding one)")
    for candidate in (path / "design.parquet", path / "design"):
        if candidate.is_file():
            return candidate
        if candidate.is_dir():
            path = candidate
            break
    # hidden files and folders below the design folder are not the design (the folder itself may
    # lie in a hidden one: a plan folder being written beside its old version)
    files = sorted(p for p in path.rglob("*.parquet")
                   if not any(part.startswith(".") for part in p.relative_to(path).parts))
    if len(files) != 1:
        listed = ", ".join(str(f.relative_to(path)) for f in files) or "none"
        raise ValueError(
            f"design folder {path} must hold exactly one parquet file (or design.parquet / design/); found: {listed}"
        )
    return files[0]


def read_design(path: str | os.PathLike) -> pd.DataFrame:
    """Read and validate a design from a parquet file or a folder holding one.

    A file in the full ``trials`` layout (with a ``participant`` column) is accepted and turned
    into a design with :func:`design_from_trials`; the per-participant columns of the ``trials``
    layout (experiment, rating, confidence, reaction time) are ignored when present.
    """
    from .verify import verify_parquet

    file = verify_parquet(_design_file(Path(path)))  # a design written as a dataset is checked
    try:
        frame = pq.read_table(file).to_pandas()
    except (OSError, pa.ArrowInvalid) as exc:
        raise ValueError(f"design {file} is not a readable parquet file: {exc}") from None
    if "participant" in frame.columns and frame["participant"].notna().any():
        return design_from_trials(frame)
    frame = frame.drop(columns=[c for c in PER_PARTICIPANT_COLUMNS if c in frame.columns])
    extra = [c for c in frame.columns if c not in DESIGN_COLUMNS]
    if extra:
        raise ValueError(f"design {file} has unknown column(s) {extra}; allowed: {list(DESIGN_COLUMNS)}")
    return validate_design(frame)
