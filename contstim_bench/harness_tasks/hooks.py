"""What the contstim task YAMLs call (through the ``utils.py`` that :mod:`.folder` writes).

- :func:`docs`: one document per sentence pair of a benchmark (``contstim.pll``,
  ``contstim.main`` or a round ``contstim.<round>``), read from the package's built datasets;
- :func:`process_results`: the two log-likelihoods lm-eval returned for a document (its two
  sentences, each scored with an empty context: from the backend's prefix token), as one item
  per metric;
- :func:`aggregate`: one metric of the task, read from the contstim result that
  :func:`contstim_bench.driver.evaluate` computes on those log-probabilities (the one driver and
  analysis of ``contstim evaluate``: trial selection, ties, per-unit accuracy, SRCS, noise
  ceilings, standard errors).  The result is computed once per run and shared by every metric.

The model is evaluated under the name :data:`MODEL_NAME`, which no trial targets, so every
condition is evaluated on all of its trials, as ``contstim evaluate`` does for a new model.
"""
from __future__ import annotations

import math
import os
from collections import OrderedDict
from collections.abc import Sequence

from .metrics import field_value, task_metrics

MODEL_NAME = "lm-eval model"
"""The name the evaluated model gets (a model no trial of any experiment or round targets)."""

SAME_SENTENCE_TOLERANCE = 1e-6
"""Largest difference (nats) between two log-likelihoods of one sentence that appears in several
pairs; a larger one means the backend is not deterministic and the run is refused."""

_RESULTS: OrderedDict = OrderedDict()
_MAX_REMEMBERED = 4


def _folder(datasets_dir: str | os.PathLike | None):
    return None if datasets_dir in (None, "") else str(datasets_dir)


def load_benchmark_trials(benchmark: str, datasets_dir: str | os.PathLike | None = None):
    """The trials of ``benchmark`` (DataFrame).  FileNotFoundError says how to build the datasets
    when they are absent."""
    from ..benchmarks.registry import get_benchmark

    bench = get_benchmark(benchmark, _folder(datasets_dir))
    try:
        trials, _ = bench.load(_folder(datasets_dir))
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"the {benchmark} task reads the contstim dataset built by the package, which is not available: {exc} "
            "(build it with `contstim data build --only contstim`, then write the task folder again with "
            "`contstim lm-eval tasks`)") from None
    return trials


def pairs_of(trials) -> list[dict]:
    """One document per sentence pair of ``trials``, in pair-id order: ``pair_id``,
    ``trial_type``, ``sentence1``, ``sentence2`` (as first shown) and ``choices`` (the two
    sentences, the continuations lm-eval scores)."""
    first = trials.drop_duplicates("pair_id").sort_values("pair_id", kind="stable")
    return [{"pair_id": str(p), "trial_type": str(t), "sentence1": s1, "sentence2": s2, "choices": [s1, s2]}
            for p, t, s1, s2 in zip(first["pair_id"], first["trial_type"], first["sentence1"], first["sentence2"])]


def docs(benchmark: str, datasets_dir: str | os.PathLike | None = None):
    """The task's documents as lm-eval reads them: ``DatasetDict({"test": ...})`` of
    :func:`pairs_of`."""
    import datasets

    rows = pairs_of(load_benchmark_trials(benchmark, datasets_dir))
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def conditions(benchmark: str, datasets_dir: str | os.PathLike | None = None) -> list[str]:
    """The conditions a task of ``benchmark`` reports (:func:`~contstim_bench.analysis.selection.conditions_present`)."""
    from ..analysis.selection import conditions_present

    return conditions_present(load_benchmark_trials(benchmark, datasets_dir))


def process_results(doc: dict, results: Sequence, metrics: Sequence[str]) -> dict:
    """``{metric: (sentence1, loglik1, sentence2, loglik2)}`` for every metric of the task:
    ``results`` are lm-eval's ``(log-likelihood, is_greedy)`` of the document's two choices."""
    if len(results) != 2:
        raise ValueError(f"pair {doc.get('pair_id')!r}: expected the log-likelihoods of its 2 sentences, "
                         f"got {len(results)}")
    (ll1, _), (ll2, _) = results
    item = (doc["sentence1"], float(ll1), doc["sentence2"], float(ll2))
    return {metric: item for metric in metrics}


def logprobs_of(items: Sequence[Sequence]) -> dict[str, float]:
    """{sentence: natural-log probability} of the items of :func:`process_results`.  ValueError
    when one sentence got two log-likelihoods further apart than :data:`SAME_SENTENCE_TOLERANCE`."""
    out: dict[str, float] = {}
    for s1, l1, s2, l2 in items:
        for sentence, value in ((s1, float(l1)), (s2, float(l2))):
            known = out.setdefault(sentence, value)
            if abs(known - value) > SAME_SENTENCE_TOLERANCE:
                raise ValueError(f"the backend gave {sentence!r} two log-likelihoods ({known!r} and {value!r}): "
                                 "its scores are not deterministic")
    return out


def evaluate_items(benchmark: str, datasets_dir: str | os.PathLike | None, items: Sequence[Sequence]) -> dict:
    """The contstim result of the log-probabilities in ``items`` on ``benchmark``, through the one
    driver (remembered for the last few runs: every metric of a task asks for the same one)."""
    from ..driver import RunOptions, evaluate
    from ..scoring.given import GivenScores

    key = (benchmark, _folder(datasets_dir), tuple(tuple(i) for i in items))
    if key in _RESULTS:
        _RESULTS.move_to_end(key)
        return _RESULTS[key]
    scorer = GivenScores(logprobs_of(items), spec="lm-eval:task-group", method="causal")
    result = evaluate(scorer, [benchmark], datasets_dir=_folder(datasets_dir), name=MODEL_NAME,
                      options=RunOptions(cache=False, progress=False), log=lambda msg: None)[benchmark]
    _RESULTS[key] = result
    while len(_RESULTS) > _MAX_REMEMBERED:
        _RESULTS.popitem(last=False)
    return result


def aggregate(benchmark: str, datasets_dir: str | os.PathLike | None, condition: str, field: str,
              items: Sequence[Sequence]):
    """One metric of a task: ``field`` on ``condition`` of :func:`evaluate_items`.  A standard
    error of a single unit, or a normalised accuracy without a lower ceiling, is ``"N/A"``, as
    lm-eval writes a missing standard error."""
    result = evaluate_items(benchmark, datasets_dir, items)
    (entries,) = result["experiments"].values()
    value = field_value(entries[condition], field)
    return "N/A" if value is None or (isinstance(value, float) and math.isnan(value)) else value


def metric_names(benchmark: str, datasets_dir: str | os.PathLike | None = None) -> list[str]:
    """Every metric a task of ``benchmark`` reports, in order (:func:`.metrics.task_metrics`)."""
    return list(task_metrics(conditions(benchmark, datasets_dir)))
