"""What a benchmark is (:class:`Benchmark`), the module-backed kind the registry holds
(:class:`DatasetBenchmark`), and what every benchmark's result shares (the model block,
provenance fields)."""
from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


def describe_model(scorer) -> dict:
    """The ``model`` block of a result: the scorer's own description (spec, spec_typed, method,
    fingerprint, ...) with ``dtype`` and ``device`` present (None when no network runs)."""
    d = dict(scorer.describe())
    d.setdefault("dtype", None)
    d.setdefault("device", None)
    d.setdefault("spec_typed", d.get("spec") or scorer.spec)
    d["spec"] = scorer.spec
    return d


def device_dtype(scorer) -> dict:
    """``device`` / ``dtype`` of the scorer's network for provenance (None when it has none)."""
    info = scorer.describe()
    return {"device": info.get("device"), "dtype": info.get("dtype")}


def resolve_model(model: Any, method: str | None, scorer_spec: Callable[[str, str | None], str],
                  check_method: Callable[[Any, str], None]) -> Any:
    """What :func:`load_model` should load: for a model spec (str), the benchmark's
    ``scorer_spec(model, method)`` (ValueError names a method the model cannot take); a ready
    scorer as it is, after ``check_method(scorer, method)`` when a method is given (it raises
    ValueError for a method the scorer does not have).  Loads nothing, so a run checks its
    arguments before the model loads."""
    if isinstance(model, str):
        return scorer_spec(model, method)
    if method is not None:
        check_method(model, method)
    return model


def load_model(
    model: Any,
    *,
    datasets_dir: str | os.PathLike | None = None,
    device=None,
    batch_size: int | None = None,
    cache=None,
    progress: bool = True,
    dtype=None,
    max_tokens_per_batch: int | None = None,
):
    """The scorer of ``model``: a model spec (str) is loaded with
    :func:`contstim_bench.scoring.registry.load_scorer` (``dtype``: of the weights, for the
    families that run a network); a ready scorer is returned as it is."""
    if not isinstance(model, str):
        return model
    from ..scoring.registry import load_scorer

    return load_scorer(model, datasets_dir=datasets_dir, device=device, dtype=dtype, batch_size=batch_size,
                       cache=cache, progress=progress, max_tokens_per_batch=max_tokens_per_batch)


def short_reason(message: str) -> str:
    """The first sentence of an error message (the rest, e.g. how to get a file, stays in the
    result file's ``skipped_experiments``)."""
    first = message.split(". ", 1)[0].strip()
    return first if first.endswith(".") else first + "."


@runtime_checkable
class Benchmark(Protocol):
    """A benchmark: what it is called, what it reads, and how it evaluates a scorer.

    ``evaluate`` returns the result dict of :mod:`contstim_bench.results.schema` (the shared
    envelope with this benchmark's score sections); ``options`` are benchmark-specific
    (``limit``, ``paradigms``, ``method`` ...).
    """

    identifier: str
    version: str
    dataset: str
    description: str

    def load(self, datasets_dir=None):
        """The benchmark's data (trials, pairs, stimuli)."""

    def sentences(self, datasets_dir=None) -> list[str]:
        """The distinct sentences a model must score."""

    def evaluate(self, scorer, *, datasets_dir=None, log=None, **options) -> dict:
        """The result of ``scorer`` on this benchmark."""


@dataclass(frozen=True)
class DatasetBenchmark:
    """A benchmark whose module defines ``load(datasets_dir)``, ``sentences(datasets_dir)`` and
    ``evaluate(scorer, datasets_dir=, log=, **options)`` (BLiMP, plausibility)."""

    identifier: str
    version: str
    dataset: str
    module: str
    description: str

    def _module(self):
        return importlib.import_module(self.module)

    def load(self, datasets_dir=None):
        return self._module().load(datasets_dir)

    def sentences(self, datasets_dir=None) -> list[str]:
        return self._module().sentences(datasets_dir)

    def evaluate(self, scorer, *, datasets_dir=None, log=None, **options) -> dict:
        return self._module().evaluate(scorer, datasets_dir=datasets_dir, log=log, **options)
