"""``contstim generate pool``: a natural-sentence pool from a corpus with Golan et al. (2023)'s
filters, every filter's count recounted by hand on a small corpus written here, a word-level
model's vocabulary from a hand-written ARPA bigram, and the pool read back as ``generate natural
--pool`` reads it."""
from __future__ import annotations

import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.generate.inputs import load_pool, vocabulary_from_words
from contstim_bench.generate.pool import FILTERS, build_pool, corpus_sentences, make_pool

CORPUS = (
    "The cat sat on the mat. The dog ran to the park!\n"  # kept; excluded (dog)
    "A cat sat on a mat.\n"                               # kept: 'a' is a function word
    "The cat sat on the mat.\n"                           # duplicate
    "The cat sat on the zebra\n"                          # vocabulary (zebra)
    "The cat sat.\n"                                      # length (3 words)
    "The cat sat on the cat\n"                            # repeated (cat)
    "the cat sat on the mat\n"                            # vocabulary (lower-case first word)
    '"The park ran to a cat."\n'                          # kept (quotes and '.' stripped)
    "\n"
    "The cat sat on the mat? The cat sat on the mat\n"    # two duplicates
)
WORDS = ["The", "cat", "sat", "on", "the", "mat", "dog", "ran", "to", "park", "a"]
FUNCTION = ["the", "on", "to", "a"]
BIGRAM_WORDS = ["The", "cat", "sat", "on", "the", "mat", "A", "a", "ran", "to"]  # no 'park'


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "corpus.txt").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "vocab.txt").write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    (tmp_path / "exclude.txt").write_text("# inappropriate words\nDOG\n", encoding="utf-8")
    (tmp_path / "function.txt").write_text("\n".join(FUNCTION) + "\n", encoding="utf-8")
    lines = ["\\data\\", f"ngram 1={len(BIGRAM_WORDS) + 3}", "ngram 2=1", "", "\\1-grams:", "-1.0\t<unk>\t0",
             "-99\t<s>\t0", "-1.0\t</s>\t0", *(f"-1.0\t{w}\t0" for w in BIGRAM_WORDS), "", "\\2-grams:",
             "-0.5\t<s> The", "", "\\end\\", ""]
    (tmp_path / "bigram.arpa").write_text("\n".join(lines), encoding="utf-8")
    return tmp_path


def test_every_filter_counted_by_hand(files):
    sentences = list(corpus_sentences([files / "corpus.txt"]))
    assert len(sentences) == 11 and sentences[:2] == ["The cat sat on the mat", "The dog ran to the park"]
    assert sentences[8] == "The park ran to a cat"
    pool = build_pool([files / "corpus.txt"], words=6, vocabulary=vocabulary_from_words(WORDS, "test"),
                      excluded={"DOG"}, function_words=FUNCTION)
    assert pool.sentences == ["The cat sat on the mat", "A cat sat on a mat", "The park ran to a cat"]
    assert pool.n_read == 11
    assert pool.removed == {"length": 1, "vocabulary": 2, "excluded": 1, "model_vocabulary": 0, "repeated": 1,
                            "duplicate": 3}
    assert list(pool.removed) == list(FILTERS) and sum(pool.removed.values()) + len(pool.sentences) == pool.n_read


def test_a_word_level_models_vocabulary(files):
    """The bigram knows no 'park': the third kept sentence goes; a precomputed (word-piece) model
    removes nothing and is noted."""
    out = files / "pool.txt"
    path, pool = make_pool([files / "corpus.txt"], out, words=6, vocabulary=str(files / "vocab.txt"),
                           exclude=files / "exclude.txt", function_words=files / "function.txt",
                           models=f"bigram=kenlm:{files / 'bigram.arpa'},precomputed:gpt2")
    assert pool.sentences == ["The cat sat on the mat", "A cat sat on a mat"]
    assert pool.removed["model_vocabulary"] == 1 and pool.removed["duplicate"] == 3
    assert pool.notes == ["precomputed:gpt2: reads any word (word pieces), so it removes no sentence"]
    assert load_pool(path) == (["The cat sat on the mat", "A cat sat on a mat"], str(path))


def test_the_command(files, capsys):
    out = files / "pools" / "pool.txt"
    assert cli_main(["generate", "pool", "--corpus", str(files / "corpus.txt"), "--out", str(out), "--words", "6",
                     "--vocabulary", str(files / "vocab.txt"), "--exclude", str(files / "exclude.txt"),
                     "--function-words", str(files / "function.txt")]) == 0
    printed = capsys.readouterr().out
    assert "read 11 sentences from 1 file(s)" in printed and "wrote" in printed and "(3 sentences)" in printed
    for name, n in (("length", 1), ("vocabulary", 2), ("excluded", 1), ("repeated", 1), ("duplicate", 3)):
        assert f"  {name:<17} {n:>10,} removed" in printed
    assert out.read_text(encoding="utf-8").splitlines() == ["The cat sat on the mat", "A cat sat on a mat",
                                                            "The park ran to a cat"]


def test_the_paper_defaults(files):
    """Default: 8 words and the contstim shared vocabulary (29,157 entries); the synthesis pool's
    sentences pass it, an unknown word does not."""
    corpus = files / "eight.txt"
    corpus.write_text("Anger consumes me as I read this reply.\nAnger consumes me as I read this zzzqx.\n",
                      encoding="utf-8")
    _, pool = make_pool([corpus], files / "p.txt")
    assert pool.sentences == ["Anger consumes me as I read this reply"] and pool.removed["vocabulary"] == 1


@pytest.mark.parametrize("args, message", [
    (["--corpus", "missing.txt"], "corpus file not found"),
    (["--corpus", "."], "is a folder: give its text files"),
    (["--exclude", "two.txt"], "line 1 ('two words') is not one word"),
    (["--words", "20"], "no sentence passed the filters (length: 11 removed"),
    (["--out", "corpus.txt"], "--out corpus.txt is the input --corpus"),
])
def test_bad_input_is_named(files, capsys, monkeypatch, args, message):
    monkeypatch.chdir(files)
    (files / "two.txt").write_text("two words\n", encoding="utf-8")
    base = {"--corpus": "corpus.txt", "--out": "out.txt", "--vocabulary": "vocab.txt"}
    flags = dict(zip(args[::2], args[1::2]))
    argv = [x for k, v in {**base, **flags}.items() for x in (k, v)]
    assert cli_main(["generate", "pool", *argv]) == 1
    assert message in capsys.readouterr().err
    if "--out" not in flags:
        assert not (files / "out.txt").exists()


def test_a_bad_length_is_refused_while_parsing(files, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli_main(["generate", "pool", "--corpus", str(files / "corpus.txt"), "--out", str(files / "o.txt"),
                  "--words", "0"])
    assert exit_.value.code == 2 and "argument --words: must be an integer >= 1, got 0" in capsys.readouterr().err
    with pytest.raises(ValueError, match="sentence length in words must be a positive integer, got 0"):
        build_pool([files / "corpus.txt"], words=0)



def test_the_papers_own_pool_passes_whole(tmp_path, built_contstim):
    """The paper's published synthesis pool (6,113 eight-word sentences, each of which passed the
    authors' filters) passes every default filter: a later word may be any vocabulary entry
    (``Trump`` is in the first-word list only; the stricter rule, a later word from the later-word
    list alone, removes 292 of them).  Only its 96 repeated lines go, each kept once."""
    from contstim_bench.data import sources
    from contstim_bench.data.build_contstim import POOL_SYNTHESIS

    paper = sources.resolve(POOL_SYNTHESIS)
    _, pool = make_pool([paper], tmp_path / "pool.txt", datasets_dir=built_contstim.parent)
    assert pool.n_read == 6113 and len(pool.sentences) == 6017
    assert pool.removed == {**dict.fromkeys(FILTERS, 0), "duplicate": 96}
    lines = paper.read_text(encoding="utf-8").splitlines()
    assert pool.sentences == list(dict.fromkeys(lines)) and len(lines) == 6113
