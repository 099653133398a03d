"""The replacement one position attempt of the synthetic search accepts (Golan et al. 2023, Eq. 2),
for models scored by exact sweeps and by the causal shortlist.

The candidates of an attempt are ranked as Eq. 2 asks: the *feasible* ones, whose sentence is at
least as probable as the natural sentence under the accepting model, by increasing
log-probability under the rejecting model (ties: candidate order).  The attempt accepts the
first of them whose sentence is less probable under the rejecting model than the current
sentence, once its canonical scores (``scorer.score``) confirm both conditions (at most
``max_confirmations`` tries, since the sweeps that rank candidates round differently from
``scorer.score``); it fails when there is none.  (Until issue 16 the order was upstream's penalty
form ``loss = [log p(s|reject) - log p(n|reject)] + 1e5 * max(0, log p(n|accept) - log p(s|accept))``,
which can put an infeasible candidate with a tiny violation before every feasible one and then
reject them all; ``bench/synthesis.py`` counts how often that happened.)

Two strategies, with the same outcome (the same candidates, values and decisions):

``plain``
    every model scores every candidate (the exhaustive search over the candidate set);
``lazy``
    models with cheap exact sweeps (n-gram, RNN, LSTM) score every candidate, and a causal LM
    (:class:`~contstim_bench.scoring.protocols.LazySweep`) scores only what the order needs:
    as the accepting model, candidates are taken in order of the rejecting model's
    log-probability and checked a batch at a time (batches growing from ``batch``) until the
    first feasible one; as the rejecting model, only the feasible candidates are scored.
    Feasibility under a causal LM needs no full score when an upper bound of the sentence's
    log-probability is below the natural sentence's: the prefix and next-word probabilities
    (:meth:`~contstim_bench.scoring.protocols.LazySweep.sweep_upper_bounds`), then the partial
    log-probability of the sentence's first tokens
    (:meth:`~contstim_bench.scoring.protocols.LazySweep.sweep_at_least`), since the remaining
    tokens only lower it.  Its values do not depend on which candidates are scored together and
    are kept for later attempts.

All values are natural-log probabilities (float64) in candidate order.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..scoring.protocols import LazySweep
from .candidates import candidate_logprobs

STRATEGIES = ("lazy", "plain")

#: nats: a causal LM's decision this close to its threshold (or between two candidates this
#: close) is taken on canonical scores, far above the ~1e-5 nats by which float32 sweeps of the
#: same sentence differ, so that the plain and the lazy search decide alike
DECISION_MARGIN = 1e-3


@dataclass
class Evaluations:
    """Candidate sentences scored by each kind of model in an attempt (model runs only)."""

    cheap: int = 0
    """Scored by exact sweeps of n-gram, RNN or LSTM models (or any non-causal scorer)."""
    expensive: int = 0
    """Scored by a causal LM's sweep (the cost the lazy strategy saves)."""
    next_word: int = 0
    """Next-word values computed by a causal LM for its shortlist."""


class ModelValues:
    """One model's values for the candidates of one attempt: ``exact`` (sweep values, nan where
    not computed yet), ``upper`` (upper bounds, equal to ``exact`` where known) and ``at_least``
    (1.0 / 0.0 where it is known whether the value reaches the threshold of :meth:`decide`,
    else nan).

    ``lazy``: compute only on :meth:`ensure` / :meth:`decide` (a causal LM with
    :class:`LazySweep`); otherwise every value is computed at once (or given as ``values``).  The values of a causal LM's
    sweeps round a little differently depending on what they are computed with (about 1e-5
    nats in float32), so every decision they make within :data:`DECISION_MARGIN` of its
    threshold, or between two candidates that close, is taken on canonical scores
    (``scorer.score`` of the sentence alone) instead: both strategies then decide alike."""

    def __init__(self, model, words: Sequence[str], position: int, cands: list[str], lazy: bool,
                 evaluations: Evaluations, values: np.ndarray | None = None):
        self.model = model
        self.words = list(words)
        self.position = position
        self.cands = cands
        self.evaluations = evaluations
        scorer = model.scorer
        self.expensive = model.mode == "shortlist"
        self.lazy = lazy and self.expensive and isinstance(scorer, LazySweep)
        self.exact = np.full(len(cands), np.nan)
        self.at_least = np.full(len(cands), np.nan)
        self.threshold: float | None = None
        self._canonical: dict[int, float] = {}
        if values is not None:  # computed already (an exhaustive-mode model's values)
            self.exact = np.asarray(values, dtype=np.float64).copy()
            self.upper = self.exact.copy()
        elif self.lazy:
            self.upper = np.asarray(scorer.sweep_upper_bounds(self.words, position, cands), dtype=np.float64)
        else:
            self.upper = np.full(len(cands), np.inf)
            self.ensure(np.arange(len(cands)))

    def canonical(self, k: int) -> float:
        """``scorer.score`` of candidate ``k``'s sentence (the value that decides near-ties)."""
        if k not in self._canonical:
            words = list(self.words)
            words[self.position] = self.cands[k]
            self._canonical[k] = self.model.exact(" ".join(words))
        return self._canonical[k]

    def ensure(self, idx: np.ndarray) -> None:
        """Compute the values of candidates ``idx`` that are not known yet, together."""
        idx = np.asarray([int(k) for k in idx if np.isnan(self.exact[k])], dtype=np.int64)
        if not len(idx):
            return
        scorer = self.model.scorer
        cands = [self.cands[k] for k in idx]
        if isinstance(scorer, LazySweep) and self.expensive:
            before = scorer.evaluation_counts()["sweep"]
            values = scorer.prefix_sweep(self.words, self.position, cands)
            self.evaluations.expensive += scorer.evaluation_counts()["sweep"] - before
        else:
            values = candidate_logprobs(scorer, self.words, self.position, cands)
            if self.expensive:
                self.evaluations.expensive += len(idx)
            else:
                self.evaluations.cheap += len(idx)
        values = np.asarray(values, dtype=np.float64)
        self.exact[idx] = values
        self.upper[idx] = values
        if self.threshold is not None:
            for k in idx.tolist():
                self.at_least[k] = self._at_least(k)

    def _at_least(self, k: int) -> float:
        v, t = self.exact[k], self.threshold
        if self.expensive and abs(v - t) <= DECISION_MARGIN:
            v = self.canonical(k)
        return float(v >= t)

    def below(self, k: int, bound: float) -> bool:
        """Whether candidate ``k``'s (known) value is below ``bound`` (canonical near it)."""
        v = self.exact[k]
        if self.expensive and abs(v - bound) <= DECISION_MARGIN:
            v = self.canonical(k)
        return bool(v < bound)

    def decide(self, idx: np.ndarray, threshold: float) -> None:
        """Find out for candidates ``idx`` whether their value is >= ``threshold`` (the same
        threshold every time), computing full values only where bounds cannot tell."""
        if self.threshold is None:
            self.threshold = threshold
            self.at_least[self.upper < threshold - DECISION_MARGIN] = 0.0
            for k in np.flatnonzero(~np.isnan(self.exact)).tolist():
                self.at_least[k] = self._at_least(k)
        elif threshold != self.threshold:
            raise ValueError(f"decide() called with threshold {threshold}, earlier {self.threshold}")
        idx = np.asarray([int(k) for k in idx if np.isnan(self.at_least[k])], dtype=np.int64)
        if not len(idx):
            return
        if self.lazy:
            scorer = self.model.scorer
            before = scorer.evaluation_counts()["bounded"]
            found = scorer.sweep_at_least(self.words, self.position, [self.cands[k] for k in idx], threshold,
                                          DECISION_MARGIN)
            self.evaluations.expensive += scorer.evaluation_counts()["bounded"] - before
            self.at_least[idx] = found
            idx = idx[np.isnan(found)]
        self.ensure(idx)
        for k in idx.tolist():
            if np.isnan(self.at_least[k]):
                self.at_least[k] = self._at_least(k)

    def by_value(self, idx: Sequence[int]) -> Iterator[int]:
        """Candidates ``idx`` (known values) by increasing value, ties by index; candidates
        within :data:`DECISION_MARGIN` of the smallest left are ordered by canonical scores."""
        left = sorted((float(self.exact[k]), int(k)) for k in idx)
        while left:
            front = [k for v, k in left if v <= left[0][0] + DECISION_MARGIN] if self.expensive else [left[0][1]]
            pick = min(front, key=lambda k: (self.canonical(k), k)) if len(front) > 1 else front[0]
            yield pick
            left = [(v, k) for v, k in left if k != pick]


def improving_candidates(acc: ModelValues, rej: ModelValues, target: float, lp_reject: float,
                         batch: int) -> Iterator[int]:
    """Indices of the feasible candidates (``acc >= target``) whose rejecting-model value is
    below ``lp_reject``, by increasing rejecting-model value (ties: index), computing lazy
    values only as far as the order needs (``batch`` candidates at a time at first, doubling
    up to 16 times that)."""
    if rej.lazy or rej.expensive:
        acc.decide(np.arange(len(acc.cands)), target)
        feasible = np.flatnonzero(acc.at_least == 1.0)
        rej.ensure(feasible)
        yield from rej.by_value([k for k in feasible.tolist() if rej.below(k, lp_reject)])
        return
    below = np.flatnonzero(rej.exact < lp_reject)
    order = below[np.argsort(rej.exact[below], kind="stable")]
    size = batch
    for i, k in enumerate(order.tolist()):
        if acc.threshold is None or np.isnan(acc.at_least[k]):
            rest = order[i:]
            if acc.threshold is not None:
                rest = rest[np.isnan(acc.at_least[rest])]
            acc.decide(rest[:size], target)
            size = min(2 * size, 16 * batch)
        if acc.at_least[k] == 1.0:
            yield k


def penalty_first(acc: np.ndarray, rej: np.ndarray, target: float, lp_reject: float,
                  lp_reject_natural: float, penalty: float) -> int | None:
    """The candidate upstream's penalty-form ranking would have tried first (its first choice
    if it is feasible and improving, else None: that ranking gives up there).  For the record
    of how often the two rankings differ; needs every value."""
    loss = (rej - lp_reject_natural) + penalty * np.maximum(target - acc, 0.0)
    loss = np.where(np.isfinite(loss), loss, np.inf)
    if not len(loss):
        return None
    k = int(np.argsort(loss, kind="stable")[0])
    if loss[k] < lp_reject - lp_reject_natural and acc[k] >= target and rej[k] < lp_reject:
        return k
    return None
