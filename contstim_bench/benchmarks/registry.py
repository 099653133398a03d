"""Every benchmark of the package, by identifier: :func:`get_benchmark`, :func:`identifiers`.

A benchmark is one object (:class:`~.base.Benchmark`): ``identifier``, ``version``, the
``dataset`` it reads, ``load()`` (its data), ``sentences()`` (what a model must score) and
``evaluate(scorer) -> result dict`` (the envelope of :mod:`contstim_bench.results.schema`).
To add one, write a module in this folder with such an object and list it in :data:`BENCHMARKS`.

Rounds of the contstim benchmark (``contstim.<round>``, :mod:`.contstim_round`) are not listed
here: they are found in the datasets folder (:func:`contstim_bench.data.rounds.discover_rounds`),
so :func:`get_benchmark` and :func:`identifiers` take the ``datasets_dir`` to look in.
"""
from __future__ import annotations

from ..study import EXPERIMENTS
from .base import Benchmark, DatasetBenchmark
from .contstim import ContstimExperiment

BENCHMARKS: dict[str, Benchmark] = {
    "contstim": ContstimExperiment(None),
    **{f"contstim.{exp}": ContstimExperiment((exp,)) for exp in EXPERIMENTS},
    "blimp": DatasetBenchmark(
        identifier="blimp", version="1", dataset="blimp", module="contstim_bench.benchmarks.blimp",
        description="BLiMP minimal pairs (Warstadt et al. 2020): accuracy per paradigm, field, phenomenon"),
    "plausibility": DatasetBenchmark(
        identifier="plausibility", version="1", dataset="plausibility",
        module="contstim_bench.benchmarks.plausibility",
        description="Kauf et al. 2024: EventsAdapt and DTFit (Experiment 1), SocialN400 (Experiment 2)"),
    "pll-properties": DatasetBenchmark(
        identifier="pll-properties", version="1", dataset="plausibility",
        module="contstim_bench.benchmarks.pll_properties",
        description="Kauf & Ivanova 2023 on EventsAdapt: sentence length, word frequency, OOV ratio of each "
                    "PLL metric (or a causal model's log-probabilities)"),
}
"""Identifier -> benchmark."""


def rounds(datasets_dir=None) -> dict[str, Benchmark]:
    """Identifier -> :class:`~.contstim_round.ContstimRound` of every round in ``datasets_dir``
    (default ``$CONTSTIM_DATASETS``)."""
    from ..data.rounds import discover_rounds
    from .contstim_round import ContstimRound

    return {ident: ContstimRound.from_folder(folder) for ident, folder in discover_rounds(datasets_dir).items()}


def build_status(bench: Benchmark, datasets_dir=None) -> tuple[bool, str | None]:
    """``(built, note)``: whether ``bench`` can be evaluated from the datasets folder
    (``datasets_dir``, default ``$CONTSTIM_DATASETS``) as it is, and what is missing with the
    command that builds it (``contstim``, every experiment, is built when one experiment is; the
    note names the others).  Looks at the files only: verifies nothing, builds nothing."""
    from pathlib import Path

    from ..data.paths import default_datasets_dir
    from ..data.writer import FINGERPRINT_FILE

    if not isinstance(bench, (ContstimExperiment, DatasetBenchmark)):
        return True, None  # a round of the benchmark: found in the datasets folder, so built
    root = Path(datasets_dir) if datasets_dir is not None else default_datasets_dir()
    folder = root / bench.dataset
    if not (folder / FINGERPRINT_FILE).exists():
        return False, f"not built: contstim data build --only {bench.dataset} --out {root}"
    if not isinstance(bench, ContstimExperiment):
        return True, None
    wanted = bench.experiments or EXPERIMENTS
    missing = [e for e in wanted if not (folder / "trials" / f"{e}.parquet").exists()]
    if not missing:
        return True, None
    how = (f"contstim data build --only contstim --out {root} --main-results FILE (the main experiment's results "
           "file; see the dataset card)" if missing == ["main"] else "see the dataset card")
    note = f"no human data of the {', '.join(missing)} experiment: {how}"
    return len(missing) < len(wanted) and bench.experiments is None, note


def identifiers(datasets_dir=None) -> list[str]:
    """Every benchmark identifier, in registry order, then the rounds found in ``datasets_dir``."""
    return list(BENCHMARKS) + list(rounds(datasets_dir))


def get_benchmark(identifier: str, datasets_dir=None) -> Benchmark:
    """The benchmark named ``identifier``: a registered one, or a round of the contstim benchmark
    found in ``datasets_dir``; ValueError lists the known ones (rounds included)."""
    if isinstance(identifier, str) and identifier in BENCHMARKS:
        return BENCHMARKS[identifier]
    from ..data.rounds import round_name

    found = rounds(datasets_dir)
    if isinstance(identifier, str) and identifier in found:
        return found[identifier]
    known = ", ".join([*BENCHMARKS, *found])
    hint = ""
    if isinstance(identifier, str) and round_name(identifier) is not None:
        from ..data.paths import default_datasets_dir

        where = datasets_dir if datasets_dir is not None else default_datasets_dir()
        hint = (f" (no round {identifier} in the datasets folder {where}; rounds are found there: write one with "
                f"`contstim experiment ingest --out DIR` and evaluate it with `contstim evaluate --datasets DIR`)")
    raise ValueError(f"unknown benchmark {identifier!r}; known: {known}{hint}")
