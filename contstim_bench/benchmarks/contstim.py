"""The contstim benchmark (Golan et al. 2023): experiments ``main`` and ``pll``.

:func:`evaluate_scorer` scores every sentence of the chosen experiments and builds the result
(layout: :mod:`contstim_bench.results.schema`).  ``experiments`` holds the entries of
:func:`contstim_bench.analysis.evaluation.evaluate_with_panels` (the model, its noise ceilings,
its test against the lower ceiling, the head-to-head with every reference model on the trials
where they disagree, and the like-for-like comparisons of per-unit scores; each test family
Benjamini-Hochberg adjusted on its own, see :mod:`contstim_bench.analysis.panel`).  ``panels``
places the model among the reference models as the paper's figures do: for every condition,
every model (each on its own trial selection) with its per-unit scores, its own noise ceilings
and its test against its lower ceiling.  ``analysis`` records the conventions used (``ties``:
what a model tie scores).  :func:`recompute` and :func:`recompute_panels` derive both sections
again from ``logprobs`` and the dataset, so a leaderboard can check a submitted file.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from ..analysis.accuracy import DEFAULT_TIES, tie_value
from ..analysis.evaluation import evaluate_with_panels, unique_sentences
from ..study import EXPERIMENTS, EXPERIMENT_MODELS, is_paper_experiment
from ..scoring.protocols import LogProbScorer, require_logprobs
from .base import contstim_result, no_method, short_reason

DATASET = "contstim"
VERSION = "1"
"""Version of the contstim benchmarks (the identifiers ``contstim.main``/``contstim.pll``)."""


def load_experiment(experiment: str, datasets_dir: str | os.PathLike | None = None):
    """(trials DataFrame, {reference model: {sentence: log-prob}}) of one experiment.

    Reference models are those of :data:`contstim_bench.study.EXPERIMENT_MODELS` that have a
    log-probability for every sentence of the experiment's trials.
    """
    from ..data.build_contstim import load_trials
    from ..data.load import dataset_folder

    if not is_paper_experiment(experiment):
        raise ValueError(f"unknown experiment {experiment!r}; known: {', '.join(EXPERIMENTS)}")
    trials = load_trials(experiment, datasets_dir)
    path = Path(dataset_folder(DATASET, datasets_dir)) / "sentences" / f"{experiment}.parquet"
    table = pq.read_table(path).to_pydict()
    sentences = unique_sentences(trials)
    refs: dict[str, dict[str, float]] = {}
    for model in EXPERIMENT_MODELS[experiment]:
        values = {s: v for s, v in zip(table["sentence"], table[model]) if v is not None}
        if all(s in values for s in sentences):
            refs[model] = {s: values[s] for s in sentences}
    return trials, refs


def evaluate_scorer(
    scorer,
    experiments: Sequence[str] | None = None,
    name: str | None = None,
    datasets_dir: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
    ties: str = DEFAULT_TIES,
) -> dict:
    """Score every sentence of ``experiments`` with ``scorer`` and build the result dict.

    ``experiments`` default to all; then an experiment whose human data is not available is
    skipped with a one-line note and recorded under ``skipped_experiments`` (explicitly
    requested ones raise FileNotFoundError).  ``name`` defaults to the reference name for a
    ``precomputed:NAME`` scorer (so ``precomputed:roberta`` is evaluated as ``roberta``, on the
    trials targeting it) and to the spec for every other scorer (a new model is never mistaken
    for a reference model).  ``scoring`` records how many distinct sentences were scored, how
    many of them the model ran on (the rest came from the score cache) and the seconds spent.
    ``ties``: what a model tie scores in the accuracy (``half``, ``miss`` or ``hit``; recorded in
    ``analysis.ties``).
    """
    from ..data.load import fingerprint
    from ..scoring.precomputed import PrecomputedScorer

    log = log or (lambda msg: print(msg, file=sys.stderr))
    explicit = experiments is not None
    experiments = list(dict.fromkeys(experiments)) if explicit else list(EXPERIMENTS)
    if explicit and not experiments:
        raise ValueError("no experiment given to evaluate")
    for exp in experiments:
        if not is_paper_experiment(exp):
            raise ValueError(f"unknown experiment {exp!r}; known: {', '.join(EXPERIMENTS)}")
    tie_value(ties)
    model_name = name or (scorer.name if isinstance(scorer, PrecomputedScorer) else scorer.spec)
    if not isinstance(model_name, str) or not model_name.strip():
        raise ValueError(f"model name must be a non-empty string, got {model_name!r}")
    results: dict[str, dict] = {}
    panels: dict[str, dict] = {}
    skipped: dict[str, str] = {}
    logprobs: dict[str, float] = {}
    if not isinstance(scorer, LogProbScorer):
        require_logprobs(scorer, "the contstim benchmark")
    n_before = scorer.n_model_sentences
    scoring_seconds = 0.0
    for exp in experiments:
        try:
            trials, refs = load_experiment(exp, datasets_dir)
        except FileNotFoundError as exc:
            if explicit:
                raise
            skipped[exp] = str(exc)
            log(f"note: experiment {exp!r} skipped: {short_reason(str(exc))}")
            continue
        sentences = unique_sentences(trials)
        log(f"{exp}: scoring {len(sentences)} sentences with {scorer.spec} ...")
        started = time.perf_counter()
        values = scorer.score(sentences)
        scoring_seconds += time.perf_counter() - started
        lp = dict(zip(sentences, (float(v) for v in values)))
        logprobs.update(lp)
        refs.pop(model_name, None)
        results[exp], panels[exp] = evaluate_with_panels(trials, lp, model_name, refs, ties=ties)
    if not results:
        raise FileNotFoundError(
            "no experiment could be evaluated: " + "; ".join(f"{k}: {v}" for k, v in skipped.items())
        )
    return contstim_result(
        scorer, model_name, fingerprint=fingerprint(DATASET, datasets_dir), ties=ties,
        benchmark={"identifier": f"{DATASET}.{next(iter(results))}" if len(results) == 1 else DATASET,
                   "version": VERSION},
        experiments=results, panels=panels, logprobs=logprobs, n_model=scorer.n_model_sentences - n_before,
        seconds=scoring_seconds, skipped=skipped)


def recompute_sections(result: dict, datasets_dir: str | os.PathLike | None = None) -> tuple[dict, dict]:
    """(``experiments``, ``panels``) recomputed from ``result["logprobs"]`` and the dataset, with
    the conventions recorded in ``result["analysis"]`` (a result without it used the defaults).
    A round's experiment is recomputed from the round found in ``datasets_dir``
    (:mod:`.contstim_round`)."""
    name = result["model"]["name"]
    ties = result.get("analysis", {}).get("ties", DEFAULT_TIES)
    experiments, panels = {}, {}
    for exp in result["experiments"]:
        if not is_paper_experiment(exp):  # a round of the benchmark (contstim.<round>)
            from .contstim_round import recompute_round_sections

            experiments[exp], panels[exp] = recompute_round_sections(result, exp, datasets_dir)
            continue
        trials, refs = load_experiment(exp, datasets_dir)
        refs.pop(name, None)
        lp = {s: result["logprobs"][s] for s in unique_sentences(trials) if s in result["logprobs"]}
        experiments[exp], panels[exp] = evaluate_with_panels(trials, lp, name, refs, ties=ties)
    return experiments, panels


def recompute(result: dict, datasets_dir: str | os.PathLike | None = None) -> dict[str, dict]:
    """The ``experiments`` section recomputed from ``result["logprobs"]`` and the dataset."""
    return recompute_sections(result, datasets_dir)[0]


def recompute_panels(result: dict, datasets_dir: str | os.PathLike | None = None) -> dict[str, dict]:
    """The ``panels`` section recomputed from ``result["logprobs"]`` and the dataset."""
    return recompute_sections(result, datasets_dir)[1]


@dataclass(frozen=True)
class ContstimExperiment:
    """Experiments of the contstim dataset: one (``contstim.main``, ``contstim.pll``), several,
    or None for every experiment of the paper whose human data is available (``contstim``; the
    others are skipped with a note and recorded under ``skipped_experiments``)."""

    experiments: tuple[str, ...] | None
    dataset: str = "contstim"
    version: str = VERSION

    def __post_init__(self) -> None:
        if self.experiments is not None:
            for exp in self.experiments:
                if not is_paper_experiment(exp):
                    raise ValueError(f"unknown experiment {exp!r}; known: {', '.join(EXPERIMENTS)}")
            if not self.experiments:
                raise ValueError("no experiment given to evaluate")

    @property
    def experiment(self) -> str:
        """The one experiment of ``contstim.<experiment>`` (ValueError for several)."""
        if self.experiments is None or len(self.experiments) != 1:
            raise ValueError(f"{self.identifier} holds several experiments")
        return self.experiments[0]

    @property
    def identifier(self) -> str:
        if self.experiments is None:
            return DATASET
        return ".".join((DATASET, *self.experiments))

    @property
    def description(self) -> str:
        from ..study import EXPERIMENT_DESCRIPTIONS

        if self.experiments is None:
            return "every experiment of Golan et al. 2023 whose human data is available: " + "; ".join(
                EXPERIMENT_DESCRIPTIONS[e] for e in EXPERIMENTS)
        return "; ".join(EXPERIMENT_DESCRIPTIONS[e] for e in self.experiments)

    def load(self, datasets_dir=None):
        """(trials, {reference model: {sentence: log-prob}}) of the one experiment."""
        return load_experiment(self.experiment, datasets_dir)

    def sentences(self, datasets_dir=None) -> list[str]:
        from ..analysis.evaluation import unique_sentences

        return unique_sentences(self.load(datasets_dir)[0])

    def spec_for(self, spec, method: str | None):
        return no_method(spec, method, self.identifier)

    def evaluate(self, scorer, *, datasets_dir=None, log=None, name=None, ties=DEFAULT_TIES, **options) -> dict:
        if options:
            raise ValueError(f"{self.identifier} takes no option(s) {sorted(options)}")
        exps = list(self.experiments) if self.experiments is not None else None
        return evaluate_scorer(scorer, exps, name=name, datasets_dir=datasets_dir, log=log, ties=ties)
