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

from .benchmarks import get_benchmark
from .benchmarks.contstim import evaluate_scorer
from .benchmarks.contstim_compare import compare_logprobs, experiment_sentences
from .results import default_plots_dir, write_result
from .results.io import check_output_file
from .schema import ALL_REFERENCE_MODELS, EXPERIMENT_MODELS, EXPERIMENTS
from .scoring.spec import DEFAULT_MODEL
from .scoring.protocols import LogProbScorer, PromptedJudge, require_logprobs
from .scoring.named import parse_named_specs
from .scoring.parallel import data_parallel, is_main_process
from .scoring.registry import ModelSpec, ScoringContext, load_scorer


def _experiments(experiments) -> list[str] | None:
    if experiments is None or experiments == "all":
        return None
    if isinstance(experiments, str):
        experiments = [experiments]
    out = []
    for exp in experiments:
        if exp == "all":
            return None
        if exp not in EXPERIMENTS:
            raise ValueError(f"unknown experiment {exp!r}; known: {', '.join(EXPERIMENTS)} or all (a round written "
                             f"by `contstim experiment ingest` is evaluated with benchmarks=['contstim.{exp}'])")
        out.append(exp)
    return out


def _scorer(spec, datasets_dir, device, dtype, batch_size, cache, progress, max_tokens_per_batch=None):
    """The scorer of a spec (default: :data:`DEFAULT_MODEL`) or a ready log-probability scorer."""
    if spec is None:
        spec = DEFAULT_MODEL
    if isinstance(spec, (str, ModelSpec)):
        context = ScoringContext(datasets_dir=datasets_dir, batch_size=batch_size, cache=cache, progress=progress,
                                 max_tokens_per_batch=max_tokens_per_batch)
        return load_scorer(spec, context, device=device, dtype=dtype)
    if not isinstance(spec, (LogProbScorer, PromptedJudge)):
        raise TypeError(f"spec must be a model spec string or a Scorer, got {type(spec).__name__}")
    return require_logprobs(spec, "the benchmark")


def set_threads(threads: int | None) -> None:
    """``torch.set_num_threads(threads)`` (None: leave torch's default).

    On a machine whose cores are busy with other work, one thread is often several times faster
    than torch's default of one thread per core (the threads wait on each other).
    """
    if threads is None:
        return
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    import torch

    torch.set_num_threads(threads)


def score_sentences(
    spec,
    sentences: Sequence[str],
    *,
    datasets_dir: str | os.PathLike | None = None,
    device=None,
    dtype=None,
    batch_size: int | None = None,
    cache=None,
    threads: int | None = None,
    progress: bool = True,
):
    """Natural-log probability of each sentence under a model: a float64 numpy array, in the
    order of ``sentences`` (repeats scored once).

    The scorer of ``contstim evaluate``: the same spec (``smollm2-135m``, ``hf-causal:<folder or
    Hub id>``, ``hf-masked:...?method=pll-word-l2r``, ``kenlm:<file>``, ...; see
    :mod:`contstim_bench.scoring.spec`), the same start token for causal models, batches sorted
    by length, and the same on-disk score cache, so scores computed by either are reused by the
    other (``cache=False``: no cache).  Given the sentences in the same order as ``contstim
    evaluate`` (first appearance in ``sentence1`` then ``sentence2`` of the trials), a model that
    is not cached yet runs the very same batches and gives the same floats.  ``spec`` may also
    be a ready log-probability scorer.  ``threads``: torch CPU threads (see :func:`set_threads`).

    >>> contstim_bench.score_sentences("smollm2-135m", ["The cat sat on the mat."])  # doctest: +SKIP
    array([-20.9165...])
    """
    if spec is None:
        raise ValueError(f"give a model spec (e.g. {DEFAULT_MODEL!r}) or a scorer")
    set_threads(threads)
    scorer = require_logprobs(_scorer(spec, datasets_dir, device, dtype, batch_size, cache, progress),
                              "score_sentences")
    return scorer.score(sentences)


def evaluate_model(
    spec=None,
    experiments: str | Sequence[str] | None = None,
    output: str | os.PathLike | None = None,
    plots: str | os.PathLike | bool | None = None,
    *,
    benchmarks: Sequence[str] | None = None,
    name: str | None = None,
    datasets_dir: str | os.PathLike | None = None,
    device=None,
    dtype=None,
    batch_size: int | None = None,
    cache=None,
    threads: int | None = None,
    scatter_reference: str | None = None,
    ties: str = "half",
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    max_tokens_per_batch: int | None = None,
) -> dict:
    """Evaluate a model on the benchmark: the result dict of ``contstim evaluate``.

    ``spec``: a model spec (``smollm2-135m``, ``hf-causal:gpt2``, ``hf-masked:...?method=pll``,
    ``precomputed:roberta``, ...) or a ready :class:`~contstim_bench.scoring.base.Scorer`;
    default :data:`~contstim_bench.scoring.spec.DEFAULT_MODEL` (SmolLM2-135M-Instruct).
    ``experiments``: ``"main"``, ``"pll"``, a list of them, or None/``"all"`` for every
    experiment whose human data is available (the others are skipped with a note; a named one
    that is unavailable raises FileNotFoundError).  ``output``: write the result JSON there.
    ``plots``: a folder for the figures of :func:`contstim_bench.report.plots.plot_result`, or
    True for ``<output stem>_plots`` next to ``output``.  Scores are cached on disk (``cache``: a
    :class:`~contstim_bench.scoring.base.ScoreCache`, None for the default, False for none), so
    evaluating the same model again runs no model.

    ``benchmarks``: identifiers of :mod:`contstim_bench.benchmarks` (``contstim.pll``,
    ``blimp``, ``plausibility`` ...) and rounds of the contstim benchmark found in
    ``datasets_dir`` (``contstim.<round>``, written by ``contstim experiment ingest``); then the
    return value is ``{identifier: result}``, one result per benchmark, ``output`` is a folder
    receiving ``<identifier>.json`` each, and ``experiments``/``plots`` do not apply.  ``ties``: what a model tie scores in the contstim
    accuracy (``half``, ``miss``, ``hit``; see :mod:`contstim_bench.analysis.accuracy`).

    ``max_tokens_per_batch``: length-sorted batches under a token budget (hf-causal models).
    Under ``accelerate launch`` the sentences are scored data-parallel
    (:mod:`contstim_bench.scoring.parallel`); every process returns the result, only process 0
    writes files and logs.
    """
    if not is_main_process():
        log = lambda msg: None  # noqa: E731
        progress = False
    log = log or (lambda msg: print(msg, file=sys.stderr))
    if output is not None and benchmarks is None:
        check_output_file(output)  # before any model runs
    elif output is not None and Path(output).is_file():
        raise ValueError(f"output {output} is a file; with benchmarks (`contstim evaluate --benchmark`) it is the "
                         "folder receiving <identifier>.json")
    if benchmarks is not None:
        if experiments is not None or plots not in (None, False):
            raise ValueError("benchmarks= evaluates whole benchmarks: leave experiments and plots out")
        return _evaluate_benchmarks(spec, benchmarks, output, name=name, datasets_dir=datasets_dir, device=device,
                                    dtype=dtype, batch_size=batch_size, cache=cache, threads=threads,
                                    progress=progress, log=log, ties=ties, max_tokens_per_batch=max_tokens_per_batch)
    exps = _experiments(experiments)
    _check_datasets_folder(datasets_dir, exps, log)
    if plots is True:
        if output is None:
            raise ValueError("plots=True puts the figures next to the result file: give output too")
        plots = default_plots_dir(output)
    elif plots is False:
        plots = None
    if scatter_reference is not None and scatter_reference not in ALL_REFERENCE_MODELS:
        raise ValueError(f"unknown scatter reference model {scatter_reference!r}; known: "
                         f"{', '.join(ALL_REFERENCE_MODELS)}")
    set_threads(threads)
    if spec is None:
        spec = DEFAULT_MODEL
    scorer = _scorer(spec, datasets_dir, device, dtype, batch_size, cache, progress, max_tokens_per_batch)
    with data_parallel():
        result = evaluate_scorer(scorer, experiments=exps, name=name, datasets_dir=datasets_dir, log=log, ties=ties)
    if not is_main_process():
        return result
    if output is not None:
        path = write_result(result, output)
        log(f"wrote the result to {path}")
    if plots is not None:
        from .report.plots import plot_result

        paths = plot_result(result, plots, scatter_reference=scatter_reference, datasets_dir=datasets_dir)
        log(f"wrote {len(paths)} figures to {Path(plots)}: " + ", ".join(p.name for p in paths))
    return result


def _check_datasets_folder(datasets_dir, experiments, log) -> None:
    """The paper's experiments are never evaluated from a round's folder, and a default run says
    which rounds it leaves out.

    ValueError when ``datasets_dir`` is the folder of a round (``contstim experiment ingest``
    wrote it): building the paper's data into it and evaluating ``pll`` would silently answer a
    question nobody asked.  With the default experiments, a note lists the rounds of the folder
    (evaluated only when asked for, as benchmarks of their own)."""
    from .data.rounds import ROUND_FILE, discover_rounds, read_meta

    if datasets_dir is not None and (Path(datasets_dir) / ROUND_FILE).is_file():
        ident = read_meta(datasets_dir)["identifier"]
        raise ValueError(f"{datasets_dir} is the folder of the round {ident}, not a datasets folder of the paper's "
                         f"experiments; evaluate the round with `contstim evaluate --benchmark {ident} --datasets "
                         f"{datasets_dir}` (or the folder that holds it; Python: benchmarks=[{ident!r}])")
    if experiments is None:
        found = discover_rounds(datasets_dir)
        if found:
            log(f"note: rounds in the datasets folder not evaluated here (each is a benchmark of its own): "
                f"{', '.join(found)}; evaluate one with `contstim evaluate --benchmark ID`")


def _evaluate_benchmarks(spec, benchmarks, output, *, name, datasets_dir, device, dtype, batch_size, cache, threads,
                         progress, log, ties, max_tokens_per_batch=None) -> dict[str, dict]:
    """``{identifier: result}`` of ``spec`` on each benchmark (see :func:`evaluate_model`)."""
    if isinstance(benchmarks, str):
        benchmarks = [benchmarks]
    from .benchmarks.contstim_round import ContstimRound

    chosen = [get_benchmark(b, datasets_dir) for b in dict.fromkeys(benchmarks)]  # unknown names fail before loading
    if not chosen:
        raise ValueError("no benchmark given to evaluate")
    if any(not isinstance(b, ContstimRound) for b in chosen):
        _check_datasets_folder(datasets_dir, [], log)  # no paper data is built into a round's folder
    set_threads(threads)
    scorer = _scorer(spec, datasets_dir, device, dtype, batch_size, cache, progress, max_tokens_per_batch)
    out: dict[str, dict] = {}
    for bench in chosen:
        if bench.dataset == "contstim":  # the paper's experiments and every round
            options = {"ties": ties} if name is None else {"name": name, "ties": ties}
        else:
            options = {"progress": progress}
        with data_parallel():
            out[bench.identifier] = result = bench.evaluate(scorer, datasets_dir=datasets_dir, log=log, **options)
        if output is not None and is_main_process():
            path = write_result(result, Path(output) / f"{bench.identifier}.json")
            log(f"wrote the {bench.identifier} result to {path}")
    return out


def compare_models(
    models: str | Sequence[str] | None = None,
    *,
    results: Sequence[str | os.PathLike] = (),
    experiment: str = "pll",
    with_references: bool = False,
    conditions: Sequence[str] | None = None,
    output: str | os.PathLike | None = None,
    datasets_dir: str | os.PathLike | None = None,
    device=None,
    dtype=None,
    batch_size: int | None = None,
    cache=None,
    threads: int | None = None,
    ties: str = "half",
    progress: bool = True,
    log: Callable[[str], None] | None = None,
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
    figures (:func:`contstim_bench.report.matrices.write_comparison`).
    """
    from .results import read_result

    log = log or (lambda msg: print(msg, file=sys.stderr))
    from .data.rounds import check_round_name

    if experiment not in EXPERIMENTS:
        check_round_name(experiment)  # a round of the benchmark, found in datasets_dir below
    named = parse_named_specs(models, flag="--models") if models else []
    logprobs: dict[str, dict[str, float]] = {}
    specs: dict[str, str] = {}
    if with_references and experiment in EXPERIMENTS:
        named += [n for n in parse_named_specs([f"precomputed:{m}" for m in EXPERIMENT_MODELS[experiment]])
                  if n.name not in {m.name for m in named}]
    round_refs: dict[str, dict[str, float]] = {}
    if with_references and experiment not in EXPERIMENTS:  # a round: its targeted models that scored every sentence
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
        specs[name] = result["model"]["spec"]
    if named:
        set_threads(threads)
        context = ScoringContext(datasets_dir=datasets_dir, batch_size=batch_size, cache=cache, progress=progress)
    for entry in named:
        if entry.name in logprobs:
            raise ValueError(f"model {entry.name!r} is given twice (rename one with NAME=SPEC)")
        scorer = require_logprobs(load_scorer(entry.spec, context, device=device, dtype=dtype), "a comparison")
        log(f"{experiment}: scoring {len(sentences)} sentences with {scorer.spec} ...")
        logprobs[entry.name] = dict(zip(sentences, (float(v) for v in scorer.score(sentences))))
        specs[entry.name] = scorer.spec
    for ref, values in round_refs.items():  # the given models and result files come first
        if ref not in logprobs:
            logprobs[ref], specs[ref] = values, f"round {experiment}: {ref}'s recorded log-probabilities"
    comparison = compare_logprobs(logprobs, experiment, datasets_dir, conditions=conditions, specs=specs, ties=ties)
    if output is not None:
        from .report.matrices import write_comparison

        paths = write_comparison(comparison, output)
        log(f"wrote {len(paths)} files to {Path(output)}")
    return comparison
