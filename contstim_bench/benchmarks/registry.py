"""Every benchmark of the package, by identifier: :func:`get_benchmark`, :func:`identifiers`.

A benchmark is one object (:class:`~.base.Benchmark`): ``identifier``, ``version``, the
``dataset`` it reads, ``load()`` (its data), ``sentences()`` (what a model must score) and
``evaluate(scorer) -> result dict`` (the envelope of :mod:`contstim_bench.results.schema`).
To add one, write a module in this folder with such an object and list it in :data:`BENCHMARKS`.
"""
from __future__ import annotations

from ..schema import EXPERIMENTS
from .base import Benchmark, DatasetBenchmark
from .contstim import ContstimExperiment

BENCHMARKS: dict[str, Benchmark] = {
    **{f"contstim.{exp}": ContstimExperiment(exp) for exp in EXPERIMENTS},
    "blimp": DatasetBenchmark(
        identifier="blimp", version="1", dataset="blimp", module="contstim_bench.benchmarks.blimp",
        description="BLiMP minimal pairs (Warstadt et al. 2020): accuracy per paradigm, field, phenomenon"),
    "plausibility": DatasetBenchmark(
        identifier="plausibility", version="1", dataset="plausibility",
        module="contstim_bench.benchmarks.plausibility",
        description="Kauf et al. 2024: EventsAdapt and DTFit (Experiment 1), SocialN400 (Experiment 2)"),
}
"""Identifier -> benchmark."""


def identifiers() -> list[str]:
    """Every benchmark identifier, in registry order."""
    return list(BENCHMARKS)


def get_benchmark(identifier: str) -> Benchmark:
    """The benchmark named ``identifier``; ValueError lists the known ones."""
    if not isinstance(identifier, str) or identifier not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {identifier!r}; known: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[identifier]
