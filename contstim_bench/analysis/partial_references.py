"""Evaluate a model among reference models that have log-probabilities for some sentences only.

In the paper's data every reference model scored every stimulus.  In a new round of the
benchmark that is not so: a reference known only by its published values (``precomputed:gpt2``)
has values for the natural sentences it was selected on, none for sentences synthesised later or
for the shuffled sentences of the catch trials.  A condition's panel (the model, the references,
their ceilings, head-to-heads and comparisons: :mod:`.panel`) uses only that condition's trials,
so a reference takes part in every condition whose sentences it can all score and is left out of
the others.  Within a condition nothing changes: the same tests, the same Benjamini-Hochberg
families (a family is a condition's panel), the same head-to-head trial selection
(:func:`.head_to_head.pair_selection`, the trials that target both models when there are some).

:func:`evaluate_with_partial_references` returns what
:func:`.evaluation.evaluate_with_panels` returns; with references that score every sentence it
returns exactly the same (``tests/benchmarks/test_rounds.py`` checks this on the pll experiment).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .accuracy import DEFAULT_TIES
from .evaluation import evaluate_log_ratios_with_panels, log_ratios_from_logprobs, resolve_logprobs, unique_sentences
from .selection import CONDITIONS, condition_mask


def covered_models(trials: pd.DataFrame, reference_logprobs: Mapping[str, Mapping[str, float]],
                   mask: np.ndarray) -> list[str]:
    """The references with a value for every sentence of the rows of ``mask`` (in the given order)."""
    rows = trials[mask]
    needed = set(rows["sentence1"]) | set(rows["sentence2"])
    return [name for name, values in reference_logprobs.items() if needed <= set(values)]


def _ratios_on(trials: pd.DataFrame, values: Mapping[str, float], mask: np.ndarray) -> np.ndarray:
    """Per-trial log-ratios on the rows of ``mask``; 0.0 elsewhere (rows no panel of the
    condition reads: every score, ceiling and test of a condition uses only its own rows)."""
    out = np.zeros(len(trials), dtype=np.float64)
    rows = trials[mask]
    out[mask] = log_ratios_from_logprobs(rows, values)
    return out


def evaluate_with_partial_references(
    trials: pd.DataFrame,
    logprob,
    model_name: str,
    reference_logprobs: Mapping[str, Mapping[str, float]] | None = None,
    unit: str | None = None,
    ties: str = DEFAULT_TIES,
) -> tuple[dict[str, dict], dict[str, dict]]:
    """(entries, panels) of a model (``logprob``: every sentence of ``trials``, a mapping or a
    callable, natural log) among references that may cover some conditions only (see the module
    docstring).  A condition's panel holds the references with a value for every sentence of its
    trials; conditions without trials are left out."""
    if len(trials) == 0:
        raise ValueError("no trials: the trials frame is empty")
    sentences = unique_sentences(trials)
    lp = resolve_logprobs(logprob, sentences, model_name)
    model_ratio = log_ratios_from_logprobs(trials, lp)
    refs = {k: v for k, v in (reference_logprobs or {}).items() if k != model_name}
    entries: dict[str, dict] = {}
    panels: dict[str, dict] = {}
    for cond in CONDITIONS:
        mask = condition_mask(trials, cond)
        if not mask.any():
            continue
        present = covered_models(trials, refs, mask)
        ratios = {name: _ratios_on(trials, refs[name], mask) for name in present}
        got_entries, got_panels = evaluate_log_ratios_with_panels(
            trials, model_ratio, model_name, ratios, unit=unit, conditions=[cond.key], ties=ties)
        entries.update(got_entries)
        panels.update(got_panels)
    return entries, panels


def coverage(trials: pd.DataFrame, reference_logprobs: Mapping[str, Mapping[str, float]],
             conditions: Sequence[str] | None = None) -> dict[str, list[str]]:
    """Condition key -> the references that take part in its panel."""
    out = {}
    for cond in CONDITIONS:
        if conditions is not None and cond.key not in conditions:
            continue
        mask = condition_mask(trials, cond)
        if mask.any():
            out[cond.key] = covered_models(trials, reference_logprobs, mask)
    return out
