"""Benchmarks: one module per benchmark, one registry (:mod:`.registry`).

- :mod:`.contstim` -- Golan et al. 2023, experiments ``contstim.main`` and ``contstim.pll``;
- :mod:`.blimp` -- BLiMP (Warstadt et al. 2020; Kauf & Ivanova 2023);
- :mod:`.plausibility` -- Kauf et al. 2024 (EventsAdapt, DTFit, SocialN400).

Each evaluates a scorer and returns the result envelope of :mod:`contstim_bench.results.schema`.
"""
from __future__ import annotations

from .base import Benchmark
from .registry import BENCHMARKS, get_benchmark, identifiers

__all__ = ["BENCHMARKS", "Benchmark", "get_benchmark", "identifiers"]
