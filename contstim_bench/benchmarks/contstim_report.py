"""The remaining figures and tables of Golan et al. (2023), computed from the built contstim dataset.

:func:`paper_report` returns one item per figure or table of the paper that the experiment's
human data supports (each item: ``id``, ``kind``, ``title``, ``caption``, ``data``), and
``skipped`` with the reason for each one it does not:

``main`` experiment (needs the main results file, ``contstim data build --main-results FILE``):

- ``S3``  agreement of the reference models on the randomly sampled natural pairs;
- ``S4a``/``S4b`` head-to-head matrices on the controversial natural / synthetic pairs;
- ``S5``  natural vs synthetic pairs by (accepting model, rejecting model);
- ``S6``  accuracy of every model on the natural-vs-synthetic trials where it was the
  rejecting model, with the noise ceiling;
- ``S7a``/``S7b`` GloVe correlation / word frequency of preferred vs rejected synthetic
  sentences, models vs people;
- ``S8a`` approximate log-likelihood vs PLL on the randomly sampled natural pairs (only when the
  results file carries the PLL read-outs);
- ``T1``, ``T2``, ``T3`` each model's most severe failure on controversial natural, synthetic
  and natural-vs-synthetic pairs.

Both experiments: ``TS2``, the token-count control (:mod:`.contstim_golan`), for the reference
models whose tokenizer loads (from the Hugging Face cache offline).

``pll`` experiment: ``S4`` (head-to-head on its synthetic pairs), ``S8b`` and ``TS1`` (each PLL
read-out's most severe failure).

Everything comes from the reference models' published log-probabilities (natural log) and the
human trials; no model runs.  Ties among the most severe failures are broken with ``seed``.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict

import pyarrow.parquet as pq

from ..analysis.accept_reject import accept_reject_matrix
from ..analysis.evaluation import log_ratios_from_logprobs, reference_panel, unique_sentences
from ..analysis.failures import worst_pair
from ..analysis.features import feature_tests
from ..analysis.selection import condition, condition_mask
from ..analysis.trials import prepare_trials
from ..study import MODEL_DESCRIPTIONS
from .contstim import DATASET, load_experiment
from .contstim_compare import compare_logprobs
from .contstim_golan import TokenCounter, reference_logprobs, reference_token_counters, token_count_item

READOUTS = {"bert": "bert_has_a_mouth", "roberta": "roberta_has_a_mouth", "electra": "electra_has_a_mouth"}
"""Masked model -> its PLL read-out (``*_has_a_mouth`` in the source files)."""

TABLES = {
    "T1": ("natural_controversial", "Table 1: controversial natural pairs on which each model failed most severely"),
    "T2": ("synthetic_vs_synthetic", "Table 2: controversial synthetic pairs on which each model failed most severely"),
    "T3": ("natural_vs_synthetic", "Table 3: natural vs synthetic pairs on which each model failed most severely"),
}


def _readout_logprobs(experiment: str, datasets_dir, sentences: list[str]) -> dict[str, dict[str, float]]:
    """PLL read-outs of the experiment's sentences that the dataset has for every sentence."""
    from ..data.load import dataset_folder

    path = os.path.join(dataset_folder(DATASET, datasets_dir), "sentences", f"{experiment}.parquet")
    table = pq.read_table(path).to_pydict()
    out = {}
    for model in READOUTS.values():
        values = {s: v for s, v in zip(table["sentence"], table[model]) if v is not None}
        if all(s in values for s in sentences):
            out[model] = {s: values[s] for s in sentences}
    return out


def _item(id_: str, kind: str, title: str, caption: str, data) -> dict:
    return {"id": id_, "kind": kind, "title": title, "caption": caption, "data": data}


def _failures(frame, ratios, refs, models, cond_key, seed) -> list[dict]:
    cond = condition(cond_key)
    rows = []
    for m in models:
        failure = worst_pair(frame, ratios[m], m, cond, refs, seed=seed)
        if failure is not None:
            rows.append(asdict(failure))
    return rows


def _token_counts(experiment: str, datasets_dir, counters: Mapping[str, TokenCounter] | None,
                  skipped: dict[str, str], logprobs: Mapping[str, Mapping[str, float]] | None = None) -> dict | None:
    """Item TS2, or None with the reason in ``skipped`` (``logprobs``: the experiment's
    :func:`reference_logprobs` when the caller has read them)."""
    if logprobs is None:
        logprobs = reference_logprobs(experiment, datasets_dir)
    missing: dict[str, str] = {}
    if counters is None:
        counters, missing = reference_token_counters(logprobs)
    counters = {m: c for m, c in counters.items() if m in logprobs}
    if not counters:
        skipped["TS2"] = ("no reference tokenizer could be loaded" + (f": {'; '.join(sorted(set(missing.values())))}"
                                                                      if missing else ""))
        return None
    item = token_count_item(experiment, logprobs, counters, datasets_dir)
    if missing:
        item["caption"] += f" Not tested (tokenizer not available): {', '.join(missing)}."
    return item


MAIN_ITEMS = ("S3", "S4a", "S4b", "S5", "S6", "S7a", "S7b", "S8a", "T1", "T2", "T3")
"""The items of the ``main`` experiment that need its human trials (every one but ``TS2``)."""


def _without_trials(experiment: str, datasets_dir, seed: int, token_counters, missing: str) -> dict:
    """The report of the main experiment built without its results file: Table S2 (the published
    triplets and the reference models' log-probabilities; no human data) where a tokenizer loads,
    and every other item named in ``skipped`` with its reason."""
    from ..data.load import dataset_folder

    if not (dataset_folder(DATASET, datasets_dir) / "sentences" / f"{experiment}.parquet").is_file():
        raise FileNotFoundError(missing)  # no contstim dataset at all: nothing to make
    why = f"needs the main experiment's human trials, which were not built: {missing}"
    skipped = {id_: why for id_ in MAIN_ITEMS}
    skipped["S3"] = ("the 90 randomly sampled natural pairs are paired only in the main experiment's results file "
                     f"(the stimuli and log-probabilities are here, the pairing is not): {missing}")
    skipped["S8a"] = f"the PLL read-outs of the main experiment come with its results file: {missing}"
    logprobs = reference_logprobs(experiment, datasets_dir)
    token_counts = _token_counts(experiment, datasets_dir, token_counters, skipped, logprobs)
    return {
        "experiment": experiment,
        "unit": None,
        "seed": seed,
        "models": {m: MODEL_DESCRIPTIONS.get(m, m) for m in logprobs},
        "items": [token_counts] if token_counts is not None else [],
        "skipped": skipped,
    }


def paper_report(experiment: str, datasets_dir: str | os.PathLike | None = None, seed: int = 0,
                 source: str | os.PathLike | None = None,
                 token_counters: Mapping[str, TokenCounter] | None = None) -> dict:
    """Every figure and table of the paper that ``experiment``'s data supports (module docstring).

    ``source``: the raw-data folder for the sentence features of Fig. S7 (default resolution
    otherwise); ``token_counters``: reference model -> token counter for Table S2 (default: the
    paper's Hugging Face tokenizers where they load, :func:`.contstim_golan.reference_token_counters`).
    Without the main experiment's human data (its results file absent from the build), the items
    that need no human data are made (Table S2) and every other one is named in ``skipped`` with
    the reason; FileNotFoundError when the ``pll`` experiment's trials are not built.
    """
    try:
        trials, refs = load_experiment(experiment, datasets_dir)
    except FileNotFoundError as exc:
        if experiment != "main":
            raise
        return _without_trials(experiment, datasets_dir, seed, token_counters, str(exc))
    models = list(refs)
    prepared = prepare_trials(trials)
    frame = prepared.frame
    ratios = {m: prepared.orient(log_ratios_from_logprobs(trials, refs[m])) for m in models}
    present = {c.key for c in (condition(k) for k in ("randomly_sampled_natural", "natural_controversial",
                                                        "synthetic_vs_synthetic", "natural_vs_synthetic"))
               if condition_mask(frame, c).any()}
    items: list[dict] = []
    skipped: dict[str, str] = {}
    unit = prepared.unit

    def need(id_: str, cond_key: str) -> bool:
        if cond_key in present:
            return True
        skipped[id_] = f"the {experiment} experiment has no {cond_key.replace('_', ' ')} trials"
        return False

    matrix_conds = [c for c in ("randomly_sampled_natural", "natural_controversial", "synthetic_vs_synthetic")
                    if c in present]
    comparison = compare_logprobs(refs, experiment, datasets_dir, conditions=matrix_conds) if matrix_conds else None

    if experiment == "main":
        if need("S3", "randomly_sampled_natural"):
            items.append(_item("S3", "agreement", "Figure S3: between-model agreement on randomly sampled natural pairs",
                               "Each cell: the share of the randomly sampled natural sentence pairs that the two models "
                               "rank the same way (both prefer the same sentence).",
                               {"comparison": comparison, "condition": "randomly_sampled_natural"}))
        for id_, cond_key, what in (("S4a", "natural_controversial", "selected"),
                                    ("S4b", "synthetic_vs_synthetic", "synthesised")):
            if need(id_, cond_key):
                items.append(_item(id_, "head_to_head", f"Figure S4{id_[-1]}: pairwise model comparison, "
                                   f"{cond_key.replace('_', ' ')} pairs",
                                   f"Only the trials whose pairs were {what} to contrast the two models; each cell: "
                                   "the share of those trials in which the participant's choice agreed with the row "
                                   f"model (pooled over trials, as in the paper). Stars: two-sided Wilcoxon of the "
                                   f"per-{unit} shares vs 0.5, BH over the model pairs.",
                                   {"comparison": comparison, "condition": cond_key}))
        if need("S5", "natural_vs_synthetic"):
            items.append(_item("S5", "accept_reject", "Figure S5: natural vs synthetic pairs by optimisation condition",
                               "Rows: the model the synthetic sentence was made to be accepted by; columns: the model "
                               "it was made to be rejected by. Each cell: the share of participants' choices aligned "
                               "with the accepting model (i.e. for the synthetic sentence), pooled over trials.",
                               {"models": models, "matrix": accept_reject_matrix(frame, ratios, models)}))
        if need("S6", "natural_vs_synthetic"):
            panel = reference_panel(trials, {m: log_ratios_from_logprobs(trials, refs[m]) for m in models},
                                    "natural_vs_synthetic_reject", contrasts=[])
            items.append(_item("S6", "panel", "Figure S6: accuracy where each model was the rejecting model",
                               "Each model on the natural-vs-synthetic trials whose synthetic sentence was made to be "
                               f"rejected by it; dots: {unit}s; grey: noise ceiling; * below the lower ceiling "
                               "(two-sided Wilcoxon, BH over the models).",
                               {"condition": "natural_vs_synthetic_reject", "measure": "accuracy", "panel": panel}))
        if need("S7a", "synthetic_vs_synthetic") and need("S7b", "synthetic_vs_synthetic"):
            from ..data.contstim_features import sentence_features

            features = sentence_features(source)
            for id_, name, label in (("S7a", "glove_correlation", "GloVe correlation (semantic coherence)"),
                                     ("S7b", "log_word_frequency", "mean log word frequency")):
                items.append(_item(id_, "features", f"Figure S7{id_[-1]}: {label} of preferred vs rejected synthetic "
                                   "sentences",
                                   "For each model, the synthetic pairs it helped synthesise: the feature of the sentence "
                                   "the model prefers against the one it rejects (black), and of the sentence most "
                                   "participants chose against the other (red). Outlined: the model's preference "
                                   "differs from people's (paired t-test, BH over the models, q < .05).",
                                   {"feature": name, "label": label,
                                    "tests": feature_tests(frame, ratios, models, features[name])}))
        if need("S8a", "randomly_sampled_natural"):
            readouts = _readout_logprobs(experiment, datasets_dir, unique_sentences(trials))
            pairs = [(m, r) for m, r in READOUTS.items() if m in refs and r in readouts]
            if not pairs:
                skipped["S8a"] = ("the main results file carries no PLL read-outs (sentence*_<model>_has_a_mouth_prob "
                                  "columns), so approximate log-likelihood cannot be compared with PLL")
            else:
                lps = {**{m: refs[m] for m, _ in pairs}, **{r: readouts[r] for _, r in pairs}}
                panel = reference_panel(trials, {m: log_ratios_from_logprobs(trials, v) for m, v in lps.items()},
                                        "randomly_sampled_natural", contrasts=pairs, unit="participant")
                items.append(_item("S8a", "panel", "Figure S8a: approximate log-likelihood vs PLL, randomly sampled "
                                   "natural pairs",
                                   "Signed-rank cosine similarity per participant; approximate LL vs PLL and each vs "
                                   "the lower noise ceiling, two-sided Wilcoxon across participants, BH over the "
                                   f"{len(pairs) + len(lps)} comparisons.",
                                   {"condition": "randomly_sampled_natural", "measure": "srcs", "panel": panel}))
        for id_, (cond_key, title) in TABLES.items():
            if need(id_, cond_key):
                items.append(_item(id_, "failures", title,
                                   "For each model (model 1): the pair, among those targeting it, on which its accuracy "
                                   "was lowest (ties broken at random with the report's seed); the sentence most "
                                   "participants chose first; log-probabilities in natural log, the higher one bold.",
                                   {"condition": cond_key, "rows": _failures(frame, ratios, refs, models, cond_key, seed)}))
    else:
        if need("S4", "synthetic_vs_synthetic"):
            items.append(_item("S4", "head_to_head", "Pairwise model comparison, synthetic pairs (pll experiment)",
                               "Each cell: on the synthetic pairs where the row and column models prefer different "
                               "sentences, the share of participants' choices that agreed with the row model (pooled "
                               f"over trials). Stars: two-sided Wilcoxon of the per-{unit} shares vs 0.5, BH over the "
                               "model pairs.", {"comparison": comparison, "condition": "synthetic_vs_synthetic"}))
            pairs = [(m, r) for m, r in READOUTS.items() if m in refs and r in refs]
            panel = reference_panel(trials, {m: log_ratios_from_logprobs(trials, refs[m]) for m in models},
                                    "synthetic_vs_synthetic", contrasts=pairs)
            items.append(_item("S8b", "panel", "Figure S8b: approximate log-likelihood vs PLL, synthetic pairs",
                               "Signed-rank cosine similarity per participant, each model on the pairs synthesised "
                               "against it; approximate LL vs PLL and each vs the lower noise ceiling, two-sided "
                               f"Wilcoxon across participants, BH over the {len(pairs) + len(models)} comparisons.",
                               {"condition": "synthetic_vs_synthetic", "measure": "srcs", "panel": panel}))
            readouts = [r for r in READOUTS.values() if r in refs]
            items.append(_item("TS1", "failures", "Table S1: synthetic pairs on which each PLL read-out failed most "
                               "severely",
                               "For each PLL read-out (model 1): the synthetic pair, among those targeting it, on which "
                               "its accuracy was lowest (ties broken at random with the report's seed); model 2 is "
                               "the approximate log-likelihood of the same network.",
                               {"condition": "synthetic_vs_synthetic",
                                "rows": _failures(frame, ratios, refs, readouts, "synthetic_vs_synthetic", seed)}))
    token_counts = _token_counts(experiment, datasets_dir, token_counters, skipped)
    if token_counts is not None:
        items.append(token_counts)
    return {
        "experiment": experiment,
        "unit": unit,
        "seed": seed,
        "models": {m: MODEL_DESCRIPTIONS.get(m, m) for m in models},
        "items": items,
        "skipped": skipped,
    }
