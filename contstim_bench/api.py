"""``contstim_bench.evaluate_model``: the Python face of ``contstim evaluate``.

The CLI is a thin wrapper around :func:`evaluate_model`, so both return the same result (see
:mod:`contstim_bench.results` for its layout).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .results import (
    DEFAULT_MODEL,
    default_plots_dir,
    evaluate_scorer,
    write_result,
)
from .schema import ALL_REFERENCE_MODELS, EXPERIMENTS
from .scoring.protocols import require_logprobs
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
            raise ValueError(f"unknown experiment {exp!r}; known: {', '.join(EXPERIMENTS)} or all")
        out.append(exp)
    return out


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


def evaluate_model(
    spec=None,
    experiments: str | Sequence[str] | None = None,
    output: str | os.PathLike | None = None,
    plots: str | os.PathLike | bool | None = None,
    *,
    name: str | None = None,
    datasets_dir: str | os.PathLike | None = None,
    device=None,
    dtype=None,
    batch_size: int | None = None,
    cache=None,
    threads: int | None = None,
    scatter_reference: str | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Evaluate a model on the benchmark: the result dict of ``contstim evaluate``.

    ``spec``: a model spec (``smollm2-135m``, ``hf-causal:gpt2``, ``hf-masked:...?method=pll``,
    ``precomputed:roberta``, ...) or a ready :class:`~contstim_bench.scoring.base.Scorer`;
    default :data:`~contstim_bench.results.DEFAULT_MODEL` (SmolLM2-135M-Instruct).
    ``experiments``: ``"main"``, ``"pll"``, a list of them, or None/``"all"`` for every
    experiment whose human data is available (the others are skipped with a note; a named one
    that is unavailable raises FileNotFoundError).  ``output``: write the result JSON there.
    ``plots``: a folder for the figures of :func:`contstim_bench.analysis.plots.plot_result`, or
    True for ``<output stem>_plots`` next to ``output``.  Scores are cached on disk (``cache``: a
    :class:`~contstim_bench.scoring.base.ScoreCache`, None for the default, False for none), so
    evaluating the same model again runs no model.
    """
    log = log or (lambda msg: print(msg, file=sys.stderr))
    exps = _experiments(experiments)
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
    if isinstance(spec, (str, ModelSpec)):
        scorer = load_scorer(spec, ScoringContext(datasets_dir=datasets_dir, batch_size=batch_size, cache=cache,
                                                  progress=progress), device=device, dtype=dtype)
    else:
        scorer = require_logprobs(spec, "the contstim benchmark")
    result = evaluate_scorer(scorer, experiments=exps, name=name, datasets_dir=datasets_dir, log=log)
    if output is not None:
        path = write_result(result, output)
        log(f"wrote the result to {path}")
    if plots is not None:
        from .analysis.plots import plot_result

        paths = plot_result(result, plots, scatter_reference=scatter_reference, datasets_dir=datasets_dir)
        log(f"wrote {len(paths)} figures to {Path(plots)}: " + ", ".join(p.name for p in paths))
    return result
