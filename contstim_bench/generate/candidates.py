"""Per-position word-replacement scores for the synthetic-sentence search (Golan et al. 2023,
Methods "Generating synthetic controversial sentence pairs" and "Word-level search for
bidirectional models").

Every scorer is used in one of three search modes, chosen by what it offers:

``exhaustive``
    cheap exact sweeps (n-gram ``sweep``, RNN/LSTM ``sweep``, or any scorer without a faster
    path): the log-probability of the sentence with every candidate word at the position.
``shortlist``
    causal LMs (``next_word_logprobs``): only candidates whose conditional log-probability
    given the preceding words is at least ``-10`` are scored (exactly, with the shared-prefix
    ``sweep``); the threshold is lowered in steps of 5 until at least 10 words pass.
``regression``
    masked LMs (``word_completion_logprobs``): the word-completion log-probabilities are the
    regressor of Eq. 3, a linear predictor of the sentence log-probability.

All values are natural-log probabilities (float64) in candidate order.  A sentence is its
words joined by single spaces.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..scoring.protocols import NextWordScorer, VocabularySweep, WordCompletion

MODES = ("exhaustive", "shortlist", "regression")


def search_mode(scorer) -> str:
    """The search mode of ``scorer`` (see the module docstring), from the protocols it implements."""
    if isinstance(scorer, WordCompletion):
        return "regression"
    if isinstance(scorer, NextWordScorer):
        return "shortlist"
    return "exhaustive"


def replaced_sentences(words: Sequence[str], position: int, candidates: Sequence[str]) -> list[str]:
    """The sentences with ``words[position]`` replaced by each candidate."""
    head = " ".join(words[:position])
    tail = " ".join(words[position + 1:])
    return [" ".join(x for x in (head, c, tail) if x) for c in candidates]


def candidate_logprobs(scorer, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
    """Exact log p(sentence with ``words[position]`` replaced by each candidate | model).

    Uses the scorer's fast path when it has one (:class:`VocabularySweep`: the n-gram, recurrent
    and causal scorers) and otherwise scores the replaced sentences with ``scorer.score``
    (exhaustive, correct, slower).
    """
    _check_position(words, position)
    cands = list(candidates)
    if not cands:
        return np.zeros(0, dtype=np.float64)
    words = list(words)
    if isinstance(scorer, VocabularySweep):
        values = scorer.sweep(words, position, cands)
    else:
        values = scorer.score(replaced_sentences(words, position, cands))
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (len(cands),):
        raise RuntimeError(f"{scorer.spec}: {values.shape} scores for {len(cands)} candidates")
    return values


def causal_shortlist(
    scorer,
    prefix_words: Sequence[str],
    candidates: Sequence[str],
    threshold: float = -10.0,
    step: float = 5.0,
    min_words: int = 10,
) -> np.ndarray:
    """Boolean mask of the candidates whose conditional log-probability given ``prefix_words``
    (natural log, summed over the word's tokens) is at least ``threshold``; the threshold is
    lowered by ``step`` until at least ``min_words`` candidates pass (or all of them do)."""
    cands = list(candidates)
    if not cands:
        return np.zeros(0, dtype=bool)
    if step <= 0:
        raise ValueError(f"shortlist threshold step must be positive, got {step}")
    lp = np.asarray(scorer.next_word_logprobs(list(prefix_words), cands), dtype=np.float64)
    if lp.shape != (len(cands),):
        raise RuntimeError(f"{scorer.spec}: {lp.shape} next-word scores for {len(cands)} words")
    need = min(min_words, len(cands))
    t = threshold
    finite = np.isfinite(lp)
    if finite.sum() < need:  # cannot reach min_words with finite scores: take every finite one
        return finite
    while (lp >= t).sum() < need:
        t -= step
    return lp >= t


def completion_logprobs(scorer, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
    """Eq. 3 regressor: log p(word ``position`` = w | the other words) under a masked LM."""
    _check_position(words, position)
    cands = list(candidates)
    if not cands:
        return np.zeros(0, dtype=np.float64)
    values = np.asarray(scorer.word_completion_logprobs(" ".join(words), position, cands), dtype=np.float64)
    if values.shape != (len(cands),):
        raise RuntimeError(f"{scorer.spec}: {values.shape} completion scores for {len(cands)} words")
    return values


def _check_position(words: Sequence[str], position: int) -> None:
    if not 0 <= int(position) < len(words):
        raise ValueError(f"position {position} outside 0..{len(words) - 1} of {' '.join(words)!r}")
