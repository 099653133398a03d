"""The one evaluation driver: every door (each ``contstim`` command, the Python API, ``compare``,
the leaderboard's verification and its ``make_results``, the Spaces) evaluates through
:func:`evaluate`, as lm-evaluation-harness's ``simple_evaluate``.

:func:`evaluate` resolves a model once (a spec string or :class:`~.scoring.spec.ModelSpec`,
parsed by :mod:`.scoring.spec` only, or a ready scorer), runs the requested benchmarks on that
scorer and returns ``{identifier: result}`` (the result dicts of :mod:`.results.schema`).  A
benchmark receives the scorer, never a spec string: a benchmark option that changes the model
(BLiMP's and plausibility's ``method``) is applied to the parsed spec here, through the
benchmark's ``spec_for``.  :class:`RunOptions` are the model options every command takes
(``--device``, ``--dtype``, ``--threads``, ``--batch-size``, ``--max-tokens-per-batch``), and
:func:`write_outputs` is the one output convention (``--output X.json``: one file; otherwise a
folder of ``<identifier>.json``).

Under ``accelerate launch``/``torchrun`` the sentences are scored data-parallel
(:mod:`.scoring.parallel`): every process returns the results, only process 0 logs and writes.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .benchmarks import get_benchmark
from .benchmarks.base import Benchmark
from .names import check_name
from .results import write_result
from .results.io import check_output_file, check_output_folder
from .scoring.parallel import data_parallel, is_main_process, set_threads
from .scoring.protocols import LogProbScorer, PromptedJudge, require_logprobs
from .scoring import registry
from .scoring.registry import ModelSpec
from .scoring.run_options import RunOptions
from .scoring.spec import DEFAULT_MODEL
from .staging import check_inputs_kept

Log = Callable[[str], None]


def run_options(options: RunOptions | None = None, **fields) -> RunOptions:
    """``options`` (default: :class:`RunOptions`' defaults) with ``fields`` replacing its values:
    the one way the Python API's doors take run options, as ``options=RunOptions(...)`` or as
    keyword arguments named after its fields (``device="cuda"``).  TypeError names an unknown
    field and lists the known ones."""
    from dataclasses import fields as dataclass_fields

    known = [f.name for f in dataclass_fields(RunOptions)]
    unknown = sorted(set(fields) - set(known))
    if unknown:
        raise TypeError(f"unknown run option(s) {', '.join(unknown)}; the options of RunOptions: {', '.join(known)}")
    if options is not None and not isinstance(options, RunOptions):
        raise TypeError(f"options must be a RunOptions, got {type(options).__name__}")
    return replace(options or RunOptions(), **fields)


def options_for(model, options: RunOptions) -> RunOptions:
    """``options`` as one model of several takes them: a token budget per batch
    (``max_tokens_per_batch``) only for a family that batches by tokens (``hf-causal``), so that
    one budget given for a comparison of a causal model with reference models applies where it
    can (a single model given a budget it cannot take is still refused by the registry)."""
    if options.max_tokens_per_batch is None or not isinstance(model, (str, ModelSpec)):
        return options
    return options if parse_model(model).family_info.token_budget else replace(options, max_tokens_per_batch=None)


def parse_model(model: "str | ModelSpec | None") -> ModelSpec:
    """The parsed spec of ``model`` (None: :data:`~.scoring.spec.DEFAULT_MODEL`)."""
    return ModelSpec.parse(DEFAULT_MODEL if model is None else model)


def model_inputs(model, flag: str = "--model") -> list[tuple[str, str]]:
    """``(flag, path)`` of every local file or folder ``model`` is read from
    (:attr:`~.scoring.spec.ModelSpec.local_files`; none for a ready scorer): inputs that
    :func:`~.staging.check_inputs_kept` keeps an output from overwriting."""
    if model is not None and not isinstance(model, (str, ModelSpec)):
        return []
    return [(flag, path) for path in parse_model(model).local_files]


def load_model(model, options: RunOptions = RunOptions(), *, datasets_dir: str | os.PathLike | None = None):
    """The scorer of ``model``: a spec (str or :class:`ModelSpec`; None: the default model),
    loaded once with ``options`` (:func:`.scoring.registry.load_scorer`, which applies them), or a
    ready scorer (log-probabilities or a prompted judge) as it is, torch's threads set to
    ``options.threads`` for it."""
    if model is None or isinstance(model, (str, ModelSpec)):
        return registry.load_scorer(parse_model(model), options, datasets_dir=datasets_dir)
    if not isinstance(model, (LogProbScorer, PromptedJudge)):
        raise TypeError(f"spec must be a model spec string or a Scorer, got {type(model).__name__}")
    set_threads(options.threads)
    return model


def split_experiments(experiments: Sequence[str] | str | None) -> tuple[list[str] | None, list[str]]:
    """(the paper's experiments asked for, or None for all of them; the rounds asked for) of
    ``experiments`` as a user gives them (``main``, ``pll``, ``all``, a round's name): the one
    place that tells a round of the benchmark from an experiment of the paper.  ValueError for
    a name that is neither, and for rounds mixed with experiments (a round is a benchmark of its
    own, with a result of its own)."""
    from .data.rounds import round_name
    from .study import EXPERIMENTS, is_paper_experiment

    if experiments is None:
        return None, []
    items = [experiments] if isinstance(experiments, str) else list(experiments)
    paper = [e for e in items if is_paper_experiment(e) or e == "all"]
    rounds = [e for e in items if e not in paper]
    for r in rounds:
        if round_name(f"contstim.{r}") is None:
            raise ValueError(f"unknown experiment {r!r}; known: {', '.join(EXPERIMENTS)}, all, or the name of a round "
                             "of the benchmark (written by `contstim experiment ingest`)")
    if rounds and paper:
        raise ValueError("a round is a benchmark of its own: evaluate rounds alone (`contstim evaluate --experiment "
                         "ROUND` or `contstim evaluate --benchmark contstim.ROUND`), not with main, pll or all")
    if "all" in paper or not items:
        return None, rounds
    return list(dict.fromkeys(paper)) or None, rounds


def resolve_benchmarks(benchmarks: Sequence["str | Benchmark"] | str, datasets_dir=None) -> list[Benchmark]:
    """The benchmarks to run, by identifier (rounds found in ``datasets_dir``) or as objects;
    an unknown identifier fails here, before any model loads."""
    if isinstance(benchmarks, str):
        benchmarks = [benchmarks]
    chosen: list[Benchmark] = []
    for b in benchmarks:
        bench = get_benchmark(b, datasets_dir) if isinstance(b, str) else b
        if bench.identifier not in {c.identifier for c in chosen}:
            chosen.append(bench)
    if not chosen:
        raise ValueError("no benchmark given to evaluate")
    return chosen


def evaluate(
    model=None,
    benchmarks: Sequence["str | Benchmark"] | str = ("contstim",),
    *,
    options: RunOptions = RunOptions(),
    datasets_dir: str | os.PathLike | None = None,
    name: str | None = None,
    ties: str | None = None,
    benchmark_options: Mapping[str, Any] | None = None,
    output: str | os.PathLike | None = None,
    log: Log | None = None,
) -> dict[str, dict]:
    """Evaluate one model on ``benchmarks``: ``{identifier: result}``, in the order given.

    ``model``: a spec (``smollm2-135m``, ``hf-causal:gpt2``, ``precomputed:roberta``, ...; None:
    the default model) or a ready scorer.  ``benchmarks``: identifiers of
    :mod:`.benchmarks.registry` (``contstim`` = every experiment of the paper whose human data
    is available, ``contstim.main``, ``contstim.pll``, ``blimp``, ``plausibility``, the rounds
    ``contstim.<round>`` found in ``datasets_dir``) or benchmark objects.  ``name`` and ``ties``
    (what a model tie scores: ``half``, ``miss``, ``hit``) apply to the contstim benchmarks;
    ``benchmark_options`` to the others (``method``, ``limit``, ``paradigms``, ...).  Each
    distinct model (after a benchmark's ``spec_for`` applies its ``method``) loads once.
    ``output``: :func:`write_outputs` (process 0 only).  A ``name`` with a control or invisible
    format character (:func:`~.names.check_name`) is refused before any model loads.
    """
    if name is not None:
        check_name(name, "model name")
    main = is_main_process()
    if not main:
        log, options = (lambda msg: None), replace(options, progress=False)
    log = log or (lambda msg: print(msg, file=sys.stderr))
    chosen = resolve_benchmarks(benchmarks, datasets_dir)
    extra = dict(benchmark_options or {})
    if output is not None:
        check_outputs(output, len(chosen), identifiers=[b.identifier for b in chosen], reads=model_inputs(model),
                      datasets_dir=datasets_dir)
    check_datasets_folder(datasets_dir, chosen, log)
    spec = None if model is not None and not isinstance(model, (str, ModelSpec)) else parse_model(model)
    scorers: dict[str, Any] = {}
    results: dict[str, dict] = {}
    for bench in chosen:
        if bench.dataset == "contstim":
            opts = {k: v for k, v in (("name", name), ("ties", ties)) if v is not None}
            unknown = sorted(set(extra) - {"progress"})
            if unknown and len(chosen) == 1:
                raise ValueError(f"{bench.identifier} takes no option(s) {unknown}")
        else:
            opts = {"progress": options.progress, **extra}
        if spec is not None:
            model_spec = bench.spec_for(spec, opts.pop("method", None))
            key = model_spec.canonical
            if key not in scorers:
                scorers[key] = load_model(model_spec, options, datasets_dir=datasets_dir)
            scorer = scorers[key]
        else:  # a ready scorer: checked, used as it is (a method given with it goes to the benchmark)
            scorer = load_model(model, options, datasets_dir=datasets_dir)
        with data_parallel():
            results[bench.identifier] = bench.evaluate(scorer, datasets_dir=datasets_dir, log=log, **opts)
    if output is not None and main:
        for ident, path in zip(results, write_outputs(results, output)):
            log(f"wrote the result to {path}" if len(results) == 1 else f"wrote the {ident} result to {path}")
    return results


def score_sentences(model, sentences: Sequence[str], options: RunOptions = RunOptions(), *,
                    datasets_dir: str | os.PathLike | None = None, what: str = "scoring") -> Any:
    """Natural-log probabilities (float64 array, in the order of ``sentences``) of ``model`` (a
    spec or a loaded log-probability scorer, :func:`load_model`), data-parallel under a
    launcher: the scoring of ``contstim score`` and ``compare``."""
    scorer = require_logprobs(load_model(model, options, datasets_dir=datasets_dir), what)
    with data_parallel():
        return scorer.score(sentences)


def asked_benchmarks(experiments: Sequence[str] | str | None, benchmarks: Sequence[str] | None,
                     datasets_dir: str | os.PathLike | None = None) -> tuple[list[str] | None, list[str] | None, list[str]]:
    """What a door was asked to evaluate, the same on every door: ``(the paper's experiments or
    None for all, benchmark identifiers or None, the rounds named as experiments)``.  A round
    named as an experiment (``--experiment ROUND``, ``experiments=[ROUND]``) is the benchmark
    ``contstim.ROUND`` (:func:`split_experiments` tells them apart).  ValueError for rounds with
    other benchmarks, for benchmarks with experiments, and for a name that is neither an
    experiment nor a round of ``datasets_dir`` (the rounds found there listed)."""
    exps, rounds = split_experiments(experiments)
    if rounds:
        from .benchmarks.registry import rounds as rounds_in
        from .study import EXPERIMENTS

        found = [name.removeprefix("contstim.") for name in rounds_in(datasets_dir)]
        for r in rounds:
            if r not in found:
                raise ValueError(f"unknown experiment {r!r}; known: {', '.join(EXPERIMENTS)}, all, or a round of the "
                                 f"datasets folder ({', '.join(found) if found else 'none there'}; `contstim "
                                 "experiment ingest --out DIR` writes one, `contstim evaluate --datasets DIR` finds it)")
        if benchmarks:
            raise ValueError("a round is a benchmark of its own: give rounds alone (`contstim evaluate --experiment ROUND "
                             "...` or `contstim evaluate --benchmark contstim.ROUND`), not with other benchmarks")
        return None, [f"contstim.{r}" for r in rounds], rounds
    if benchmarks and experiments is not None:
        raise ValueError("benchmarks and experiments exclude each other (`contstim evaluate --benchmark contstim.pll` is "
                         "`contstim evaluate --experiment pll`)")
    return exps, (list(benchmarks) if benchmarks else None), []


def evaluate_variants(model, benchmark: str, variants: Mapping[str, Mapping[str, Any]], *,
                      options: RunOptions = RunOptions(), datasets_dir: str | os.PathLike | None = None,
                      log: Log | None = None) -> dict[str, dict]:
    """``benchmark`` once per set of its options (BLiMP with each of several ``method`` values):
    ``{key: result}`` in the order of ``variants`` (key -> benchmark options).  Every variant's
    model (``spec_for``) is checked before any model loads."""
    spec = parse_model(model)
    bench = get_benchmark(benchmark, datasets_dir)
    for opts in variants.values():
        bench.spec_for(spec, opts.get("method"))
    return {key: evaluate(spec, [benchmark], options=options, datasets_dir=datasets_dir, benchmark_options=opts,
                          log=log)[benchmark] for key, opts in variants.items()}


def check_datasets_folder(datasets_dir, benchmarks: Sequence[Benchmark], log: Log) -> None:
    """The paper's experiments are never evaluated from a round's folder, and a default run says
    which rounds it leaves out.

    ValueError when ``datasets_dir`` is the folder of a round (``contstim experiment ingest``
    wrote it) and a paper experiment is asked for: building the paper's data into it and
    evaluating ``pll`` would silently answer a question nobody asked.  With the default
    experiments (``contstim``), a note lists the rounds of the folder (each evaluated only when
    asked for, as a benchmark of its own)."""
    from .benchmarks.contstim import ContstimExperiment
    from .data.rounds import ROUND_FILE, discover_rounds, read_meta

    paper = [b for b in benchmarks if isinstance(b, ContstimExperiment)]
    others = [b for b in benchmarks if b.dataset != "contstim"]
    if not paper and not others:
        return
    if datasets_dir is not None and (Path(datasets_dir) / ROUND_FILE).is_file():
        ident = read_meta(datasets_dir)["identifier"]
        raise ValueError(f"{datasets_dir} is the folder of the round {ident}, not a datasets folder of the paper's "
                         f"experiments; evaluate the round with `contstim evaluate --benchmark {ident} --datasets "
                         f"{datasets_dir}` (or the folder that holds it; Python: benchmarks=[{ident!r}])")
    if any(b.experiments is None for b in paper):
        found = discover_rounds(datasets_dir)
        if found:
            log(f"note: rounds in the datasets folder not evaluated here (each is a benchmark of its own): "
                f"{', '.join(found)}; evaluate one with `contstim evaluate --benchmark ID`")


def output_file(output: str | os.PathLike, identifier: str) -> Path:
    """Where :func:`write_outputs` writes the result of ``identifier``."""
    path = Path(output)
    return path if path.suffix.lower() == ".json" else path / f"{identifier}.json"


def check_outputs(output: str | os.PathLike, n_results: int, *, identifiers: Sequence[str] = (),
                  reads: Iterable[tuple[str, Any]] = (), datasets_dir: str | os.PathLike | None = None,
                  files: Sequence[str] = ()) -> Path:
    """The output convention, checked before any model runs: ``output`` ending in ``.json`` is
    one result file (ValueError when ``n_results`` would not fit in one); anything else is a
    folder receiving ``<identifier>.json`` each, or the named ``files`` (``contstim compare``'s
    tables) (ValueError when it is an existing file).  ValueError too when the file, or one the
    folder would receive, is one of the inputs ``reads`` (``(flag, path)`` pairs, e.g.
    :func:`model_inputs`; :func:`~.staging.check_inputs_kept`); never inside ``datasets_dir``, the
    datasets folder the run reads."""
    path = Path(output)
    reads = [*reads, ("--datasets", datasets_dir)]
    if path.suffix.lower() == ".json":
        if n_results != 1:
            raise ValueError(f"output {output} is one result file (it ends in .json), but this run writes "
                             f"{n_results} results: give a folder instead")
        check_inputs_kept([("--output", path)], reads, folders=("--datasets",))
        return check_output_file(path)
    targets = [output_file(path, ident) for ident in identifiers] + [path / name for name in files]
    check_inputs_kept([("--output", t) for t in targets], reads, folders=("--datasets",))
    return check_output_folder(path)


def write_outputs(results: Mapping[str, dict], output: str | os.PathLike) -> list[Path]:
    """Write ``results`` by the output convention of :func:`check_outputs`: one file
    ``output`` (it ends in ``.json``), or ``output/<identifier>.json`` each."""
    path = check_outputs(output, len(results))
    if path.suffix.lower() == ".json":
        return [write_result(next(iter(results.values())), path)]
    return [write_result(result, output_file(path, ident)) for ident, result in results.items()]
