"""Evaluate a model's sentence log-probabilities against human trials: the benchmark's numbers.

Entry points:

- :func:`evaluate_logprobs` -- per-sentence natural-log probabilities (a mapping or a callable
  scoring a list of sentences) plus, optionally, those of reference models;
- :func:`evaluate_log_ratios` -- the same from per-trial log-ratios
  ``log p(sentence2|m) - log p(sentence1|m)`` (what the ``evaluate`` metric receives);
- :func:`evaluate_with_panels` -- both the model's entries and the panels (every model of each
  condition), computed once;
- :func:`reference_panel` -- one figure panel with chosen model-vs-model contrasts in the same
  family as the ceiling tests, as Figure S8 does ("the 9 comparisons").

For every condition of :mod:`contstim_bench.analysis.selection` that has trials, the entry
holds (per-unit values are keyed by the unit's id as a string; units are participant groups in
the main experiment and participants in pll, see
:func:`contstim_bench.analysis.trials.default_unit`):

``selection``, ``unit``, ``n_units``, ``n_trials`` (participant x trial rows), ``n_pairs``;
``accuracy`` (mean over units of the per-unit binarised accuracy), ``accuracy_stderr`` (its
standard error across units, :func:`contstim_bench.uncertainty.standard_error`; None for one unit), ``accuracy_by_unit``,
``accuracy_noise_ceiling: {lower, upper, lower_by_unit, upper_by_unit}``; ``srcs`` (mean over
units of the per-unit signed-rank cosine similarity; per participant, averaged within a group
for group units), ``srcs_stderr``, ``srcs_by_unit``, ``srcs_noise_ceiling`` (same layout);
``p_vs_lower_ceiling: {accuracy, srcs}`` (two-sided Wilcoxon across units, Benjamini-Hochberg
adjusted in the ``model_vs_lower_ceiling`` family) and ``p_vs_lower_ceiling_uncorrected``; ``degenerate`` (None, or why the model's predictions say
nothing: every trial a tie, or one presented position always preferred; over every trial given,
:func:`contstim_bench.analysis.ranking.degenerate_reason`: such a model is never ranked);

``head_to_head`` with every other model of the panel (:mod:`.head_to_head`, Fig. S4): on the
same trials, those where the two models prefer different sentences, ``selection``
(``targeted_both`` or ``all``), ``n_pairs_selected`` (distinct pairs of that selection),
``n_trials`` and ``n_pairs`` (those on which the two models disagree), ``share`` (mean over units of the
share of those trials on which the participant chose this model's sentence; None when the models
never disagree), ``share_by_unit``, ``p`` (two-sided Wilcoxon of the shares against 0.5), ``p_bh``
(``head_to_head`` family), ``better`` (the model whose sentences people chose more often,
``"tie"``, or None when not separable) and ``significant``; the same disagreement trials tested by
item (sentence pairs as units, F2): ``share_items`` (mean over the ``n_pairs`` pairs of the share
of its participants who chose this model's sentence), ``p_items``, ``p_items_bh``
(``head_to_head_by_item`` family) and ``significant_items`` (null likewise);

``comparisons`` with the other models whose per-unit scores compare like for like
(:func:`.panel.comparison_basis`): ``basis`` (``same_trials`` or ``own_selection``, the paper's
Figures 1b/3a, each model on the trials that target it), the other model's ``selection``,
``n_trials``, ``n_units``, its ``accuracy``/``srcs``, ``accuracy_delta``/``srcs_delta`` (this
model minus the other, mean over shared units), Wilcoxon ``*_p``, adjusted ``*_p_bh``
(``model_vs_model`` family), ``*_better`` (the name with the higher mean, or ``"tie"``) and
``*_significant`` (adjusted p < .05);

``rank``: ``{accuracy, srcs}``, the model's place among the models of the condition's panel,
like for like (:func:`.ranking.rank_in_panel`): ``rank`` (1 = best; None when not ranked),
``among``, ``tied``, ``group`` and ``reason`` (why not ranked, or None);

``bh_families``: for ``p_vs_lower_ceiling``, ``comparisons``, ``head_to_head`` and
``head_to_head_by_item``, the family their adjusted p-values belong to and its size (see
:mod:`.panel`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .accuracy import DEFAULT_TIES, tie_value
from .inference import ALPHA, bh_adjust, paired, standard_error, wilcoxon_p
from .ranking import degenerate_reason, rank_in_panel
from .panel import (
    FAMILY_CEILING,
    FAMILY_HEAD_TO_HEAD,
    FAMILY_HEAD_TO_HEAD_ITEMS,
    FAMILY_MODELS,
    MEASURES,
    CeilingScores,
    ConditionPanel,
    Evaluator,
    SelectionScores,
    better,
    condition_panel,
    is_significant,
)
from .selection import CONDITIONS, Condition, condition, select
from .trials import PreparedTrials, check_log_ratios, check_logprob, prepare_trials

LogProbs = Mapping[str, float] | Callable[[list[str]], Sequence[float]]


def _by_unit(s: pd.Series) -> dict[str, float]:
    return {str(k): float(v) for k, v in s.items()}


def _mean(s: pd.Series) -> float:
    return float(s.mean())


def _model_block(scores: SelectionScores, ceil: CeilingScores, unit: str) -> dict:
    return {
        "selection": scores.selection,
        "unit": unit,
        "n_units": int(len(scores.accuracy)),
        "n_trials": scores.n_trials,
        "n_pairs": scores.n_pairs,
        "accuracy": _mean(scores.accuracy),
        "accuracy_stderr": standard_error(scores.accuracy),
        "accuracy_by_unit": _by_unit(scores.accuracy),
        "accuracy_noise_ceiling": {
            "lower": _mean(ceil.accuracy_lower),
            "upper": _mean(ceil.accuracy_upper),
            "lower_by_unit": _by_unit(ceil.accuracy_lower),
            "upper_by_unit": _by_unit(ceil.accuracy_upper),
        },
        "srcs": _mean(scores.srcs),
        "srcs_stderr": standard_error(scores.srcs),
        "srcs_by_unit": _by_unit(scores.srcs),
        "srcs_noise_ceiling": {
            "lower": _mean(ceil.srcs_lower),
            "upper": _mean(ceil.srcs_upper),
            "lower_by_unit": _by_unit(ceil.srcs_lower),
            "upper_by_unit": _by_unit(ceil.srcs_upper),
        },
    }


def _panel_block(panel: ConditionPanel, name: str, degenerate: Mapping[str, str | None]) -> dict:
    """A model of the panel: its scores, ceilings, test against its lower ceiling and whether
    its predictions are degenerate (:func:`.ranking.degenerate_reason`, over every trial)."""
    block = _model_block(panel.scores[name], panel.ceilings[name], panel.unit)
    block["degenerate"] = degenerate[name]
    block["p_vs_lower_ceiling"] = dict(panel.ceiling_p_bh[name])
    block["p_vs_lower_ceiling_uncorrected"] = dict(panel.ceiling_p[name])
    block["below_lower_ceiling"] = {
        m: bool(panel.ceiling_p_bh[name][m] < ALPHA and block[m] < block[f"{m}_noise_ceiling"]["lower"])
        for m in MEASURES
    }
    return block


def _comparisons(panel: ConditionPanel, name: str) -> dict[str, dict]:
    out = {}
    for other in panel.names:
        found = None if other == name else panel.comparison(name, other)
        if found is None:
            continue
        comp, swapped = found
        theirs = panel.scores[other]
        c = {"basis": comp.basis, "selection": theirs.selection, "n_trials": theirs.n_trials, "n_units": comp.n_units}
        for m in MEASURES:
            delta = -comp.delta[m] if swapped else comp.delta[m]
            c[m] = _mean(getattr(theirs, m))
            c[f"{m}_delta"] = delta
            c[f"{m}_p"] = float(comp.p[m])
            c[f"{m}_p_bh"] = float(comp.p_bh[m])
            c[f"{m}_better"] = better(delta, name, other)
            c[f"{m}_significant"] = bool(comp.p_bh[m] < ALPHA)
        out[other] = c
    return out


def _head_to_head(panel: ConditionPanel, name: str) -> dict[str, dict]:
    out = {}
    for other in panel.names:
        if other == name:
            continue
        match, q, swapped = panel.match(name, other)
        shares = 1.0 - match.share_by_unit if swapped else match.share_by_unit
        share = _mean(shares) if len(shares) else None
        items = 1.0 - match.share_by_item if swapped else match.share_by_item
        q_items = panel.items_q(name, other)
        out[other] = {
            "selection": match.selection,
            "n_pairs_selected": match.n_pairs_selected,
            "n_trials": match.n_trials,
            "n_pairs": match.n_pairs,
            "share": share,
            "share_by_unit": _by_unit(shares),
            "p": match.p,
            "p_bh": q,
            "better": None if share is None else better(share - 0.5, name, other),
            "significant": is_significant(q),
            "share_items": _mean(items) if len(items) else None,
            "p_items": match.p_items,
            "p_items_bh": q_items,
            "significant_items": is_significant(q_items),
        }
    return out


def _entry(panel: ConditionPanel, name: str, degenerate: Mapping[str, str | None]) -> dict:
    """The evaluated model's entry of one condition (see the module docstring)."""
    entry = _panel_block(panel, name, degenerate)
    del entry["below_lower_ceiling"]
    entry["comparisons"] = _comparisons(panel, name)
    entry["head_to_head"] = _head_to_head(panel, name)
    sizes = panel.family_sizes()
    entry["bh_families"] = {
        "p_vs_lower_ceiling": {"family": FAMILY_CEILING, "size": sizes[FAMILY_CEILING]},
        "comparisons": {"family": FAMILY_MODELS, "size": sizes[FAMILY_MODELS]},
        "head_to_head": {"family": FAMILY_HEAD_TO_HEAD, "size": sizes[FAMILY_HEAD_TO_HEAD]},
        "head_to_head_by_item": {"family": FAMILY_HEAD_TO_HEAD_ITEMS, "size": sizes[FAMILY_HEAD_TO_HEAD_ITEMS]},
    }
    return entry


def _conditions(keys: Sequence[str] | None) -> list[Condition]:
    return list(CONDITIONS) if keys is None else [condition(k) for k in keys]


def evaluate_log_ratios_with_panels(
    trials: pd.DataFrame,
    log_ratio,
    model_name: str,
    reference_log_ratios: Mapping[str, Sequence[float]] | None = None,
    unit: str | None = None,
    conditions: Sequence[str] | None = None,
    ties: str = DEFAULT_TIES,
) -> tuple[dict[str, dict], dict[str, dict]]:
    """(entries, panels) of per-trial log-ratios ``log p(sentence2|m) - log p(sentence1|m)``.

    ``entries``: ``{condition key: entry}`` of the evaluated model (module docstring);
    ``panels``: ``{condition key: {"models": {name: block}}}``, every model of the panel (the
    evaluated one first, then the references in the order given), each on its own selection
    with its noise ceilings, ``p_vs_lower_ceiling`` (``model_vs_lower_ceiling`` family) and
    ``below_lower_ceiling``.  ``ties``: what a model tie scores in the accuracy
    (:data:`contstim_bench.analysis.accuracy.TIES`).  ValueError names bad input (see
    :func:`contstim_bench.analysis.trials.prepare_trials`, wrong lengths, non-finite values).
    """
    if not isinstance(model_name, str) or not model_name:
        raise ValueError("model_name must be a non-empty string")
    tie_value(ties)
    return _prepared_with_panels(prepare_trials(trials, unit=unit), log_ratio, model_name, reference_log_ratios,
                                 conditions, ties)


def _prepared_with_panels(
    prepared: PreparedTrials,
    log_ratio,
    model_name: str,
    reference_log_ratios: Mapping[str, Sequence[float]] | None,
    conditions: Sequence[str] | None,
    ties: str,
) -> tuple[dict[str, dict], dict[str, dict]]:
    """:func:`evaluate_log_ratios_with_panels` of trials already prepared."""
    if not isinstance(model_name, str) or not model_name:
        raise ValueError("model_name must be a non-empty string")
    tie_value(ties)
    shown_ratios = {model_name: check_log_ratios(log_ratio, prepared.n, model_name)}
    for ref, values in (reference_log_ratios or {}).items():
        if ref == model_name:
            raise ValueError(f"reference model {ref!r} has the same name as the evaluated model")
        shown_ratios[ref] = check_log_ratios(values, prepared.n, ref)
    ratios = {name: prepared.orient(values) for name, values in shown_ratios.items()}
    degenerate = {name: degenerate_reason(values) for name, values in shown_ratios.items()}
    ev = Evaluator(prepared, ties=ties)
    entries, panels = {}, {}
    for cond in _conditions(conditions):
        panel = condition_panel(ev, cond, ratios)
        if panel is None:
            continue
        blocks = {name: _panel_block(panel, name, degenerate) for name in panel.names}
        entries[cond.key] = _entry(panel, model_name, degenerate)
        entries[cond.key]["rank"] = rank_in_panel(blocks, model_name, MEASURES, ties)
        panels[cond.key] = {"models": blocks}
    return entries, panels


def evaluate_log_ratios(trials: pd.DataFrame, log_ratio, model_name: str,
                        reference_log_ratios: Mapping[str, Sequence[float]] | None = None, **options) -> dict[str, dict]:
    """Score per-trial log-ratios ``log p(sentence2|m) - log p(sentence1|m)`` (natural log).

    ``log_ratio`` and every array of ``reference_log_ratios`` (name -> per-trial log-ratios)
    are aligned with the rows of ``trials``.  Returns ``{condition key: entry}`` for the
    conditions that have trials (see the module docstring for the entry);
    ``options``: ``unit``, ``conditions`` and ``ties`` of
    :func:`evaluate_log_ratios_with_panels`, whose entries these are.
    """
    return evaluate_log_ratios_with_panels(trials, log_ratio, model_name, reference_log_ratios, **options)[0]


def unique_sentences(trials: pd.DataFrame) -> list[str]:
    """Distinct sentences of the trials, in order of first appearance."""
    both = pd.concat([trials["sentence1"], trials["sentence2"]], ignore_index=True)
    return list(dict.fromkeys(both.tolist()))


def resolve_logprobs(logprob: LogProbs, sentences: list[str], model_name: str) -> dict[str, float]:
    """``{sentence: natural-log probability}`` for ``sentences`` from a mapping or a callable.

    A callable is called once with the list of sentences and must return one value per
    sentence.  ValueError names a missing sentence, a wrong number of values or a NaN/inf.
    """
    if callable(logprob) and not isinstance(logprob, Mapping):
        values = list(logprob(list(sentences)))
        if len(values) != len(sentences):
            raise ValueError(
                f"{model_name}: the scorer returned {len(values)} log-probabilities for "
                f"{len(sentences)} sentences"
            )
        pairs = zip(sentences, values)
    elif isinstance(logprob, Mapping):
        pairs = []
        for s in sentences:
            if s not in logprob:
                raise ValueError(f"{model_name}: no log-probability for sentence {s!r}")
            pairs.append((s, logprob[s]))
    else:
        raise TypeError(
            f"{model_name}: log-probabilities must be a mapping sentence -> float or a callable, "
            f"got {type(logprob).__name__}"
        )
    return {s: check_logprob(v, s, model_name) for s, v in pairs}


def log_ratios_from_logprobs(trials: pd.DataFrame, logprobs: Mapping[str, float]) -> np.ndarray:
    """Per-trial ``log p(sentence2) - log p(sentence1)`` from a complete sentence map."""
    lp1 = np.array([logprobs[s] for s in trials["sentence1"].to_numpy(dtype=object)], dtype=np.float64)
    lp2 = np.array([logprobs[s] for s in trials["sentence2"].to_numpy(dtype=object)], dtype=np.float64)
    return lp2 - lp1


def evaluate_with_panels(
    trials: pd.DataFrame,
    logprob: LogProbs,
    model_name: str,
    reference_logprobs: Mapping[str, LogProbs] | None = None,
    unit: str | None = None,
    conditions: Sequence[str] | None = None,
    ties: str = DEFAULT_TIES,
) -> tuple[dict[str, dict], dict[str, dict]]:
    """(entries, panels) of a model given its natural-log sentence probabilities.

    ``logprob`` maps every sentence of ``trials`` to log p(sentence) or is a callable scoring a
    list of sentences; ``reference_logprobs`` maps the other models' names to the same.  See
    :func:`evaluate_log_ratios_with_panels`.
    """
    if not isinstance(trials, pd.DataFrame):
        raise TypeError(f"trials must be a pandas DataFrame, got {type(trials).__name__}")
    if len(trials) == 0:
        raise ValueError("no trials: the trials frame is empty")
    prepared = prepare_trials(trials, unit=unit)  # validate before scoring anything
    sentences = unique_sentences(trials)
    lp = resolve_logprobs(logprob, sentences, model_name)
    refs = {
        name: log_ratios_from_logprobs(trials, resolve_logprobs(values, sentences, name))
        for name, values in (reference_logprobs or {}).items()
    }
    return _prepared_with_panels(prepared, log_ratios_from_logprobs(trials, lp), model_name, refs, conditions, ties)


def evaluate_logprobs(trials: pd.DataFrame, logprob: LogProbs, model_name: str,
                      reference_logprobs: Mapping[str, LogProbs] | None = None, **options) -> dict[str, dict]:
    """Score a model given its natural-log sentence probabilities: the entries of
    :func:`evaluate_with_panels` (``options``: its ``unit``, ``conditions`` and ``ties``)."""
    return evaluate_with_panels(trials, logprob, model_name, reference_logprobs, **options)[0]


def reference_panel(
    trials: pd.DataFrame,
    log_ratios: Mapping[str, Sequence[float]],
    condition_key: str,
    contrasts: Sequence[tuple[str, str]] | None = None,
    unit: str | None = None,
) -> dict:
    """One figure panel with chosen contrasts, the family of Figure S8 ("the 9 comparisons").

    Every model is scored on its own selection; the BH family of each measure is the
    model-vs-model ``contrasts`` (default: all pairs) *together with* every model vs its lower
    ceiling (Figure S8b: the three approx-LL vs PLL contrasts + six ceiling tests = 9
    comparisons, as its caption states).  The benchmark's results use the separate families of
    :mod:`contstim_bench.analysis.panel` instead.  Returns ``{"models": {name: block},
    "contrasts": [...]}``; a block is an entry of :func:`evaluate_log_ratios` without
    ``comparisons``/``head_to_head`` but with ``p_vs_lower_ceiling`` and ``below_lower_ceiling``.
    """
    prepared = prepare_trials(trials, unit=unit)
    cond = condition(condition_key)
    ev = Evaluator(prepared)
    names = list(log_ratios)
    if contrasts is None:
        contrasts = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    for a, b in contrasts:
        for n in (a, b):
            if n not in log_ratios:
                raise ValueError(f"contrast ({a!r}, {b!r}) names a model without log-ratios: {n!r}")
    scores, ceilings, blocks = {}, {}, {}
    for name in names:
        lr = prepared.orient(check_log_ratios(log_ratios[name], prepared.n, name))
        mask, sel = select(prepared.frame, name, cond)
        if not mask.any():
            raise ValueError(f"condition {condition_key!r} has no trials")
        scores[name] = ev.scores(lr, mask, sel)
        ceilings[name] = ev.ceiling(mask)
        blocks[name] = _model_block(scores[name], ceilings[name], prepared.unit)

    results: dict[str, dict] = {"models": blocks, "contrasts": [dict(model1=a, model2=b) for a, b in contrasts]}
    for measure in MEASURES:
        ps, deltas = [], []
        for a, b in contrasts:
            x, y = paired(getattr(scores[a], measure), getattr(scores[b], measure), f"{a} vs {b}")
            ps.append(wilcoxon_p(x, y))
            deltas.append(float(np.mean(x - y)))
        for name in names:
            x, y = paired(getattr(scores[name], measure), ceilings[name].lower(measure), name)
            ps.append(wilcoxon_p(x, y))
        adj = bh_adjust(ps)
        for i, c in enumerate(results["contrasts"]):
            c[f"{measure}_delta"] = deltas[i]
            c[f"{measure}_p"] = float(ps[i])
            c[f"{measure}_p_bh"] = float(adj[i])
            c[f"{measure}_better"] = better(deltas[i], c["model1"], c["model2"])
            c[f"{measure}_significant"] = bool(adj[i] < ALPHA)
        for k, name in enumerate(names):
            j = len(contrasts) + k
            blocks[name].setdefault("p_vs_lower_ceiling", {})[measure] = float(adj[j])
            blocks[name].setdefault("p_vs_lower_ceiling_uncorrected", {})[measure] = float(ps[j])
            blocks[name].setdefault("below_lower_ceiling", {})[measure] = bool(
                adj[j] < ALPHA and blocks[name][measure] < blocks[name][f"{measure}_noise_ceiling"]["lower"]
            )
    return results
