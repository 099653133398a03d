"""Every given model against every other on the contstim human data: the matrices of Fig. S3 and S4.

The human data is one of the paper's experiments or a round of the benchmark (its name), whose
head-to-heads use the trials that target both models of a pair, as in the paper's experiments.

:func:`compare_logprobs` takes the natural-log sentence probabilities of several models (scored
by any scorer, read from result files, or the reference models' precomputed values) and returns,
for every condition of an experiment:

- ``head_to_head[a][b]``: model ``a`` against model ``b`` on the same trials, those where they
  prefer different sentences (:mod:`contstim_bench.analysis.head_to_head`): ``share`` of the
  participants' choices that went to ``a``'s sentence (mean over units), the Wilcoxon ``p`` of
  the per-unit shares against 0.5, ``p_bh`` adjusted over the model pairs of the condition (the
  ``head_to_head`` family), ``n_pairs``/``n_trials`` of disagreement and ``n_pairs_selected``;
  ``share_pooled`` is the share over all disagreement trials at once, as the authors' code draws
  Fig. S4; the same trials tested by item (sentence pairs as units): ``share_items``,
  ``share_by_item`` (pair id -> share), ``p_items`` and ``p_items_bh`` (the
  ``head_to_head_by_item`` family, ``bh_family_size_items``);
  the matrix is antisymmetric (``share[b][a] = 1 - share[a][b]``);
- ``agreement[a][b]``: the share of the condition's distinct pairs that ``a`` and ``b`` rank the
  same way (Fig. S3).

The output dict (``format`` ``contstim-bench-comparison``) is what ``contstim compare`` writes as
JSON beside its tables and figures (:mod:`contstim_bench.report.matrices`).
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..analysis.accuracy import DEFAULT_TIES, tie_value
from ..analysis.evaluation import log_ratios_from_logprobs, resolve_logprobs, unique_sentences
from ..analysis.head_to_head import agreement
from ..analysis.panel import Evaluator, condition_panel
from ..analysis.selection import CONDITIONS, condition, condition_mask
from ..analysis.trials import prepare_trials
from ..provenance import provenance
from ..results.files import COMPARISON_FORMAT as FORMAT, COMPARISON_FORMAT_VERSION as FORMAT_VERSION
from ..results.schema import validate_result
from .contstim import DATASET, load_experiment


def experiment_trials(experiment: str, datasets_dir: str | os.PathLike | None = None):
    """(trials, dataset fingerprint) of one of the paper's experiments or of a round of the
    benchmark (its name, found in ``datasets_dir``: :mod:`contstim_bench.data.rounds`)."""
    from ..study import is_paper_experiment

    if is_paper_experiment(experiment):
        from ..data.load import fingerprint

        return load_experiment(experiment, datasets_dir)[0], fingerprint(DATASET, datasets_dir)
    from ..data.rounds import find_round, load_round

    data = load_round(find_round(experiment, datasets_dir))
    return data.trials, data.meta["fingerprint"]


def round_references(experiment: str, datasets_dir: str | os.PathLike | None = None) -> dict[str, dict[str, float]]:
    """A round's targeted models that have a log-probability for every sentence of its trials."""
    from ..data.rounds import find_round, load_round

    data = load_round(find_round(experiment, datasets_dir))
    sentences = set(unique_sentences(data.trials))
    return {m: v for m, v in data.reference_logprobs().items() if sentences <= set(v)}


def experiment_sentences(experiment: str, datasets_dir: str | os.PathLike | None = None) -> list[str]:
    """The distinct sentences of an experiment's (or round's) trials (what every compared model must score)."""
    return unique_sentences(experiment_trials(experiment, datasets_dir)[0])


def _described(spec: str | Mapping) -> dict:
    """A model of the comparison's ``models``: its description, or ``{"spec": spec}``."""
    return {"spec": spec} if isinstance(spec, str) else dict(spec)


def compare_logprobs(
    logprobs: Mapping[str, Mapping[str, float]],
    experiment: str,
    datasets_dir: str | os.PathLike | None = None,
    *,
    conditions: Sequence[str] | None = None,
    specs: Mapping[str, str | Mapping] | None = None,
    ties: str = DEFAULT_TIES,
) -> dict:
    """Head-to-head and agreement matrices of ``logprobs`` (model name -> {sentence: natural-log
    probability}) on the human trials of ``experiment`` (see the module docstring).

    ``conditions``: condition keys (default: every condition with trials); ``specs``: each
    model's spec, or its whole description (the ``model`` block of a result:
    :func:`~.base.describe_model` of its scorer, with its device, dtype, batch size and method),
    recorded in the output's ``models``.  ValueError when fewer than two models are given, a sentence
    has no (finite) log-probability, or a condition is unknown.
    """
    if len(logprobs) < 2:
        raise ValueError(f"a comparison needs at least two models, got {len(logprobs)}")
    tie_value(ties)
    trials, fp = experiment_trials(experiment, datasets_dir)
    sentences = unique_sentences(trials)
    prepared = prepare_trials(trials)
    ratios = {
        name: prepared.orient(log_ratios_from_logprobs(trials, resolve_logprobs(values, sentences, name)))
        for name, values in logprobs.items()
    }
    ev = Evaluator(prepared, ties=ties)
    names = list(ratios)
    out_conditions: dict[str, dict] = {}
    for cond in (CONDITIONS if conditions is None else [condition(k) for k in conditions]):
        panel = condition_panel(ev, cond, ratios, per_unit_tests=False)
        if panel is None:
            continue
        mask = condition_mask(prepared.frame, cond)
        matches: dict[str, dict] = {a: {} for a in names}
        agree: dict[str, dict] = {a: {} for a in names}
        for a in names:
            for b in names:
                if a == b:
                    continue
                match, q, swapped = panel.match(a, b)
                shares = 1.0 - match.share_by_unit if swapped else match.share_by_unit
                share = float(shares.mean()) if len(shares) else None
                items = 1.0 - match.share_by_item if swapped else match.share_by_item
                matches[a][b] = {
                    "selection": match.selection,
                    "n_pairs_selected": match.n_pairs_selected,
                    "n_trials": match.n_trials,
                    "n_pairs": match.n_pairs,
                    "share": share,
                    "share_pooled": None if match.share_pooled is None else
                    (1.0 - match.share_pooled if swapped else match.share_pooled),
                    "share_by_unit": {str(k): float(v) for k, v in shares.items()},
                    "p": match.p,
                    "p_bh": q,
                    "share_items": float(items.mean()) if len(items) else None,
                    "share_by_item": {str(k): float(v) for k, v in items.items()},
                    "p_items": match.p_items,
                    "p_items_bh": panel.items_q(a, b),
                }
                value, n_pairs = agreement(prepared.frame, ratios[a], ratios[b], mask)
                agree[a][b] = {"share": value, "n_pairs": n_pairs}
        out_conditions[cond.key] = {
            "unit": prepared.unit,
            "n_units": int(prepared.frame[prepared.unit].nunique()),
            "n_pairs": int(prepared.frame["pair_id"][mask].nunique()),
            "bh_family_size": panel.family_sizes()["head_to_head"],
            "bh_family_size_items": panel.family_sizes()["head_to_head_by_item"],
            "head_to_head": matches,
            "agreement": agree,
        }
    out = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "experiment": experiment,
        "models": {name: _described((specs or {}).get(name, name)) for name in names},
        "analysis": {"ties": ties},
        "conditions": out_conditions,
        "provenance": provenance(fp),
    }
    validate_result(out)  # the one validator knows every file the package writes
    return out
