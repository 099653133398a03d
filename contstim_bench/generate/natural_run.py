"""A natural-pair selection run (``contstim generate natural``): score a natural-sentence pool
with every model, select controversial pairs by integer programming (Eq. 5-6,
:func:`contstim_bench.generate.natural_ilp.select_natural_pairs`) and write ``OUTPUT/natural``
(:func:`contstim_bench.generate.select_output.write_natural`), and each model's pool scores as
``OUTPUT/pool_arrays/<model>.npy``: one float64 per line of ``OUTPUT/pool_arrays/pool.txt`` (the
pool's lines), the upstream precomputed-pool layout, so that
``precomputed:OUTPUT/pool_arrays/<model>.npy?sentences=OUTPUT/pool_arrays/pool.txt`` is a model.

Under ``accelerate launch --num_processes N -m contstim_bench generate natural ...`` the pool's
sentences are scored data-parallel (:mod:`contstim_bench.scoring.parallel`, resumable from the
score cache) and process 0 solves the selection and writes the outputs."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .natural_ilp import NaturalPairSelection, select_natural_pairs
from .runner import ModelEntry, parse_models


@dataclass(frozen=True)
class NaturalRun:
    """What :func:`select_natural` wrote: the dataset ``folder``, the ILP ``selection`` and the
    de-duplicated pool ``sentences`` with their ``log_probs`` (n_sentences x n_models, nats)."""

    folder: Path
    selection: NaturalPairSelection
    models: list[ModelEntry]
    sentences: list[str]
    log_probs: np.ndarray


def score_pool(sentences: Sequence[str], models: Sequence[ModelEntry], *, device=None, dtype=None,
               batch_size: int | None = None, use_cache: bool = True, progress: bool = True,
               datasets_dir: str | os.PathLike | None = None,
               log: Callable[[str], None] | None = None,
               max_tokens_per_batch: int | None = None) -> np.ndarray:
    """Natural-log probabilities of ``sentences`` under each model: float64 array
    (n_sentences, n_models), column k for ``models[k]`` (loaded one at a time)."""
    from ..scoring.base import ScoreCache
    from ..scoring.parallel import data_parallel
    from ..scoring.registry import load_scorer

    log = log or (lambda msg: print(msg, file=sys.stderr))
    cache = ScoreCache() if use_cache else False
    columns = []
    for m in models:
        scorer = load_scorer(m.spec, device=device, dtype=dtype, datasets_dir=datasets_dir,
                             batch_size=batch_size, cache=cache, progress=progress,
                             max_tokens_per_batch=max_tokens_per_batch)
        with data_parallel():  # under accelerate launch: the pool split across the processes
            columns.append(np.asarray(scorer.score(list(sentences)), dtype=np.float64))
        log(f"scored {len(sentences)} pool sentences with {m.name}")
    return np.stack(columns, axis=1)


POOL_ARRAYS = "pool_arrays"


def write_pool_arrays(folder: Path, lines: Sequence[str], sentences: Sequence[str], log_probs: np.ndarray,
                      models: Sequence[ModelEntry]) -> Path:
    """``folder/pool.txt`` (the pool's lines) and ``folder/<model>.npy`` per model: one float64 per
    line (a repeated line repeats its value), the upstream precomputed-pool layout."""
    from ..names import slug
    from ..scoring.precomputed import write_pool_array

    folder.mkdir(parents=True, exist_ok=True)
    row = {s: i for i, s in enumerate(sentences)}
    index = np.array([row[ln] for ln in lines], dtype=np.int64)
    (folder / "pool.txt").write_text("".join(f"{ln}\n" for ln in lines), encoding="utf-8")
    for k, m in enumerate(models):
        write_pool_array(folder / f"{slug(m.name)}.npy", log_probs[index, k])
    return folder


def select_natural(models: str | Sequence[str], output: str | os.PathLike, *, pool: str | None = None,
                   per_pair: int = 10, solver: str = "cbc", device=None, dtype=None,
                   batch_size: int | None = None, use_cache: bool = True, progress: bool = True,
                   datasets_dir: str | os.PathLike | None = None,
                   log: Callable[[str], None] | None = None,
                   max_tokens_per_batch: int | None = None) -> NaturalRun | None:
    """Select ``per_pair`` controversial natural-sentence pairs per model pair from ``pool``
    (default: the contstim synthesis pool; a repeated line is one sentence) and write them with
    the pool's scores to ``output``/natural.

    ``models``: ``SPEC,SPEC,...`` or ``NAME=SPEC,...`` (:func:`.runner.parse_models`).  ``log``
    receives a line per scored model (default: stderr).  ValueError for bad models or
    ``per_pair``, and from the selection (e.g. too few eligible sentences).  Returns None in a
    process other than 0 of a data-parallel launch.
    """
    from ..scoring.parallel import is_main_process
    from .inputs import load_pool
    from .select_output import write_natural

    entries = parse_models(models)
    if per_pair < 1:
        raise ValueError(f"--per-pair must be a positive integer, got {per_pair}")
    lines, pool_desc = load_pool(pool, datasets_dir)
    sentences = list(dict.fromkeys(lines))
    main = is_main_process()
    log_probs = score_pool(sentences, entries, device=device, dtype=dtype, batch_size=batch_size,
                           use_cache=use_cache, progress=progress and main, datasets_dir=datasets_dir,
                           log=log if main else (lambda msg: None), max_tokens_per_batch=max_tokens_per_batch)
    if not main:
        return None
    write_pool_arrays(Path(output) / POOL_ARRAYS, lines, sentences, log_probs, entries)
    selection = select_natural_pairs(log_probs, [m.name for m in entries], sentences, per_pair, solver=solver)
    folder = write_natural(selection.pairs, sentences, log_probs, entries, Path(output), pool_desc,
                           {"solver": solver, "status": selection.report.status,
                            "objective": selection.objective, "per_pair": per_pair})
    return NaturalRun(folder, selection, entries, sentences, log_probs)
