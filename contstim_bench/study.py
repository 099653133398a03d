"""Names shared by every layer: experiments, trial types, reference models, trial columns.

This module is the contract between the dataset builders (``dataset_scripts/``), the analysis,
the scorers and the result files.  Change a name here and every layer follows.
"""
from __future__ import annotations

EXPERIMENTS = ("main", "pll")
"""``main``: Aug 2021, 100 participants in 10 groups. ``pll``: Nov 2022, 30 participants, one group."""


def is_paper_experiment(name: str) -> bool:
    """Whether ``name`` is an experiment of the paper (:data:`EXPERIMENTS`) rather than a round of
    the benchmark (``contstim experiment ingest``) or anything else: the one test that tells them
    apart, for every layer (``tests/shipping/test_house_claims.py`` holds every other module to it)."""
    return name in EXPERIMENTS

EXPERIMENT_DESCRIPTIONS = {
    "main": "Golan et al. 2023 main experiment (Aug 2021): 100 participants in 10 groups, 9 models",
    "pll": "Golan et al. 2023 PLL experiment (Nov 2022): 30 participants, approximate LL vs PLL",
}

TRIAL_TYPES = (
    "randomly_sampled_natural",
    "natural_controversial",
    "natural_vs_synthetic",
    "synthetic_vs_synthetic",
    "natural_vs_shuffled",
)
"""Trial types (conditions) in the order of the paper's figures."""

TARGET_COLUMNS = ("sentence1_accept_model", "sentence1_reject_model", "sentence2_accept_model",
                  "sentence2_reject_model")
"""The trial columns naming the model each sentence was chosen or optimised to be accepted /
rejected by (null: none)."""

CONTROVERSIAL_TRIAL_TYPES = ("natural_controversial", "natural_vs_synthetic", "synthetic_vs_synthetic")
"""Conditions whose trials target specific models (a model is evaluated on the trials that target it)."""

MAIN_MODELS = ("gpt2", "roberta", "electra", "bert", "xlm", "lstm", "rnn", "trigram", "bigram")
"""The nine reference models of the main experiment, as named in the source files."""

PLL_MODELS = (
    "bert",
    "bert_has_a_mouth",
    "roberta",
    "roberta_has_a_mouth",
    "electra",
    "electra_has_a_mouth",
)
"""The six reference models of the pll experiment (``*_has_a_mouth`` = read out with PLL)."""

ALL_REFERENCE_MODELS = tuple(dict.fromkeys(MAIN_MODELS + PLL_MODELS))

EXPERIMENT_MODELS = {"main": MAIN_MODELS, "pll": PLL_MODELS}

MODEL_DESCRIPTIONS = {
    "gpt2": "GPT-2 XL (causal transformer)",
    "roberta": "RoBERTa-large (masked, approximate log-likelihood)",
    "electra": "ELECTRA-large generator (masked, approximate log-likelihood)",
    "bert": "BERT-large cased (masked, approximate log-likelihood)",
    "xlm": "XLM (xlm-mlm-en-2048; masked, approximate log-likelihood)",
    "lstm": "word-level LSTM",
    "rnn": "word-level RNN",
    "trigram": "trigram with Kneser-Ney smoothing",
    "bigram": "bigram with Kneser-Ney smoothing",
    "bert_has_a_mouth": "BERT-large cased read out with pseudo-log-likelihood (PLL)",
    "roberta_has_a_mouth": "RoBERTa-large read out with pseudo-log-likelihood (PLL)",
    "electra_has_a_mouth": "ELECTRA-large generator read out with pseudo-log-likelihood (PLL)",
}

# Columns of the ``trials`` config, one row per participant x trial.
TRIAL_COLUMNS = {
    "experiment": "string",  # "main" or "pll"
    "participant": "string",  # stable anonymous participant id, unique within an experiment
    "group": "int64",  # participant group (main: 1..10; pll: 1)
    "trial": "int64",  # trial order within the session, 1-based (Gorilla "Trial Number")
    "pair_id": "string",  # stable id of the unordered sentence pair (same for every participant)
    "sentence1": "string",  # the sentence shown on the left
    "sentence2": "string",  # the sentence shown on the right
    "sentence1_type": "string",  # raw stimulus type code of sentence1 (e.g. S1, S2, N, C1)
    "sentence2_type": "string",
    "trial_type": "string",  # one of TRIAL_TYPES
    "sentence1_accept_model": "string",  # model targeted to accept sentence1 (null if none)
    "sentence1_reject_model": "string",  # model targeted to reject sentence1 (null if none)
    "sentence2_accept_model": "string",
    "sentence2_reject_model": "string",
    "rating": "int64",  # 1..6; 1 = strongest preference for sentence1, 6 = for sentence2
    "confidence": "int64",  # 1 somewhat, 2 confident, 3 very confident
    "reaction_time_ms": "float64",
}

RATING_MIN, RATING_MAX = 1, 6
