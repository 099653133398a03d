"""``contstim experiment ingest``: turn a response database into a new round of the contstim benchmark.

The database (:mod:`contstim_bench.experiment.store`) is opened read-only through a
``file:...?mode=ro`` URI, so ingestion never modifies it.  Each response becomes one row in the
layout of :data:`contstim_bench.study.TRIAL_COLUMNS`: ``sentence1``/``sentence2`` are the
sentences as shown (left/right, after the participant's side swap, with their type codes and
targeted models swapped alongside), ``trial`` is the position in the participant's session,
``rating`` the button (1 = very confident left ... 6 = very confident right), ``confidence``
3/2/1 for very confident/confident/somewhat confident, ``reaction_time_ms`` as measured by the
browser.  Participants are named ``<experiment>-pNNN`` by their database row id (tokens and
recruitment-platform ids are never written out).

Exclusion (Golan et al. 2023, Methods): a participant is kept only if they chose the natural
sentence over its shuffled version in at least ``min_catch_correct`` (11) of the catch trials
(``natural_vs_shuffled``, 12 in the paper) and, unless ``keep_incomplete``, answered every trial.

The dataset written (:func:`write_ingested`) is a round of the benchmark, ``contstim.<experiment>``
(:mod:`contstim_bench.experiment.round_writer`, :mod:`contstim_bench.data.rounds`): the
``trials`` and ``participants`` configs, the served ``design``, the targeted ``models`` with
their ``logprobs`` (from ``--design``, the output of ``contstim generate design``) and
``round.json``; ``contstim evaluate --benchmark contstim.<experiment>`` evaluates any model on it.
"""
from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import pyarrow as pa

from ..analysis.exclusion import MIN_CATCH_CORRECT, catch_correct, excluded_by_catch  # noqa: F401 (re-exported)
from ..data.contstim_trials import CONFIDENCE_BY_RATING, trials_schema
from ..data.writer import ConfigSpec, DatasetSpec
from ..study import TRIAL_COLUMNS
from ..data.design_file import CATCH_TRIAL_TYPE
from .round_writer import TRIAL_COLUMN_DOCS


PARTICIPANT_COLUMN_DOCS = {
    "participant": "participant id as in `trials`",
    "group": "participant group",
    "n_trials": "trials assigned to the participant",
    "n_answered": "trials answered",
    "catch_trials": "catch (natural_vs_shuffled) trials assigned",
    "catch_correct": "catch trials where the natural sentence was chosen over its shuffled version",
    "included": "true when the participant's trials are in the `trials` config",
    "exclusion_reason": "why the participant was excluded (null when included)",
    "first_response_at": "UTC time of the participant's first stored response (null if none)",
    "last_response_at": "UTC time of the participant's last stored response (null if none)",
}


@dataclass
class IngestResult:
    """What :func:`ingest` produced: rows of kept participants, every participant's record,
    the dataset folder it wrote (None before writing) and the source database's
    :func:`db_digest`."""

    trials: pd.DataFrame
    participants: pd.DataFrame
    db_sha256: str
    dataset_folder: Path | None = None

    @property
    def excluded(self) -> pd.DataFrame:
        return self.participants[~self.participants["included"]]


def open_readonly(db_path: str | os.PathLike) -> sqlite3.Connection:
    """Open a response database read-only (``file:...?mode=ro``); FileNotFoundError if absent."""
    from ..staging import regular_file

    path = Path(db_path)
    if not path.exists():
        raise FileNotFoundError(f"response database {path} does not exist")
    regular_file(path, 1 << 40, "response database")  # never a FIFO or a device
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ValueError(f"{path} is not an SQLite database: {exc}") from None
    needed = {"meta", "design_trials", "participants", "assignments", "responses"}
    if not needed <= tables:
        conn.close()
        raise ValueError(f"{path} is not a contstim response database (missing tables {sorted(needed - tables)})")
    return conn


def db_digest(db_path: str | os.PathLike) -> str:
    """sha256 identifying a database's content: the main file's bytes followed by those of its
    write-ahead log ``<db>-wal`` when that is present and not empty (a running or killed server
    may leave committed transactions there)."""
    path = Path(db_path)
    h = hashlib.sha256()
    wal = path.with_name(path.name + "-wal")
    for part in (path, wal):
        if part.is_file() and part.stat().st_size:
            with open(part, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def _read(conn: sqlite3.Connection) -> pd.DataFrame:
    """One row per participant x assigned trial, with the response where there is one."""
    query = """
        SELECT p.id AS pid, p.group_id AS "group", a.position AS trial, a.swapped,
               d.pair_id, d.sentence1, d.sentence2, d.sentence1_type, d.sentence2_type, d.trial_type,
               d.sentence1_accept_model, d.sentence1_reject_model,
               d.sentence2_accept_model, d.sentence2_reject_model,
               r.rating, r.reaction_time_ms, r.received_at
        FROM participants p
        JOIN assignments a ON a.participant_id = p.id
        JOIN design_trials d ON d.group_id = p.group_id AND d.trial = a.design_trial
        LEFT JOIN responses r ON r.participant_id = a.participant_id AND r.position = a.position
        ORDER BY p.id, a.position
    """
    return pd.read_sql_query(query, conn)


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    """Swap the design's sentence1/sentence2 (and their type codes and targets) where the
    participant saw them the other way round, so sentence1 is the left sentence."""
    out = frame.copy()
    swapped = out["swapped"].to_numpy().astype(bool)
    for a, b in (("sentence1", "sentence2"), ("sentence1_type", "sentence2_type"),
                 ("sentence1_accept_model", "sentence2_accept_model"),
                 ("sentence1_reject_model", "sentence2_reject_model")):
        left = np.where(swapped, out[b].to_numpy(dtype=object), out[a].to_numpy(dtype=object))
        right = np.where(swapped, out[a].to_numpy(dtype=object), out[b].to_numpy(dtype=object))
        out[a], out[b] = left, right
    return out


def ingest(
    db_path: str | os.PathLike,
    experiment: str,
    *,
    min_catch_correct: int = MIN_CATCH_CORRECT,
    keep_incomplete: bool = False,
) -> IngestResult:
    """Read the database and apply the exclusion rule (see the module docstring)."""
    if not isinstance(experiment, str) or not experiment.strip() or any(c.isspace() for c in experiment):
        raise ValueError(f"experiment name {experiment!r} must be a non-empty word without spaces")
    from ..data.rounds import check_round_name

    check_round_name(experiment)
    if min_catch_correct < 0:
        raise ValueError(f"min_catch_correct must be >= 0, got {min_catch_correct}")
    path = Path(db_path)
    conn = open_readonly(path)
    digest = db_digest(path)
    try:
        raw = _read(conn)
    finally:
        conn.close()
    if db_digest(path) != digest:
        raise RuntimeError(
            f"response database {path} changed while it was read (is the server still running?); "
            "stop the server or ingest a copy"
        )
    frame = _shown(raw)
    frame["catch_ok"] = catch_correct(frame)
    frame["is_catch"] = frame["trial_type"] == CATCH_TRIAL_TYPE
    frame["answered"] = frame["rating"].notna()
    width = max(3, len(str(int(frame["pid"].max())))) if len(frame) else 3
    frame["participant"] = [f"{experiment}-p{int(p):0{width}d}" for p in frame["pid"]]

    records = []
    for pid, rows in frame.groupby("pid", sort=True):
        n_trials, n_answered = len(rows), int(rows["answered"].sum())
        n_catch, n_ok = int(rows["is_catch"].sum()), int(rows["catch_ok"].sum())
        reasons = []
        if n_answered < n_trials and not keep_incomplete:
            reasons.append(f"incomplete: answered {n_answered} of {n_trials} trials")
        if excluded_by_catch(n_ok, min_catch_correct):
            reasons.append(
                f"catch trials: chose the natural sentence in {n_ok} of {n_catch} (at least {min_catch_correct} required)"
            )
        times = rows["received_at"].dropna()
        records.append({
            "participant": rows["participant"].iloc[0],
            "group": int(rows["group"].iloc[0]),
            "n_trials": n_trials,
            "n_answered": n_answered,
            "catch_trials": n_catch,
            "catch_correct": n_ok,
            "included": not reasons,
            "exclusion_reason": "; ".join(reasons) or None,
            "first_response_at": times.min() if len(times) else None,
            "last_response_at": times.max() if len(times) else None,
        })
    participants = pd.DataFrame.from_records(records, columns=list(PARTICIPANT_COLUMN_DOCS))
    kept = set(participants.loc[participants["included"], "participant"]) if len(participants) else set()

    rows = frame[frame["participant"].isin(kept) & frame["answered"]].copy()
    rows["experiment"] = experiment
    rows["rating"] = rows["rating"].astype(np.int64)
    rows["confidence"] = rows["rating"].map(CONFIDENCE_BY_RATING).astype(np.int64)
    rows["reaction_time_ms"] = rows["reaction_time_ms"].astype(np.float64)
    trials = rows[list(TRIAL_COLUMNS)].reset_index(drop=True)
    for col in ("sentence1_accept_model", "sentence1_reject_model", "sentence2_accept_model", "sentence2_reject_model"):
        trials[col] = trials[col].astype(object).where(trials[col].notna(), None)
    return IngestResult(trials=trials, participants=participants, db_sha256=digest)


def _participants_table(participants: pd.DataFrame) -> pa.Table:
    schema = pa.schema([
        ("participant", pa.string()), ("group", pa.int64()), ("n_trials", pa.int64()),
        ("n_answered", pa.int64()), ("catch_trials", pa.int64()), ("catch_correct", pa.int64()),
        ("included", pa.bool_()), ("exclusion_reason", pa.string()),
        ("first_response_at", pa.string()), ("last_response_at", pa.string()),
    ])
    return pa.Table.from_pandas(participants, schema=schema, preserve_index=False)


def dataset_spec(result: IngestResult, db_path: str | os.PathLike, experiment: str, name: str,
                 min_catch_correct: int, keep_incomplete: bool, ingested_at: str, round_parts=None) -> DatasetSpec:
    """The dataset (``trials`` and ``participants`` configs, split ``experiment``) with a card
    recording the source database, its sha256 and the ingestion date.  ``round_parts``:
    ``(version, design, models, logprobs)`` adds the round's configs and card lines
    (:mod:`.round_writer`)."""
    if len(result.trials) == 0:
        raise ValueError(
            f"no participant of {db_path} passed the exclusion rule (or none answered): nothing to write; "
            "see the excluded participants and their reasons"
        )
    trials_table = pa.Table.from_pandas(result.trials, schema=trials_schema(), preserve_index=False)
    p = result.participants
    lines = [
        f"- Ingested {ingested_at} from response database `{Path(db_path).name}` (sha256 `{result.db_sha256}`).",
        f"- {len(p)} participant(s): {int(p['included'].sum())} included, {int((~p['included']).sum())} excluded; "
        f"{len(result.trials)} trial rows.",
        f"- Exclusion rule: at least {min_catch_correct} catch trials (natural vs shuffled) answered for the "
        "natural sentence (Golan et al. 2023)" + ("" if keep_incomplete else "; every trial answered") + ".",
    ]
    for row in result.excluded.itertuples(index=False):
        lines.append(f"- EXCLUDED {row.participant} (group {row.group}): {row.exclusion_reason}.")
    extra_configs = []
    if round_parts is not None:
        from .round_writer import card_lines, round_configs

        version, design, models, logprobs = round_parts
        lines += card_lines(experiment, version, models, design, has_logprobs=len(logprobs.columns) > 1)
        extra_configs = round_configs(experiment, design, models, logprobs)
    if len(p) and p["first_response_at"].notna().any():
        lines.append(f"- Responses received {p['first_response_at'].dropna().min()} to {p['last_response_at'].dropna().max()} (UTC).")
    return DatasetSpec(
        name=name,
        pretty_name=f"contstim human judgments: {experiment}",
        license="cc-by-4.0",
        description=(
            f"Human judgments of sentence pairs collected with `contstim experiment serve` (experiment "
            f"`{experiment}`): one row per participant x trial in the `trials` layout of contstim-bench, "
            "after the exclusion rule of Golan et al. (2023)."
        ),
        citation=(
            "@article{golan2023testing,\n  title={Testing the limits of natural language models for predicting "
            "human language judgements},\n  author={Golan, Tal and Siegelman, Matthew and Kriegeskorte, Nikolaus "
            "and Baldassano, Christopher},\n  journal={Nature Machine Intelligence},\n  year={2023}\n}"
        ),
        sources=[
            f"response database `{Path(db_path).name}`, sha256 `{result.db_sha256}`, read-only",
            f"ingested {ingested_at}",
        ],
        configs=[
            ConfigSpec("trials", {experiment: trials_table}, "One row per included participant x answered trial.",
                       dict(TRIAL_COLUMN_DOCS)),
            ConfigSpec("participants", {experiment: _participants_table(p)},
                       "One row per participant in the database, included or not, with the exclusion reason.",
                       dict(PARTICIPANT_COLUMN_DOCS)),
            *extra_configs,
        ],
        notes="\n".join(lines),
        extra_yaml={"source_db_sha256": result.db_sha256, "ingested_at": ingested_at},
    )


def dataset_name(experiment: str, name: str | None = None, version: str = "1") -> str:
    """The folder name of an ingested round inside its datasets folder: ``name``, by default
    ``contstim-<experiment>``, with ``-v<version>`` for a version other than 1 (the versions of a
    round are kept side by side)."""
    if name is not None and (not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", name)
                             or ".." in name):
        raise ValueError(f"--name {name!r} must be a folder name (letters, digits, '.', '_', '-'; no path): the round "
                         f"is written into the datasets folder --out")
    if not isinstance(version, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", version) or ".." in version:
        raise ValueError(f"round version {version!r} must be a word of letters, digits, '.', '_' or '-'")
    base = name or f"contstim-{experiment}"
    return base if version == "1" else f"{base}-v{version}"


def write_ingested(result: IngestResult, db_path: str | os.PathLike, out_dir: str | os.PathLike, experiment: str,
                   *, name: str | None = None, min_catch_correct: int = MIN_CATCH_CORRECT,
                   keep_incomplete: bool = False, design: str | os.PathLike | None = None,
                   round_version: str = "1", replace: bool = False) -> Path:
    """Write an :func:`ingest` result to ``out_dir/<name>`` (default ``contstim-<experiment>``),
    dated now (UTC), as round ``contstim.<experiment>`` version ``round_version`` of the
    benchmark; sets and returns ``result.dataset_folder``.

    ``design``: the output folder of the ``contstim generate design`` run that was exported (it
    must be the design the database served); it gives the round its targeted models' specs and
    log-probabilities.  ValueError for another design, or for the same round and version already
    in ``out_dir`` with other data (unless ``replace``); other versions are kept, each in its own
    folder (:func:`dataset_name`)."""
    from .round_writer import check_same_design, round_meta, round_models, served_design, served_meta, write_round

    if not isinstance(round_version, str) or not round_version.strip() or any(c.isspace() for c in round_version):
        raise ValueError(f"round version {round_version!r} must be a non-empty word without spaces")
    ingested_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    conn = open_readonly(db_path)
    try:
        served = served_design(conn)
        db_meta = served_meta(conn)
    finally:
        conn.close()
    if design is not None:
        from ..data.design_file import read_design

        check_same_design(served, read_design(design), str(design))
    models, logprobs = round_models(served, design)
    spec = dataset_spec(result, db_path, experiment, dataset_name(experiment, name, round_version), min_catch_correct,
                        keep_incomplete, ingested_at, round_parts=(round_version, served, models, logprobs))

    def meta_for(fingerprint: str) -> dict:
        return round_meta(experiment, round_version, ingested_at, fingerprint, result, served, models, db_meta,
                          design, min_catch_correct, keep_incomplete)

    result.dataset_folder = write_round(spec, out_dir, experiment, meta_for, replace=replace)
    return result.dataset_folder


def ingest_to_dataset(
    db_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    experiment: str,
    *,
    name: str | None = None,
    min_catch_correct: int = MIN_CATCH_CORRECT,
    keep_incomplete: bool = False,
    on_ingested: Callable[[IngestResult], None] | None = None,
    design: str | os.PathLike | None = None,
    round_version: str = "1",
    replace: bool = False,
) -> IngestResult:
    """:func:`ingest` then :func:`write_ingested` (what ``contstim experiment ingest`` runs).

    ``on_ingested`` is called with the result between the two, so a caller can report who was
    excluded and why even when nobody passed and nothing is written (ValueError)."""
    result = ingest(db_path, experiment, min_catch_correct=min_catch_correct, keep_incomplete=keep_incomplete)
    if on_ingested is not None:
        on_ingested(result)
    write_ingested(result, db_path, out_dir, experiment, name=name, min_catch_correct=min_catch_correct,
                   keep_incomplete=keep_incomplete, design=design, round_version=round_version, replace=replace)
    return result
