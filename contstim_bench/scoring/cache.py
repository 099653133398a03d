"""The on-disk score cache: a persistent map ``(fingerprint, method, sentence) -> value`` in SQLite.

Every value a scorer computes is stored with a checksum (:func:`entry_checksum`) and re-checked
on read, so a second run of the same command does no model work and never uses a changed value.
"""
from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

ENV_SCORE_CACHE = "CONTSTIM_SCORE_CACHE"


def default_cache_path() -> Path:
    """SQLite file of the score cache (``$CONTSTIM_SCORE_CACHE`` or the user cache)."""
    return Path(
        os.environ.get(ENV_SCORE_CACHE, Path.home() / ".cache" / "contstim_bench" / "scores.sqlite")
    )


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
