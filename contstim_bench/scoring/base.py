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
import math
import os
import sqlite3
import threading
import time
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


class CorruptCacheError(RuntimeError):
    """The score cache file is unreadable or holds an entry that fails its check; never used."""

    def __init__(self, path: Path, problem: str):
        self.path = path
        super().__init__(
            f"score cache {path}: {problem}. Its scores are not used. Delete the file (it is rebuilt "
            f"on the next run), point ${ENV_SCORE_CACHE} at another file, or run without the cache "
            f"(`contstim score --no-cache`, `contstim generate synthetic --no-cache`)"
        )


def entry_checksum(model: str, method: str, sentence: str, value: float) -> str:
    """sha256 (hex) over one cache entry: model fingerprint, method, sentence and the exact float64
    value (:meth:`float.hex`), so that a changed byte in any of them is detected on read."""
    text = "\x00".join((model, method, sentence, float(value).hex()))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ScoreCache:
    """Persistent map ``(fingerprint, method, sentence) -> value`` in SQLite (WAL), each entry
    stored with its :func:`entry_checksum`.

    ``fingerprint`` is the scorer's content fingerprint (a hash of the weights or model file and
    the settings that change values), so a model retrained at the same path gets new entries.
    Safe for several processes; values are float64 stored as REAL (IEEE double, exact).  Reading
    re-checks every entry: a failed checksum or a non-finite value raises
    :class:`CorruptCacheError` naming the file, and so does an SQLite error (a corrupt or
    foreign file): a damaged cache is never used silently.
    """

    TABLE = "scores_v2"  # v1 (no checksums) is ignored: its entries are recomputed once

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        if self.path.is_dir():
            raise CorruptCacheError(self.path, "is a folder, not an SQLite file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._sqlite("cannot be opened"):
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        """Connect, switch to WAL and create the table.  Several processes opening a new file at
        once (a data-parallel launch) can see "database is locked" here: switching the journal
        mode does not wait on SQLite's busy handler, so the open is retried for up to 60 s."""
        deadline = time.monotonic() + 60
        while True:
            conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.TABLE} (model TEXT NOT NULL, method TEXT NOT NULL, "
                    "sentence TEXT NOT NULL, logprob REAL NOT NULL, checksum TEXT NOT NULL, "
                    "PRIMARY KEY (model, method, sentence))"
                )
                conn.commit()
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _sqlite(self, what: str):
        """Context manager turning an SQLite error into :class:`CorruptCacheError`."""
        return _SqliteErrors(self.path, what)

    def get_many(self, model: str, method: str, sentences: Sequence[str]) -> dict[str, float]:
        """Cached values of those ``sentences`` that have one, each verified (checksum, finite)."""
        found: dict[str, float] = {}
        with self._lock, self._sqlite("cannot be read"):
            cur = self._conn.cursor()
            for start in range(0, len(sentences), 500):
                chunk = list(sentences[start : start + 500])
                q = ",".join("?" * len(chunk))
                for s, lp, checksum in cur.execute(
                    f"SELECT sentence, logprob, checksum FROM {self.TABLE} "
                    f"WHERE model=? AND method=? AND sentence IN ({q})",
                    [model, method, *chunk],
                ):
                    if not isinstance(lp, float) or checksum != entry_checksum(model, method, s, lp):
                        raise CorruptCacheError(
                            self.path, f"the entry of sentence {s!r} (method {method}) fails its checksum "
                                       f"(value {lp!r}): the file was modified or damaged")
                    if not math.isfinite(lp):
                        raise CorruptCacheError(self.path, f"the entry of sentence {s!r} (method {method}) "
                                                           f"is not finite ({lp!r})")
                    found[s] = lp
        return found

    def put_many(self, model: str, method: str, items: dict[str, float]) -> None:
        rows = [(model, method, s, float(v), entry_checksum(model, method, s, float(v))) for s, v in items.items()]
        with self._lock, self._sqlite("cannot be written"):
            self._conn.executemany(f"INSERT OR REPLACE INTO {self.TABLE} VALUES (?, ?, ?, ?, ?)", rows)
            self._conn.commit()

    def close(self) -> None:
        self._conn.close()


class _SqliteErrors:
    def __init__(self, path: Path, what: str):
        self.path = path
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, sqlite3.Error):
            raise CorruptCacheError(self.path, f"{self.what} ({type(exc).__name__}: {exc})") from None
        return False


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
