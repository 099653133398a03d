"""The token-count control of Golan et al. (2023), Table S2: does a model's choice follow the
token count of the sentences?

The paper's test, as the authors' ``tokenization_control_analysis`` runs it: for each model that
splits words into tokens (the transformers), the distinct synthetic-vs-synthetic pairs that target
it against another such model (the ten selected triplets of each of its four transformer pairs:
40 pairs per model); in each pair, the sentence the model assigns the higher probability
("accepted") and the other ("rejected"), each counted in *that model's* tokens
(``len(tokenizer.tokenize(sentence))``, no special tokens); the pairs where the accepted
sentence has more tokens, equal counts, or the rejected one has more; a two-sided binomial test
(``scipy.stats.binomtest``, H0: pi = 0.5) of "accepted has more" among the pairs whose counts
differ; Benjamini-Hochberg over the models tested together (:func:`..inference.bh_adjust`, the
same adjusted p-values as statsmodels' ``multipletests(method="fdr_bh")``).

For the reference models, the accepted sentence is the one each synthetic sentence was made to
be accepted by the model (the design guarantees the model prefers it; the functions here use
the model's log-probabilities, which is what the caption says and what works for any model).
A model that no pair targets (a submitted model) is tested on every synthetic pair given.
A pair whose two log-probabilities are equal has no accepted sentence and is counted apart
(``model_ties``); token counts are compared as given, so a constant offset (special tokens added
to every sentence) changes nothing.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from .inference import ALPHA, bh_adjust

Pair = tuple[str, str]


@dataclass(frozen=True)
class TokenCountRow:
    """One row of Table S2."""

    model: str
    selection: str  # "targeted": pairs made for the model (against another tokenising model); "all"
    n_pairs: int
    accepted_more: int  # pairs where the accepted (higher log-probability) sentence has more tokens
    equal: int
    rejected_more: int
    model_ties: int  # pairs whose two log-probabilities are equal (no accepted sentence; not counted above)
    p: float | None  # two-sided binomial test of accepted_more among accepted_more + rejected_more (None: no such pair)
    p_bh: float | None  # Benjamini-Hochberg over the models of the table that have a p
    significant: bool  # p_bh < ALPHA


def count_pairs(pairs: Sequence[Pair], logprobs: Mapping[str, float],
                token_counts: Mapping[str, int]) -> tuple[int, int, int, int]:
    """``(accepted_more, equal, rejected_more, model_ties)`` over ``pairs``.

    ``logprobs``: the model's natural-log probability of each sentence; ``token_counts``: its
    token count of each sentence.  KeyError names a sentence that lacks either.
    """
    more = equal = fewer = ties = 0
    for a, b in pairs:
        for s in (a, b):
            if s not in logprobs:
                raise KeyError(f"no log-probability for sentence {s!r}")
            if s not in token_counts:
                raise KeyError(f"no token count for sentence {s!r}")
        if logprobs[a] == logprobs[b]:
            ties += 1
            continue
        accepted, rejected = (a, b) if logprobs[a] > logprobs[b] else (b, a)
        na, nr = int(token_counts[accepted]), int(token_counts[rejected])
        more += na > nr
        equal += na == nr
        fewer += na < nr
    return more, equal, fewer, ties


def binomial_p(accepted_more: int, rejected_more: int) -> float | None:
    """Two-sided exact binomial p of ``accepted_more`` successes in ``accepted_more +
    rejected_more`` trials under pi = 0.5 (None when there is no trial)."""
    n = accepted_more + rejected_more
    return None if n == 0 else float(binomtest(accepted_more, n, 0.5, alternative="two-sided").pvalue)


def token_count_table(counts: Mapping[str, tuple[int, int, int, int]],
                      selections: Mapping[str, str] | None = None) -> list[TokenCountRow]:
    """Rows of Table S2 from each model's :func:`count_pairs` counts, in the given order: the
    binomial p of each model and the Benjamini-Hochberg adjustment over the models that have one."""
    ps = {m: binomial_p(c[0], c[2]) for m, c in counts.items()}
    tested = [m for m, p in ps.items() if p is not None]
    adjusted = dict(zip(tested, map(float, bh_adjust([ps[m] for m in tested]))))
    rows = []
    for m, (more, equal, fewer, ties) in counts.items():
        q = adjusted.get(m)
        rows.append(TokenCountRow(
            model=m, selection=(selections or {}).get(m, "all"), n_pairs=more + equal + fewer + ties,
            accepted_more=more, equal=equal, rejected_more=fewer, model_ties=ties, p=ps[m], p_bh=q,
            significant=q is not None and q < ALPHA))
    return rows


def synthetic_pairs(triplets: pd.DataFrame, model: str, tokenising: Collection[str]) -> tuple[list[Pair], str]:
    """``(pairs, selection)``: the synthetic pairs (S1, S2) of ``triplets`` (columns ``m1``, ``m2``,
    ``S1``, ``S2``; one row per tested triplet) that the Table S2 test uses for ``model``.

    Rows that target ``model`` against another model of ``tokenising`` (``"targeted"``); when no
    row targets ``model`` at all (a model the design did not include), every row (``"all"``).
    Duplicate pairs are counted once.
    """
    for col in ("m1", "m2", "S1", "S2"):
        if col not in triplets.columns:
            raise ValueError(f"the triplets table has no column {col!r}")
    m1, m2 = triplets["m1"].to_numpy(), triplets["m2"].to_numpy()
    mine = (m1 == model) | (m2 == model)
    if mine.any():
        other = np.where(m1 == model, m2, m1)
        rows = triplets[mine & np.isin(other, list(tokenising)) & (other != model)]
        selection = "targeted"
    else:
        rows, selection = triplets, "all"
    return list(dict.fromkeys(zip(rows["S1"], rows["S2"]))), selection


def token_count_control(
    triplets: pd.DataFrame,
    logprobs: Mapping[str, Mapping[str, float]],
    counters: Mapping[str, Callable[[list[str]], Sequence[int]]],
) -> list[TokenCountRow]:
    """Table S2 for every model of ``counters`` (model -> function giving the model's token count
    of each sentence of a list), on the tested synthetic triplets ``triplets``.

    ``logprobs``: model -> {sentence: natural-log probability}.  The models of ``counters`` are
    the tokenising ones (a reference model is tested on the pairs that target it against another
    of them) and are adjusted together.
    """
    counts, selections = {}, {}
    for model, counter in counters.items():
        if model not in logprobs:
            raise KeyError(f"no log-probabilities for model {model!r}")
        pairs, selections[model] = synthetic_pairs(triplets, model, counters)
        sentences = list(dict.fromkeys(s for pair in pairs for s in pair))
        n = [int(v) for v in counter(sentences)]
        if len(n) != len(sentences):
            raise ValueError(f"{model}: the token counter gave {len(n)} counts for {len(sentences)} sentences")
        counts[model] = count_pairs(pairs, logprobs[model], dict(zip(sentences, n)))
    return token_count_table(counts, selections)
