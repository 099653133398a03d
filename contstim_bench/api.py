"""``contstim_bench.evaluate_model``: the Python face of ``contstim evaluate``, and
``contstim_bench.score_sentences``: its scorer on any sentences.

The CLI is a thin wrapper around :func:`evaluate_model`, so both return the same result (see
:mod:`contstim_bench.results.schema` for its layout).  :func:`evaluate_model` with
``benchmarks=[...]`` evaluates any benchmark of :mod:`contstim_bench.benchmarks` (one result per
benchmark).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from . import driver
from .benchmarks.base import describe_model
from .benchmarks.contstim import ContstimExperiment
from .benchmarks.contstim_compare import compare_logprobs, experiment_sentences
from .driver import RunOptions, set_threads
from .results import default_plots_dir
from .study import ALL_REFERENCE_MODELS, EXPERIMENT_MODELS, is_paper_experiment
from .scoring.spec import DEFAULT_MODEL
from .scoring.named import parse_named_specs
from .scoring.parallel import is_main_process

__all__ = ["compare_models", "evaluate_model", "score_sentences", "set_threads"]


RUN_OPTIONS_DOC = """``options``: a :class:`~contstim_bench.driver.RunOptions`; ``**run_options``: its fields as
    keyword arguments, replacing its values (``device``, ``dtype``, ``batch_size``,
    ``max_tokens_per_batch``, ``threads``: torch CPU threads, see :func:`set_threads`;
    ``cache``: a :class:`~contstim_bench.scoring.base.ScoreCache`, None for the default on-disk
    cache, False for none; ``progress``); an unknown name is a TypeError that lists them."""


def score_sentences(spec, sentences: Sequence[str], *, datasets_dir: str | os.PathLike | None = None,
                    options: RunOptions | None = None, **run_options):
    """Natural-log probability of each sentence under a model: a float64 numpy array, in the
    order of ``sentences`` (repeats scored once).

    The scorer of ``contstim evaluate``: the same spec (``smollm2-135m``, ``hf-causal:<folder or
    Hub id>``, ``hf-masked:...?method=pll-word-l2r``, ``kenlm:<file>``, ...; see
    :mod:`contstim_bench.scoring.spec`), the same start token for causal models, batches sorted
    by length, and the same on-disk score cache, so scores computed by either are reused by the
    other (``cache=False``: no cache).  Given the sentences in the same order as ``contstim
    evaluate`` (first appearance in ``sentence1`` then ``sentence2`` of the trials), a model that
    is not cached yet runs the very same batches and gives the same floats.  ``spec`` may also
    be a ready log-probability scorer.  Run options: :data:`RUN_OPTIONS_DOC`.

    >>> contstim_bench.score_sentences("smollm2-135m", ["The cat sat on the mat."])  # doctest: +SKIP
    array([-20.9165...])
    """
    if spec is None:
        raise ValueError(f"give a model spec (e.g. {DEFAULT_MODEL!r}) or a scorer")
    return driver.score_sentences(spec, sentences, driver.run_options(options, **run_options),
                                  datasets_dir=datasets_dir, what="score_sentences")


def evaluate_model(
    spec=None,
    experiments: str | Sequence[str] | None = None,
    output: str | os.PathLike | None = None,
    plots: str | os.PathLike | bool | None = None,
    *,
    benchmarks: Sequence[str] | None = None,
    name: str | None = None,
    datasets_dir: str | os.PathLike | None = None,
    scatter_reference: str | None = None,
    ties: str = "half",
    log: Callable[[str], None] | None = None,
    options: RunOptions | None = None,
    **run_options,
) -> dict:
    """Evaluate a model on the benchmark: the result dict of ``contstim evaluate``.

    ``spec``: a model spec (``smollm2-135m``, ``hf-causal:gpt2``, ``hf-masked:...?method=pll``,
    ``precomputed:roberta``, ...) or a ready :class:`~contstim_bench.scoring.base.Scorer`;
    default :data:`~contstim_bench.scoring.spec.DEFAULT_MODEL` (SmolLM2-135M-Instruct).
    ``experiments``: ``"main"``, ``"pll"``, a list of them, or None/``"all"`` for every
    experiment whose human data is available (the others are skipped with a note; a named one
    that is unavailable raises FileNotFoundError).  ``output``: where the result goes, by the
output convention of every door (:func:`contstim_bench.driver.write_outputs`): a path ending in
``.json`` is the result file, anything else a folder receiving ``<identifier>.json``.
    ``plots``: a folder for the figures of :func:`contstim_bench.plotting.plot_result`, or
    True for ``<output stem>_plots`` next to ``output``.  Scores are cached on disk (``cache``: a
    :class:`~contstim_bench.scoring.base.ScoreCache`, None for the default, False for none), so
    evaluating the same model again runs no model.

    ``benchmarks``: identifiers of :mod:`contstim_bench.benchmarks` (``contstim.pll``,
    ``blimp``, ``plausibility`` ...) and rounds of the contstim benchmark found in
    ``datasets_dir`` (``contstim.<round>``, written by ``contstim experiment ingest``); then the
    return value is ``{identifier: result}``, one result per benchmark (``output``: one ``.json``
    file for one benchmark, else a folder receiving ``<identifier>.json`` each), and
    ``experiments``/``plots`` do not apply.  ``ties``: what a model tie scores in the contstim
    accuracy (``half``, ``miss``, ``hit``; see :mod:`contstim_bench.analysis.accuracy`).  A round
    named in ``experiments`` is evaluated as its benchmark ``contstim.<round>``, as ``contstim
    evaluate --experiment ROUND`` does (:func:`contstim_bench.driver.asked_benchmarks`).

    Run options (:data:`RUN_OPTIONS_DOC`): ``max_tokens_per_batch``, for one, gives length-sorted
    batches under a token budget (hf-causal models).  Under ``accelerate launch`` the sentences are scored data-parallel
    (:mod:`contstim_bench.scoring.parallel`); every process returns the result, only process 0
    writes files and logs.
    """
    log = log or (lambda msg: print(msg, file=sys.stderr))  # the driver silences processes other than 0
    options = driver.run_options(options, **run_options)
    exps, asked, _ = driver.asked_benchmarks(experiments, benchmarks, datasets_dir)
    if asked is not None:  # benchmarks=, or rounds named as experiments
        if plots not in (None, False):
            raise ValueError("benchmarks (and rounds) are evaluated whole: leave plots out")
        return driver.evaluate(spec, asked, options=options, datasets_dir=datasets_dir, name=name, ties=ties,
                               output=output, log=log)
    bench = ContstimExperiment(None if exps is None else tuple(exps))
    if plots is True:
        if output is None:
            raise ValueError("plots=True puts the figures next to the result file: give output too")
        plots = default_plots_dir(driver.output_file(output, bench.identifier))
    elif plots is False:
        plots = None
    if scatter_reference is not None and scatter_reference not in ALL_REFERENCE_MODELS:
        raise ValueError(f"unknown scatter reference model {scatter_reference!r}; known: "
                         f"{', '.join(ALL_REFERENCE_MODELS)}")
    result = driver.evaluate(spec, [bench], options=options, datasets_dir=datasets_dir, name=name, ties=ties,
                             output=output, log=log)[bench.identifier]
    if not is_main_process():
        return result
    if plots is not None:
        from .plotting import plot_result

        paths = plot_result(result, plots, scatter_reference=scatter_reference, datasets_dir=datasets_dir)
        log(f"wrote {len(paths)} figures to {Path(plots)}: " + ", ".join(p.name for p in paths))
    return result


def compare_models(
    models: str | Sequence[str] | None = None,
    *,
    results: Sequence[str | os.PathLike] = (),
    experiment: str = "pll",
    with_references: bool = False,
    conditions: Sequence[str] | None = None,
    output: str | os.PathLike | None = None,
    datasets_dir: str | os.PathLike | None = None,
    ties: str = "half",
    log: Callable[[str], None] | None = None,
    options: RunOptions | None = None,
    **run_options,
) -> dict:
    """Every model against every other on the human trials of ``experiment`` (``contstim compare``).

    ``experiment``: ``main``, ``pll`` or a round of the benchmark (its name, found in
    ``datasets_dir``).  ``models``: ``SPEC,SPEC,...`` or ``NAME=SPEC,...`` (or a list), scored
    here (cached); ``results``: result files of ``contstim evaluate`` whose log-probabilities are
    used as they are (named by their ``model.name``); ``with_references``: add the experiment's
    reference models (their published log-probabilities; for a round, the targeted models that
    have a recorded log-probability for every sentence of its trials).  Returns the dict of
    :func:`contstim_bench.benchmarks.contstim_compare.compare_logprobs` (head-to-head and
    agreement matrices per condition); ``output``: a folder for its JSON, CSVs, tables and
    figures (:func:`contstim_bench.report.matrices.write_comparison`), or, ending in ``.json``,
    the one JSON file.  Run options: :data:`RUN_OPTIONS_DOC`.
    """
    options = driver.run_options(options, **run_options)
    log = log or (lambda msg: print(msg, file=sys.stderr))
    named = parse_named_specs(models, flag="--models") if models else []
    if output is not None:  # before any model runs: the comparison never overwrites what it reads
        from .report.matrices import COMPARISON_FILES

        reads = [("--results", r) for r in results] + [i for n in named for i in driver.model_inputs(n.spec)]
        driver.check_outputs(output, 1, files=COMPARISON_FILES, reads=reads, datasets_dir=datasets_dir)
    logprobs, specs = model_logprobs(models, results=results, experiment=experiment, with_references=with_references,
                                     datasets_dir=datasets_dir, log=log, options=options)
    comparison = compare_logprobs(logprobs, experiment, datasets_dir, conditions=conditions, specs=specs, ties=ties)
    if output is not None and is_main_process():
        from .report.matrices import write_comparison, write_comparison_json

        if Path(output).suffix.lower() == ".json":  # the output convention of every command: one file
            log(f"wrote {write_comparison_json(comparison, output)}")
        else:
            paths = write_comparison(comparison, output)
            log(f"wrote {len(paths)} files to {Path(output)}")
    return comparison


def model_logprobs(
    models: str | Sequence[str] | None = None,
    *,
    results: Sequence[str | os.PathLike] = (),
    experiment: str = "pll",
    with_references: bool = False,
    datasets_dir: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
    options: RunOptions | None = None,
) -> tuple[dict[str, dict[str, float]], dict[str, str | dict]]:
    """(model name -> {sentence: natural-log probability}, model name -> its description) of every
    sentence of ``experiment``'s trials, for the models that :func:`compare_models` compares (the
    same arguments): ``models`` scored here through the driver, ``results`` read from result
    files, the experiment's references with ``with_references``."""
    from .data.rounds import check_round_name
    from .results import read_result

    options = options or driver.run_options()
    log = log or (lambda msg: print(msg, file=sys.stderr))
    if not is_paper_experiment(experiment):
        check_round_name(experiment)  # a round of the benchmark, found in datasets_dir below
    named = parse_named_specs(models, flag="--models") if models else []
    logprobs: dict[str, dict[str, float]] = {}
    specs: dict[str, str | dict] = {}
    if with_references and is_paper_experiment(experiment):
        named += [n for n in parse_named_specs([f"precomputed:{m}" for m in EXPERIMENT_MODELS[experiment]])
                  if n.name not in {m.name for m in named}]
    round_refs: dict[str, dict[str, float]] = {}
    if with_references and not is_paper_experiment(experiment):  # a round: its targeted models that scored every sentence
        from .benchmarks.contstim_compare import round_references

        round_refs = round_references(experiment, datasets_dir)
    sentences = experiment_sentences(experiment, datasets_dir)
    for path in results:
        result = read_result(path)
        name = result["model"]["name"]
        if name in logprobs:
            raise ValueError(f"result file {path}: model {name!r} is given twice")
        missing = [s for s in sentences if s not in result.get("logprobs", {})]
        if missing:
            raise ValueError(f"result file {path} has no log-probability for {len(missing)} sentence(s) of the "
                             f"{experiment} experiment, e.g. {missing[0]!r}; evaluate the model on it first "
                             f"(contstim evaluate --experiment {experiment})")
        logprobs[name] = {s: result["logprobs"][s] for s in sentences}
        specs[name] = result["model"]
    per_model = {entry.name: driver.options_for(entry.spec, options) for entry in named}
    if options.max_tokens_per_batch is not None and named and \
            all(o.max_tokens_per_batch is None for o in per_model.values()):
        raise ValueError("a token budget per batch (`contstim compare --max-tokens-per-batch`) applies to hf-causal "
                         "models; none of the compared models is one (the others batch by `contstim compare "
                         "--batch-size` or look their values up)")
    for entry in named:
        if entry.name in logprobs:
            raise ValueError(f"model {entry.name!r} is given twice (rename one with NAME=SPEC)")
        scorer = driver.load_model(entry.spec, per_model[entry.name], datasets_dir=datasets_dir)
        log(f"{experiment}: scoring {len(sentences)} sentences with {scorer.spec} ...")
        values = driver.score_sentences(scorer, sentences, per_model[entry.name], what="a comparison")
        logprobs[entry.name] = dict(zip(sentences, (float(v) for v in values)))
        specs[entry.name] = describe_model(scorer)  # its settings, as evaluate's result records them
    for ref, values in round_refs.items():  # the given models and result files come first
        if ref not in logprobs:
            logprobs[ref], specs[ref] = values, f"round {experiment}: {ref}'s recorded log-probabilities"
    return logprobs, specs
