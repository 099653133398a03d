"""Write an ingested experiment as a new round of the contstim benchmark (``contstim experiment
ingest``): the layout and ``round.json`` of :mod:`contstim_bench.data.rounds`.

Besides the participants' ``trials`` and the ``participants`` table of
:mod:`contstim_bench.experiment.ingest`, a round holds what it takes to evaluate and cite it:

- ``design``: the design the database served (its ``design_trials``, copied by the server);
- ``models`` and ``logprobs``: the models the design targets, their specs and roles, and their
  log-probabilities of every sentence, from ``--design DIR`` (the output folder of ``contstim
  generate design``, which wrote them as ``DIR/models``); without ``--design`` only the names
  of the targeted models are known and the round has no reference log-probabilities;
- ``round.json``: identifier ``contstim.<experiment>``, version, date, fingerprint, the source
  database's sha256, the design summary, the targeted models, participant counts, every
  exclusion with its reason, and the exclusion rule.

A round folder is replaced only by the same round with the same data (same fingerprint) or by
another version (``round_version``); the same version with other data is refused.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from .._version import __version__
from ..data.rounds import ROUND_FILE, ROUND_FORMAT, ROUND_FORMAT_VERSION, identifier_of, read_meta, round_fingerprint
from ..data.design_file import DESIGN_COLUMNS, validate_design
from ..staging import check_replaceable, legacy_files, replace_folder
from ..study import TARGET_COLUMNS


# the columns of a round's ``trials`` config (also the docs of the ``design`` config's columns)
TRIAL_COLUMN_DOCS = {
    "experiment": "experiment name given at ingestion (`--experiment`)",
    "participant": "`<experiment>-pNNN`, NNN the participant's row id in the response database",
    "group": "participant group of the design, assigned by the server (least-filled group first)",
    "trial": "position of the trial in the participant's session, 1-based",
    "pair_id": "id of the unordered sentence pair (sha1 of the two sentences sorted, first 16 hex digits)",
    "sentence1": "the sentence shown on the left",
    "sentence2": "the sentence shown on the right",
    "sentence1_type": "stimulus type code of sentence1 (N, S1, S2, N1, N2, R1, R2, C1 natural, C2 shuffled)",
    "sentence2_type": "stimulus type code of sentence2",
    "trial_type": "condition of the pair, from the two type codes",
    "sentence1_accept_model": "model targeted to accept sentence1 (null if none)",
    "sentence1_reject_model": "model targeted to reject sentence1 (null if none)",
    "sentence2_accept_model": "model targeted to accept sentence2 (null if none)",
    "sentence2_reject_model": "model targeted to reject sentence2 (null if none)",
    "rating": "button pressed: 1 very confident / 2 confident / 3 somewhat confident for sentence1, "
    "4 somewhat confident / 5 confident / 6 very confident for sentence2",
    "confidence": "3 very confident, 2 confident, 1 somewhat confident (from the rating)",
    "reaction_time_ms": "milliseconds from the trial's display to the click, measured in the browser",
}


def served_design(conn: sqlite3.Connection) -> pd.DataFrame:
    """The design a response database served (its ``design_trials``), validated."""
    cols = ["group_id" if k == "group" else k for k in DESIGN_COLUMNS]
    frame = pd.read_sql_query(f"SELECT {', '.join(cols)} FROM design_trials ORDER BY group_id, trial", conn)
    return validate_design(frame.rename(columns={"group_id": "group"}))


def served_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The database's ``meta`` table."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def _rows(design: pd.DataFrame) -> set[tuple]:
    out = set()
    for row in design[list(DESIGN_COLUMNS)].itertuples(index=False):
        out.add(tuple(None if (v is None or (isinstance(v, float) and np.isnan(v))) else
                      (int(v) if k in ("group", "trial") else str(v)) for k, v in zip(DESIGN_COLUMNS, row)))
    return out


def check_same_design(served: pd.DataFrame, given: pd.DataFrame, where: str) -> None:
    """ValueError unless ``given`` (from ``--design``) has exactly the served design's rows."""
    a, b = _rows(served), _rows(given)
    if a != b:
        only = sorted(a - b)[:1] or sorted(b - a)[:1]
        g, t = only[0][0], only[0][1]
        raise ValueError(f"the design in {where} is not the design the database served ({len(a ^ b)} rows differ, "
                         f"e.g. group {g} trial {t}); give --design the output folder of the `contstim generate "
                         f"design` run that was exported")


def round_models(design: pd.DataFrame, design_dir: str | os.PathLike | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(models, logprobs) of the round: from ``design_dir`` when given (restricted to the served
    design's sentences, which must all be there), else the targeted names without specs and no
    log-probabilities."""
    from ..data.design_scores import design_model_names, design_sentences, read_models_dataset

    sentences = design_sentences(design)
    names = design_model_names(design)
    if design_dir is None:
        models = pd.DataFrame({"name": names, "spec": [None] * len(names), "role": [None] * len(names)})
        return models, pd.DataFrame({"sentence": sentences})
    models, logprobs = read_models_dataset(design_dir)
    missing = [n for n in names if n not in set(models["name"])]
    if missing:
        raise ValueError(f"{design_dir}: the design targets model(s) {missing} that its models table lacks")
    by_sentence = logprobs.set_index("sentence")
    absent = [s for s in sentences if s not in by_sentence.index]
    if absent:
        raise ValueError(f"{design_dir}: the models' log-probability table lacks {len(absent)} sentence(s) of the "
                         f"design, e.g. {absent[0]!r}; run `contstim generate design` again")
    models = models[models["name"].isin(names)].reset_index(drop=True)
    cols = [c for c in models["name"] if c in by_sentence.columns]
    table = by_sentence.loc[sentences, cols].reset_index()
    return models, table


def _models_table(models: pd.DataFrame) -> pa.Table:
    schema = pa.schema([("name", pa.string()), ("spec", pa.string()), ("role", pa.string())])
    frame = models[["name", "spec", "role"]].astype(object).where(models[["name", "spec", "role"]].notna(), None)
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def _logprobs_table(logprobs: pd.DataFrame) -> pa.Table:
    fields = [("sentence", pa.string())] + [(c, pa.float64()) for c in logprobs.columns if c != "sentence"]
    return pa.Table.from_pandas(logprobs, schema=pa.schema(fields), preserve_index=False)


def _design_table(design: pd.DataFrame) -> pa.Table:
    schema = pa.schema([(c, pa.type_for_alias(t)) for c, t in DESIGN_COLUMNS.items()])
    frame = design[list(DESIGN_COLUMNS)].copy()
    for col in TARGET_COLUMNS:
        frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def round_configs(name: str, design: pd.DataFrame, models: pd.DataFrame, logprobs: pd.DataFrame):
    """The ``design``, ``models`` and ``logprobs`` configs of a round (split = round name)."""
    from ..data.writer import ConfigSpec

    design_docs = {k: v for k, v in TRIAL_COLUMN_DOCS.items() if k in DESIGN_COLUMNS}
    design_docs["trial"] = "trial number in the group's design (participants saw the group's trials in their own order)"
    lp_docs = {"sentence": "a sentence of the design"}
    for row in models.itertuples(index=False):
        if row.name in logprobs.columns:
            lp_docs[row.name] = (f"natural-log probability under {row.name} ({row.spec or 'spec unknown'}); null where "
                                 "the model has no value (precomputed models know some sentences only)")
    return [
        ConfigSpec("design", {name: _design_table(design)}, "The design the server assigned to participants: one row "
                   "per group x trial.", design_docs),
        ConfigSpec("models", {name: _models_table(models)}, "The models the design targets (the round's reference "
                   "models).", {"name": "model name as in the targeting columns", "spec": "model spec (null if "
                   "unknown)", "role": "candidate or reference of the generation run (null if every pair was "
                   "contrasted)"}),
        ConfigSpec("logprobs", {name: _logprobs_table(logprobs)}, "Every sentence of the design with each targeted "
                   "model's log-probability, recorded when the design was made.", lp_docs),
    ]


def round_meta(name: str, version: str, date: str, fingerprint: str, result, design: pd.DataFrame,
               models: pd.DataFrame, db_meta: dict, design_dir, min_catch_correct: int, keep_incomplete: bool) -> dict:
    """The content of ``round.json`` (see :mod:`contstim_bench.data.rounds`)."""
    p = result.participants
    design_info = {
        "experiment_id": db_meta.get("experiment_id"),
        "groups": int(design["group"].nunique()),
        "trials": int(len(design)),
        "trial_types": {str(k): int(v) for k, v in design["trial_type"].value_counts().sort_index().items()},
        "source": None if design_dir is None else str(design_dir),
        "assignment_seed": None if db_meta.get("assignment_seed") is None else int(db_meta["assignment_seed"]),
    }
    return {
        "format": ROUND_FORMAT,
        "format_version": ROUND_FORMAT_VERSION,
        "identifier": identifier_of(name),
        "name": name,
        "version": str(version),
        "date": date,
        "fingerprint": fingerprint,
        "source_db_sha256": result.db_sha256,
        "design": design_info,
        "models": [{"name": r.name, "spec": r.spec if isinstance(r.spec, str) else None,
                    "role": r.role if isinstance(r.role, str) else None} for r in models.itertuples(index=False)],
        "participants": {"total": int(len(p)), "included": int(p["included"].sum()),
                         "excluded": int((~p["included"]).sum()), "trial_rows": int(len(result.trials))},
        "exclusions": [{"participant": r.participant, "group": int(r.group), "reason": r.exclusion_reason}
                       for r in result.excluded.itertuples(index=False)],
        "exclusion_rule": {"min_catch_correct": int(min_catch_correct), "keep_incomplete": bool(keep_incomplete)},
        "package_version": __version__,
        **({} if design_dir is None else plan_block(design_dir)),
    }


def plan_block(design_dir) -> dict:
    """``{"plan": ...}`` when the design carries the plan of ``contstim round plan`` (``plan.json``
    beside it, from ``generate design --plan``): its hypotheses, design, analysis and settings, and
    the sha256 of the plan file, so that ``evaluate`` checks the round against the plan; else ``{}``."""
    import hashlib

    from ..results.io import read_plan
    from ..results.plan_file import PLAN_FILE

    path = Path(design_dir) / PLAN_FILE
    if not path.is_file():
        return {}
    doc = read_plan(path)
    return {"plan": {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                     "created": doc["provenance"].get("created"), "package_version": doc["provenance"].get(
                         "package_version"), "hypotheses": doc["hypotheses"], "design": doc["design"],
                     "analysis": doc["analysis"], "settings": doc["settings"]}}


def card_lines(name: str, version: str, models: pd.DataFrame, design: pd.DataFrame, has_logprobs: bool) -> list[str]:
    """Lines of the dataset card about the round."""
    listed = ", ".join(f"`{r.name}`" + (f" (`{r.spec}`" + (f", {r.role}" if isinstance(r.role, str) else "") + ")"
                                        if isinstance(r.spec, str) else "")
                       for r in models.itertuples(index=False)) or "none"
    counts = ", ".join(f"{k} {v}" for k, v in design["trial_type"].value_counts().sort_index().items())
    lines = [
        f"- Round `{identifier_of(name)}` version {version} of the contstim benchmark: evaluate a model on it with "
        f"`contstim evaluate --benchmark {identifier_of(name)} --datasets <the folder holding this one>`; "
        f"`round.json` records its fingerprint.",
        f"- Design: {design['group'].nunique()} group(s), {len(design)} trials ({counts}).",
        f"- Targeted models: {listed}.",
    ]
    if not has_logprobs:
        lines.append("- No reference log-probabilities: ingested without --design, so models evaluated on this round "
                     "meet no reference model (compare them with `contstim compare`).")
    return lines


ROUND_KIND = "round"


def _round_files(folder: Path) -> list[str]:
    from ..data.writer import _dataset_files

    return [ROUND_FILE, *_dataset_files(folder)]


LEGACY_ROUND = legacy_files(ROUND_FILE, "fingerprint.json", written=_round_files)
"""A round written before the output marker: its ``round.json``, ``fingerprint.json`` and the files that lists."""


def check_round_target(final: Path, meta: dict, replace: bool = False) -> None:
    """Refuse to write round ``meta`` over ``final`` (ValueError): another round or another version
    is never replaced (versions live side by side, each in its own folder); the same round and
    version with other data only with ``replace``; a folder that is no round the package wrote,
    or that holds other files, never."""
    if (final / ROUND_FILE).is_file():
        old = read_meta(final)
        if (old["identifier"], old["version"]) != (meta["identifier"], meta["version"]):
            raise ValueError(f"{final} holds round {old['identifier']} version {old['version']}: it is never replaced by "
                             f"{meta['identifier']} version {meta['version']}; give another --name or --out")
        if old["fingerprint"] != meta["fingerprint"] and not replace:
            raise ValueError(
                f"{final} holds round {meta['identifier']} version {meta['version']} with other data (fingerprint "
                f"{old['fingerprint'][:16]}..., now {meta['fingerprint'][:16]}...); ingest it as a new version "
                f"(--round-version; versions are kept side by side) or under another --experiment name, or replace "
                f"this version with --replace")
    check_replaceable(final, kind=ROUND_KIND, flag="--out", legacy=LEGACY_ROUND)


def write_round(spec, out_dir: str | os.PathLike, name: str, meta_for, *, replace: bool = False) -> Path:
    """Write the dataset ``spec`` as round ``name`` into ``out_dir/<spec.name>``: written to a
    temporary folder first and fingerprinted; ``round.json`` (``meta_for(fingerprint)``) added;
    :func:`check_round_target` decides whether ``out_dir/<spec.name>`` may take it; then the folder
    is written beside it and renamed into place (:func:`contstim_bench.staging.replace_folder`)."""
    from ..data.writer import write_dataset
    from ..staging import MARKER

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    final = out / spec.name
    check_replaceable(final, kind=ROUND_KIND, flag="--out", legacy=LEGACY_ROUND)  # before any work
    staging = Path(tempfile.mkdtemp(prefix=f".{spec.name}-round-", dir=out))
    try:
        written = write_dataset(spec, staging)
        meta = meta_for(round_fingerprint(written, name))
        check_round_target(final, meta, replace)
        with replace_folder(final, kind=ROUND_KIND, flag="--out", legacy=LEGACY_ROUND) as tmp:
            shutil.copytree(written, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(MARKER))
            (tmp / ROUND_FILE).write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)
