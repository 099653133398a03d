"""What a benchmark is (:class:`Benchmark`), the module-backed kind the registry holds
(:class:`DatasetBenchmark`), and what every benchmark's result shares (the model block,
provenance fields)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..scoring.spec import ModelSpec


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


def contstim_result(scorer, model_name: str, *, fingerprint: str, benchmark: dict, ties: str,
                    experiments: dict, panels: dict, logprobs: dict[str, float], n_model: int, seconds: float,
                    skipped: dict[str, str] | None = None) -> dict:
    """The result of a contstim benchmark (the paper's experiments or a round) in the envelope of
    :mod:`contstim_bench.results.schema`, checked by its one validator.  ``fingerprint``: the
    dataset's (or round's); ``benchmark``: ``identifier``, ``version`` and, for a round, ``round``;
    ``n_model``: sentences the model ran on (the rest came from the score cache), in ``seconds``."""
    from .._version import __version__
    from ..provenance import provenance
    from ..results.schema import FORMAT, FORMAT_VERSION, validate_result

    model = {**describe_model(scorer), "name": model_name}
    result = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": model,
        "benchmark": {"dataset": "contstim", "dataset_fingerprint": fingerprint, "package_version": __version__,
                      **benchmark},
        "analysis": {"ties": ties},
        "experiments": experiments,
        "panels": panels,
    }
    if skipped:
        result["skipped_experiments"] = skipped
    result["scoring"] = {"n_sentences": len(logprobs), "n_model_sentences": int(n_model),
                         "n_from_cache": int(len(logprobs) - n_model), "seconds": round(seconds, 3)}
    result["logprobs"] = logprobs
    result["provenance"] = provenance(fingerprint, device=model["device"], dtype=model["dtype"])
    validate_result(result)  # the one validator: a result this package writes is always well formed
    return result


def no_method(spec: ModelSpec, method: str | None, identifier: str) -> ModelSpec:
    """``spec_for`` of a benchmark whose models take no read-out method (the contstim
    benchmark scores log-probabilities as the spec defines them)."""
    if method is not None:
        raise ValueError(f"{identifier} takes no method option (got {method!r}); set the read-out in the model spec")
    return spec


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

    def spec_for(self, spec: ModelSpec, method: str | None) -> ModelSpec:
        """The model spec this benchmark runs for ``spec`` read out by ``method`` (None: the
        spec as it is); ValueError names a method the model cannot take.  Loads nothing."""

    def evaluate(self, scorer, *, datasets_dir=None, log=None, **options) -> dict:
        """The result of ``scorer`` (a loaded model, never a spec string) on this benchmark."""


@dataclass(frozen=True)
class DatasetBenchmark:
    """A benchmark whose module defines ``load(datasets_dir)``, ``sentences(datasets_dir)``,
    ``spec_for(spec, method)`` and ``evaluate(scorer, datasets_dir=, log=, **options)`` (BLiMP,
    plausibility)."""

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

    def spec_for(self, spec: ModelSpec, method: str | None) -> ModelSpec:
        return self._module().spec_for(spec, method)

    def evaluate(self, scorer, *, datasets_dir=None, log=None, **options) -> dict:
        return self._module().evaluate(scorer, datasets_dir=datasets_dir, log=log, **options)
