"""The on-disk score cache: a persistent map ``(fingerprint, method, sentence) -> value`` in SQLite.

Every value a scorer computes is stored with a checksum (:func:`entry_checksum`) and re-checked
on read, so a second run of the same command does no model work and never uses a changed value.

What the cache does with the file ``$CONTSTIM_SCORE_CACHE`` names:

- a missing path or an empty (0-byte) file becomes a new cache;
- an SQLite file that is not a contstim score cache (another program's database: it holds
  tables that are not the cache's, or carries another ``application_id``) is refused with
  :class:`ForeignCacheError`; it is inspected through a read-only connection, so its bytes,
  tables and journal mode stay as they were;
- a cache this process may not write (no write permission on the file or its folder, a
  read-only file system) is used **read-only**: cached scores are read and verified as usual,
  new scores are computed and returned but not stored, and a :class:`ReadOnlyCacheWarning`
  naming the file says so.  A shared read-only cache (a group's, or one shipped with results)
  stays useful, and a healthy file is never reported as damaged.  A cache that does not exist
  yet and cannot be created, or a folder at the path, is a :class:`ScoreCacheError`;
- a file that is not SQLite at all, or an entry that fails its checksum, is a
  :class:`CorruptCacheError` naming the file (its scores are never used).
"""
from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

ENV_SCORE_CACHE = "CONTSTIM_SCORE_CACHE"
APPLICATION_ID = 0x43534243
"""SQLite ``PRAGMA application_id`` that marks a contstim score cache (the bytes ``CSBC``)."""
TABLE = "scores_v2"
"""The table of checksummed entries (v1, ``scores``, had no checksums: its entries are ignored)."""
KNOWN_TABLES = {
    TABLE: ("model", "method", "sentence", "logprob", "checksum"),
    "scores": ("model", "method", "sentence", "logprob"),
}
"""The tables a score cache holds, with their columns: how a cache written before the
:data:`APPLICATION_ID` marker is recognised."""
_NO_CACHE = "run without the cache (`contstim score --no-cache`, `contstim generate synthetic --no-cache`)"


def default_cache_path() -> Path:
    """SQLite file of the score cache (``$CONTSTIM_SCORE_CACHE`` or the user cache)."""
    return Path(
        os.environ.get(ENV_SCORE_CACHE, Path.home() / ".cache" / "contstim_bench" / "scores.sqlite")
    )


class ScoreCacheError(RuntimeError):
    """The score cache file cannot be used; the message names it and the way around it."""

    def __init__(self, path: Path, problem: str, advice: str | None = None):
        self.path = path
        advice = advice or f"Point ${ENV_SCORE_CACHE} at another file, or {_NO_CACHE}"
        super().__init__(f"score cache {path}: {problem}. {advice}")


class CorruptCacheError(ScoreCacheError):
    """The score cache file is unreadable or holds an entry that fails its check; never used."""

    def __init__(self, path: Path, problem: str):
        super().__init__(path, f"{problem}. Its scores are not used",
                         f"Delete the file (it is rebuilt on the next run), point ${ENV_SCORE_CACHE} at "
                         f"another file, or {_NO_CACHE}")


class ForeignCacheError(ScoreCacheError):
    """The file is an SQLite database but not a score cache; nothing in it was changed."""

    def __init__(self, path: Path, problem: str):
        super().__init__(path, f"not a contstim score cache ({problem}); it was left as it was",
                         f"Point ${ENV_SCORE_CACHE} at a score cache, a new path or an empty file, or {_NO_CACHE}")


class ReadOnlyCacheWarning(UserWarning):
    """The score cache can be read but not written: new scores are computed, not stored."""


def entry_checksum(model: str, method: str, sentence: str, value: float) -> str:
    """sha256 (hex) over one cache entry: model fingerprint, method, sentence and the exact float64
    value (:meth:`float.hex`), so that a changed byte in any of them is detected on read."""
    text = "\x00".join((model, method, sentence, float(value).hex()))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _writable(path: Path) -> bool:
    """Whether this process may write ``path`` and create SQLite's ``-wal``/``-shm`` files beside it."""
    effective = os.access in os.supports_effective_ids  # the ids the kernel checks on open
    return (os.access(path.parent, os.W_OK, effective_ids=effective)
            and (not path.exists() or os.access(path, os.W_OK, effective_ids=effective)))


def _read_only_error(exc: sqlite3.Error) -> bool:
    """Whether an SQLite error says the file (or its folder) cannot be written."""
    return getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY") or "readonly database" in str(exc)


def _connect_read_only(path: Path, may_create: bool) -> sqlite3.Connection:
    """A connection that cannot write ``path``.  ``mode=ro`` where that creates no file beside it
    (the WAL's ``-shm`` file is there already) or ``may_create`` (this process writes there
    anyway); else, and where SQLite cannot open the file that way, ``immutable=1``, which reads
    the file as it is on disk and creates nothing (a reader's ``-wal``/``-shm`` files, which a
    read-only connection never removes, could keep the cache's owner from writing it)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    if may_create or Path(f"{path}-shm").exists():
        conn = sqlite3.connect(uri, uri=True, timeout=60, check_same_thread=False)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            if not getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
                raise
    conn = sqlite3.connect(uri + "&immutable=1", uri=True, check_same_thread=False)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return conn


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def check_is_cache(conn: sqlite3.Connection, path: Path) -> set[str]:
    """The tables of an open SQLite database that is a score cache; :class:`ForeignCacheError`
    when it is not: its ``application_id`` is another program's, or (unmarked, as caches written
    before the marker are) it holds anything but the tables of :data:`KNOWN_TABLES` with their
    columns.  An unmarked database that holds nothing becomes a new cache.  Only reads."""
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    if app not in (0, APPLICATION_ID):
        raise ForeignCacheError(path, f"its SQLite application_id is {app:#x}, the score cache's is {APPLICATION_ID:#x}")
    tables, foreign = set(), []
    for kind, name in conn.execute("SELECT type, name FROM sqlite_master ORDER BY type, name").fetchall():
        if name.startswith("sqlite_"):  # SQLite's own (the primary key's index)
            continue
        if kind == "table":
            tables.add(name)
            columns = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({_quoted(name)})"))
            if KNOWN_TABLES.get(name) == columns:
                continue
        foreign.append(f"{kind} {name}")
    if foreign and app != APPLICATION_ID:
        raise ForeignCacheError(path, "it holds " + ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else ""))
    return tables


class ScoreCache:
    """Persistent map ``(fingerprint, method, sentence) -> value`` in SQLite (WAL), each entry
    stored with its :func:`entry_checksum`; which files it takes: see the module docstring.

    ``fingerprint`` is the scorer's content fingerprint (a hash of the weights or model file and
    the settings that change values), so a model retrained at the same path gets new entries.
    Safe for several processes; values are float64 stored as REAL (IEEE double, exact).  Reading
    re-checks every entry: a failed checksum or a non-finite value raises
    :class:`CorruptCacheError` naming the file, and so does an SQLite error (a corrupt file):
    a damaged cache is never used silently.  :attr:`read_only` is True when the file can only
    be read; :attr:`n_not_stored` counts the values left unstored for that reason.
    """

    TABLE = TABLE

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        if self.path.is_dir():
            raise ScoreCacheError(self.path, "is a folder, not an SQLite file")
        self._lock = threading.Lock()
        self._tables: set[str] = set()
        self.read_only = False
        self.n_not_stored = 0
        if not self.path.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ScoreCacheError(self.path, f"does not exist and its folder cannot be created ({exc})") from None
            if not _writable(self.path):
                raise ScoreCacheError(self.path, f"does not exist and cannot be created (the folder "
                                                 f"{self.path.parent} is not writable)")
        with self._sqlite("cannot be opened"):
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        """:meth:`_open_once`, retried for up to 60 s while the file is locked: several processes
        opening a new file at once (a data-parallel launch) can see "database is locked", since
        switching the journal mode does not wait on SQLite's busy handler."""
        deadline = time.monotonic() + 60
        while True:
            try:
                return self._open_once()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _open_once(self) -> sqlite3.Connection:
        """Check an existing file through a read-only connection (:func:`check_is_cache`), then
        open it for writing (WAL, the :data:`APPLICATION_ID` marker, the table) or, where this
        process may not write it, for reading only."""
        if self.path.exists() and self.path.stat().st_size > 0:
            probe = _connect_read_only(self.path, may_create=_writable(self.path))
            try:
                self._tables = check_is_cache(probe, self.path)
            finally:
                probe.close()
        if _writable(self.path):
            conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            try:
                self._tables = check_is_cache(conn, self.path)  # another process may have written it since
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.TABLE} (model TEXT NOT NULL, method TEXT NOT NULL, "
                    "sentence TEXT NOT NULL, logprob REAL NOT NULL, checksum TEXT NOT NULL, "
                    "PRIMARY KEY (model, method, sentence))"
                )
                conn.commit()
                self._tables.add(self.TABLE)
                return conn
            except BaseException as exc:
                conn.close()
                if not (isinstance(exc, sqlite3.OperationalError) and _read_only_error(exc)):
                    raise
        conn = _connect_read_only(self.path, may_create=False)
        self._now_read_only(stacklevel=5)
        return conn

    def _now_read_only(self, stacklevel: int) -> None:
        """Use the file for reading only from now on, with a warning naming it (``stacklevel``:
        the warning points at the caller of the public method, as :func:`warnings.warn`'s)."""
        self.read_only = True
        warnings.warn(
            f"score cache {self.path} is read-only (this process may not write the file or its folder): "
            f"cached scores are read from it, new scores are computed but not stored. Make it writable "
            f"or point ${ENV_SCORE_CACHE} at a writable file to keep them", ReadOnlyCacheWarning, stacklevel=stacklevel)

    def _sqlite(self, what: str):
        """Context manager turning an SQLite error into :class:`CorruptCacheError`."""
        return _SqliteErrors(self.path, what)

    def get_many(self, model: str, method: str, sentences: Sequence[str]) -> dict[str, float]:
        """Cached values of those ``sentences`` that have one, each verified (checksum, finite)."""
        found: dict[str, float] = {}
        if self.TABLE not in self._tables:  # a read-only file that never held a checksummed entry
            return found
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
        """Store values with their checksums.  On a read-only cache (also one found read-only
        only now, e.g. its permissions changed during the run) nothing is stored and
        :attr:`n_not_stored` grows: the values stay the caller's to use."""
        rows = [(model, method, s, float(v), entry_checksum(model, method, s, float(v))) for s, v in items.items()]
        with self._lock:
            if not self.read_only:
                try:
                    self._conn.executemany(f"INSERT OR REPLACE INTO {self.TABLE} VALUES (?, ?, ?, ?, ?)", rows)
                    self._conn.commit()
                    return
                except sqlite3.Error as exc:
                    if not _read_only_error(exc):
                        raise CorruptCacheError(self.path, f"cannot be written ({type(exc).__name__}: {exc})") from None
                    self._conn.rollback()
                    self._now_read_only(stacklevel=3)
            self.n_not_stored += len(rows)

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
