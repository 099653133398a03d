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
    ``sweep``); the threshold is lowered in steps of 5 until at least 10 words pass.  A causal
    LM that implements :class:`~contstim_bench.scoring.protocols.LazySweep` is scored with its
    fixed-prefix methods, whose values do not depend on which candidates are scored together,
    and :func:`lazy_causal_shortlist` finds the same shortlist computing the full next-word
    value only of the words whose first tokens pass the threshold, words that share first
    tokens sharing their forward passes.
``regression``
    masked LMs (``word_completion_logprobs``): the word-completion log-probabilities are the
    regressor of Eq. 3, a linear predictor of the sentence log-probability.

All values are natural-log probabilities (float64) in candidate order.  A sentence is its
words joined by single spaces.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..scoring.protocols import LazySweep, NextWordScorer, VocabularySweep, WordCompletion

MODES = ("exhaustive", "shortlist", "regression")

#: nats: a causal LM's next-word value this close to a shortlist threshold is replaced by its
#: canonical value (scores of the texts alone), so that the plain and the lazy search, whose
#: batched values differ by about 1e-5 nats, draw the same shortlist (see :mod:`.replacement`)
NEAR_THRESHOLD = 1e-3


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
    lowered by ``step`` until at least ``min_words`` candidates pass (or all of them do).
    Every candidate's conditional log-probability is computed."""
    cands = list(candidates)
    if not cands:
        return np.zeros(0, dtype=bool)
    if step <= 0:
        raise ValueError(f"shortlist threshold step must be positive, got {step}")
    if isinstance(scorer, LazySweep):
        lp = scorer.prefix_next_word_logprobs(list(prefix_words), cands)
    else:
        lp = scorer.next_word_logprobs(list(prefix_words), cands)
    lp = np.asarray(lp, dtype=np.float64)
    if lp.shape != (len(cands),):
        raise RuntimeError(f"{scorer.spec}: {lp.shape} next-word scores for {len(cands)} words")
    need = min(min_words, len(cands))
    finite = np.isfinite(lp)
    if finite.sum() < need:  # cannot reach min_words with finite scores: take every finite one
        return finite
    settle = _Settler(scorer, prefix_words, cands) if isinstance(scorer, LazySweep) else None
    t = threshold
    while True:
        if settle is not None:
            settle.near(lp, t)
        if (lp >= t).sum() >= need:
            return lp >= t
        t -= step


def lazy_causal_shortlist(
    scorer: LazySweep,
    prefix_words: Sequence[str],
    candidates: Sequence[str],
    threshold: float = -10.0,
    step: float = 5.0,
    min_words: int = 10,
    relevant: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`causal_shortlist` (the same mask) computing a candidate's full conditional
    log-probability only when the probability of its first tokens reaches the threshold being
    tried (:meth:`~LazySweep.next_word_bounds`).

    ``relevant`` (bool per candidate): only these candidates' membership is wanted; the mask is
    then False for the others.  When ``min_words`` candidates pass ``threshold`` on values known
    without running the model (single-token words, kept values), that threshold is the one the
    rule stops at, and only the relevant candidates' values are computed."""
    cands = list(candidates)
    if not cands:
        return np.zeros(0, dtype=bool)
    if step <= 0:
        raise ValueError(f"shortlist threshold step must be positive, got {step}")
    prefix = list(prefix_words)
    need = min(min_words, len(cands))
    settle = _Settler(scorer, prefix, cands)
    if relevant is not None and not np.all(relevant):
        values, exact = scorer.next_word_bounds(prefix, cands, np.inf)  # the free values only
        lp = np.where(exact, values, np.nan)
        settle.near(lp, threshold)
        if (lp >= threshold).sum() >= need:
            out = np.zeros(len(cands), dtype=bool)
            idx = np.flatnonzero(relevant)
            if len(idx):
                values, exact = scorer.next_word_bounds(prefix, [cands[i] for i in idx], threshold - NEAR_THRESHOLD)
                sub = np.where(exact, values, np.nan)
                settle.near(sub, threshold, idx)
                out[idx] = sub >= threshold
            return out
    mask = _lazy_rule(scorer, prefix, cands, threshold, step, need, settle)
    return mask if relevant is None else mask & np.asarray(relevant, dtype=bool)


def _lazy_rule(scorer, prefix: list[str], cands: list[str], threshold: float, step: float, need: int,
               settle: "_Settler") -> np.ndarray:
    """The shortlist rule of :func:`causal_shortlist` on values computed as far as it needs."""
    t = threshold
    tried = []
    while True:
        tried.append(t)
        # a value that can pass t (also once settled near it) is >= t - NEAR_THRESHOLD: exact
        values, exact = scorer.next_word_bounds(prefix, cands, t - NEAR_THRESHOLD)
        lp = np.where(exact, values, np.nan)
        for u in tried:  # values computed at this floor may lie near a threshold tried before
            settle.near(lp, u)
        if (lp >= t).sum() >= need:
            return lp >= t
        if not (np.isfinite(values) & ~exact).any():
            break  # every candidate with a finite bound is known; lowering t adds none
        t -= step
    finite = np.isfinite(lp)  # unknown values (nan) have bound -inf, so they are -inf: not finite
    if finite.sum() < need:
        return finite
    while (lp >= t).sum() < need:
        t -= step
        settle.near(lp, t)
    return lp >= t


class _Settler:
    """Canonical next-word values of one shortlist call, ``score(prefix + word) - score(prefix)``
    with each text scored alone, computed once per candidate and only for the values within
    :data:`NEAR_THRESHOLD` of a threshold the rule actually tries (the batched values round
    differently by about 1e-5 nats; elsewhere they decide alike)."""

    def __init__(self, scorer, prefix_words: Sequence[str], cands: list[str]):
        self.scorer = scorer
        self.prefix_text = " ".join(prefix_words)
        self.cands = cands
        self.base: float | None = None
        self.values: dict[int, float] = {}

    def near(self, lp: np.ndarray, t: float, idx: np.ndarray | None = None) -> None:
        """Replace, in place, the finite ``lp`` within :data:`NEAR_THRESHOLD` of ``t`` by
        canonical values; ``lp`` holds the values of candidates ``idx`` (default: all, in order)."""
        for j in np.flatnonzero(np.isfinite(lp) & (np.abs(lp - t) <= NEAR_THRESHOLD)).tolist():
            k = j if idx is None else int(idx[j])
            if k not in self.values:
                if self.base is None:
                    self.base = float(self.scorer.score([self.prefix_text])[0]) if self.prefix_text else 0.0
                text = f"{self.prefix_text} {self.cands[k]}" if self.prefix_text else self.cands[k]
                self.values[k] = float(self.scorer.score([text])[0]) - self.base
            lp[j] = self.values[k]


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
