"""The scorer interface shared by every model family.

A scorer maps sentences to float64 **natural-log probabilities** (one per sentence, in input
order).  Subclasses implement :meth:`Scorer._score_unique` on a list of distinct sentences;
:meth:`Scorer.score` adds validation, de-duplication (a repeated sentence is scored once) and an
on-disk cache keyed by ``(fingerprint, method, sentence)``, so that a second run of the same
command does no model work.
"""
from __future__ import annotations

import abc
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ENV_SCORE_CACHE = "CONTSTIM_SCORE_CACHE"


def default_cache_path() -> Path:
    """SQLite file of the score cache (``$CONTSTIM_SCORE_CACHE`` or the user cache)."""
    return Path(
        os.environ.get(ENV_SCORE_CACHE, Path.home() / ".cache" / "contstim_bench" / "scores.sqlite")
    )


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


class ScoreCache:
    """Persistent map ``(fingerprint, method, sentence) -> log-probability`` in SQLite (WAL).

    Safe for several processes; values are float64 stored as REAL (IEEE double, exact).
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS scores (model TEXT NOT NULL, method TEXT NOT NULL, "
            "sentence TEXT NOT NULL, logprob REAL NOT NULL, PRIMARY KEY (model, method, sentence))"
        )
        self._conn.commit()

    def get_many(self, model: str, method: str, sentences: Sequence[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        with self._lock:
            cur = self._conn.cursor()
            for start in range(0, len(sentences), 500):
                chunk = list(sentences[start : start + 500])
                q = ",".join("?" * len(chunk))
                for s, lp in cur.execute(
                    f"SELECT sentence, logprob FROM scores WHERE model=? AND method=? AND sentence IN ({q})",
                    [model, method, *chunk],
                ):
                    found[s] = lp
        return found

    def put_many(self, model: str, method: str, items: dict[str, float]) -> None:
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)",
                [(model, method, s, float(v)) for s, v in items.items()],
            )
            self._conn.commit()

    def close(self) -> None:
        self._conn.close()


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

        Repeated sentences are scored once; cached scores are reused.  A non-finite score from
        the model raises ValueError naming the sentence (nothing is cached then).
        """
        sents = validate_sentences(sentences)
        cache = self.cache if self.cacheable else None
        from .parallel import BatchPlanner

        plan = self.plan_batches if isinstance(self, BatchPlanner) else None
        values, n_computed = cached_values(self, cache, self.method, sents, self._score_unique,
                                           what="log-probability", plan=plan)
        self.n_model_sentences += n_computed
        return values


def cached_values(owner, cache: "ScoreCache | None", method: str, keys: Sequence[str], compute,
                  what: str = "score", plan=None) -> tuple[np.ndarray, int]:
    """(float64 values of ``keys`` in input order, number of keys computed): each distinct key
    computed once by ``compute(list_of_keys)``, looked up in and stored to ``cache`` under
    ``(owner.fingerprint(), method, key)``.

    Shared by every scorer kind (log-probabilities, prompted judgments, pair choices), so that
    de-duplication, caching and the finite check live in one place.  A non-finite computed value
    raises ValueError naming its key (nothing is cached then).

    Inside :func:`.parallel.data_parallel` under ``accelerate launch`` with several processes the
    keys to compute are split across them
    (:func:`.parallel.shared_values`; ``plan`` groups keys into the batches ``compute`` forms, so
    that each process forms the same batches as one process would) and every process returns
    every value; the count is then of the keys computed by all processes.
    """
    unique = list(dict.fromkeys(keys))
    from .parallel import shared_values, sharding

    if sharding():
        known, n = shared_values(owner, cache, method, unique, compute, plan=plan, what=what)
        return np.array([known[k] for k in keys], dtype=np.float64), n
    known: dict[str, float] = {}
    fp = owner.fingerprint() if cache is not None else ""
    if cache is not None:
        known = cache.get_many(fp, method, unique)
    todo = [k for k in unique if k not in known]
    if todo:
        values = np.asarray(compute(todo), dtype=np.float64)
        if values.shape != (len(todo),):
            raise RuntimeError(f"{type(owner).__name__} returned {values.shape} scores for {len(todo)} inputs")
        bad = [todo[i] for i in np.flatnonzero(~np.isfinite(values))]
        if bad:
            raise ValueError(f"{owner.spec}: non-finite {what} for sentence {bad[0]!r}")
        fresh = dict(zip(todo, values.tolist()))
        if cache is not None:
            cache.put_many(fp, method, fresh)
        known.update(fresh)
    return np.array([known[k] for k in keys], dtype=np.float64), len(todo)


def hash_files(paths: Sequence[str | os.PathLike], extra: dict | None = None) -> str:
    """sha256 over the bytes of ``paths`` (in order) and a JSON of ``extra`` settings."""
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    if extra:
        h.update(json.dumps(extra, sort_keys=True).encode())
    return h.hexdigest()


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
