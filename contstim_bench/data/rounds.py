"""Rounds of the contstim benchmark: datasets of human judgments collected after the paper.

The benchmark grows the way Golan et al. (2023) built it and Dynabench runs its tasks: each
round is made of fresh controversial pairs targeting the models of its day (``contstim generate
... --candidates ... --references ...``), judged by people in the browser experiment and
ingested by ``contstim experiment ingest``, which writes the round as a built dataset folder::

    <datasets>/<dataset name>/round.json                 what the round is (below)
    <datasets>/<dataset name>/README.md                  dataset card (design, models, exclusions)
    <datasets>/<dataset name>/fingerprint.json
    <datasets>/<dataset name>/trials/<round>.parquet     one row per included participant x trial
    <datasets>/<dataset name>/participants/<round>.parquet   every participant, exclusion reason
    <datasets>/<dataset name>/design/<round>.parquet     the served design (trial lists per group)
    <datasets>/<dataset name>/models/<round>.parquet     the targeted models: name, spec, role
    <datasets>/<dataset name>/logprobs/<round>.parquet   their log-probabilities of every sentence

``round.json`` (:data:`ROUND_FORMAT`): ``identifier`` (``contstim.<round>``), ``name``,
``version``, ``date`` (UTC, ingestion), ``fingerprint`` (:func:`round_fingerprint`: sha256 over
the decoded ``trials``, ``design``, ``models`` and ``logprobs`` tables, what every score of the
round depends on; the participants table, which holds response times of day, is left out so a
rerun of a simulated study gives the same fingerprint), ``source_db_sha256``, ``design``
(experiment id, groups, trials per condition), ``models`` (name, spec, role), ``participants``
(counts), ``exclusions`` (participant, group, reason), ``exclusion_rule`` and
``package_version``.

Rounds are found, never registered by hand: :func:`discover_rounds` lists every folder with a
``round.json`` directly under a datasets folder (or the folder itself when it is a round), and
:func:`load_round` reads one, verifying its tables against the fingerprint (an edited round is an
error naming the table).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..staging import regular_file
from .paths import default_datasets_dir
from .writer import dataset_fingerprint, parquet_table_digest

ROUND_FILE = "round.json"
ROUND_FORMAT = "contstim-round"
ROUND_FORMAT_VERSION = 1
PREFIX = "contstim."
FINGERPRINT_TABLES = ("trials", "design", "models", "logprobs")
"""The tables a round's fingerprint covers (see the module docstring)."""
RESERVED = ("main", "pll")
MAX_META_BYTES = 16 << 20
MAX_TABLE_BYTES = 4 << 30
"""Largest ``round.json`` read (bytes)."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def check_round_name(name: str) -> str:
    """``name`` if it can name a round (letters, digits, ``_``, ``-``; not ``main`` or ``pll``),
    else ValueError saying why."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"round name {name!r} must be 1-64 letters, digits, '_' or '-', starting with a letter or digit")
    if name in RESERVED:
        raise ValueError(f"round name {name!r} is taken by the paper's experiment contstim.{name}; choose another")
    return name


def identifier_of(name: str) -> str:
    """``contstim.<name>``."""
    return PREFIX + name


def round_name(identifier: str) -> str | None:
    """The round name of ``contstim.<name>`` (None for any other identifier or a paper experiment)."""
    if not isinstance(identifier, str) or not identifier.startswith(PREFIX):
        return None
    name = identifier[len(PREFIX):]
    return name if _NAME.match(name) and name not in RESERVED else None


def round_fingerprint(folder: str | os.PathLike, name: str) -> str:
    """sha256 over the content digests of the round's :data:`FINGERPRINT_TABLES` (FileNotFoundError
    names a missing table)."""
    folder = Path(folder)
    digests = {}
    for config in FINGERPRINT_TABLES:
        path = folder / config / f"{name}.parquet"
        if not path.exists():
            raise FileNotFoundError(f"round {identifier_of(name)}: table {path} is missing")
        regular_file(path, MAX_TABLE_BYTES, f"round {identifier_of(name)}: table")
        digests[f"{config}/{name}"] = parquet_table_digest(path)
    return dataset_fingerprint(digests)


@dataclass(frozen=True)
class RoundData:
    """A round as read by :func:`load_round`: its ``meta`` (``round.json``), ``trials``
    (``trials`` layout), ``models`` (name, spec, role) and ``logprobs`` (``sentence`` plus one
    column per targeted model, NaN where the model has no value)."""

    folder: Path
    meta: dict
    trials: pd.DataFrame
    models: pd.DataFrame
    logprobs: pd.DataFrame

    @property
    def name(self) -> str:
        return self.meta["name"]

    @property
    def identifier(self) -> str:
        return self.meta["identifier"]

    def reference_logprobs(self) -> dict[str, dict[str, float]]:
        """Targeted model -> {sentence: natural-log probability} for the sentences it has a value for."""
        out = {}
        for col in self.logprobs.columns:
            if col == "sentence":
                continue
            values = self.logprobs[["sentence", col]].dropna()
            out[col] = dict(zip(values["sentence"], values[col].astype(float)))
        return out

    def model_specs(self) -> dict[str, str | None]:
        """Targeted model name -> spec (None when unknown)."""
        return {str(n): (s if isinstance(s, str) else None) for n, s in zip(self.models["name"], self.models["spec"])}


def read_meta(folder: str | os.PathLike) -> dict:
    """The parsed ``round.json`` of a round folder; FileNotFoundError/ValueError name the problem."""
    from ..staging import read_bounded

    path = Path(folder) / ROUND_FILE
    if not path.exists():
        raise FileNotFoundError(f"{folder} is not a round of the contstim benchmark (no {ROUND_FILE})")
    try:
        meta = json.loads(read_bounded(path, MAX_META_BYTES, "round file").decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != ROUND_FORMAT:
        raise ValueError(f"{path}: not a {ROUND_FORMAT} file")
    if meta.get("format_version") != ROUND_FORMAT_VERSION:
        raise ValueError(f"{path}: format_version {meta.get('format_version')!r} is not supported "
                         f"({ROUND_FORMAT_VERSION})")
    for key in ("identifier", "name", "version", "fingerprint"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise ValueError(f"{path}: field {key!r} is missing or not a string")
    check_round_name(meta["name"])
    if meta["identifier"] != identifier_of(meta["name"]):
        raise ValueError(f"{path}: identifier {meta['identifier']!r} does not match name {meta['name']!r}")
    return meta


def version_key(version: str) -> tuple:
    """Order of round versions: numbers as numbers (``2`` before ``10``), text as text."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", version) if part)


def discover_rounds(datasets_dir: str | os.PathLike | None = None) -> dict[str, Path]:
    """Round identifier -> folder for every round directly under ``datasets_dir`` (default
    ``$CONTSTIM_DATASETS``), or ``datasets_dir`` itself when it is a round folder.  The versions of
    a round are kept side by side (``contstim-web2026``, ``contstim-web2026-v2``): the identifier
    names its latest version (:func:`version_key`); an earlier one is evaluated by giving its own
    folder as the datasets folder.  ValueError when two folders hold the same round and version, or
    for a malformed ``round.json``."""
    root = Path(datasets_dir) if datasets_dir is not None else default_datasets_dir()
    if not root.is_dir():
        return {}
    # a hidden folder is no round: one being written beside its old version, or left by a killed run
    folders = [root] if (root / ROUND_FILE).is_file() else sorted(
        p for p in root.iterdir() if not p.name.startswith(".") and (p / ROUND_FILE).is_file())
    found: dict[str, tuple[str, Path]] = {}
    for folder in folders:
        meta = read_meta(folder)
        ident, version = meta["identifier"], meta["version"]
        if ident in found:
            if found[ident][0] == version:
                raise ValueError(f"round {ident} version {version} is in two folders of {root}: {found[ident][1]} and "
                                 f"{folder}; keep one")
            if version_key(version) < version_key(found[ident][0]):
                continue
        found[ident] = (version, folder)
    return {ident: folder for ident, (_, folder) in found.items()}


class RoundNotFound(ValueError):
    """No round of that identifier in the datasets folder (a ValueError, so a door's error handling
    of bad names covers it); a caller that must tell "absent" from "damaged" catches this type."""


def find_round(identifier: str, datasets_dir: str | os.PathLike | None = None) -> Path:
    """The folder of round ``identifier`` (``contstim.<name>`` or ``<name>``); :class:`RoundNotFound`
    naming the rounds found and where they were looked for."""
    ident = identifier if identifier.startswith(PREFIX) else identifier_of(identifier)
    rounds = discover_rounds(datasets_dir)
    if ident not in rounds:
        root = Path(datasets_dir) if datasets_dir is not None else default_datasets_dir()
        known = ", ".join(rounds) or "none"
        raise RoundNotFound(f"no round {ident} in the datasets folder {root} (rounds there: {known}); write one with "
                            f"`contstim experiment ingest --out {root} ...`, or give the folder that holds it as "
                            f"`contstim evaluate --datasets`")
    return rounds[ident]


def load_round(folder: str | os.PathLike, verify: bool = True) -> RoundData:
    """Read a round folder; with ``verify`` (default) its tables must match the fingerprint of
    ``round.json`` (ValueError otherwise: the folder was edited after ingestion)."""
    folder = Path(folder)
    meta = read_meta(folder)
    name = meta["name"]
    if verify:
        got = round_fingerprint(folder, name)
        if got != meta["fingerprint"]:
            raise ValueError(f"round {meta['identifier']} in {folder}: its tables do not match the fingerprint of "
                             f"{ROUND_FILE} ({got[:16]}... != {meta['fingerprint'][:16]}...): the round was changed "
                             f"after ingestion; ingest it again")
    read = {c: pd.read_parquet(folder / c / f"{name}.parquet") for c in ("trials", "models", "logprobs")}
    return RoundData(folder, meta, read["trials"], read["models"], read["logprobs"])
