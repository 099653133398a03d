"""BLiMP evaluation: aggregation on hand-made hits, the human reference from the real data,
accuracy of tiny causal and masked LMs (built here) on a paradigm subset against naive
per-sentence loops, the CLI, and bad input."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from contstim_bench import cli
from contstim_bench.benchmarks import blimp
from contstim_bench.data.load import load_config

SUBSET = ["adjunct_island", "anaphor_gender_agreement", "existential_there_quantifiers_1"]
LIMIT = 6


@pytest.fixture(scope="module")
def all_pairs():
    return load_config("blimp", "pairs", split="test").to_pandas()


@pytest.fixture(scope="module")
def human():
    return load_config("blimp", "human_validation", split="test").to_pandas()


@pytest.fixture(scope="module")
def subset(all_pairs):
    return blimp.select_pairs(all_pairs, SUBSET, LIMIT)


@pytest.fixture(scope="module")
def wordpiece(subset):
    import tiny_mlm  # tests/tiny_mlm.py

    return tiny_mlm.train_wordpiece(list(subset.sentence_good) + list(subset.sentence_bad), 300)


@pytest.fixture(scope="module")
def tiny_causal(tmp_path_factory, wordpiece):
    """Random 2-layer GPT-2 over the WordPiece vocabulary: ``hf-causal:<folder>?start=[CLS]``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import tiny_mlm  # tests/tiny_mlm.py

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(wordpiece), n_positions=64, n_embd=32, n_layer=2, n_head=2))
    folder = tiny_mlm.save(model.eval(), wordpiece, tmp_path_factory.mktemp("blimp-causal"))
    return f"hf-causal:{folder}?start=[CLS]", model.eval()


@pytest.fixture(scope="module")
def tiny_masked(tmp_path_factory, wordpiece):
    import tiny_mlm  # tests/tiny_mlm.py

    model = tiny_mlm.random_masked_lm(wordpiece, hidden=32, layers=2, seed=3)
    folder = tiny_mlm.save(model, wordpiece, tmp_path_factory.mktemp("blimp-masked"))
    return f"hf-masked:{folder}", model


# --------------------------------------------------------------------------- selection and aggregation


def test_select_pairs(all_pairs, subset):
    assert len(all_pairs) == 67000
    assert subset.paradigm.tolist() == [p for p in SUBSET for _ in range(LIMIT)]
    assert subset.pair_id.tolist() == list(range(LIMIT)) * 3
    assert len(blimp.select_pairs(all_pairs, "passive_1,passive_2")) == 2000
    with pytest.raises(ValueError, match=r"unknown BLiMP paradigm\(s\) \['adjunct_islands'\]"):
        blimp.select_pairs(all_pairs, ["adjunct_islands"])
    with pytest.raises(ValueError, match="limit must be a positive integer"):
        blimp.select_pairs(all_pairs, SUBSET, 0)


def test_accuracy_hand_made(all_pairs, human):
    pairs = blimp.select_pairs(all_pairs, ["adjunct_island", "passive_1", "anaphor_gender_agreement"], 3)
    # adjunct_island 2/3, anaphor_gender_agreement 3/3, passive_1 0/3 (paradigms sorted by name)
    hits = [True, False, True, True, True, True, False, False, False]
    acc = blimp.blimp_accuracy(pairs, hits, human)
    assert acc["paradigm"]["adjunct_island"]["accuracy"] == pytest.approx(2 / 3)
    assert acc["paradigm"]["passive_1"] == {"field": "syntax", "phenomenon": "argument_structure",
                                            "linguistics_term": "argument_structure", "n_pairs": 3, "hits": 0,
                                            "accuracy": 0.0, "human_accuracy": 0.95}
    # field syntax = mean of adjunct_island and passive_1 paradigm accuracies
    assert acc["field"]["syntax"]["accuracy"] == pytest.approx((2 / 3 + 0) / 2)
    assert acc["field"]["syntax"]["human_accuracy"] == pytest.approx((0.94 + 0.95) / 2)
    assert acc["field"]["morphology"]["accuracy"] == 1.0
    assert acc["phenomenon"]["island_effects"]["n_pairs"] == 3
    assert acc["overall"] == {"accuracy": pytest.approx(5 / 9), "n_paradigms": 3, "n_pairs": 9, "hits": 5,
                              "human_accuracy": pytest.approx((0.94 + 0.95 + 0.96) / 3)}


def test_human_reference_matches_paper(all_pairs, human):
    """Human accuracy aggregated like the models: overall 88.6 and per-phenomenon values of
    Kauf & Ivanova (2023) Table 3 (from Warstadt et al. 2020)."""
    acc = blimp.blimp_accuracy(all_pairs, np.ones(len(all_pairs), bool), human)
    assert round(100 * acc["overall"]["human_accuracy"], 1) == 88.6
    paper = {"anaphor_agreement": 97.5, "argument_structure": 90.0, "binding": 87.3, "control_raising": 83.9,
             "determiner_noun_agreement": 92.2, "ellipsis": 85.0, "filler_gap_dependency": 86.9,
             "irregular_forms": 97.0, "island_effects": 84.9, "npi_licensing": 88.1, "quantifiers": 86.6,
             "subject_verb_agreement": 90.9}
    assert {k: round(100 * v["human_accuracy"], 1) for k, v in acc["phenomenon"].items()} == paper
    assert acc["overall"]["n_paradigms"] == 67 and set(acc["field"]) == {
        "morphology", "semantics", "syntax", "syntax_semantics"}
    # the 7 pairs with identical sentences are misses under the strict rule
    same = all_pairs.sentence_good == all_pairs.sentence_bad
    assert int(same.sum()) == 7
    assert not blimp.pair_hits(all_pairs[same], np.zeros(7), np.zeros(7)).any()


def test_nan_score_names_pair(subset):
    good = np.zeros(len(subset))
    bad = np.full(len(subset), -1.0)
    bad[4] = np.nan
    with pytest.raises(ValueError, match="adjunct_island pair 4: score of sentence_bad"):
        blimp.pair_hits(subset, good, bad)


# --------------------------------------------------------------------------- models against naive loops


def _naive_causal(model, tok, sentence: str) -> float:
    import torch

    ids = [tok.convert_tokens_to_ids("[CLS]")] + tok(sentence, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)
    return float(sum(lp[i - 1, ids[i]] for i in range(1, len(ids))))


def _naive_pll(model, tok, sentence: str, word_l2r: bool) -> float:
    """Salazar et al. PLL (or Kauf & Ivanova PLL-word-l2r): one masked copy per token."""
    import torch

    enc = tok(sentence)
    ids, words = enc["input_ids"], enc.word_ids()
    total = 0.0
    for i, w in enumerate(words):
        if w is None:
            continue
        x = list(ids)
        for j in range(i, len(ids)):
            if j == i or (word_l2r and words[j] == w):
                x[j] = tok.mask_token_id
        with torch.no_grad():
            lp = torch.log_softmax(model(input_ids=torch.tensor([x])).logits[0, i].double(), -1)
        total += float(lp[ids[i]])
    return total


def _blimp(model, method=None, cache=None, **options):
    """The BLiMP result of ``model`` through the one driver (what ``contstim blimp`` runs)."""
    from contstim_bench.driver import RunOptions, evaluate

    return evaluate(model, ["blimp"], options=RunOptions(progress=False, cache=cache),
                    benchmark_options={"method": method, **options}, log=lambda m: None)["blimp"]


def test_ready_scorer_takes_no_method():
    class Chars:  # never scores: the method is refused first
        spec = "test:chars"

    with pytest.raises(TypeError, match="spec must be a model spec string or a Scorer"):
        _blimp(Chars(), "pll", paradigms=SUBSET, limit=LIMIT)
    with pytest.raises(ValueError, match="a ready scorer already has its method"):
        blimp.run_blimp(Chars(), "pll", paradigms=SUBSET, limit=LIMIT, log=lambda m: None)


def test_causal_model_against_naive_loop(tiny_causal, wordpiece, subset):
    spec, model = tiny_causal
    res = _blimp(spec, paradigms=SUBSET, limit=LIMIT)
    rows = pd.DataFrame(res["scores"]["rows"], columns=res["scores"]["columns"])
    naive_good = [_naive_causal(model, wordpiece, s) for s in subset.sentence_good]
    naive_bad = [_naive_causal(model, wordpiece, s) for s in subset.sentence_bad]
    np.testing.assert_allclose(rows.logprob_good, naive_good, atol=1e-4)
    np.testing.assert_allclose(rows.logprob_bad, naive_bad, atol=1e-4)
    hits = np.array(naive_good) > np.array(naive_bad)
    acc = res["accuracy"]
    assert acc["overall"]["hits"] == int(hits.sum())
    for k, p in enumerate(SUBSET):
        assert acc["paradigm"][p]["accuracy"] == pytest.approx(hits[k * LIMIT:(k + 1) * LIMIT].mean())
    assert acc["overall"]["accuracy"] == pytest.approx(hits.mean())
    assert res["benchmark"]["paradigms"] == SUBSET and res["benchmark"]["limit"] == LIMIT
    assert res["provenance"]["dataset_fingerprint"] == res["benchmark"]["dataset_fingerprint"]


@pytest.mark.parametrize("method", ["pll", "pll-word-l2r"])
def test_masked_methods_against_naive_loop(tiny_masked, wordpiece, subset, method):
    spec, model = tiny_masked
    res = _blimp(spec, method, paradigms=SUBSET, limit=LIMIT, cache=False)
    assert res["model"]["spec"].endswith(f"method={method}")
    rows = pd.DataFrame(res["scores"]["rows"], columns=res["scores"]["columns"])
    idx = [0, 7, 14]  # one pair of each paradigm, checked token by token
    for i in idx:
        for col, which in (("logprob_good", "sentence_good"), ("logprob_bad", "sentence_bad")):
            naive = _naive_pll(model, wordpiece, subset[which].iloc[i], method == "pll-word-l2r")
            assert rows[col].iloc[i] == pytest.approx(naive, abs=1e-4)
    hits = rows.logprob_good > rows.logprob_bad
    assert res["accuracy"]["overall"]["accuracy"] == pytest.approx(hits.mean())


def test_cli_blimp_and_errors(tiny_causal, tiny_masked, tmp_path, capsys):
    spec, _ = tiny_causal
    out = tmp_path / "b.json"
    assert cli.main(["blimp", "--model", spec, "--paradigms", ",".join(SUBSET[:2]), "--limit", "3",
                     "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "overall" in printed and "per phenomenon:" in printed and "adjunct_island" in printed
    data = json.loads(out.read_text())
    assert data["format"] == "contstim-bench-blimp" and data["accuracy"]["overall"]["n_pairs"] == 6
    assert {"package_version", "libraries", "created"} <= set(data["provenance"])
    # --method is for masked models only; unknown methods and paradigms are named
    assert cli.main(["blimp", "--model", spec, "--method", "pll", "--output", str(tmp_path / "x.json")]) == 1
    assert "applies to masked LMs" in capsys.readouterr().err
    mspec, _ = tiny_masked
    assert cli.main(["blimp", "--model", mspec, "--method", "pll-foo", "--output", str(tmp_path / "x.json")]) == 1
    assert "unknown masked-LM method 'pll-foo'" in capsys.readouterr().err
    assert cli.main(["blimp", "--model", spec, "--paradigms", "nope", "--output", str(tmp_path / "x.json")]) == 1
    assert "unknown BLiMP paradigm(s) ['nope']" in capsys.readouterr().err
    assert cli.main(["blimp", "--model", "hf-causal:/nonexistent/blimp-model", "--limit", "1",
                     "--output", str(tmp_path / "x.json")]) == 1
    assert "/nonexistent/blimp-model" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


# --------------------------------------------------------------------------- methods side by side (Kauf & Ivanova 2023)


def test_reference_table_human_row_is_the_data(all_pairs, human):
    """The human row of the stored Table 3 equals the human accuracy computed from the real
    validation data (to the paper's one decimal)."""
    from contstim_bench.benchmarks.blimp_reference import KAUF_IVANOVA_2023_TABLE3, PHENOMENA, paper_model

    acc = blimp.blimp_accuracy(all_pairs, np.ones(len(all_pairs), bool), human)
    ref = KAUF_IVANOVA_2023_TABLE3[("human", "human")]
    assert 100 * acc["overall"]["human_accuracy"] == pytest.approx(ref["overall"], abs=0.051)
    for p in PHENOMENA:
        assert 100 * acc["phenomenon"][p]["human_accuracy"] == pytest.approx(ref[p], abs=0.051), p
    assert KAUF_IVANOVA_2023_TABLE3[("roberta-large", "pll-word-l2r")]["overall"] == 87.5
    assert paper_model("hf-masked:bert-base-cased?method=pll") == "bert-base-cased"
    assert paper_model("hf-masked:/models/roberta-large/") == "roberta-large"
    assert paper_model("smollm2-135m") is None


def test_cli_blimp_methods_side_by_side(tiny_masked, tmp_path, capsys):
    mspec, _ = tiny_masked
    assert cli.main(["blimp", "--model", mspec, "--method", "pll", "--method", "pll-word-l2r",
                     "--output", str(tmp_path / "b.json")]) == 1
    assert "this run writes 2 results: give a folder instead" in capsys.readouterr().err
    out = tmp_path / "b"
    assert cli.main(["blimp", "--model", mspec, "--method", "pll", "--method", "pll-word-l2r",
                     "--method", "pll-whole-word", "--method", "pll-sentence-l2r", "--paradigms", ",".join(SUBSET),
                     "--limit", str(LIMIT), "--output", str(out), "--quiet"]) == 0
    table = capsys.readouterr().out
    for method, name in (("pll", "PLL-original"), ("pll-word-l2r", "PLL-word-l2r"), ("pll-whole-word", "PLL-whole-word"),
                         ("pll-sentence-l2r", "PLL-sentence-l2r")):
        data = json.loads((out / f"blimp.{method}.json").read_text())
        assert data["model"]["spec"].endswith(f"method={method}")
        single = _blimp(mspec, method, paradigms=SUBSET, limit=LIMIT)
        assert data["accuracy"] == single["accuracy"]
        line = next(x for x in table.splitlines() if x.startswith(f"{name} (this run)"))
        assert float(line.split()[3]) == pytest.approx(round(100 * single["accuracy"]["overall"]["accuracy"], 1))
    # the paper's rows beside (all four models: a local folder is none of them) and the human row
    assert "BERT (base), PLL-word-l2r" in table and "RoBERTa (large), PLL-whole-word" in table
    assert re.search(r"BERT \(base\), PLL-sentence-l2r +58\.7 ", table)  # Table 3, Appendix G
    assert "human (Warstadt et al. 2020)" in table and "covers a subset of BLiMP" in table
    assert sorted(p.name for p in out.iterdir()) == sorted(f"blimp.{m}.json" for m in ("pll", "pll-word-l2r",
                                                                                       "pll-whole-word",
                                                                                       "pll-sentence-l2r"))
    assert cli.main(["blimp", "--model", mspec, "--method", "pll", "--method", "pll-nope",
                     "--output", str(tmp_path / "other")]) == 1
    assert "unknown masked-LM method 'pll-nope'" in capsys.readouterr().err
