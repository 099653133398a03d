"""n-gram models: the modified Kneser-Ney estimator, its ARPA output, KenLM scoring and sweeps.

Every probability is checked against an independent reading of the ARPA file (parsed here,
backoff applied by hand), against values worked out by hand, and (when KenLM's ``lmplz`` is on
PATH) against lmplz itself.
"""
from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

pytest.importorskip("kenlm")

from contstim_bench import cli  # noqa: E402
from contstim_bench.data import safe_pickle, sources  # noqa: E402
from contstim_bench.scoring import kneser_ney as kn  # noqa: E402
from contstim_bench.scoring.base import LoadSettings, ScoreCache  # noqa: E402
from contstim_bench.scoring.run_options import RunOptions
from contstim_bench.scoring.ngram import NgramScorer, from_spec  # noqa: E402
from contstim_bench.data.build_contstim import POOL_SYNTHESIS

CORPUS = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool
LN10 = math.log(10.0)


# -- an independent ARPA reader --------------------------------------------------------------
def parse_arpa(path):
    """{ngram tuple: (log10 prob, log10 backoff)} and the order, read straight from the file."""
    table, order, section = {}, 0, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("ngram "):
            order = max(order, int(line[6:].split("=")[0]))
        elif line.endswith("-grams:"):
            section = int(line[1:].split("-")[0])
        elif section and line and not line.startswith("\\"):
            parts = line.split("\t")
            words = tuple(parts[1].split(" "))
            assert len(words) == section
            table[words] = (float(parts[0]), float(parts[2]) if len(parts) > 2 else 0.0)
    return table, order


_VOCABS: dict[int, tuple[dict, set]] = {}


def _vocab(table):
    """The words of ``table``'s unigrams, computed once per table.  The cache holds the table
    itself beside its words: keyed by ``id`` alone, a table freed after one test let the next
    table parsed at the same address (CPython reuses it) read the first one's words, mapping
    nearly every word to ``<unk>`` (test_arpa_is_a_proper_distribution[natural] then failed
    now and then)."""
    entry = _VOCABS.get(id(table))
    if entry is None or entry[0] is not table:
        entry = _VOCABS[id(table)] = (table, {g[0] for g in table if len(g) == 1})
    return entry[1]


def arpa_log10(table, order, history, word):
    """log10 p(word | history) by the ARPA backoff rule (unknown words are <unk>)."""
    vocab = _vocab(table)
    word = word if word in vocab else "<unk>"
    hist = tuple(w if w in vocab else "<unk>" for w in history)[-(order - 1):] if order > 1 else ()
    penalty = 0.0
    while True:
        if hist + (word,) in table:
            return penalty + table[hist + (word,)][0]
        penalty += table[hist][1] if hist in table else 0.0
        hist = hist[1:]


def arpa_sentence(table, order, words, bos=True, eos=True):
    """Natural-log probability of a sentence from the ARPA table."""
    hist = ["<s>"] if bos else []
    total = 0.0
    for w in list(words) + (["</s>"] if eos else []):
        total += arpa_log10(table, order, hist, w)
        hist.append(w)
    return total * LN10


# -- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def natural():
    return kn.read_corpus(sources.resolve(CORPUS))


@pytest.fixture(scope="module")
def trained(tmp_path_factory, natural):
    """A trigram trained by the CLI (python backend) on 400 of the natural sentences."""
    d = tmp_path_factory.mktemp("ngram")
    corpus = d / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in natural[:400]) + "\n", encoding="utf-8")
    arpa = d / "tri.arpa"
    rc = cli.main(["train", "ngram", "--corpus", str(corpus), "--order", "3", "--output", str(arpa), "--backend", "python"])
    assert rc == 0
    return corpus, arpa


@pytest.fixture(scope="module")
def vocabulary():
    low = safe_pickle.load(sources.resolve("contstimlang/resources/vocabulary/vocab_low.pkl"))
    cap = safe_pickle.load(sources.resolve("contstimlang/resources/vocabulary/vocab_cap.pkl"))
    return list(low) + list(cap)


def test_the_vocabulary_helper_follows_its_table():
    """Tables made and dropped one after another (CPython gives a new dict a freed one's address)
    each get their own words."""
    for k in range(5):
        for words in ([f"a{k}"], [f"b{k}", f"c{k}"]):
            table = {(w,): (0.0, 0.0) for w in words}
            assert _vocab(table) == set(words)
            del table


# -- the estimator ---------------------------------------------------------------------------
def test_unigram_by_hand(tmp_path):
    # corpus "a a b": raw counts a:2 b:1 </s>:1, fallback discounts .5/1/1.5, |V| = 4 with <unk>
    model = kn.estimate([["a", "a", "b"]], 1, discount_fallback=kn.DEFAULT_FALLBACK)
    assert model.fallback_orders == [1]
    p = {g[0]: 10 ** lp for g, lp in model.logprob[0].items() if g != ("<s>",)}
    assert p == pytest.approx({"a": 0.375, "b": 0.25, "</s>": 0.25, "<unk>": 0.125}, abs=1e-12)


def test_bigram_by_hand(tmp_path):
    # sentences "a b", "b": continuation counts a:1 b:2 </s>:1; worked out in the comments
    arpa = kn.train_arpa(_write(tmp_path / "c.txt", "a b\nb\n"), 2, tmp_path / "m.arpa", kn.DEFAULT_FALLBACK)
    assert arpa.discounts == [kn.DEFAULT_FALLBACK, kn.DEFAULT_FALLBACK]
    table, order = parse_arpa(tmp_path / "m.arpa")
    p = lambda h, w: 10 ** arpa_log10(table, order, h, w)  # noqa: E731
    assert p((), "a") == pytest.approx(0.25)  # (1-.5)/4 + .5/4
    assert p((), "b") == pytest.approx(0.375)  # (2-1)/4 + .5/4
    assert p((), "zzz") == pytest.approx(0.125)  # <unk>: .5/4
    assert p(("<s>",), "a") == pytest.approx(0.375)  # .5/2 + .5 * .25
    assert p(("<s>",), "b") == pytest.approx(0.4375)  # .5/2 + .5 * .375
    assert p(("a",), "b") == pytest.approx(0.6875)  # .5/1 + .5 * .375
    assert p(("b",), "</s>") == pytest.approx(0.625)  # (2-1)/2 + .5 * .25
    assert p(("a",), "zzz") == pytest.approx(0.0625)  # backoff .5 x p(<unk>)
    scorer = NgramScorer(tmp_path / "m.arpa", cache=False)
    assert scorer.score(["a b"])[0] == pytest.approx(math.log(0.375 * 0.6875 * 0.625), abs=1e-6)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("which", ["tiny", "natural"])
def test_arpa_is_a_proper_distribution(which, tmp_path, trained):
    if which == "tiny":
        corpus = _write(tmp_path / "tiny.txt", "the cat sat\nthe dog sat down\na cat ran\nthe cat ran down\n")
        arpa = tmp_path / "tiny.arpa"
        kn.train_arpa(corpus, 3, arpa, kn.DEFAULT_FALLBACK)
    else:
        arpa = trained[1]
    table, order = parse_arpa(arpa)
    vocab = [g[0] for g in table if len(g) == 1 and g[0] != "<s>"]
    assert "<unk>" in vocab and "</s>" in vocab
    seen3 = sorted({g[:2] for g in table if len(g) == 3 and g[1] != "</s>"})  # trigram contexts
    seen2 = sorted({g[:1] for g in table if len(g) == 2 and g[0] != "</s>"})  # bigram contexts
    histories = [(), ("<s>",), ("zzz", "qqq"), ("zzz", "cat"), ("cat", "zzz"), ("<s>", "zzz")]
    histories += seen3[:: max(1, len(seen3) // 15)] + seen2[:: max(1, len(seen2) // 15)]
    histories += [("sat", "the"), (seen2[-1][0], seen2[0][0])]  # words seen, pair unseen
    assert len(histories) > 20
    for h in histories:
        total = sum(10 ** arpa_log10(table, order, h, w) for w in vocab)
        assert abs(total - 1.0) < 1e-6, (h, total)


def test_kenlm_scores_equal_arpa_by_hand(trained, natural):
    table, order = parse_arpa(trained[1])
    import kenlm

    raw = kenlm.Model(str(trained[1]))
    scorer = NgramScorer(trained[1], cache=False)
    sentences = [" ".join(s) for s in natural[:3] + natural[500:503]] + ["the cat zzzqqq sat", "It"]
    got = scorer.score(sentences)
    for s, g in zip(sentences, got):
        ref = arpa_sentence(table, order, s.split())
        assert g == pytest.approx(ref, abs=1e-4)
        assert g == pytest.approx(raw.score(s, bos=True, eos=True) * LN10, abs=1e-4)  # kenlm sums in float32
    assert got[0] > got[-2]  # a training sentence beats one with an unknown word
    no_bounds = NgramScorer(trained[1], bos=False, eos=False, cache=False)
    s = sentences[4]
    assert no_bounds.score([s])[0] == pytest.approx(arpa_sentence(table, order, s.split(), bos=False, eos=False), abs=1e-4)


def test_sweep_equals_one_by_one(trained, vocabulary, natural):
    scorer = NgramScorer(trained[1], cache=False)
    rng = np.random.default_rng(0)
    words = natural[3]  # a training sentence: its n-grams are in the model
    cands = [vocabulary[i] for i in rng.choice(len(vocabulary), 400, replace=False)]
    cands += [w for s in natural[:20] for w in s][:100] + ["zzzq", words[2], cands[0]]  # seen, OOV, repeat
    for pos in range(len(words)):
        got = scorer.sweep(words, pos, cands)
        ref = scorer.score([" ".join(words[:pos] + [c] + words[pos + 1:]) for c in cands])
        assert got.dtype == np.float64 and got.shape == (len(cands),)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)
    short = NgramScorer(trained[1], bos=False, eos=False, cache=False)
    got = short.sweep(["the", "cat"], 1, cands[:50])
    np.testing.assert_allclose(got, short.score(["the " + c for c in cands[:50]]), atol=1e-9)


def test_full_vocabulary_sweep(trained, vocabulary):
    assert len(vocabulary) == 29157
    scorer = NgramScorer(trained[1], cache=False)
    words = "It seems like that studio just gets it".split()
    got = scorer.sweep(words, 4, vocabulary)
    idx = np.arange(0, len(vocabulary), 97)
    ref = scorer.score([" ".join(words[:4] + [vocabulary[i]] + words[5:]) for i in idx])
    np.testing.assert_allclose(got[idx], ref, atol=1e-9)


def test_cache_and_fingerprint(trained, tmp_path):
    cache = ScoreCache(tmp_path / "scores.sqlite")
    a = NgramScorer(trained[1], cache=cache)
    first = a.score(["It seems like that studio just gets it", "It seems like that studio just gets it"])
    assert a.n_model_sentences == 1 and first[0] == first[1]
    b = NgramScorer(trained[1], cache=cache)
    assert np.array_equal(b.score(["It seems like that studio just gets it"]), first[:1])
    assert b.n_model_sentences == 0
    assert from_spec(str(trained[1]), {"eos": "0"}, LoadSettings("kenlm", RunOptions(cache=False))).fingerprint() != a.fingerprint()


def test_errors(tmp_path, trained):
    with pytest.raises(FileNotFoundError, match="nope.arpa"):
        NgramScorer(tmp_path / "nope.arpa", cache=False)
    with pytest.raises(ValueError, match="unknown kenlm option"):
        from_spec(str(trained[1]), {"order": "3"}, LoadSettings("kenlm", RunOptions(cache=False)))
    with pytest.raises(ValueError, match="bos='maybe'"):
        from_spec(str(trained[1]), {"bos": "maybe"}, LoadSettings("kenlm", RunOptions(cache=False)))
    bad = _write(tmp_path / "bad.arpa", "not an arpa file\n")
    with pytest.raises(ValueError, match="bad.arpa"):
        NgramScorer(bad, cache=False)
    scorer = NgramScorer(trained[1], cache=False)
    with pytest.raises(ValueError, match="sentence 1 is empty"):
        scorer.score(["a b", "  "])
    with pytest.raises(TypeError, match="sentence 0 is int"):
        scorer.score([3])
    with pytest.raises(ValueError, match="position 5"):
        scorer.sweep(["a", "b"], 5, ["c"])
    with pytest.raises(ValueError, match="candidate 1"):
        scorer.sweep(["a", "b"], 0, ["c", "d e"])
    with pytest.raises(TypeError, match="not a str"):
        scorer.sweep("a b", 0, ["c"])
    with pytest.raises(ValueError, match="order must be"):
        kn.estimate([["a"]], 0)
    with pytest.raises(kn.DiscountError, match="no 1-gram has adjusted count 2"):
        kn.estimate([["a", "b"]], 2)
    with pytest.raises(ValueError, match=r"c\.txt:2: reserved token '<s>'"):
        kn.read_corpus(_write(tmp_path / "c.txt", "a b\n<s> a\n"))
    with pytest.raises(ValueError, match="empty"):
        kn.read_corpus(_write(tmp_path / "e.txt", "\n  \n"))


def test_train_cli_errors(tmp_path, capsys, monkeypatch):
    out = str(tmp_path / "m.arpa")
    assert cli.main(["train", "ngram", "--corpus", str(tmp_path / "missing.txt"), "--output", out]) == 1
    assert "corpus file not found" in capsys.readouterr().err
    empty = _write(tmp_path / "empty.txt", "")
    assert cli.main(["train", "ngram", "--corpus", str(empty), "--output", out]) == 1
    assert "is empty" in capsys.readouterr().err
    tiny = _write(tmp_path / "tiny.txt", "a b\n")
    assert cli.main(["train", "ngram", "--corpus", str(tiny), "--order", "0", "--output", out]) == 1
    assert "--order must be an integer from 2 to 6, got 0" in capsys.readouterr().err
    assert cli.main(["train", "ngram", "--corpus", str(tiny), "--output", out, "--backend", "python"]) == 1
    assert "--discount-fallback" in capsys.readouterr().err
    assert cli.main(["train", "ngram", "--corpus", str(tiny), "--output", out, "--backend", "python",
                     "--discount-fallback"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert cli.main(["train", "ngram", "--corpus", str(tiny), "--output", out, "--discount-fallback", "0.5"]) == 1
    assert "takes 3 values" in capsys.readouterr().err
    monkeypatch.setenv("PATH", str(tmp_path))  # no lmplz: auto falls back to python, lmplz is an error
    assert cli.main(["train", "ngram", "--corpus", str(tiny), "--output", out, "--discount-fallback"]) == 0
    assert "backend python" in capsys.readouterr().out
    assert cli.main(["train", "ngram", "--corpus", str(tiny), "--output", out, "--backend", "lmplz"]) == 1
    assert "lmplz is not on PATH" in capsys.readouterr().err


needs_lmplz = pytest.mark.skipif(shutil.which("lmplz") is None, reason="KenLM's lmplz is not on PATH")


def _same_arpa(ours, theirs):
    a, _ = parse_arpa(ours)
    b, _ = parse_arpa(theirs)
    assert set(a) == set(b)
    values = np.array([[a[g][0], b[g][0], a[g][1], b[g][1]] for g in a])
    np.testing.assert_allclose(values[:, 0], values[:, 1], atol=2e-6)  # lmplz prints ~7 digits
    np.testing.assert_allclose(values[:, 2], values[:, 3], atol=2e-6)


@needs_lmplz
@pytest.mark.parametrize("order", [2, 3, 4])  # order 1: refused, KenLM loads no unigram model
def test_matches_lmplz(order, natural, tmp_path):
    # a blank line and no final newline: both backends must read the same sentences
    corpus = _write(tmp_path / "c.txt", "\n".join(" ".join(s) for s in natural[:700]) + "\n\n" + " ".join(natural[700]))
    ours, theirs = tmp_path / "ours.arpa", tmp_path / "lmplz.arpa"
    for backend, out in (("python", ours), ("lmplz", theirs)):
        assert cli.main(["train", "ngram", "--corpus", str(corpus), "--order", str(order), "--output", str(out),
                         "--backend", backend]) == 0
    _same_arpa(ours, theirs)


@needs_lmplz
def test_lmplz_discount_fallback(tmp_path, capsys):
    corpus = _write(tmp_path / "tiny.txt", "the cat sat\nthe dog sat down\na cat ran\n")
    for backend in ("python", "lmplz"):  # both refuse to estimate discounts from so few counts
        assert cli.main(["train", "ngram", "--corpus", str(corpus), "--order", "2", "--output",
                         str(tmp_path / "x.arpa"), "--backend", backend]) == 1
        assert "discount" in capsys.readouterr().err.lower()
    outs = [tmp_path / "ours.arpa", tmp_path / "lmplz.arpa"]
    for backend, out in zip(("python", "lmplz"), outs):
        assert cli.main(["train", "ngram", "--corpus", str(corpus), "--order", "2", "--output", str(out),
                         "--backend", backend, "--discount-fallback", "0.6", "1.1", "1.4"]) == 0
    _same_arpa(*outs)


class _FailingImport:
    """A meta-path finder under which ``import kenlm`` raises ``error``."""

    def __init__(self, error: ImportError):
        self.error = error

    def find_spec(self, name, path=None, target=None):
        if name == "kenlm":
            raise self.error
        return None


def test_a_kenlm_that_fails_to_load_is_not_reported_as_missing(monkeypatch):
    """An installed kenlm that cannot be loaded (here: no memory left to map its library, as after
    ``--threads 100000``) is reported with its own error; only an absent module says to install it."""
    import sys

    from contstim_bench.scoring.ngram import _import_kenlm

    monkeypatch.delitem(sys.modules, "kenlm")
    monkeypatch.setattr(sys, "meta_path", [_FailingImport(ImportError("failed to map segment from shared object"))]
                        + sys.meta_path)
    with pytest.raises(RuntimeError) as exc:
        _import_kenlm()
    assert "installed but could not be loaded: failed to map segment" in str(exc.value)
    assert "is required" not in str(exc.value)
    sys.meta_path[0] = _FailingImport(ModuleNotFoundError("No module named 'kenlm'", name="kenlm"))
    with pytest.raises(RuntimeError, match="the kenlm Python module is required"):
        _import_kenlm()


@pytest.mark.parametrize("order", ["1", "7"])
def test_an_order_kenlm_would_refuse_writes_nothing(tmp_path, capsys, order):
    """``--order 1`` once wrote a model that ``kenlm:`` then refused ("assumes at least a bigram
    model"), as would order 7 (pip's KenLM loads up to 6): refused before anything is written."""
    corpus = _write(tmp_path / "c.txt", "the cat sat\nthe dog ran\na cat ran\n")
    out = tmp_path / "m.arpa"
    for backend in ("python", "auto"):
        assert cli.main(["train", "ngram", "--corpus", str(corpus), "--order", order, "--output", str(out),
                         "--backend", backend, "--discount-fallback"]) == 1
        err = capsys.readouterr().err
        assert f"--order must be an integer from 2 to 6, got {order}" in err and "KenLM" in err
        assert list(tmp_path.iterdir()) == [corpus]
    with pytest.raises(ValueError, match="from 2 to 6, got 1"):
        kn.train_arpa(corpus, 1, out, kn.DEFAULT_FALLBACK)
    assert not out.exists()
    for order_ok in (2, 6):  # the bounds themselves load
        path = tmp_path / f"o{order_ok}.arpa"
        kn.train_arpa(corpus, order_ok, path, kn.DEFAULT_FALLBACK)
        assert NgramScorer(path, cache=False, progress=False).order == order_ok


def test_zero_fallback_discounts_are_refused_before_writing(tmp_path, capsys):
    """Zero discounts leave no probability for unseen words: once a bare "math domain error"."""
    corpus = _write(tmp_path / "c.txt", "the cat sat\nthe dog ran\n")
    out = tmp_path / "m.arpa"
    assert cli.main(["train", "ngram", "--corpus", str(corpus), "--output", str(out), "--backend", "python",
                     "--discount-fallback", "0", "0", "0"]) == 1
    err = capsys.readouterr().err
    assert "fallback discounts must be 3 values D1 in (0,1]" in err and "(0.0, 0.0, 0.0)" in err
    assert not out.exists()


def test_a_failed_lmplz_leaves_the_earlier_model(tmp_path, monkeypatch):
    """lmplz writes its ARPA as it goes; a run that fails half-way must not replace a good model."""
    fake = tmp_path / "bin" / "lmplz"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nwhile [ "$1" != "--arpa" ]; do shift; done\nprintf "\\\\data\\\\\\n" > "$2"\n'
                    'echo "disk full" >&2\nexit 3\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    corpus = _write(tmp_path / "c.txt", "the cat sat\n")
    out = _write(tmp_path / "m.arpa", "a good model\n")
    assert cli.main(["train", "ngram", "--corpus", str(corpus), "--output", str(out), "--backend", "lmplz"]) == 1
    assert out.read_text() == "a good model\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "c.txt", "m.arpa"]
