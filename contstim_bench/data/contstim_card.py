"""Dataset-card text of the ``contstim`` dataset: description, citation and, for every config,
its description and the meaning and derivation of each column."""
from __future__ import annotations

from ..citations import GOLAN_2023
from ..study import ALL_REFERENCE_MODELS, EXPERIMENT_MODELS, MAIN_MODELS

DESCRIPTION = """\
Human judgments of controversial sentence pairs from Golan, Siegelman, Kriegeskorte & Baldassano
(2023), "Testing the limits of natural language models for predicting human language judgments".
In each trial a participant chose which of two sentences they would be more likely to encounter
in the world and rated their confidence (3 levels).  Sentence pairs were selected or synthesised
so that two language models disagree about which sentence is more probable.

Two experiments: `main` (Aug 2021, 100 participants in 10 groups of 10; each group saw its own
stimulus set of 144 controversial trials (36 model pairs x 4 conditions), 9 randomly sampled
natural pairs and 12 natural-vs-shuffled control trials) and `pll` (Nov 2022, 30 participants,
one group, 120 synthetic pairs contrasting BERT/RoBERTa/ELECTRA read out with the paper's
approximate log-likelihood versus pseudo-log-likelihood, plus 12 control trials).

Every log-probability in this dataset is a natural logarithm (nats) of a whole sentence's
probability under a reference model, copied from the upstream files.  The trials are derived
from the raw Gorilla exports and the stimulus files (no pre-aligned upstream file is used):
trial types from the raw sentence type codes and the targeted models from the triplet and
natural-pair files, as in the paper's Methods."""

CITATION = GOLAN_2023  # the one copy is contstim_bench.citations

_MODEL_LIST = ", ".join(f"`{m}`" for m in ALL_REFERENCE_MODELS)


def _trials() -> tuple[str, dict[str, str]]:
    desc = (
        "One row per participant x trial, sentences in display order (`sentence1` = left). "
        "Splits: `main` (Aug 2021 experiment; present only when its raw results file was available) "
        "and `pll` (Nov 2022 experiment: 30 participants x 132 trials). Rows sorted by participant "
        "then trial."
    )
    cols = {
        "experiment": "`main` or `pll` (the split).",
        "participant": "Stable anonymous id `<experiment>-sNN`: NN is the rank of the raw participant id "
        "(`subject` in the pll export, `Participant Private ID` in the main export) among the sorted "
        "unique ids of that export.",
        "group": "Participant group, from the raw `counterbalance-o1ql` value `set N...` (main: 1..10, "
        "each group saw its own stimulus set; pll: 1).",
        "trial": "Gorilla `Trial Number`: 1-based position of the trial within the session.",
        "pair_id": "Stable id of the unordered sentence pair: first 16 hex digits of sha1 of the two "
        "sentences sorted and joined by a newline; equal for every participant who saw the pair.",
        "sentence1": "Sentence shown on the left (raw `sentence1`).",
        "sentence2": "Sentence shown on the right (raw `sentence2`).",
        "sentence1_type": "Raw stimulus type code of sentence1: `N1`/`N2` natural controversial, `N` "
        "natural seed of a synthetic triplet, `S1`/`S2` synthetic sentence (S1 accepted by m1, S2 by "
        "m2), `C1` natural and `C2` its shuffled version, `R1`/`R2` randomly sampled natural.",
        "sentence2_type": "Raw stimulus type code of sentence2 (codes as for sentence1_type).",
        "trial_type": "Condition from the pair of type codes: {N1,N2} natural_controversial, {N,S1} or "
        "{N,S2} natural_vs_synthetic, {S1,S2} synthetic_vs_synthetic, {C1,C2} natural_vs_shuffled, "
        "{R1,R2} randomly_sampled_natural.",
        "sentence1_accept_model": "Model targeted to accept sentence1 (find it more probable), looked up "
        "in the stimulus files: synthetic S1 of a tested triplet -> m1, S2 -> m2; natural controversial "
        "`sentence1` of the natural-pair file -> model_2, `sentence2` -> model_1. Null for sentences "
        "targeting no model (natural seeds, shuffled, randomly sampled).",
        "sentence1_reject_model": "Model targeted to reject sentence1 (the other model of its triplet or "
        "natural pair); null where none.",
        "sentence2_accept_model": "Model targeted to accept sentence2 (derived as for sentence1).",
        "sentence2_reject_model": "Model targeted to reject sentence2 (derived as for sentence1).",
        "rating": "1..6 from the raw `Zone Name` resp1..resp6: 1 = very confident choice of sentence1, "
        "3 = somewhat confident sentence1, 4 = somewhat confident sentence2, 6 = very confident "
        "sentence2 (the strongest preference for sentence2).",
        "confidence": "3 very confident (resp1/resp6), 2 confident (resp2/resp5), 1 somewhat confident "
        "(resp3/resp4); checked against the raw `Response` text where present.",
        "reaction_time_ms": "Raw Gorilla `Reaction Time` in milliseconds.",
    }
    return desc, cols


def _sentences() -> tuple[str, dict[str, str]]:
    main = ", ".join(f"`{m}`" for m in EXPERIMENT_MODELS["main"])
    pll = ", ".join(f"`{m}`" for m in EXPERIMENT_MODELS["pll"])
    desc = (
        "One row per unique stimulus sentence (sorted) with each reference model's natural-log "
        f"probability of the whole sentence. `main`: the sentences of `contstim_stim_probs_dict.pkl` "
        f"scored by the 9 main-experiment models ({main}); `pll`: the unique sentences of the pll "
        f"experiment's trials with the 6 models ({pll}) taken from the raw per-trial "
        "`sentence{1,2}_<model>_prob` columns (checked: one value per sentence and model). Both splits "
        f"carry all columns {_MODEL_LIST}; null where a model did not score the split."
    )
    cols = {"sentence": "The stimulus sentence (exact text shown to participants)."}
    for m in ALL_REFERENCE_MODELS:
        where = "main split from the pickle" if m in MAIN_MODELS else ""
        if m in EXPERIMENT_MODELS["pll"]:
            where = (where + "; " if where else "") + "pll split from the raw per-trial columns"
        cols[m] = f"Natural-log probability of the sentence under `{m}` ({where}); null where not scored."
    return desc, cols


def _natural_pairs() -> tuple[str, dict[str, str]]:
    desc = (
        "The 360 natural controversial sentence pairs of the main experiment "
        "(`sents_reddit_natural_June2021_selected.csv`): natural Reddit sentences selected by integer "
        "programming so that model_1 ranks sentence2 high and sentence1 low while model_2 does the "
        "reverse. One split, `main`, in file order."
    )
    rank = "Published probability rank of {s} under {m}, transformed to [0, 1] over the selection pool (higher = more probable)."
    cols = {
        "pair_index": "Row index of the pair in the upstream file (its unnamed first column).",
        "pair_id": "Stable id of the unordered pair (same as `trials.pair_id`).",
        "sentence1": "Upstream `sentence1`.",
        "sentence2": "Upstream `sentence2`.",
        "model_1": "Upstream `model_1`: the model that accepts sentence2 and rejects sentence1.",
        "model_2": "Upstream `model_2`: the model that accepts sentence1 and rejects sentence2.",
        "s1_ranked_log_prob_model_1": rank.format(s="sentence1", m="model_1"),
        "s1_ranked_log_prob_model_2": rank.format(s="sentence1", m="model_2"),
        "s2_ranked_log_prob_model_1": rank.format(s="sentence2", m="model_1"),
        "s2_ranked_log_prob_model_2": rank.format(s="sentence2", m="model_2"),
        "sentence1_accept_model": "= model_2 (checked: sentence1's rank is higher under model_2 than under model_1).",
        "sentence1_reject_model": "= model_1.",
        "sentence2_accept_model": "= model_1 (checked: sentence2's rank is higher under model_1 than under model_2).",
        "sentence2_reject_model": "= model_2.",
    }
    return desc, cols


def _triplets() -> tuple[str, dict[str, str]]:
    desc = (
        "Synthetic controversial triplets (natural seed N, synthetic S1 and S2) with the published "
        "columns, in file order. `main`: the 3,600 candidates of "
        "`8_word_9_models_100_sentences_per_pair.csv` (36 model pairs x 100) with `selected` = in "
        "`..._best10.csv` (360 tested). `pll`: the 285 candidates of "
        "`8_word_6_models_95_sentences_per_pair.csv` (3 model pairs x 95) with `selected` = in "
        "`..._best40.csv` (120 tested). Log-probabilities are natural logs."
    )
    lp = "Published natural-log probability of {s} under {m}."
    cols = {
        "m1": "Model 1: accepts S1 (keeps it at least as probable as N) and rejects S2.",
        "m2": "Model 2: accepts S2 and rejects S1.",
        "N_idx": "Line index of N in the synthesis pool (`natural_pool`/`synthesis`).",
        "N": "Natural seed sentence.",
        "S1": "Synthetic sentence targeted to be accepted by m1 and rejected by m2.",
        "S2": "Synthetic sentence targeted to be accepted by m2 and rejected by m1.",
        "loss_S1_vs_N": "Published optimisation loss of S1 relative to N (lower = more controversial).",
        "lp_N_given_m1": lp.format(s="N", m="m1"),
        "lp_S1_given_m1": lp.format(s="S1", m="m1"),
        "lp_N_given_m2": lp.format(s="N", m="m2"),
        "lp_S1_given_m2": lp.format(s="S1", m="m2"),
        "loss_S2_vs_N": "Published optimisation loss of S2 relative to N.",
        "lp_S2_given_m2": lp.format(s="S2", m="m2"),
        "lp_S2_given_m1": lp.format(s="S2", m="m1"),
        "loss_rank1": "Published rank of loss_S1_vs_N within the model pair.",
        "loss_rank2": "Published rank of loss_S2_vs_N within the model pair.",
        "worst_rank_of_two": "max(loss_rank1, loss_rank2), as published.",
        "p_N_given_m1_decile": "Decile (0-9) of N's probability under m1 among the natural sentences.",
        "p_N_given_m2_decile": "Decile (0-9) of N's probability under m2 among the natural sentences.",
        "selected_for_human_testing": "Published flag (checked equal to `selected`).",
        "selected": "True when the triplet is in the best-triplet file used in the experiment "
        "(matched on m1, m2, N_idx, N, S1, S2).",
    }
    return desc, cols


def _vocabulary() -> tuple[str, dict[str, str]]:
    desc = (
        "The word vocabulary of sentence synthesis: the 23,180 entries of `vocab_low.pkl` followed by "
        "the 5,977 of `vocab_cap.pkl` (29,157 entries; a word may appear in both lists), in file "
        "order, with the frequencies of `vocab_low_freqs.pkl` / `vocab_cap_freqs.pkl` (the sampling weights of "
        "random sentence initialisation). One split, `train`."
    )
    cols = {
        "word": "The word.",
        "frequency": "Relative corpus frequency from the matching `*_freqs.pkl` array (same position).",
        "capitalized": "True for entries of `vocab_cap.pkl`, the capitalised vocabulary that synthesis uses for "
        "the first word of a sentence; False for `vocab_low.pkl`, the vocabulary of the other positions.",
    }
    return desc, cols


def _function_words() -> tuple[str, dict[str, str]]:
    desc = (
        "The 42 function words (articles and prepositions) of `preps.pkl` that sentence synthesis "
        "allows to repeat within a sentence. One split, `train`, in file order."
    )
    return desc, {"index": "0-based position in `preps.pkl`.", "word": "The function word."}


def _pool() -> tuple[str, dict[str, str]]:
    desc = (
        "Natural sentence pools. `synthesis`: the 6,113 lines of "
        "`natural_sentences_for_synthetic_controversial_sentence_pair_optimization.txt` (the seeds N of "
        "the synthetic triplets; the last line has no newline). `selection` (only when its source file "
        "is available): the 231,725 lines of "
        "`natural_sentences_for_natural_controversial_sentence_pair_selection.txt` joined by line number "
        "with the 9 precomputed natural-log probability arrays `*_probs_<model>.npy`."
    )
    cols = {
        "line": "0-based line number in the source text file.",
        "sentence": "The sentence (the line without its newline).",
    }
    for m in MAIN_MODELS:
        cols[m] = f"Natural-log probability under `{m}` from `*_probs_{m}.npy` at this line (`selection`); null in `synthesis` (no published values)."
    return desc, cols


def column_docs() -> dict[str, tuple[str, dict[str, str]]]:
    """``{config: (description, {column: meaning and derivation})}`` for every config."""
    return {
        "trials": _trials(),
        "sentences": _sentences(),
        "natural_controversial_pairs": _natural_pairs(),
        "synthetic_triplets": _triplets(),
        "vocabulary": _vocabulary(),
        "function_words": _function_words(),
        "natural_pool": _pool(),
    }
