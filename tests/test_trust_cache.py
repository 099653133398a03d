"""The score cache is never trusted blindly: every entry carries a checksum over (model content
fingerprint, method, sentence, exact value), values are re-checked on read (finite, and at most 0
for log-probabilities), and a damaged cache file is an error naming the file and the way out,
never a silently changed score or a raw SQLite traceback."""
from __future__ import annotations

import math
import sqlite3

import numpy as np
import pytest

pytest.importorskip("kenlm")

from contstim_bench.cli import main as cli_main  # noqa: E402
from contstim_bench.data import sources  # noqa: E402
from contstim_bench.data.build_contstim import POOL_SYNTHESIS  # noqa: E402
from contstim_bench.scoring import kneser_ney  # noqa: E402
from contstim_bench.scoring.base import CorruptCacheError, ScoreCache, entry_checksum  # noqa: E402
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


def test_corrupt_cache_file_is_a_clear_error_not_a_traceback(arpa, tmp_path, monkeypatch, capsys):
    cache = tmp_path / "scores.sqlite"
    cache.write_bytes(b"this is not an SQLite database" * 100)
    with pytest.raises(CorruptCacheError) as err:
        ScoreCache(cache)
    assert str(cache) in str(err.value) and "Delete the file" in str(err.value)
    # the command line prints one line naming the file, and --no-cache is the way around it
    monkeypatch.setenv("CONTSTIM_SCORE_CACHE", str(cache))
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    assert cli_main(["score", "--model", f"kenlm:{arpa}", "--input", str(inp), "--output", str(out), "--quiet"]) == 1
    err_text = capsys.readouterr().err
    assert "CorruptCacheError" in err_text and str(cache) in err_text and "Traceback" not in err_text
    assert not out.exists()
    assert cli_main(["score", "--model", f"kenlm:{arpa}", "--input", str(inp), "--output", str(out), "--quiet",
                     "--no-cache"]) == 0
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
