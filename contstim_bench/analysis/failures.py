"""The sentence pairs on which a model failed most severely (Golan et al. 2023, Tables 1-3, S1).

For a model and a condition: the trials of the condition that target the model (its own
selection, :func:`contstim_bench.analysis.selection.select`), the model's binarised accuracy
per sentence pair (mean over the participants who saw it, a model tie counting as in
:mod:`.accuracy`), and the pair of lowest accuracy; when several pairs share it, one is drawn
at random with ``numpy.random.default_rng(seed)`` from those pairs in ``pair_id`` order (the
authors' code draws with ``DataFrame.sample``, unseeded).  The pair is reported with the model
it was pitted against (the other model that targets it), both models' log-probabilities of both
sentences (natural log) and the participants' choices, the sentence most participants chose
first, as in the paper's tables.

A model that no trial of the condition targets (a submitted model) is, with ``untargeted=True``,
looked at on every pair of the condition, as the rest of the package evaluates it; its "model 2"
is then the pair's targeted model that prefers the sentence most participants chose (the paper's
tables: model 2 and the participants agree), or, when none does, the first targeted model by name.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .accuracy import DEFAULT_TIES, trial_accuracy
from .selection import Condition, select
from .trials import TARGET_COLUMNS


@dataclass(frozen=True)
class Failure:
    """One row pair of a table: ``sentence1`` is the sentence most participants chose."""

    model: str  # "model 1": the model that failed
    other: str | None  # "model 2": the model it was pitted against (None when none targets the pair)
    condition: str
    pair_id: str
    accuracy: float  # the model's accuracy on this pair, mean over the participants who saw it
    n_tied_pairs: int  # pairs that share this lowest accuracy (one of them was drawn)
    sentence1: str
    sentence2: str
    type1: str | None  # sentence types of the trials (e.g. N, S), None when not given
    type2: str | None
    logprob_model: tuple[float, float]  # log p(sentence1|model), log p(sentence2|model)
    logprob_other: tuple[float, float] | None
    human_choices: tuple[int, int]  # participants who chose sentence1, sentence2
    selection: str = "targeted"  # the trials looked at (analysis.selection names; "all" for an untargeted model)


def _other_model(rows: pd.DataFrame, model: str, logprobs: Mapping[str, Mapping[str, float]] | None = None,
                 chosen: tuple[str, str] | None = None) -> str | None:
    """The model the pair pitted ``model`` against; for an untargeted model (``chosen``: the
    sentence most participants chose, the other), the targeted model that prefers the chosen one."""
    named = sorted({v for c in TARGET_COLUMNS for v in rows[c] if isinstance(v, str) and v != model})
    if chosen is not None and logprobs is not None:
        a, b = chosen
        agree = [m for m in named if m in logprobs and logprobs[m].get(a, -np.inf) > logprobs[m].get(b, -np.inf)]
        if agree:
            return agree[0]
    return named[0] if named else None


def worst_pair(
    frame: pd.DataFrame,
    log_ratio: np.ndarray,
    model: str,
    cond: Condition,
    logprobs: Mapping[str, Mapping[str, float]],
    seed: int = 0,
    ties: str = DEFAULT_TIES,
    untargeted: bool = False,
) -> Failure | None:
    """The pair of ``cond`` targeting ``model`` on which the model's accuracy is lowest.

    ``frame``/``log_ratio``: a prepared trials frame and the model's oriented per-trial log-ratios;
    ``logprobs``: ``{model: {sentence: natural-log probability}}`` (the failing model and the model
    it was pitted against).  None when no trial of the condition targets the model, unless
    ``untargeted`` (then every pair of the condition is looked at; see the module docstring).
    """
    mask, selection = select(frame, model, cond)
    if not mask.any() or selection == "all" and cond.targeting is not None and not untargeted:
        return None
    sub = frame[mask]
    acc = trial_accuracy(log_ratio[mask], sub["chose_second"].to_numpy(), ties)
    per_pair = pd.Series(acc, index=sub["pair_id"].to_numpy()).groupby(level=0, sort=True).mean()
    lowest = per_pair.min()
    candidates = sorted(per_pair.index[per_pair.to_numpy() == lowest])
    chosen = candidates[int(np.random.default_rng(seed).integers(len(candidates)))] if len(candidates) > 1 else candidates[0]
    rows = sub[sub["pair_id"] == chosen]
    first = rows.iloc[0]
    a, b = (first["sentence2"], first["sentence1"]) if first["flipped"] else (first["sentence1"], first["sentence2"])
    ta, tb = (first.get("sentence2_type"), first.get("sentence1_type")) if first["flipped"] else (
        first.get("sentence1_type"), first.get("sentence2_type"))
    n_b = int(rows["chose_second"].sum())
    n_a = len(rows) - n_b
    if n_b > n_a:  # the sentence most participants chose first
        a, b, ta, tb, n_a, n_b = b, a, tb, ta, n_b, n_a
    other = _other_model(rows, model, logprobs, (a, b) if selection == "all" else None)

    def lps(m: str) -> tuple[float, float]:
        return float(logprobs[m][a]), float(logprobs[m][b])

    return Failure(
        model=model, other=other, condition=cond.key, pair_id=str(chosen), accuracy=float(lowest),
        n_tied_pairs=len(candidates), sentence1=a, sentence2=b,
        type1=None if ta is None or pd.isna(ta) else str(ta), type2=None if tb is None or pd.isna(tb) else str(tb),
        logprob_model=lps(model), logprob_other=lps(other) if other in logprobs else None,
        human_choices=(n_a, n_b), selection=selection,
    )
