"""The scorer interface shared by every model family.

A scorer maps sentences to float64 **natural-log probabilities** (one per sentence, in input
order).  Subclasses implement :meth:`Scorer._score_unique` on a list of distinct sentences;
:meth:`Scorer.score` adds validation, de-duplication (a repeated sentence is scored once) and an
on-disk cache (:mod:`.cache`) keyed by ``(fingerprint, method, sentence)``, so that a second run
of the same command does no model work.
"""
from __future__ import annotations

import abc
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import file_memo
from .run_options import RunOptions


@dataclass(frozen=True)
class LoadSettings:
    """What :func:`~.registry.load_scorer` hands a model family's factory, ``from_spec(target,
    options, load)``, besides the spec's target and options: the family (``kind``), the run's
    ``options`` (:class:`~.run_options.RunOptions`, whole: the network's ``device`` and ``dtype``
    with the spec's own merged in, None for the family's default; ``batch_size``;
    ``max_tokens_per_batch``; the score ``cache``; ``progress`` bars) and, for families that read
    built datasets, ``datasets_dir``.  A family uses what applies to it (a KenLM model has no
    device)."""

    kind: str
    options: RunOptions = RunOptions()
    datasets_dir: Any = None


from .cache import ScoreCache, CorruptCacheError
from .cache import ENV_SCORE_CACHE, default_cache_path, entry_checksum  # noqa: F401  (their home until .cache)


def validate_sentences(sentences) -> list[str]:
    """Return ``sentences`` as a list of str; TypeError/ValueError name the bad entry."""
    if isinstance(sentences, str):
        raise TypeError("expected a sequence of sentences, got a single str")
    out = list(sentences)
    for i, s in enumerate(out):
        if not isinstance(s, str):
            raise TypeError(f"sentence {i} is {type(s).__name__}, not str: {s!r}")
        if not s.strip():
            raise ValueError(f"sentence {i} is empty")
    return out


def resolve_cache(cache: "ScoreCache | None | bool") -> "ScoreCache | None":
    """``None``/``True``: the default on-disk cache; ``False``: no cache; a ScoreCache: itself."""
    if cache is False:
        return None
    if cache is None or cache is True:
        return ScoreCache()
    return cache


class Scorer(abc.ABC):
    """Base class of every sentence scorer.

    Subclasses set :attr:`spec` (the model spec string it was built from) and implement
    :meth:`fingerprint` (identifies the exact weights/files, e.g. a hash of the weights or the
    model file) and :meth:`_score_unique`.  ``method`` names the read-out (``causal``, ``pll``,
    ``approx-ll``, ...) and is part of the cache key.
    """

    spec: str = ""
    #: the spec as the user typed it (e.g. ``smollm2-135m`` for ``hf-causal:smollm2-135m``)
    spec_typed: str = ""
    method: str = ""
    #: whether the scorer is deterministic (cacheable); sampled methods include their seed in
    #: ``method`` so that they stay cacheable
    cacheable: bool = True

    def __init__(self, cache: ScoreCache | None | bool = None, progress: bool = True):
        self.cache = resolve_cache(cache)
        self.progress = progress
        #: number of sentences actually sent to the model (not served from the cache)
        self.n_model_sentences = 0

    @abc.abstractmethod
    def fingerprint(self) -> str:
        """Stable id of the exact model (weights hash or file hash plus relevant settings)."""

    @abc.abstractmethod
    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        """Natural-log probabilities (float64) of distinct, validated sentences, in order."""

    def describe(self) -> dict:
        """Provenance of the scorer for result files (override to add dtype, device, ...)."""
        return {"spec": self.spec, "spec_typed": self.spec_typed or self.spec, "method": self.method,
                "fingerprint": self.fingerprint()}

    def score(self, sentences: Sequence[str]) -> np.ndarray:
        """Natural-log probability of each sentence (float64, input order).

        Repeated sentences are scored once; cached scores are reused (each re-checked on read).
        A non-finite or positive score from the model raises ValueError naming the sentence
        (nothing is cached then).
        """
        sents = validate_sentences(sentences)
        cache = self.cache if self.cacheable else None
        from .parallel import BatchPlanner

        plan = self.plan_batches if isinstance(self, BatchPlanner) else None
        values, n_computed = cached_values(self, cache, self.method, sents, self._score_unique,
                                           what="log-probability", max_value=LOGPROB_MAX, plan=plan)
        self.n_model_sentences += n_computed
        return values


LOGPROB_MAX = 0.0
"""Largest valid natural-log probability of a sentence (log 1)."""


def cached_values(owner, cache: "ScoreCache | None", method: str, keys: Sequence[str], compute,
                  what: str = "score", max_value: float | None = None, plan=None) -> tuple[np.ndarray, int]:
    """(float64 values of ``keys`` in input order, number of keys computed): each distinct key
    computed once by ``compute(list_of_keys)``, looked up in and stored to ``cache`` under
    ``(owner.fingerprint(), method, key)``.

    Shared by every scorer kind (log-probabilities, prompted judgments, pair choices), so that
    de-duplication, caching and the value checks live in one place.  Every value, computed or
    read from the cache, must be finite and, when ``max_value`` is given (log-probabilities:
    :data:`LOGPROB_MAX`), at most ``max_value``: a bad computed value raises ValueError naming
    its key (nothing is cached then); a bad cached one :class:`CorruptCacheError` naming the
    cache file (its checksum and finiteness are checked by :meth:`ScoreCache.get_many`).

    Inside :func:`.parallel.data_parallel` under ``accelerate launch`` with several processes the
    keys to compute are split across them
    (:func:`.parallel.shared_values`; ``plan`` groups keys into the batches ``compute`` forms, so
    that each process forms the same batches as one process would) and every process returns
    every value, checked as above; the count is then of the keys computed by all processes.
    """
    unique = list(dict.fromkeys(keys))
    from .parallel import shared_values, sharding

    if sharding():
        known, n = shared_values(owner, cache, method, unique, compute, plan=plan, what=what)
        bad = [k for k in unique if not np.isfinite(known[k]) or (max_value is not None and known[k] > max_value)]
        if bad:
            raise ValueError(f"{owner.spec}: {what} of sentence {bad[0]!r} is {known[bad[0]]!r}: not finite"
                             + (f" or above {max_value}" if max_value is not None else ""))
        return np.array([known[k] for k in keys], dtype=np.float64), n
    known: dict[str, float] = {}
    fp = owner.fingerprint() if cache is not None else ""
    if cache is not None:
        known = cache.get_many(fp, method, unique)
        if max_value is not None:
            above = [k for k, v in known.items() if v > max_value]
            if above:
                raise CorruptCacheError(cache.path, f"the cached {what} of sentence {above[0]!r} "
                                                    f"(method {method}) is {known[above[0]]!r}, above {max_value}")
    todo = [k for k in unique if k not in known]
    if todo:
        values = np.asarray(compute(todo), dtype=np.float64)
        if values.shape != (len(todo),):
            raise RuntimeError(f"{type(owner).__name__} returned {values.shape} scores for {len(todo)} inputs")
        bad = [todo[i] for i in np.flatnonzero(~np.isfinite(values))]
        if bad:
            raise ValueError(f"{owner.spec}: non-finite {what} for sentence {bad[0]!r}")
        if max_value is not None:
            above = [i for i in np.flatnonzero(values > max_value)]
            if above:
                i = int(above[0])
                raise ValueError(f"{owner.spec}: {what} {values[i]!r} of sentence {todo[i]!r} is above "
                                 f"{max_value} (a natural-log probability is at most 0)")
        fresh = dict(zip(todo, values.tolist()))
        if cache is not None:
            cache.put_many(fp, method, fresh)
        known.update(fresh)
    return np.array([known[k] for k in keys], dtype=np.float64), len(todo)


def hash_files(paths: Sequence[str | os.PathLike], extra: dict | None = None) -> str:
    """sha256 over the bytes of ``paths`` (in order) and a JSON of ``extra`` settings (hex).  The
    files are read once per process while they stay the same (:func:`.file_memo.digest`)."""
    paths = list(paths)
    settings = json.dumps(extra, sort_keys=True).encode() if extra else b""

    def compute() -> str:
        h = hashlib.sha256()
        for p in paths:
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        h.update(settings)
        return h.hexdigest()

    return file_memo.digest(paths, ("sha256", settings), compute)


def length_sorted_batches(lengths: Sequence[int], batch_size: int | None,
                          max_tokens: int | None = None) -> list[list[int]]:
    """Indices grouped into batches of similar length (longest first), for padding efficiency.

    ``batch_size``: at most that many items per batch (None: no count limit, ``max_tokens``
    then required).  ``max_tokens``: at most that many padded positions per batch (items x
    the batch's longest length); an item longer than the budget is a batch of its own.
    Scoring the items of one batch on their own gives that batch again (what data-parallel
    scoring relies on).
    """
    if batch_size is None and max_tokens is None:
        raise ValueError("length_sorted_batches needs batch_size or max_tokens")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    if max_tokens is None:
        return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:  # longest first: the first item of a batch sets its padded width
        full = batch_size is not None and len(current) >= batch_size
        if current and (full or (len(current) + 1) * lengths[current[0]] > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches
