"""The score cache is never trusted blindly: every entry carries a checksum over (model content
fingerprint, method, sentence, exact value), values are re-checked on read (finite, and at most 0
for log-probabilities), and a damaged cache file is an error naming the file and the way out,
never a silently changed score or a raw SQLite traceback.  The file the cache takes is checked
first: another program's SQLite database is refused and left byte-for-byte as it was, and a
cache this process may not write is read (never reported as damaged) while new scores are not
stored."""
from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
import sqlite3
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("kenlm")

from contstim_bench.cli import main as cli_main  # noqa: E402
from contstim_bench.data import sources  # noqa: E402
from contstim_bench.data.build_contstim import POOL_SYNTHESIS  # noqa: E402
from contstim_bench.scoring import kneser_ney  # noqa: E402
from contstim_bench.scoring.base import CorruptCacheError, ScoreCache, entry_checksum  # noqa: E402
from contstim_bench.scoring.cache import APPLICATION_ID, ForeignCacheError, ScoreCacheError  # noqa: E402
from contstim_bench.scoring.ngram import NgramScorer  # noqa: E402

SENTENCES = ["It seems like that studio just gets it", "I have never seen anything like this before"]


def train(path, lines: int):
    """A bigram ARPA trained on the first ``lines`` sentences of the real synthesis pool."""
    pool = sources.resolve(POOL_SYNTHESIS).read_text(encoding="utf-8").splitlines()[:lines]
    corpus = path.with_suffix(".txt")
    corpus.write_text("\n".join(pool) + "\n", encoding="utf-8")
    kneser_ney.train_arpa(corpus, 2, path, discount_fallback=kneser_ney.DEFAULT_FALLBACK)
    return path


@pytest.fixture()
def arpa(tmp_path):
    return train(tmp_path / "bigram.arpa", 400)


def scored(arpa, cache_path):
    scorer = NgramScorer(arpa, cache=ScoreCache(cache_path), progress=False)
    return scorer, scorer.score(SENTENCES)


def rows(cache_path):
    with sqlite3.connect(cache_path) as conn:
        return conn.execute("SELECT model, method, sentence, logprob, checksum FROM scores_v2").fetchall()


def test_second_run_is_served_from_the_verified_cache(arpa, tmp_path):
    cache = tmp_path / "scores.sqlite"
    first, a = scored(arpa, cache)
    second, b = scored(arpa, cache)
    assert first.n_model_sentences == 2 and second.n_model_sentences == 0
    np.testing.assert_array_equal(a, b)
    assert all(v < 0 for v in a)
    for model, method, sentence, value, checksum in rows(cache):
        assert model == first.fingerprint() and checksum == entry_checksum(model, method, sentence, value)


def test_tampered_value_is_refused_with_the_file_named(arpa, tmp_path):
    cache = tmp_path / "scores.sqlite"
    _, honest = scored(arpa, cache)
    with sqlite3.connect(cache) as conn:  # one bit of the stored double flipped
        conn.execute("UPDATE scores_v2 SET logprob = ? WHERE sentence = ?", (honest[0] + 1e-9, SENTENCES[0]))
    with pytest.raises(CorruptCacheError) as err:
        scored(arpa, cache)
    text = str(err.value)
    assert str(cache) in text and "fails its checksum" in text and repr(SENTENCES[0]) in text
    assert "Delete the file" in text and "--no-cache" in text


@pytest.mark.parametrize("value", [math.inf, -math.inf, 3.5])
def test_cached_impossible_log_probability_is_refused_even_with_a_valid_checksum(arpa, tmp_path, value):
    cache = tmp_path / "scores.sqlite"
    scorer, _ = scored(arpa, cache)
    fp = scorer.fingerprint()
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE scores_v2 SET logprob = ?, checksum = ? WHERE sentence = ?",
                     (value, entry_checksum(fp, "ngram", SENTENCES[1], value), SENTENCES[1]))
    assert rows(cache)  # the entry is there, with a checksum that matches it
    with pytest.raises(CorruptCacheError, match="not finite|above 0"):
        scored(arpa, cache)


def score_cli(arpa, tmp_path, *extra: str) -> tuple[int, object]:
    """``contstim score`` of SENTENCES with the n-gram ``arpa`` into ``tmp_path/out.csv``: (exit code, output path)."""
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    return cli_main(["score", "--model", f"kenlm:{arpa}", "--input", str(inp), "--output", str(out), "--quiet",
                     *extra]), out


def test_corrupt_cache_file_is_a_clear_error_not_a_traceback(arpa, tmp_path, monkeypatch, capsys):
    cache = tmp_path / "scores.sqlite"
    cache.write_bytes(b"this is not an SQLite database" * 100)
    with pytest.raises(CorruptCacheError) as err:
        ScoreCache(cache)
    assert str(cache) in str(err.value) and "Delete the file" in str(err.value)
    # the command line prints one line naming the file, and --no-cache is the way around it
    monkeypatch.setenv("CONTSTIM_SCORE_CACHE", str(cache))
    code, out = score_cli(arpa, tmp_path)
    assert code == 1
    err_text = capsys.readouterr().err
    assert "CorruptCacheError" in err_text and str(cache) in err_text and "Traceback" not in err_text
    assert not out.exists()
    assert score_cli(arpa, tmp_path, "--no-cache") == (0, out)
    assert out.exists()


def test_retrained_model_at_the_same_path_gets_fresh_entries(tmp_path):
    """Entries are keyed by the model's content fingerprint (the ARPA file's sha256), not its path."""
    cache = tmp_path / "scores.sqlite"
    arpa = train(tmp_path / "m.arpa", 400)
    old, a = scored(arpa, cache)
    train(arpa, 1200)  # retrained in place
    new, b = scored(arpa, cache)
    assert new.fingerprint() != old.fingerprint()
    assert new.n_model_sentences == 2  # not served from the old model's entries
    assert not np.array_equal(a, b)
    assert {r[0] for r in rows(cache)} == {old.fingerprint(), new.fingerprint()}


def test_positive_log_probability_from_a_model_is_not_cached(arpa, tmp_path):
    class Broken(NgramScorer):
        def _score_unique(self, sentences):
            return np.full(len(sentences), 0.25)

    cache = tmp_path / "scores.sqlite"
    scorer = Broken(arpa, cache=ScoreCache(cache), progress=False)
    with pytest.raises(ValueError, match="above 0"):
        scorer.score(SENTENCES)
    assert rows(cache) == []


def state(path: Path) -> tuple:
    """What a database file is: sha256 of its bytes, the files beside it, its tables and its
    journal mode (read as the bytes on disk are, through a connection that creates nothing)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    beside = sorted(p.name for p in path.parent.iterdir())
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        tables = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()
    return digest, beside, tables, mode


FOREIGN = {
    "other tables": ["CREATE TABLE people (name TEXT, age INTEGER)", "INSERT INTO people VALUES ('Ada', 36)"],
    "the cache's table name, other columns": ["CREATE TABLE scores_v2 (model TEXT, value REAL)",
                                              "INSERT INTO scores_v2 VALUES ('m', 1.5)"],
    "another application_id": ["PRAGMA application_id = 1234"],
}


@pytest.mark.parametrize("kind", list(FOREIGN))
def test_foreign_sqlite_database_is_refused_and_left_untouched(arpa, tmp_path, kind, monkeypatch, capsys):
    db = tmp_path / "mine" / "app.sqlite"
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:
        for statement in FOREIGN[kind]:
            conn.execute(statement)
    conn.close()
    before = state(db)
    with pytest.raises(ForeignCacheError) as err:
        ScoreCache(db)
    text = str(err.value)
    assert str(db) in text and "not a contstim score cache" in text and "CONTSTIM_SCORE_CACHE" in text
    assert "Delete" not in text  # someone's database, not a damaged cache
    assert state(db) == before  # same bytes, no -wal/-shm beside it, same tables, journal mode "delete"
    monkeypatch.setenv("CONTSTIM_SCORE_CACHE", str(db))
    code, out = score_cli(arpa, tmp_path)
    assert code == 1
    err_text = capsys.readouterr().err
    assert "ForeignCacheError" in err_text and str(db) in err_text and "Traceback" not in err_text
    assert state(db) == before and not out.exists()


def test_new_path_empty_file_and_older_cache_are_caches_and_get_marked(arpa, tmp_path):
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    older = tmp_path / "older.sqlite"  # written before the marker: the table alone, no application_id
    first, honest = scored(arpa, older)
    with sqlite3.connect(older) as conn:
        conn.execute("PRAGMA application_id = 0")
    conn.close()
    for path in (tmp_path / "new" / "scores.sqlite", empty, older):
        _, values = scored(arpa, path)
        again, cached = scored(arpa, path)
        assert again.n_model_sentences == 0 and np.array_equal(values, cached) and np.array_equal(values, honest)
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        conn.close()


NOBODY = 65534


@contextlib.contextmanager
def unprivileged():
    """Run the block as a process that may not write what :func:`make_read_only` protected.  As
    root, whose writes file permissions do not stop, the block runs as user nobody (effective
    ids; put back after it)."""
    if os.geteuid() != 0:
        yield
        return
    groups = os.getgroups()
    os.setgroups([])
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)


@pytest.fixture()
def shared():
    """A folder user nobody may enter (a test's own tmp_path is private to its owner), holding an
    ARPA model and a ``cache/`` folder; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="contstim-readonly-"))
    folder.chmod(0o755)
    (folder / "cache").mkdir(mode=0o755)
    train(folder / "bigram.arpa", 400)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755)
    shutil.rmtree(folder)


def score_unprivileged(shared: Path, cache: Path, sentences: list[str]):
    """``(scorer, values, warnings)`` of scoring ``sentences`` with the cache ``cache`` under
    :func:`unprivileged`; an exception is returned in place of the values."""
    scorer = NgramScorer(shared / "bigram.arpa", cache=False, progress=False)
    with warnings.catch_warnings(record=True) as seen, unprivileged():
        warnings.simplefilter("always")
        try:
            scorer.cache = ScoreCache(cache)
            values = scorer.score(sentences)
        except Exception as exc:  # noqa: BLE001 -- the test looks at it
            values = exc
    return scorer, values, [f"{w.category.__name__}: {w.message}" for w in seen]


def make_read_only(cache: Path, what: str) -> None:
    """No write permission on the cache file (``file``) or on its folder (``folder``) inside
    :func:`unprivileged`."""
    root = os.geteuid() == 0
    if what == "file":
        cache.chmod(0o444)
        if root:
            os.chown(cache.parent, NOBODY, NOBODY)  # nobody may write the folder, not the file
    else:
        cache.parent.chmod(0o555)
        if root and cache.exists():
            os.chown(cache, NOBODY, NOBODY)  # nobody may write the file, not the folder


@pytest.mark.parametrize("what", ["file", "folder"])
def test_read_only_cache_is_read_and_new_scores_are_not_stored(shared, what):
    cache = shared / "cache" / "scores.sqlite"
    owner, honest = scored(shared / "bigram.arpa", cache)  # the owner's run fills the cache ...
    owner.cache.close()  # ... and ends (SQLite would share its open files with a later connection)
    make_read_only(cache, what)
    before = state(cache)
    new = "The studio has never seen anything like it"
    scorer, values, seen = score_unprivileged(shared, cache, [*SENTENCES, new])
    assert not isinstance(values, Exception), values  # a healthy file is not reported as damaged
    assert values[:2].tolist() == honest.tolist()  # served from the cache, verified
    assert scorer.n_model_sentences == 1 and values[2] < 0  # the new sentence is computed ...
    assert scorer.cache.read_only and scorer.cache.n_not_stored == 1  # ... and not stored
    assert len(seen) == 1 and seen[0].startswith("ReadOnlyCacheWarning")
    assert str(cache) in seen[0] and "not stored" in seen[0] and "Delete" not in seen[0]
    assert state(cache) == before  # nothing written, nothing created beside it


def test_cache_that_cannot_be_created_is_its_own_error(shared):
    cache = shared / "cache" / "scores.sqlite"
    make_read_only(cache, "folder")
    _, err, _ = score_unprivileged(shared, cache, SENTENCES)
    assert type(err).__name__ == "ScoreCacheError", err
    assert str(cache) in str(err) and "cannot be created" in str(err)
    assert "--no-cache" in str(err) and "Delete" not in str(err)
    assert not any(cache.parent.iterdir())


def test_folder_named_as_the_cache_is_not_called_damaged(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ScoreCacheError) as err:
        ScoreCache(tmp_path / "results")
    assert type(err.value) is ScoreCacheError and "is a folder" in str(err.value) and "Delete" not in str(err.value)
    assert (tmp_path / "results" / "keep.txt").read_text(encoding="utf-8") == "mine"
