"""A natural-pair selection run (``contstim generate natural``): score a natural-sentence pool
with every model, select controversial pairs by integer programming (Eq. 5-6,
:func:`contstim_bench.generate.natural_ilp.select_natural_pairs`) for every pair of
``--models`` or each candidate against each reference (:mod:`.pairing`), and write
``OUTPUT/natural`` (:func:`contstim_bench.generate.select_output.write_natural`).

Models that only look up stored values (``precomputed:NAME``, a
:class:`~contstim_bench.scoring.protocols.SentenceLookup`) score the pool sentences they have a
value for: the contstim stimuli, the selection pool when it was built into the dataset, or every
line of a ``--pool FILE`` that is the upstream 231,725-sentence selection pool (its ``.npy``
arrays, :func:`contstim_bench.scoring.precomputed.pool_file_log_probs`).  A pool sentence without
a value is an error listing it, unless ``restrict_to_scorable`` keeps only the sentences every
model can score (checked before any network model runs).

Each model's pool scores are written as ``OUTPUT/pool_arrays/<model>.npy``: one float64 per line
of ``OUTPUT/pool_arrays/pool.txt`` (the pool's lines that were kept), the upstream
precomputed-pool layout, so that
``precomputed:OUTPUT/pool_arrays/<model>.npy?sentences=OUTPUT/pool_arrays/pool.txt`` is a model.
Under ``accelerate launch --num_processes N -m contstim_bench generate natural ...`` the pool's
sentences are scored data-parallel (:mod:`contstim_bench.scoring.parallel`, resumable from the
score cache) and process 0 solves the selection and writes the outputs.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..scoring.run_options import RunOptions
from .natural_ilp import NaturalPairSelection, select_natural_pairs
from .pairing import ModelEntry

class NothingScorable(ValueError):
    """No pool sentence has a value in every model that only looks values up (``precomputed:``)."""


MODELS_FILE = "models.json"
"""Written beside ``OUTPUT/natural``: the run's models (name, spec, role) and contrasted pairs."""


@dataclass(frozen=True)
class NaturalRun:
    """What :func:`select_natural` wrote: the dataset ``folder``, the ILP ``selection``, the
    de-duplicated pool ``sentences`` that were scored (all of them, or those every model can
    score) with their ``log_probs`` (n_sentences x n_models, nats), and ``n_pool`` (distinct
    sentences of the pool before any restriction)."""

    folder: Path
    selection: NaturalPairSelection
    models: list[ModelEntry]
    sentences: list[str]
    log_probs: np.ndarray
    n_pool: int = 0


def _lookup_tables(lines: Sequence[str], pool_file: str | None, models: Sequence[ModelEntry], options: RunOptions,
                   datasets_dir, log) -> dict[int, dict[str, float] | object]:
    """For every lookup model (index -> values): the ``.npy`` values of a pool file that is the
    upstream selection pool, or the loaded :class:`SentenceLookup` scorer (a lookup runs on no
    device: ``options`` without device and dtype)."""
    from ..scoring.precomputed import pool_file_log_probs
    from ..scoring.protocols import SentenceLookup
    from ..scoring.registry import load_scorer
    from ..scoring.spec import ModelSpec

    out: dict[int, dict[str, float] | object] = {}
    for k, m in enumerate(models):
        ms = ModelSpec.parse(m.spec)
        if ms.family_info.scores_any_sentence:
            continue
        arrays = pool_file_log_probs(ms.target, pool_file) if pool_file is not None and not ms.options else None
        if arrays is not None:
            values: dict[str, float] = {}
            for line, value in zip(lines, arrays):
                values.setdefault(line, float(value))
            out[k] = values
            log(f"{m.name}: {len(values)} values from the upstream arrays aligned with {pool_file}")
            continue
        scorer = load_scorer(m.spec, replace(options, device=None, dtype=None), datasets_dir=datasets_dir)
        if not isinstance(scorer, SentenceLookup):  # pragma: no cover - every lookup family implements it
            raise TypeError(f"{m.spec} cannot score new sentences but is no SentenceLookup")
        out[k] = scorer
    return out


def _coverage(lookup, sentences: Sequence[str]) -> np.ndarray:
    if isinstance(lookup, dict):
        return np.array([s in lookup for s in sentences], dtype=bool)
    return np.asarray(lookup.can_score(list(sentences)), dtype=bool)


def score_pool(sentences: Sequence[str], models: Sequence[ModelEntry], *, options: RunOptions = RunOptions(),
               datasets_dir: str | os.PathLike | None = None, restrict_to_scorable: bool = False,
               pool_lines: Sequence[str] | None = None, pool_file: str | None = None,
               log: Callable[[str], None] | None = None) -> tuple[list[str], np.ndarray]:
    """(kept sentences, natural-log probabilities: float64 array (n_kept, n_models), column k
    for ``models[k]``).  Network models are loaded one at a time, as ``options`` say
    (:func:`~contstim_bench.scoring.registry.load_scorer`), and, under ``accelerate
    launch``, score the pool data-parallel.

    Lookup models (``precomputed:``) are checked first: a sentence one of them has no value for
    is dropped when ``restrict_to_scorable`` and an error listing the sentences otherwise.
    ``pool_lines``/``pool_file``: the pool's lines and file, for the upstream arrays aligned with
    the selection pool's lines.
    """
    from ..scoring.parallel import data_parallel
    from ..scoring.precomputed import missing_error
    from ..scoring.registry import load_scorer

    log = log or (lambda msg: print(msg, file=sys.stderr))
    sentences = list(sentences)
    lookups = _lookup_tables(pool_lines or sentences, pool_file, models, options, datasets_dir, log)
    keep = np.ones(len(sentences), dtype=bool)
    for k, lookup in lookups.items():
        covered = _coverage(lookup, sentences)
        if not covered.all() and not restrict_to_scorable:
            missing = [s for s, ok in zip(sentences, covered) if not ok]
            raise missing_error(_reference_name(models[k]), missing, len(sentences))
        keep &= covered
    if restrict_to_scorable and lookups:
        log(f"restricted the pool to the {int(keep.sum())} of {len(sentences)} sentences every model can score")
        if not keep.any():
            raise NothingScorable("no pool sentence can be scored by every model: "
                             + ", ".join(models[k].spec for k in lookups) + " have no value for any of them")
    kept = [s for s, ok in zip(sentences, keep) if ok]
    columns = []
    for k, m in enumerate(models):
        if isinstance(lookups.get(k), dict):
            values = np.array([lookups[k][s] for s in kept], dtype=np.float64)
        else:
            scorer = lookups.get(k) or load_scorer(m.spec, options, datasets_dir=datasets_dir)
            with data_parallel():  # under accelerate launch: the pool split across the processes
                values = np.asarray(scorer.score(kept), dtype=np.float64)
        columns.append(values)
        log(f"scored {len(kept)} pool sentences with {m.name}")
    return kept, np.stack(columns, axis=1)


def _reference_name(entry: ModelEntry) -> str:
    """The ``NAME`` of a ``precomputed:NAME`` entry (errors name the reference model)."""
    from ..scoring.spec import ModelSpec

    return ModelSpec.parse(entry.spec).target


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


def select_natural(models: str | Sequence[str] | None, output: str | os.PathLike, *, pool: str | None = None,
                   per_pair: int = 10, solver: str = "cbc", options: RunOptions = RunOptions(),
                   datasets_dir: str | os.PathLike | None = None, candidates: str | Sequence[str] | None = None,
                   references: str | Sequence[str] | None = None, restrict_to_scorable: bool = False,
                   log: Callable[[str], None] | None = None,
                   pairs: Sequence[tuple[str, str]] | None = None) -> NaturalRun | None:
    """Select ``per_pair`` controversial natural-sentence pairs per model pair from ``pool``
    (default: the held-out ``start`` part of the contstim synthesis pool; a repeated line is one
    sentence) and write them with the pool's scores to ``output``/natural, and the models with
    their roles to ``output``/models.json.

    ``models``: ``SPEC,SPEC,...`` or ``NAME=SPEC,...`` (every pair), or ``candidates`` and
    ``references`` (each candidate against each reference; :func:`.pairing.pairing`).
    ``restrict_to_scorable``: keep only pool sentences every model can score (see
    :func:`score_pool`).  ``pairs``: the model pairs (names) to select for, a subset of the
    pairing's (a planned round's target pairs; default: all of them).  ``options``: how the models run (:class:`RunOptions`).  ``log``
    receives a line per scored model (default: stderr).
    ValueError for bad models or ``per_pair``, and from the selection (e.g. too few eligible
    sentences).  Returns None in a process other than 0 of a data-parallel launch.
    """
    from ..scoring.parallel import is_main_process
    from .inputs import load_pool
    from .pairing import pairing
    from .synthetic_run import write_json_atomic
    from .select_output import write_natural

    chosen = pairing(models, candidates=candidates, references=references)
    if pairs is not None:
        chosen = _only(chosen, pairs)
    entries = chosen.models
    if per_pair < 1:
        raise ValueError(f"`contstim generate natural --per-pair` must be a positive integer, got {per_pair}")
    lines, pool_desc = load_pool(pool, datasets_dir)
    sentences = list(dict.fromkeys(lines))
    pool_file = str(Path(pool).expanduser()) if pool is not None and Path(pool).expanduser().is_file() else None
    main = is_main_process()
    kept, log_probs = score_pool(sentences, entries, options=replace(options, progress=options.progress and main),
                                 datasets_dir=datasets_dir, restrict_to_scorable=restrict_to_scorable,
                                 pool_lines=lines, pool_file=pool_file, log=log if main else (lambda msg: None))
    if not main:
        return None
    kept_set = set(kept)
    write_pool_arrays(Path(output) / POOL_ARRAYS, [ln for ln in lines if ln in kept_set], kept, log_probs, entries)
    selection = select_natural_pairs(log_probs, [m.name for m in entries], kept, per_pair, solver=solver,
                                     model_pairs=chosen.name_pairs())
    if len(kept) < len(sentences):
        pool_desc += f" (restricted to the {len(kept)} of {len(sentences)} distinct sentences every model can score)"
    folder = write_natural(selection.pairs, kept, log_probs, entries, Path(output), pool_desc,
                           {"solver": solver, "status": selection.report.status,
                            "objective": selection.objective, "per_pair": per_pair})
    write_json_atomic(Path(output) / MODELS_FILE, models_record(chosen))
    return NaturalRun(folder, selection, entries, kept, log_probs, len(sentences))


def _only(chosen, pairs: Sequence[tuple[str, str]]):
    """``chosen`` contrasting only ``pairs`` (ValueError for a pair it does not hold)."""
    from dataclasses import replace

    index = {m.name: i for i, m in enumerate(chosen.models)}
    wanted = []
    for a, b in pairs:
        if a not in index or b not in index:
            raise ValueError(f"model pair {a} vs {b} is not among the models {sorted(index)}")
        wanted.append(tuple(sorted((index[a], index[b]))))
    return replace(chosen, pairs=[p for p in chosen.pairs if p in set(wanted)])


def models_record(chosen) -> dict:
    """``{"models": [{name, spec, role}], "pairs": [[m1, m2], ...]}`` of a :class:`.pairing.Pairing`
    (role ``null`` for ``--models``)."""
    return {
        "models": [{"name": m.name, "spec": m.spec, "role": chosen.roles.get(m.name)} for m in chosen.models],
        "pairs": [list(p) for p in chosen.name_pairs()],
    }
