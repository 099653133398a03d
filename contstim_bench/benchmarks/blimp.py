"""BLiMP evaluation (Warstadt et al. 2020; Kauf & Ivanova 2023): :func:`run_blimp`.

A pair is a hit when the acceptable sentence gets the strictly higher score (natural-log
probability or pseudo-log-likelihood; a tie is a miss, so the 7 upstream pairs with identical
sentences are misses for every model).  Accuracy is reported per paradigm (hits / pairs), and
per field (``morphology``, ``syntax``, ``syntax_semantics``, ``semantics``), per phenomenon (the
paper's 12 categories) and overall as the **mean of the paradigm accuracies** they contain, the
aggregation of Warstadt et al. and Kauf & Ivanova (every paradigm has 1,000 pairs, or
``limit``, so this also equals the mean over pairs).  The human accuracy beside each number is
the same mean over the same paradigms of the human validation's ``total_mean`` (overall 0.886,
the 88.6 of Kauf & Ivanova's Table 3).

Masked LMs are evaluated with any read-out of :mod:`contstim_bench.scoring.masked` (``pll``,
``pll-word-l2r``, ``pll-whole-word``, ``pll-sentence-l2r``, ``approx-ll``, ...), chosen with ``method``.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._version import __version__
from ..provenance import provenance
from ..results.schema import validate_result
from ..scoring.spec import ModelSpec
from .base import describe_model, device_dtype
from ..scoring.protocols import require_logprobs

FORMAT = "contstim-bench-blimp"
FORMAT_VERSION = 1
DATASET = "blimp"
PAIR_COLUMNS = ("paradigm", "field", "linguistics_term", "phenomenon", "pair_id", "sentence_good", "sentence_bad")
LEVELS = ("field", "phenomenon", "linguistics_term")


def _frame(data: Any) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data.copy()
    if hasattr(data, "to_pandas"):
        return data.to_pandas()
    raise TypeError(f"expected a pandas DataFrame, datasets.Dataset or pyarrow.Table, got {type(data).__name__}")


def select_pairs(pairs: Any, paradigms: Sequence[str] | None = None, limit: int | None = None) -> pd.DataFrame:
    """The pairs of ``paradigms`` (all when None), the first ``limit`` pairs (by pair id) of each.

    ValueError names an unknown paradigm or a bad limit.  Rows come sorted by paradigm, pair id.
    """
    df = _frame(pairs)
    missing = [c for c in PAIR_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"BLiMP pairs: missing columns {missing}")
    if paradigms is not None:
        if isinstance(paradigms, str):
            paradigms = [p for p in paradigms.split(",")]
        wanted = [p.strip() for p in paradigms]
        if not wanted or any(not p for p in wanted):
            raise ValueError(f"empty paradigm name in {list(paradigms)!r}")
        known = set(df.paradigm)
        unknown = [p for p in wanted if p not in known]
        if unknown:
            raise ValueError(f"unknown BLiMP paradigm(s) {unknown}; known: {', '.join(sorted(known))}")
        df = df[df.paradigm.isin(wanted)]
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
            raise ValueError(f"limit must be a positive integer, got {limit!r}")
        df = df.sort_values(["paradigm", "pair_id"]).groupby("paradigm", sort=True).head(int(limit))
    return df.sort_values(["paradigm", "pair_id"]).reset_index(drop=True)


def pair_hits(pairs: pd.DataFrame, score_good: Any, score_bad: Any) -> np.ndarray:
    """Boolean hit per pair: ``score_good > score_bad``; ValueError names a non-finite score."""
    good = np.asarray(score_good, dtype=np.float64)
    bad = np.asarray(score_bad, dtype=np.float64)
    for name, arr in (("sentence_good", good), ("sentence_bad", bad)):
        if arr.shape != (len(pairs),):
            raise ValueError(f"{name} scores: expected {len(pairs)}, got shape {arr.shape}")
        nonfinite = ~np.isfinite(arr)
        if nonfinite.any():
            i = int(nonfinite.argmax())
            raise ValueError(f"BLiMP {pairs.paradigm.iloc[i]} pair {pairs.pair_id.iloc[i]}: score of {name} "
                             f"{pairs[name].iloc[i]!r} is {arr[i]} (not a finite number)")
    return good > bad


def _group(per_paradigm: pd.DataFrame) -> dict:
    out = {"accuracy": float(per_paradigm.accuracy.mean()), "n_paradigms": int(len(per_paradigm)),
           "n_pairs": int(per_paradigm.n_pairs.sum()), "hits": int(per_paradigm.hits.sum())}
    if "human_accuracy" in per_paradigm and per_paradigm.human_accuracy.notna().all():
        out["human_accuracy"] = float(per_paradigm.human_accuracy.mean())
    return out


def blimp_accuracy(pairs: pd.DataFrame, hits: Any, human: Any = None) -> dict[str, Any]:
    """Accuracy per paradigm, per field / phenomenon / linguistics term and overall.

    ``hits``: boolean per row of ``pairs``.  ``human``: the ``human_validation`` config
    (``paradigm``, ``total_mean``), optional; adds ``human_accuracy`` beside every number.
    Aggregates are means of paradigm accuracies (see module doc).
    """
    hits = np.asarray(hits, dtype=bool)
    if hits.shape != (len(pairs),):
        raise ValueError(f"{hits.shape} hits for {len(pairs)} pairs")
    if len(pairs) == 0:
        raise ValueError("no BLiMP pairs to evaluate")
    df = pairs.assign(hit=hits)
    per = df.groupby("paradigm", sort=True).agg(
        field=("field", "first"), phenomenon=("phenomenon", "first"), linguistics_term=("linguistics_term", "first"),
        n_pairs=("hit", "size"), hits=("hit", "sum"), accuracy=("hit", "mean"))
    if human is not None:
        h = _frame(human).set_index("paradigm").total_mean
        per["human_accuracy"] = per.index.map(h).astype("float64")
    out: dict[str, Any] = {"overall": _group(per)}
    for level in LEVELS:
        out[level] = {k: _group(g) for k, g in per.groupby(level, sort=True)}
    out["paradigm"] = {
        p: {"field": r.field, "phenomenon": r.phenomenon, "linguistics_term": r.linguistics_term,
            "n_pairs": int(r.n_pairs), "hits": int(r.hits), "accuracy": float(r.accuracy),
            **({"human_accuracy": float(r.human_accuracy)} if "human_accuracy" in per and pd.notna(r.human_accuracy) else {})}
        for p, r in per.iterrows()}
    return out


def spec_for(spec: ModelSpec, method: str | None) -> ModelSpec:
    """``spec`` with ``?method=<method>`` set; ``method`` applies to ``hf-masked:`` specs only."""
    if method is None:
        return spec
    from ..scoring.masked import METHODS

    if spec.family != "hf-masked":
        raise ValueError(f"method {method!r} (`contstim blimp --method`) applies to masked LMs (hf-masked:...), "
                         f"not to {spec.family} model {spec.typed!r}")
    if method not in METHODS:
        raise ValueError(f"unknown masked-LM method {method!r}; expected one of {', '.join(METHODS)}")
    if spec.options.get("method", method) != method:
        raise ValueError(f"model spec {spec.typed!r} sets method={spec.options['method']} but the method asked for "
                         f"(`contstim blimp --method`) is {method!r}")
    return spec.with_options(method=method)


def run_blimp(
    scorer,
    method: str | None = None,
    *,
    paradigms: Sequence[str] | str | None = None,
    limit: int | None = None,
    datasets_dir: str | os.PathLike | None = None,
    progress: bool = True,
    log=None,
) -> dict:
    """Score the selected BLiMP pairs with ``scorer`` (a loaded log-probability scorer:
    :func:`contstim_bench.driver.evaluate` loads it, with a masked LM's ``method``) and return
    the result dict: accuracies (see :func:`blimp_accuracy`), the per-pair scores, provenance.
    ``progress`` is the scorer's own setting (accepted for the registry's common options).
    ``method`` is refused: a loaded scorer already has its read-out."""
    from ..data.load import fingerprint, load_config

    if method is not None:
        raise ValueError("method applies to a model spec; a ready scorer already has its method")

    log = log or (lambda msg: print(msg, file=sys.stderr))
    started = time.time()
    pairs = select_pairs(load_config(DATASET, "pairs", split="test", datasets_dir=datasets_dir), paradigms, limit)
    scorer = require_logprobs(scorer, "BLiMP")
    human = load_config(DATASET, "human_validation", split="test", datasets_dir=datasets_dir)
    sentences = list(dict.fromkeys(list(pairs.sentence_good) + list(pairs.sentence_bad)))
    log(f"BLiMP: {pairs.paradigm.nunique()} paradigms, {len(pairs)} pairs, {len(sentences)} sentences "
        f"with {scorer.spec} ...")
    values = dict(zip(sentences, np.asarray(scorer.score(sentences), dtype=np.float64).tolist()))
    good = pairs.sentence_good.map(values).to_numpy()
    bad = pairs.sentence_bad.map(values).to_numpy()
    hits = pair_hits(pairs, good, bad)
    fp = fingerprint(DATASET, datasets_dir)
    result = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": describe_model(scorer),
        "benchmark": {"identifier": "blimp", "version": "1", "dataset": DATASET, "dataset_fingerprint": fp, "package_version": __version__,
                      "paradigms": sorted(pairs.paradigm.unique()), "limit": limit,
                      "aggregation": "mean of paradigm accuracies"},
        "accuracy": blimp_accuracy(pairs, hits, human),
        "scores": {"columns": ["paradigm", "pair_id", "logprob_good", "logprob_bad"],
                   "rows": [[p, int(i), float(g), float(b)]
                            for p, i, g, b in zip(pairs.paradigm, pairs.pair_id, good, bad)]},
        "provenance": {**provenance(fp, **device_dtype(scorer)), "elapsed_s": round(time.time() - started, 3),
                       "model_sentences_scored": int(scorer.n_model_sentences)},
    }
    validate_result(result)  # the one validator of every result the package writes
    return result


def load(datasets_dir=None) -> pd.DataFrame:
    """Every BLiMP pair (67 paradigms x 1,000), sorted by paradigm and pair id."""
    from ..data.load import load_config

    return select_pairs(load_config(DATASET, "pairs", split="test", datasets_dir=datasets_dir))


def sentences(datasets_dir=None) -> list[str]:
    """The distinct sentences of every pair (acceptable and unacceptable)."""
    pairs = load(datasets_dir)
    return list(dict.fromkeys(list(pairs.sentence_good) + list(pairs.sentence_bad)))


def evaluate(scorer, *, datasets_dir=None, log=None, **options) -> dict:
    """:func:`run_blimp` for the benchmark registry (options: ``paradigms``, ``limit``,
    ``progress``; the driver applies ``method`` to the spec with :func:`spec_for`)."""
    return run_blimp(scorer, datasets_dir=datasets_dir, log=log, **options)
