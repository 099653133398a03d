"""The Appendix D GLMM of Kauf et al. (2024) over several plausibility results: :func:`run_glmm`
(what ``contstim plausibility-glmm`` runs).

Each result (``contstim plausibility`` output, LogProbs or a single-sentence prompt) gives one
hit per Experiment 1 pair; the results are the levels of the model factors the user names (the
paper: class Mistral/Falcon/MPT x version base/instruct).  The model itself and how it differs
from lme4 is :mod:`contstim_bench.plausibility.glmm`.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .._version import __version__
from ..provenance import provenance
from ..plausibility.glmm import fit_glmm, trials_frame
from ..plausibility.metrics import EXPERIMENT1_SUBSETS, experiment1_pairs, pair_hit_vector
from ..results.files import GLMM_FORMAT, GLMM_FORMAT_VERSION
from .plausibility import DATASET, FORMAT, limit_pairs

DEFAULT_SUBSETS = ("eventsadapt_ai", "eventsadapt_aa")
"""EventsAdapt: the subsets with both voices (DTFit is active only)."""


def result_pair_hits(result: dict, pairs, source: str = "result") -> dict[str, bool]:
    """pair id -> hit of an Experiment 1 result: its ``pair_hits``, or recomputed from its
    sentence scores and rule (results written before ``pair_hits`` existed).  ValueError for a
    result that has no per-pair hit (Sentence Choice I answers per presentation)."""
    if result.get("format") != FORMAT:
        raise ValueError(f"{source}: not a plausibility result (format {result.get('format')!r})")
    scores = result.get("scores", {}).get("experiment1", {})
    if "pair_hits" in scores:
        return {str(k): bool(v) for k, v in scores["pair_hits"].items()}
    if "sentence_scores" not in scores:
        raise ValueError(f"{source}: method {result.get('method')!r} has no per-pair hit (Sentence Choice I "
                         "answers each presentation order); the GLMM needs LogProbs or a single-sentence prompt")
    sub = limit_pairs(pairs, result.get("benchmark", {}).get("limit"))
    lp = scores["sentence_scores"]
    hits = pair_hit_vector(sub, sub.sentence_plausible.map(lp), sub.sentence_implausible.map(lp),
                           scores.get("rule", "higher"))
    return dict(zip(sub.pair_id, map(bool, hits)))


def run_glmm(
    results: Sequence[dict | str | os.PathLike],
    factors: Mapping[str, Sequence[str]] | None = None,
    *,
    subsets: Sequence[str] = DEFAULT_SUBSETS,
    voice: bool = True,
    datasets_dir: str | os.PathLike | None = None,
) -> dict:
    """Fit the Appendix D GLMM to the Experiment 1 hits of ``results`` (result dicts or files).

    ``factors``: factor name -> one level per result, in the order of ``results`` (e.g.
    ``{"version": ["instruct", "base"]}``); default ``{"model": <each result's model spec>}``.
    ``subsets``: Experiment 1 subsets modelled (default both EventsAdapt subsets); ``voice``:
    include voice and its interactions (needs pairs of both voices).  Returns a JSON-ready dict
    with the fit (:func:`contstim_bench.plausibility.glmm.fit_glmm`, its ``warnings`` included:
    non-convergence, separation), the results and factor levels used, the dataset fingerprint and
    ``provenance`` (:func:`contstim_bench.provenance.provenance`: package version and git commit,
    library versions, dataset fingerprint, time).
    """
    from ..data.load import fingerprint, load_config
    from ..results.io import read_result

    loaded = []
    for i, r in enumerate(results):
        if isinstance(r, (str, os.PathLike)):
            loaded.append((str(r), read_result(r)))
        else:
            loaded.append((f"results[{i}]", r))
    if len(loaded) < 2:
        raise ValueError(f"the GLMM compares models: give at least two results, got {len(loaded)}")
    unknown = sorted(set(subsets) - set(EXPERIMENT1_SUBSETS))
    if unknown or not subsets:
        raise ValueError(f"unknown Experiment 1 subsets {unknown}; known: {', '.join(EXPERIMENT1_SUBSETS)}")
    fp = fingerprint(DATASET, datasets_dir)
    for source, r in loaded:
        theirs = r.get("benchmark", {}).get("dataset_fingerprint")
        if theirs != fp:
            raise ValueError(f"{source}: dataset fingerprint {theirs} differs from this plausibility dataset's {fp}")
    if factors is None:
        specs = [r["model"]["spec"] for _, r in loaded]
        if len(set(specs)) != len(specs):
            raise ValueError(f"results share a model spec ({specs}); name the factors that tell them apart")
        factors = {"model": specs}
    factors = {str(k): [str(v) for v in levels] for k, levels in factors.items()}
    for name, levels in factors.items():
        if len(levels) != len(loaded):
            raise ValueError(f"factor {name!r} has {len(levels)} levels for {len(loaded)} results")
        if name in ("hit", "item", "voice", "subset", "label", "pair_id"):
            raise ValueError(f"factor name {name!r} is reserved")
    ea = load_config(DATASET, "eventsadapt", split="test", datasets_dir=datasets_dir).to_pandas()
    dt = load_config(DATASET, "dtfit", split="test", datasets_dir=datasets_dir).to_pandas()
    pairs = experiment1_pairs(ea, dt)
    labels = [f"{i}:{r['model']['spec']}" for i, (_, r) in enumerate(loaded)]
    hits = {label: result_pair_hits(r, pairs, source) for label, (source, r) in zip(labels, loaded)}
    levels = {label: {name: lv[i] for name, lv in factors.items()} for i, label in enumerate(labels)}
    trials = trials_frame(pairs, hits, levels)
    trials = trials[trials.subset.isin(list(subsets))].reset_index(drop=True)
    fit = fit_glmm(trials, list(factors), voice=voice)
    report = {
        "format": GLMM_FORMAT,
        "format_version": GLMM_FORMAT_VERSION,
        "paper": "Kauf et al. 2024, Appendix D",
        "package_version": __version__,
        "dataset_fingerprint": fp,
        "subsets": list(subsets),
        "results": [{"source": source, "spec": r["model"]["spec"], "method": r.get("method"),
                     "levels": levels[label], "n_pairs": int((trials.label == label).sum()),
                     "accuracy": float(trials.hit[trials.label == label].mean())}
                    for label, (source, r) in zip(labels, loaded)],
        "glmm": fit,
        "provenance": provenance(fp),
    }
    from ..results.schema import validate_result

    validate_result(report)  # the one validator knows every file the package writes
    return report


def write_glmm(report: dict, path: str | os.PathLike) -> Path:
    """Write a :func:`run_glmm` report as JSON."""
    from ..results.io import write_result

    return write_result(report, path)
