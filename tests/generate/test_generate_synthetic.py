"""Synthetic controversial sentences (Golan et al. 2023, Eq. 2-4): the word-level search with a
KenLM trigram (exhaustive sweeps), SmolLM2-135M (causal shortlist) and a small masked LM (Eq. 3
regression heuristic), re-scored independently."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.data.sources import resolve
from contstim_bench.generate.candidates import causal_shortlist, search_mode
from contstim_bench.generate.inputs import Vocabulary, choose_start_sentences, load_vocabulary
from contstim_bench.generate.natural_ilp import load_function_words
from contstim_bench.generate.synthetic import (
    PositionSchedule,
    SearchModel,
    SearchSettings,
    allowed_candidates,
    synthesize,
    synthesize_triplet,
)
from contstim_bench.generate.triplet_table import OUTPUT_COLUMNS, read_triplets, triplets_frame
from contstim_bench.generate.triplet_select import TRIPLET_COLUMNS, controversiality
from contstim_bench.scoring.registry import load_scorer
from contstim_bench.data.build_contstim import POOL_SYNTHESIS

POOL = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool
HELD_OUT = 40  # the first pool lines are start sentences; the n-gram models never see them


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Trigram and bigram trained (with `contstim train ngram`) on the pool minus held-out
    start sentences, the vocabulary sorted by frequency, the function words."""
    tmp = tmp_path_factory.mktemp("synthetic")
    lines = resolve(POOL).read_text(encoding="utf-8").splitlines()
    held, train = lines[:HELD_OUT], lines[HELD_OUT:]
    corpus = tmp / "corpus.txt"
    corpus.write_text("\n".join(train) + "\n", encoding="utf-8")
    models = {}
    for order, name in ((3, "trigram"), (2, "bigram")):
        arpa = tmp / f"{name}.arpa"
        assert cli_main(["train", "ngram", "--corpus", str(corpus), "--order", str(order), "--output", str(arpa)]) == 0
        models[name] = f"kenlm:{arpa}"
    vocab = load_vocabulary()
    from contstim_bench.data.load import dataset_folder

    freq = pd.read_parquet(dataset_folder("contstim") / "vocabulary" / "train.parquet")
    return {"tmp": tmp, "held": held, "models": models, "vocab": vocab,
            "freq": freq.sort_values("frequency", ascending=False, kind="stable"),
            "fw": load_function_words()}


def top_vocabulary(freq: pd.DataFrame, n: int) -> Vocabulary:
    first = tuple(freq.loc[freq["capitalized"], "word"].head(n))
    rest = tuple(freq.loc[~freq["capitalized"], "word"].head(n))
    return Vocabulary(first, rest, f"top {n}")


def ngram(data, name: str) -> SearchModel:
    return SearchModel(name, load_scorer(data["models"][name], cache=False, progress=False))


def check_triplet(row: dict, rescored: dict[str, dict[str, float]]) -> None:
    """The Eq. 2 constraint and the reported values hold under independent re-scoring."""
    m1, m2 = row["m1"], row["m2"]
    for sent in ("N", "S1", "S2"):
        for k, m in (("1", m1), ("2", m2)):
            col = f"lp_{sent}_given_m{k}"
            if col in row:
                assert rescored[m][row[sent]] == pytest.approx(row[col], abs=1e-9), (col, row[sent])
    lp = {m: rescored[m] for m in (m1, m2)}
    assert lp[m1][row["S1"]] >= lp[m1][row["N"]]  # S1 accepted by m1
    assert lp[m2][row["S2"]] >= lp[m2][row["N"]]  # S2 accepted by m2
    if row["S1"] != row["N"]:
        assert lp[m2][row["S1"]] < lp[m2][row["N"]]  # ... and rejected by m2
    if row["S2"] != row["N"]:
        assert lp[m1][row["S2"]] < lp[m1][row["N"]]
    c = (lp[m2][row["N"]] - lp[m2][row["S1"]]) + (lp[m1][row["N"]] - lp[m1][row["S2"]])
    assert row["controversiality"] == pytest.approx(c, abs=1e-9)
    assert row["controversiality"] == pytest.approx(float(controversiality(pd.DataFrame([row]))[0]))


def no_repeats(sentence: str, fw: frozenset[str]) -> bool:
    words = [w.lower() for w in sentence.split() if w.lower() not in fw]
    return len(words) == len(set(words))


def test_position_schedule_visits_every_position_once_per_round():
    sched = PositionSchedule(8, np.random.default_rng(5))
    seq = [sched.next() for _ in range(8 * 6 + 3)]
    for r in range(6):
        assert sorted(seq[8 * r: 8 * r + 8]) == list(range(8))
    counts = np.bincount(seq, minlength=8)
    assert counts.max() - counts.min() <= 1
    again = PositionSchedule(8, np.random.default_rng(5))
    assert [again.next() for _ in range(len(seq))] == seq


def test_candidates_exclude_repeats_except_function_words(data):
    vocab = Vocabulary(("The", "Dog", "In"), ("the", "dog", "Dog", "cat", "in", "run"), "t")
    words = "The dog sat in the house".split()
    fw = data["fw"]
    assert {"the", "in"} <= fw and "dog" not in fw
    # position 2: "dog" (any case) is already in the sentence; function words may repeat
    assert allowed_candidates(words, 2, vocab, fw) == ["the", "cat", "in", "run"]
    # position 0 takes the capitalised list; the current word is no candidate
    assert allowed_candidates(words, 0, vocab, fw) == ["In"]


def test_causal_shortlist_widens_threshold_in_steps_of_five():
    class NextWord:  # a fixed conditional distribution, to pin down the threshold rule
        def next_word_logprobs(self, prefix, candidates):
            return np.array([-3.0, -9.9, -12.0, -14.9, -16.0, -24.0, -40.0])

    cands = list("abcdefg")
    assert causal_shortlist(NextWord(), [], cands, min_words=2).tolist() == [1, 1, 0, 0, 0, 0, 0]
    # -10 keeps 2 < 4; -15 keeps 4
    assert causal_shortlist(NextWord(), [], cands, min_words=4).tolist() == [1, 1, 1, 1, 0, 0, 0]
    assert causal_shortlist(NextWord(), [], cands, min_words=5).tolist() == [1, 1, 1, 1, 1, 0, 0]
    assert causal_shortlist(NextWord(), [], cands, min_words=50).all()


def test_trigram_vs_bigram_search_is_exact_deterministic_and_valid(data):
    tri, bi = ngram(data, "trigram"), ngram(data, "bigram")
    assert tri.mode == bi.mode == "exhaustive"
    vocab = top_vocabulary(data["freq"], 3000)
    starts = [s for s in choose_start_sentences(data["held"], 3, seed=1)]
    rows = [synthesize_triplet(s.sentence, tri, bi, vocab, data["fw"], seed=11 + k, natural_index=s.index)
            for k, s in enumerate(starts)]
    again = [synthesize_triplet(s.sentence, tri, bi, vocab, data["fw"], seed=11 + k, natural_index=s.index)
             for k, s in enumerate(starts)]
    assert rows == again  # deterministic given the seed
    fresh = {m: load_scorer(data["models"][m], cache=False, progress=False) for m in ("trigram", "bigram")}
    for row in rows:
        sents = [row["N"], row["S1"], row["S2"]]
        rescored = {m: dict(zip(sents, fresh[m].score(sents))) for m in fresh}
        check_triplet(row, rescored)
        for sent in ("S1", "S2"):
            assert len(row[sent].split()) == len(row["N"].split())
            assert no_repeats(row[sent], data["fw"]) or not no_repeats(row["N"], data["fw"])
            for step in row[f"history_{sent}"]:
                assert step["new"] in (vocab.first if step["position"] == 0 else vocab.rest)
    # the search does change sentences in both directions for these held-out starts
    assert sum(r["replacements_S1"] > 0 for r in rows) >= 1
    assert sum(r["replacements_S2"] > 0 for r in rows) >= 1
    assert all(r["controversiality"] > 0 for r in rows)
    # the search stops after 8 failed attempts in a row: the last 8 attempts replaced nothing
    for r in rows:
        for sent in ("S1", "S2"):
            last = max([h["step"] for h in r[f"history_{sent}"]], default=0)
            assert r[f"steps_{sent}"] - last == 8
    frame = triplets_frame(rows)
    assert list(frame.columns) == list(OUTPUT_COLUMNS)


def test_smollm2_vs_trigram_constraint_holds_when_rescored(data):
    """A short run of the causal shortlist path against the KenLM trigram: two held-out start
    sentences, the 12 most frequent words per vocabulary list, a shortlist of at least 4 words,
    two position attempts per search (SmolLM2 on a shared CPU is slow)."""
    tri = ngram(data, "trigram")
    smol = SearchModel("smollm2", load_scorer("smollm2-135m", cache=False, progress=False))
    assert smol.mode == "shortlist"
    vocab = top_vocabulary(data["freq"], 12)
    settings = SearchSettings(max_attempts=2, min_shortlist=4)
    starts = data["held"][:2]
    rows = [synthesize_triplet(s, smol, tri, vocab, data["fw"], seed=3 + k, settings=settings)
            for k, s in enumerate(starts)]
    fresh_smol = load_scorer("smollm2-135m", cache=False, progress=False)
    fresh_tri = load_scorer(data["models"]["trigram"], cache=False, progress=False)
    assert fresh_smol is not smol.scorer
    sents = list(dict.fromkeys(s for r in rows for s in (r["N"], r["S1"], r["S2"])))
    # one sentence per call, as the search scores them (float32 batches of other shapes round
    # differently by ~1e-6 nats)
    rescored = {"smollm2": {s: float(fresh_smol.score([s])[0]) for s in sents},
                "trigram": dict(zip(sents, fresh_tri.score(sents)))}
    for row in rows:
        check_triplet(row, rescored)
    assert sum(r["replacements_S1"] + r["replacements_S2"] for r in rows) >= 1
    assert max(r["controversiality"] for r in rows) > 0


def test_masked_lm_regression_heuristic(data, tmp_path):
    """Eq. 3 path: a small random masked LM (approx-ll) as the model to reject / accept."""
    import tiny_mlm  # tests/tiny_mlm.py

    held = data["held"]
    tok = tiny_mlm.train_wordpiece(held + list(data["freq"]["word"].head(3000)), vocab_size=3000)
    folder = tiny_mlm.save(tiny_mlm.random_masked_lm(tok, hidden=32, layers=1, heads=2, seed=1, init_range=0.3),
                           tok, tmp_path / "mlm")
    spec = f"hf-masked:{folder}?method=pll"  # PLL keeps each exact evaluation cheap
    mlm = SearchModel("mlm", load_scorer(spec, cache=False, progress=False))
    assert mlm.mode == search_mode(mlm.scorer) == "regression"
    tri = ngram(data, "trigram")
    vocab = top_vocabulary(data["freq"], 40)
    start = held[2]
    settings = SearchSettings(max_attempts=3)
    row = synthesize_triplet(start, tri, mlm, vocab, data["fw"], seed=2, settings=settings)
    fresh = load_scorer(spec, cache=False, progress=False)
    sents = [row["N"], row["S1"], row["S2"]]
    # one sentence per call, as the search scores them: float32 batches of other shapes round
    # differently (a CI machine gave 4.8e-6 nats apart on a 3-sentence batch of PLL rows)
    rescored = {"mlm": {s: float(fresh.score([s])[0]) for s in sents},
                "trigram": dict(zip(sents, tri.scorer.score(sents)))}
    check_triplet(row, rescored)
    assert row["replacements_S1"] + row["replacements_S2"] >= 1


def test_synthesize_rejects_bad_input(data):
    tri = ngram(data, "trigram")
    vocab = top_vocabulary(data["freq"], 5)
    with pytest.raises(ValueError, match="both 'trigram'"):
        synthesize("I like it", tri, tri, vocab, data["fw"], 0)
    with pytest.raises(ValueError, match="start sentence"):
        synthesize("   ", tri, ngram(data, "bigram"), vocab, data["fw"], 0)
    with pytest.raises(ValueError, match="max_failures"):
        SearchSettings(max_failures=0)
    with pytest.raises(ValueError, match="seed"):
        synthesize_triplet("I like it", tri, ngram(data, "bigram"), vocab, data["fw"], seed=-1)


def test_published_and_generated_triplets_load_alike(data, tmp_path):
    published = read_triplets("contstim:pll")
    assert len(published) == 285
    assert set(TRIPLET_COLUMNS) | {"controversiality"} <= set(published.columns)
    np.testing.assert_allclose(published["controversiality"], controversiality(published))
    tri, bi = ngram(data, "trigram"), ngram(data, "bigram")
    row = synthesize_triplet(data["held"][0], tri, bi, top_vocabulary(data["freq"], 200), data["fw"], seed=0)
    from contstim_bench.generate.triplet_table import write_triplets_dataset

    folder = write_triplets_dataset(triplets_frame([row]), tmp_path, {"models": [], "seed": 0})
    generated = read_triplets(tmp_path)
    assert read_triplets(folder).equals(generated)
    for col in TRIPLET_COLUMNS + ("controversiality",):
        assert generated[col].dtype == published[col].dtype, col
    assert generated.loc[0, "S1"] == row["S1"] and generated.loc[0, "controversiality"] == row["controversiality"]
    with pytest.raises(FileNotFoundError, match="no triplet table"):
        read_triplets(tmp_path / "triplets" / "synthetic_triplets")  # a folder, but no dataset in it
