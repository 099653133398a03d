"""Vocabulary options of synthesis: the N most frequent words of the packaged vocabulary (function
words kept) with ``--vocabulary-size``, and ``contstim vocab build`` for a corpus of another domain."""
from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.data.build_contstim import POOL_SYNTHESIS
from contstim_bench.data.load import dataset_folder
from contstim_bench.data.sources import resolve
from contstim_bench.generate.inputs import load_vocabulary
from contstim_bench.generate.natural_ilp import load_function_words
from contstim_bench.generate.vocabulary import build_vocabulary, corpus_tokens


@pytest.fixture(scope="module")
def packaged():
    return pd.read_parquet(dataset_folder("contstim") / "vocabulary" / "train.parquet")


@pytest.fixture(scope="module")
def function_words():
    return sorted(w.lower() for w in load_function_words())


def test_most_frequent_words_of_the_packaged_vocabulary(packaged, function_words):
    vocab = load_vocabulary(size=800, keep=function_words)
    for capitalized, got in ((False, vocab.rest), (True, vocab.first)):
        part = packaged[packaged["capitalized"] == capitalized]
        top = set(part.nlargest(800, "frequency", keep="first")["word"])
        kept = {w for w in part["word"] if w.lower() in function_words and (capitalized or w == w.lower())}
        assert set(got) == top | kept
        assert len(top) == 800 and len(kept - top) > 5  # rarer prepositions ("amid", "atop") stay in
    assert "the" in vocab.rest and "The" in vocab.first and "atop" in vocab.rest
    assert len(vocab.rest) == 800 + len({w for w in function_words if w in set(packaged["word"])} - set(
        packaged[~packaged["capitalized"]].nlargest(800, "frequency", keep="first")["word"]))
    assert vocab.source == "contstim:vocabulary (the 800 most frequent words of each list, function words kept)"
    with pytest.raises(ValueError, match="the vocabulary size must be a positive integer, got 0"):
        load_vocabulary(size=0)


def test_size_needs_frequencies(tmp_path):
    (tmp_path / "w.txt").write_text("cat\ndog\n", encoding="utf-8")
    with pytest.raises(ValueError, match="a word list has no frequencies"):
        load_vocabulary(tmp_path / "w.txt", size=10)
    pd.DataFrame({"word": ["cat", "Cat"], "capitalized": [False, True]}).to_parquet(tmp_path / "v.parquet")
    with pytest.raises(ValueError, match="column 'frequency' is missing"):
        load_vocabulary(tmp_path / "v.parquet", size=10)


def test_vocab_build_counts_and_filters_like_the_paper(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    lines = ["The cat sat on the mat.", "The dog sat on a log!", "London is big, the cat said.",
             "I saw 3 dogs in London", "Cats and dogs: the end?", "e-mail the cat"]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = build_vocabulary(corpus, 2)
    rest = table[~table["capitalized"]].set_index("word")["count"].to_dict()
    # counted by hand: "The" first in a line is "the"; "London" keeps its case; "3", "e-mail" are not words
    counts = Counter(t for line in lines for t in corpus_tokens(line))
    assert counts["The"] == 2 and "e-mail" not in counts and "3" not in counts
    assert rest == {"the": 6, "cat": 3, "sat": 2, "on": 2, "London": 2, "dogs": 2}
    first = table[table["capitalized"]]
    assert set(first["word"]) == {"The", "Cat", "Sat", "On", "London", "Dogs"}
    assert table.groupby("capitalized")["frequency"].sum().round(12).eq(1.0).all()
    assert table.loc[table["word"] == "the", "frequency"].item() == pytest.approx(6 / 17)

    out = tmp_path / "domain.parquet"
    assert cli_main(["vocab", "build", "--corpus", str(corpus), "--min-count", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"wrote {out}: 6 words counted at least 2 times (17 tokens in the corpus)")
    vocab = load_vocabulary(out)
    assert set(vocab.rest) == set(rest) and vocab.at(0) == tuple(first["word"])
    assert set(load_vocabulary(out, size=2, keep=["on"]).rest) == {"the", "cat", "on"}

    assert cli_main(["vocab", "build", "--corpus", str(corpus), "--min-count", "100", "--out", str(out)]) == 1
    assert "no word occurs 100 times or more (the most frequent occurs 6 times); lower the minimum count" in \
        capsys.readouterr().err
    assert cli_main(["vocab", "build", "--corpus", str(tmp_path / "nope.txt"), "--min-count", "2",
                     "--out", str(out)]) == 1
    assert "corpus not found" in capsys.readouterr().err
    assert cli_main(["vocab", "build", "--corpus", str(corpus), "--min-count", "2", "--out", str(tmp_path / "v.txt")]) == 1
    assert "must end in .parquet or .csv" in capsys.readouterr().err


def test_synthesis_with_a_vocabulary_size(tmp_path, function_words):
    """`generate synthetic --vocabulary-size 300` searches the 300 most frequent words (and the
    function words): recorded in run.json, and every synthetic word is one of them."""
    lines = resolve(POOL_SYNTHESIS).read_text(encoding="utf-8").splitlines()
    (tmp_path / "corpus.txt").write_text("\n".join(lines[30:]) + "\n", encoding="utf-8")
    (tmp_path / "starts.txt").write_text("\n".join(lines[:30]) + "\n", encoding="utf-8")
    models = []
    for order, name in ((3, "tri"), (2, "bi")):
        arpa = tmp_path / f"{name}.arpa"
        assert cli_main(["train", "ngram", "--corpus", str(tmp_path / "corpus.txt"), "--order", str(order),
                         "--output", str(arpa)]) == 0
        models.append(f"{name}=kenlm:{arpa}")
    assert cli_main(["generate", "synthetic", "--models", ",".join(models), "--start-sentences", "1",
                     "--pool", str(tmp_path / "starts.txt"), "--vocabulary-size", "300", "--max-attempts", "4",
                     "--no-cache", "--quiet", "--output", str(tmp_path / "run")]) == 0
    record = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    vocab = load_vocabulary(size=300, keep=function_words)
    assert record["vocabulary"] == vocab.source and record["vocabulary_size"] == [len(vocab.first), len(vocab.rest)]
    from contstim_bench.generate.triplet_table import read_triplets

    triplets = read_triplets(tmp_path / "run")
    allowed = set(vocab.first) | set(vocab.rest)
    for _, row in triplets.iterrows():
        natural = row["N"].rstrip(".!?").split()
        for s in (row["S1"], row["S2"]):
            words = s.rstrip(".!?").split()
            assert all(w in allowed for w, n in zip(words, natural) if w != n), (s, row["N"])
