"""A natural-pair selection run (``contstim generate natural``): score a natural-sentence pool
with every model, select controversial pairs by integer programming (Eq. 5-6,
:func:`contstim_bench.generate.natural_ilp.select_natural_pairs`) and write ``OUTPUT/natural``
(:func:`contstim_bench.generate.select_output.write_natural`)."""
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
               log: Callable[[str], None] | None = None) -> np.ndarray:
    """Natural-log probabilities of ``sentences`` under each model: float64 array
    (n_sentences, n_models), column k for ``models[k]`` (loaded one at a time)."""
    from ..scoring.base import ScoreCache
    from ..scoring.registry import load_scorer

    log = log or (lambda msg: print(msg, file=sys.stderr))
    cache = ScoreCache() if use_cache else False
    columns = []
    for m in models:
        scorer = load_scorer(m.spec, device=device, dtype=dtype, datasets_dir=datasets_dir,
                             batch_size=batch_size, cache=cache, progress=progress)
        columns.append(np.asarray(scorer.score(list(sentences)), dtype=np.float64))
        log(f"scored {len(sentences)} pool sentences with {m.name}")
    return np.stack(columns, axis=1)


def select_natural(models: str | Sequence[str], output: str | os.PathLike, *, pool: str | None = None,
                   per_pair: int = 10, solver: str = "cbc", device=None, dtype=None,
                   batch_size: int | None = None, use_cache: bool = True, progress: bool = True,
                   datasets_dir: str | os.PathLike | None = None,
                   log: Callable[[str], None] | None = None) -> NaturalRun:
    """Select ``per_pair`` controversial natural-sentence pairs per model pair from ``pool``
    (default: the contstim synthesis pool; a repeated line is one sentence) and write them with
    the pool's scores to ``output``/natural.

    ``models``: ``SPEC,SPEC,...`` or ``NAME=SPEC,...`` (:func:`.runner.parse_models`).  ``log``
    receives a line per scored model (default: stderr).  ValueError for bad models or
    ``per_pair``, and from the selection (e.g. too few eligible sentences).
    """
    from .inputs import load_pool
    from .select_output import write_natural

    entries = parse_models(models)
    if per_pair < 1:
        raise ValueError(f"--per-pair must be a positive integer, got {per_pair}")
    lines, pool_desc = load_pool(pool, datasets_dir)
    sentences = list(dict.fromkeys(lines))
    log_probs = score_pool(sentences, entries, device=device, dtype=dtype, batch_size=batch_size,
                           use_cache=use_cache, progress=progress, datasets_dir=datasets_dir, log=log)
    selection = select_natural_pairs(log_probs, [m.name for m in entries], sentences, per_pair, solver=solver)
    folder = write_natural(selection.pairs, sentences, log_probs, entries, Path(output), pool_desc,
                           {"solver": solver, "status": selection.report.status,
                            "objective": selection.objective, "per_pair": per_pair})
    return NaturalRun(folder, selection, entries, sentences, log_probs)
