"""Plausibility benchmarks of Kauf et al. (2024): EventsAdapt and DTFit (Experiment 1),
SocialN400 (Experiment 2), with LogProbs or prompting.

- :mod:`.metrics`: the metrics as pure functions of scores (binary accuracy, the three context
  metrics), hand-checkable;
- :mod:`.conditional`: conditional log-probabilities of target words and sentences;
- :mod:`.similarity`: the Appendix E similarity of a response pattern to the human one;
- :mod:`.glmm`: the Appendix D binomial GLMM of per-pair accuracy;

The benchmark itself (model spec -> result) is :mod:`contstim_bench.benchmarks.plausibility`;
its summary table is :mod:`contstim_bench.report.plausibility`.
"""
from __future__ import annotations

from .metrics import (
    context_metric_hits,
    context_metrics,
    experiment1_accuracy,
    experiment1_pairs,
    pair_hit_vector,
    choice_hit_vector,
    choice_order_averaged_hits,
)

__all__ = [
    "choice_hit_vector", "choice_order_averaged_hits", "context_metric_hits", "context_metrics", "experiment1_accuracy",
    "experiment1_pairs", "pair_hit_vector",
]
