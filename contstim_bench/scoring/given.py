"""Log-probabilities computed elsewhere, as a scorer: :class:`GivenScores`.

An lm-evaluation-harness run of the contstim task group (:mod:`contstim_bench.harness_tasks`)
scores the sentences on the evaluator's own backend; its per-sentence natural-log probabilities
reach the package as a mapping.  Wrapped in :class:`GivenScores`, they go through the one
evaluation driver like any model, so the numbers an lm-eval run reports and those of the result
file ``contstim import lm-eval`` writes come from the code behind ``contstim evaluate``.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping

import numpy as np

from .base import LOGPROB_MAX, Scorer


class MissingLogProbs(ValueError):
    """Sentences :class:`GivenScores` was asked to score that its mapping does not hold (named,
    with their count), so that a door importing a run can say which of its files are incomplete."""


class GivenScores(Scorer):
    """A scorer that answers from ``logprobs`` ({sentence: natural-log probability}) and runs no
    model.  ``spec`` and ``method`` are what the result file records; ``details`` are added to
    :meth:`describe` (the lm-eval backend, its model arguments, the lm-eval version, ...).  The
    fingerprint is the sha256 of the spec and the scores, so two runs that gave the same numbers
    share it.  ValueError for a NaN, infinite or positive value (by its sentence), and, when
    scoring, :class:`MissingLogProbs` (a ValueError) for a sentence the mapping does not hold."""

    cacheable = False  # the values are given: there is nothing to cache

    def __init__(self, logprobs: Mapping[str, float], *, spec: str, method: str = "causal",
                 details: Mapping | None = None) -> None:
        super().__init__(cache=False, progress=False)
        values = {}
        for sentence, value in logprobs.items():
            v = float(value)
            if not math.isfinite(v) or v > LOGPROB_MAX:
                raise ValueError(f"log-probability of {sentence!r} is {value!r}: expected a finite natural-log "
                                 f"probability <= {LOGPROB_MAX}")
            values[sentence] = v
        self.values = values
        self.spec = spec
        self.method = method
        self.details = dict(details or {})

    def fingerprint(self) -> str:
        body = json.dumps({"spec": self.spec, "logprobs": sorted(self.values.items())}, ensure_ascii=False)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def describe(self) -> dict:
        return {**super().describe(), **self.details}

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        missing = [s for s in sentences if s not in self.values]
        if missing:
            raise MissingLogProbs(f"{len(missing)} sentence(s) have no given log-probability, e.g. {missing[0]!r}")
        return np.array([self.values[s] for s in sentences], dtype=np.float64)
