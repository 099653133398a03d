"""The numbers of the percentile scatter (Golan et al. 2023, Figs. 1a, 1b and 3a): each sentence
at the percentile of its log-probability under two models, each pair's agreement between them,
and the sentence most participants chose (:func:`scatter_points`, drawn by
:func:`contstim_bench.report.plots.draw_scatter`)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy.stats import rankdata

from ..study import TRIAL_TYPES


def percentiles(values) -> np.ndarray:
    """Percentile (0..100] of each value among ``values`` (average rank for ties, / n)."""
    values = np.asarray(values, dtype=np.float64)
    return 100.0 * rankdata(values, method="average") / len(values)


def scatter_points(pairs: Mapping[str, dict], model_logprobs: Mapping[str, float],
                   reference_logprobs: Mapping[str, float]) -> dict:
    """``pairs`` (:func:`contstim_bench.analysis.trials.pair_votes`: ``a``, ``b``, ``trial_type``,
    ``votes``) placed by two models' natural-log probabilities: ``{"n_sentences", "types": {trial
    type: {"pairs": [{"a": [x, y], "b": [x, y], "congruent", "chosen"}], "n_agree"}}}``, trial
    types in the paper's order; x and y are percentiles among every sentence of the pairs,
    ``congruent`` whether the two models order the pair the same way, ``chosen`` the sentence most
    participants chose (``"a"``, ``"b"`` or None for an even split)."""
    sentences = list(dict.fromkeys(s for p in pairs.values() for s in (p["a"], p["b"])))
    px = dict(zip(sentences, percentiles([model_logprobs[s] for s in sentences]).tolist()))
    py = dict(zip(sentences, percentiles([reference_logprobs[s] for s in sentences]).tolist()))
    types: dict[str, dict] = {}
    for tt in TRIAL_TYPES:
        rows = []
        for p in (p for p in pairs.values() if p["trial_type"] == tt):
            a, b = p["a"], p["b"]
            va, vb = p["votes"].get(a, 0), p["votes"].get(b, 0)
            rows.append({"a": [px[a], py[a]], "b": [px[b], py[b]],
                         "congruent": bool((px[b] - px[a]) * (py[b] - py[a]) > 0),
                         "chosen": "a" if va > vb else "b" if vb > va else None})
        if rows:
            types[tt] = {"pairs": rows, "n_agree": sum(r["congruent"] for r in rows)}
    return {"n_sentences": len(sentences), "types": types}
