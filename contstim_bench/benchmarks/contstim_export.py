"""One row per trial and model: a contstim result joined with the human trials it was evaluated on,
in long format for a mixed-effects model (R's ``lme4``, statsmodels): what ``contstim export``
writes (:func:`export_trials`).

:func:`trial_table` reads the trials of every experiment (or round) of a result the way the
evaluation does (:func:`.contstim_compare.experiment_trials`), validates them with
:func:`~contstim_bench.analysis.trials.prepare_trials` (the unit recorded in the result), takes the
model's natural-log probability of each sentence from the result's ``logprobs`` and scores each
trial with :func:`~contstim_bench.analysis.accuracy.trial_accuracy` under the result's ties
convention, so the mean of ``hit`` per unit, averaged over units, is the result's accuracy of the
condition ``all``.  Columns (:data:`COLUMNS`; those marked * only when the trials have them):

- ``experiment``; ``unit_type`` (``participant`` or ``group``, as the analysis averages) and
  ``unit`` (that unit's id); ``participant``, ``group``, ``trial``* (order in the session, 1-based);
- ``pair_id``, ``condition`` (the trial type), ``sentence1``, ``sentence2`` (as shown: left,
  right), ``sentence1_type``*, ``sentence2_type``* and the targeted models
  (:data:`~contstim_bench.study.TARGET_COLUMNS`, empty: none);
- ``rating`` (1..6, 6 = strongest preference for sentence2), ``participant_choice`` (1 or 2:
  ratings 1-3 choose sentence1, 4-6 sentence2), ``confidence``*, ``reaction_time_ms``*;
- ``model`` (the result's model name), ``model_spec``, ``logprob_sentence1`` and
  ``logprob_sentence2`` (natural log), ``log_ratio`` (``logprob_sentence2 - logprob_sentence1``),
  ``model_choice`` (1 or 2; empty on a tie), ``model_tie`` (1 when the log-ratio is exactly 0),
  ``hit`` (1 when the model prefers the participant's sentence, 0 when not, a tie scores what
  ``ties`` says: 0.5 under ``half``), ``ties`` (that convention) and ``targets_model`` (1 when a
  targeting column of the trial names the model).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis.accuracy import DEFAULT_TIES, trial_accuracy
from ..analysis.evaluation import log_ratios_from_logprobs, resolve_logprobs, unique_sentences
from ..analysis.selection import targets
from ..analysis.trials import prepare_trials
from ..spreadsheet import safe_cell
from ..study import TARGET_COLUMNS
from .contstim_compare import experiment_trials

SUFFIXES = (".csv", ".parquet")
"""What :func:`write_table` writes, by the output's suffix."""

OPTIONAL = ("trial", "sentence1_type", "sentence2_type", "confidence", "reaction_time_ms")
"""Trial columns exported when the dataset has them."""

COLUMNS = ("experiment", "unit_type", "unit", "participant", "group", "trial", "pair_id", "condition", "sentence1",
           "sentence2", "sentence1_type", "sentence2_type", *TARGET_COLUMNS, "rating", "participant_choice",
           "confidence", "reaction_time_ms", "model", "model_spec", "logprob_sentence1", "logprob_sentence2",
           "log_ratio", "model_choice", "model_tie", "hit", "ties", "targets_model")
"""Every column of the table, in order (those of :data:`OPTIONAL` only when the trials have them)."""


def _experiment_rows(result: dict, experiment: str, datasets_dir, source: str) -> pd.DataFrame:
    """The rows of one experiment (or round) of ``result``."""
    trials, local_fp = experiment_trials(experiment, datasets_dir)
    theirs = result["benchmark"]["dataset_fingerprint"]
    other = (f"the result was computed on another version of the data (dataset fingerprint {theirs[:12]}, the local "
             f"one is {local_fp[:12]}): rebuild it, pass the folder it was evaluated on with --datasets, or "
             "evaluate the model again with `contstim evaluate`")
    sentences = unique_sentences(trials)
    missing = [s for s in sentences if s not in result["logprobs"]]
    if missing:
        raise ValueError(f"{source}: no log-probability for sentence {missing[0]!r} of the {experiment} trials "
                         f"({len(missing)} of {len(sentences)} sentences missing); "
                         + (other if theirs != local_fp else "the result file is incomplete: evaluate the model "
                            "again with `contstim evaluate`"))
    if theirs != local_fp:
        raise ValueError(f"{source}: {other}")
    name, ties = result["model"]["name"], result.get("analysis", {}).get("ties", DEFAULT_TIES)
    unit = result["experiments"][experiment].get("all", {}).get("unit")
    prepared = prepare_trials(trials, unit)
    frame = prepared.frame
    lp = resolve_logprobs(result["logprobs"], sentences, name)
    ratio = log_ratios_from_logprobs(frame, lp)
    # the participant's choice as shown: the analysis's oriented choice, turned back where the pair was flipped
    second = frame["chose_second"].to_numpy() != frame["flipped"].to_numpy()
    out = pd.DataFrame({"experiment": experiment, "unit_type": prepared.unit,
                        "unit": frame[prepared.unit].astype(str), "participant": frame["participant"],
                        "group": frame["group"]})
    if "trial" in frame:
        out["trial"] = frame["trial"]
    out["pair_id"] = frame["pair_id"]
    out["condition"] = frame["trial_type"]
    for col in ("sentence1", "sentence2", "sentence1_type", "sentence2_type", *TARGET_COLUMNS, "rating"):
        if col in frame:
            out[col] = frame[col]
    out["participant_choice"] = np.where(second, 2, 1)
    for col in ("confidence", "reaction_time_ms"):
        if col in frame:
            out[col] = frame[col]
    out["model"], out["model_spec"] = name, result["model"].get("spec", name)
    out["logprob_sentence1"] = frame["sentence1"].map(lp).to_numpy(dtype=np.float64)
    out["logprob_sentence2"] = frame["sentence2"].map(lp).to_numpy(dtype=np.float64)
    out["log_ratio"] = ratio
    out["model_choice"] = pd.array(np.where(ratio > 0, 2, 1), dtype="Int64")
    out.loc[ratio == 0, "model_choice"] = pd.NA
    out["model_tie"] = (ratio == 0).astype(np.int64)
    out["hit"] = trial_accuracy(prepared.orient(ratio), frame["chose_second"].to_numpy(), ties)
    out["ties"] = ties
    out["targets_model"] = targets(frame, name, "any").astype(np.int64)
    return out


def trial_table(result: dict, datasets_dir: str | os.PathLike | None = None, source: str = "result") -> pd.DataFrame:
    """One row per participant x trial of every experiment (or round) of ``result`` (a contstim
    result dict), with the model's log-probabilities and hits (see the module docstring).

    ValueError, naming ``source``: a result of another benchmark (BLiMP, plausibility), a sentence
    of the trials without a log-probability (a result of another version of the data, or an
    incomplete file), a result computed on another version of the dataset (its fingerprint)."""
    from ..results.schema import FORMAT

    if result.get("format") != FORMAT:
        raise ValueError(f"{source}: not a contstim result (format {result.get('format')!r}); export reads the "
                         f"results of `contstim evaluate` on the contstim benchmark (format {FORMAT!r})")
    frames = [_experiment_rows(result, exp, datasets_dir, source) for exp in result["experiments"]]
    return pd.concat(frames, ignore_index=True)


def check_table_path(path: str | os.PathLike, flag: str = "--trials") -> Path:
    """``path`` if it ends in one of :data:`SUFFIXES` and a file can be written there (ValueError
    naming ``flag`` otherwise), checked before any work."""
    from ..results.io import check_output_file

    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise ValueError(f"{flag} {path}: unknown suffix {path.suffix or '(none)'!r}; give a file ending in "
                         f"{' or '.join(SUFFIXES)}")
    return check_output_file(path, flag)


def write_table(frame: pd.DataFrame, path: str | os.PathLike, flag: str = "--trials") -> Path:
    """Write ``frame`` to ``path`` (``.csv``: one header row, no index column, text cells a
    spreadsheet would read as a formula prefixed with ``'`` (:func:`~contstim_bench.spreadsheet.safe_cell`);
    ``.parquet``: the frame as it is), atomically: a temporary file beside it, renamed into place."""
    path = check_table_path(path, flag)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        if path.suffix.lower() == ".csv":
            text = frame.select_dtypes(include=["object", "string"]).columns
            frame.assign(**{c: frame[c].map(safe_cell) for c in text}).to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def export_trials(result_path: str | os.PathLike, output: str | os.PathLike,
                  datasets_dir: str | os.PathLike | None = None) -> tuple[pd.DataFrame, Path]:
    """Read the result file ``result_path`` (:func:`~contstim_bench.results.io.read_result`), build
    its :func:`trial_table` and write it to ``output`` (:func:`write_table`); returns (the table,
    the path written).  ValueError before anything is read when ``output`` has an unknown suffix
    or is the result file (:func:`~contstim_bench.staging.check_inputs_kept`)."""
    from ..results.io import read_result
    from ..staging import check_inputs_kept

    check_table_path(output)
    check_inputs_kept([("--trials", output)], [("RESULT", result_path)])
    frame = trial_table(read_result(result_path), datasets_dir, source=str(result_path))
    return frame, write_table(frame, output)
