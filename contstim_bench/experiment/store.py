"""The response database of a running experiment (SQLite, WAL mode, one transaction per write).

Tables:

- ``meta(key, value)``: ``experiment_id``, ``title``, ``randomize_order``, ``randomize_sides``,
  ``created_at`` (UTC ISO 8601), ``schema_version``, and ``assignment_seed`` when the server
  was started with one (dry runs only: a seed makes groups, trial orders and sides predictable).
- ``design_trials``: the design rows (:data:`contstim_bench.data.design_file.DESIGN_COLUMNS`,
  ``group`` stored as ``group_id``), copied from the export so that the database alone can be
  ingested.
- ``participants(id, token_sha256, group_id, external_id, created_at)``: only the sha256 of a
  participant's token is stored (the token itself is a credential held by the browser, the only
  one: a participant resumes by presenting it); one row per platform id (``external_id``): a
  second sign-up with a known id is refused, and a row's token never changes.
- ``assignments(participant_id, position, design_trial, swapped)``: the trial list of one
  participant, position 1..n in the order shown; ``swapped`` = 1 when the design's sentence2
  is shown on the left.
- ``responses(id, participant_id, position, rating, reaction_time_ms, received_at)``:
  ``UNIQUE(participant_id, position)``; rating 1..6 of the button pressed (1 = very confident
  left sentence, 6 = very confident right sentence), reaction time in milliseconds measured by
  the browser from the trial's display to the click, ``received_at`` UTC ISO 8601 server time.

Every write runs in its own ``BEGIN IMMEDIATE`` transaction with ``synchronous=FULL``, so a
response that was acknowledged survives a crash of the server process.
"""
from __future__ import annotations

import hashlib
import random
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..data.design_file import DESIGN_COLUMNS
from .export import Experiment

SCHEMA_VERSION = "1"
TOKEN_BYTES = 32
_TARGET = ("sentence1_accept_model", "sentence1_reject_model", "sentence2_accept_model", "sentence2_reject_model")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS design_trials(
    group_id INTEGER NOT NULL, trial INTEGER NOT NULL, pair_id TEXT NOT NULL,
    sentence1 TEXT NOT NULL, sentence2 TEXT NOT NULL,
    sentence1_type TEXT NOT NULL, sentence2_type TEXT NOT NULL, trial_type TEXT NOT NULL,
    sentence1_accept_model TEXT, sentence1_reject_model TEXT,
    sentence2_accept_model TEXT, sentence2_reject_model TEXT,
    PRIMARY KEY(group_id, trial));
CREATE TABLE IF NOT EXISTS participants(
    id INTEGER PRIMARY KEY, token_sha256 TEXT NOT NULL UNIQUE, group_id INTEGER NOT NULL,
    external_id TEXT, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS participants_external_id ON participants(external_id);
CREATE TABLE IF NOT EXISTS assignments(
    participant_id INTEGER NOT NULL REFERENCES participants(id), position INTEGER NOT NULL,
    design_trial INTEGER NOT NULL, swapped INTEGER NOT NULL CHECK(swapped IN (0, 1)),
    PRIMARY KEY(participant_id, position), UNIQUE(participant_id, design_trial));
CREATE TABLE IF NOT EXISTS responses(
    id INTEGER PRIMARY KEY, participant_id INTEGER NOT NULL, position INTEGER NOT NULL,
    rating INTEGER NOT NULL CHECK(rating BETWEEN 1 AND 6), reaction_time_ms REAL,
    received_at TEXT NOT NULL,
    UNIQUE(participant_id, position),
    FOREIGN KEY(participant_id, position) REFERENCES assignments(participant_id, position));
"""


class TrialError(Exception):
    """A response the store refuses; ``status`` is the HTTP status the server answers with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class Participant:
    id: int
    group: int


class Store:
    """The response database of one experiment; one SQLite connection per thread."""

    def __init__(self, db_path: str | Path, experiment: Experiment, seed: int | None = None):
        """``seed``: None (default) draws groups, trial orders and sides from the system's
        random source; an integer makes them a function of the seed and the participant's
        arrival number, so a dry run with simulated participants is reproducible."""
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"assignment seed must be a non-negative integer, got {seed!r}")
        self.path = Path(db_path)
        self.experiment = experiment
        self.seed = seed
        self._local = threading.local()
        self._rng = secrets.SystemRandom()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._initialise()

    # connections -------------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._local.conn = conn
        return conn

    def _write(self):
        """Context manager: one ``BEGIN IMMEDIATE`` transaction, committed or rolled back."""
        return _Transaction(self._conn())

    def _initialise(self) -> None:
        conn = self._conn()
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise RuntimeError(f"{self.path}: SQLite refused WAL mode (journal_mode is {mode!r})")
        conn.executescript(SCHEMA)
        exp = self.experiment
        with self._write() as c:
            known = dict(c.execute("SELECT key, value FROM meta").fetchall())
            if known:
                if known.get("experiment_id") != exp.experiment_id:
                    raise ValueError(
                        f"database {self.path} belongs to another experiment (experiment_id "
                        f"{known.get('experiment_id', '?')[:16]}..., this export is {exp.experiment_id[:16]}...); "
                        "use a new --db file for a new export"
                    )
                return
            meta = {
                "experiment_id": exp.experiment_id,
                "title": exp.title,
                "randomize_order": str(int(exp.randomize_order)),
                "randomize_sides": str(int(exp.randomize_sides)),
                "created_at": now_utc(),
                "schema_version": SCHEMA_VERSION,
                **({} if self.seed is None else {"assignment_seed": str(self.seed)}),
            }
            c.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(meta.items()))
            cols = ["group_id" if k == "group" else k for k in DESIGN_COLUMNS]
            rows = [
                tuple(None if (v is None or v != v) else (int(v) if k in ("group", "trial") else str(v))
                      for k, v in zip(DESIGN_COLUMNS, row))
                for row in exp.design[list(DESIGN_COLUMNS)].itertuples(index=False)
            ]
            c.executemany(
                f"INSERT INTO design_trials({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", rows
            )

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # participants ------------------------------------------------------------------------
    def create_participant(self, external_id: str | None,
                           max_per_group: int | None = None) -> tuple[str, Participant, int]:
        """A new participant in the least-filled group (ties broken at random) with its own
        trial order and sides; returns ``(token, participant, n_trials)``.

        One participant per platform id, and the token is its only credential: TrialError 409
        when ``external_id`` is already known, with nothing changed (the platform id is no
        secret, so it never resumes a participant nor replaces its token; a returning
        participant resumes with its token, :meth:`participant`).  TrialError 403 when every
        group already has ``max_per_group`` participants.  Both checks run in the write
        transaction, so concurrent sign-ups cannot pass them twice.
        """
        exp = self.experiment
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self._write() as c:
            if external_id is not None and c.execute("SELECT 1 FROM participants WHERE external_id = ?",
                                                     (external_id,)).fetchone():
                raise TrialError(409, "this platform id already has a session: continue in the browser where you "
                                      "started (it keeps your place); a second sign-up with the same id is refused")
            counts = dict(c.execute("SELECT group_id, COUNT(*) FROM participants GROUP BY group_id").fetchall())
            rng = self._rng if self.seed is None else random.Random(f"{self.seed}:{sum(counts.values())}")
            fewest = min(counts.get(g, 0) for g in exp.groups)
            if max_per_group is not None and fewest >= max_per_group:
                raise TrialError(403, f"the experiment is full: each of its {len(exp.groups)} group(s) has "
                                      f"{max_per_group} participants")
            group = rng.choice([g for g in exp.groups if counts.get(g, 0) == fewest])
            cur = c.execute(
                "INSERT INTO participants(token_sha256, group_id, external_id, created_at) VALUES (?, ?, ?, ?)",
                (token_digest(token), group, external_id, now_utc()),
            )
            pid = int(cur.lastrowid)
            trials = [int(t) for t in exp.design.loc[exp.design["group"] == group, "trial"]]
            if exp.randomize_order:
                rng.shuffle(trials)
            rows = [
                (pid, pos, t, int(rng.random() < 0.5) if exp.randomize_sides else 0)
                for pos, t in enumerate(trials, start=1)
            ]
            c.executemany(
                "INSERT INTO assignments(participant_id, position, design_trial, swapped) VALUES (?, ?, ?, ?)", rows
            )
        return token, Participant(pid, group), len(rows)

    def participant(self, token: str) -> Participant | None:
        row = self._conn().execute(
            "SELECT id, group_id FROM participants WHERE token_sha256 = ?", (token_digest(token),)
        ).fetchone()
        return Participant(int(row[0]), int(row[1])) if row else None

    # trials and responses ----------------------------------------------------------------
    def _trial(self, c: sqlite3.Connection, p: Participant, position: int) -> dict:
        row = c.execute(
            "SELECT d.sentence1, d.sentence2, a.swapped FROM assignments a JOIN design_trials d "
            "ON d.group_id = ? AND d.trial = a.design_trial WHERE a.participant_id = ? AND a.position = ?",
            (p.group, p.id, position),
        ).fetchone()
        s1, s2, swapped = row
        left, right = (s2, s1) if swapped else (s1, s2)
        return {"id": position, "left": left, "right": right}

    def state(self, p: Participant) -> dict:
        """``n_trials``, ``n_answered`` and the next unanswered ``trial`` (``{id, left, right}``,
        null when done) of one participant, read in one snapshot."""
        c = self._conn()
        c.execute("BEGIN")
        try:
            n_trials, n_answered, next_pos = self._progress(c, p)
            trial = self._trial(c, p, next_pos) if next_pos is not None else None
        finally:
            c.execute("COMMIT")
        return {"n_trials": n_trials, "n_answered": n_answered, "trial": trial, "done": trial is None}

    @staticmethod
    def _progress(c: sqlite3.Connection, p: Participant) -> tuple[int, int, int | None]:
        n_trials = c.execute("SELECT COUNT(*) FROM assignments WHERE participant_id = ?", (p.id,)).fetchone()[0]
        n_answered = c.execute("SELECT COUNT(*) FROM responses WHERE participant_id = ?", (p.id,)).fetchone()[0]
        row = c.execute(
            "SELECT MIN(a.position) FROM assignments a LEFT JOIN responses r "
            "ON r.participant_id = a.participant_id AND r.position = a.position "
            "WHERE a.participant_id = ? AND r.id IS NULL",
            (p.id,),
        ).fetchone()
        return int(n_trials), int(n_answered), (int(row[0]) if row[0] is not None else None)

    def record(self, p: Participant, position: int, rating: int, reaction_time_ms: float | None) -> dict:
        """Store one response in its own transaction and return the new :meth:`state`.

        TrialError 404 for a trial that is not this participant's, 409 for an answered trial or
        one that is not the next unanswered trial (trials are answered in the order shown).
        """
        with self._write() as c:
            n_trials, _, next_pos = self._progress(c, p)
            if not 1 <= position <= n_trials:
                raise TrialError(404, f"trial {position} is not a trial of this participant (trials are 1..{n_trials})")
            answered = c.execute(
                "SELECT 1 FROM responses WHERE participant_id = ? AND position = ?", (p.id, position)
            ).fetchone()
            if answered:
                raise TrialError(409, f"trial {position} was already answered; an answer cannot be changed")
            if position != next_pos:
                raise TrialError(409, f"trial {position} is not the current trial (the next unanswered trial is {next_pos})")
            c.execute(
                "INSERT INTO responses(participant_id, position, rating, reaction_time_ms, received_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (p.id, position, rating, reaction_time_ms, now_utc()),
            )
        return self.state(p)


class _Transaction:
    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
