"""The token-count control of Golan et al. (2023), Table S2: hand-computed binomial tests on a
tiny table, the paper's own p-values recomputed from its counts, and the pairs the test uses on
the shipped synthetic triplets (40 per transformer, as the table's caption says)."""
from __future__ import annotations

import pandas as pd
import pytest

from contstim_bench.analysis.token_counts import count_pairs, synthetic_pairs, token_count_control, token_count_table
from contstim_bench.benchmarks.contstim_golan import reference_logprobs, selected_triplets, token_count_item

TRANSFORMERS = ("gpt2", "roberta", "electra", "bert", "xlm")


def test_six_pairs_by_hand():
    # seven pairs (x_i, y_i); model A prefers y_i (higher log-prob) except pair 7, a tie
    pairs = [(f"x{i}", f"y{i}") for i in range(1, 8)]
    lp_a = {**{f"x{i}": -20.0 for i in range(1, 8)}, **{f"y{i}": -10.0 for i in range(1, 7)}, "y7": -20.0}
    lp_b = {**{f"x{i}": -10.0 for i in range(1, 8)}, **{f"y{i}": -20.0 for i in range(1, 8)}}  # B prefers x_i
    tokens = {**{f"x{i}": 9 for i in range(1, 8)}, "y1": 10, "y2": 10, "y3": 10, "y4": 10, "y5": 10, "y6": 9, "y7": 12}
    # A: accepted y1..y5 have more tokens (5), y6 equal (1), pair 7 a model tie
    assert count_pairs(pairs, lp_a, tokens) == (5, 1, 0, 1)
    # B accepts x_i: x has fewer tokens in pairs 1-5 and 7 (rejected has more: 6), equal in pair 6
    assert count_pairs(pairs, lp_b, tokens) == (0, 1, 6, 0)
    # B again with pair 1 and 2 reversed in its preference: accepted more 2? no -- x1 and y1 swapped below
    lp_c = {**lp_b, "y1": -5.0}  # C accepts y1 (10 tokens > 9): accepted more 1, rejected more 5, equal 1
    assert count_pairs(pairs, lp_c, tokens) == (1, 1, 5, 0)
    rows = {r.model: r for r in token_count_table({"A": count_pairs(pairs, lp_a, tokens),
                                                   "C": count_pairs(pairs, lp_c, tokens)})}
    # A: 5 of 5 discordant pairs go to the accepted sentence; two-sided binomial p =
    #   P(X=5) + P(X=0) = 2 / 2**5 = 0.0625
    assert rows["A"].p == pytest.approx(0.0625, abs=1e-15)
    # C: 1 of 6; p = P(X<=1) + P(X>=5) = 2 * (1 + 6) / 2**6 = 14/64 = 0.21875
    assert rows["C"].p == pytest.approx(14 / 64, abs=1e-15)
    # Benjamini-Hochberg over 2: A (smallest) 0.0625 * 2/1 = 0.125; C 0.21875 * 2/2 = 0.21875
    assert rows["A"].p_bh == pytest.approx(0.125, abs=1e-15) and rows["C"].p_bh == pytest.approx(14 / 64, abs=1e-15)
    assert not rows["A"].significant and rows["A"].n_pairs == 7 and rows["A"].model_ties == 1
    # nothing to test when no pair's counts differ
    assert token_count_table({"W": (0, 7, 0, 0)})[0].p is None


def test_the_papers_p_values_from_its_counts():
    # Table S2's counts (accepted more, equal, rejected more); "XLNet" in the paper's table is XLM,
    # the fifth transformer of the study (the authors' code tests every transformer it evaluated)
    counts = {"gpt2": (24, 13, 3, 0), "roberta": (6, 18, 16, 0), "electra": (12, 21, 7, 0), "bert": (4, 8, 28, 0),
              "xlm": (2, 16, 22, 0)}
    rows = {r.model: r for r in token_count_table(counts)}
    assert round(rows["roberta"].p_bh, 4) == 0.0656 and round(rows["electra"].p_bh, 4) == 0.3593
    for m in ("gpt2", "bert", "xlm"):
        assert rows[m].p_bh < 1e-4 and rows[m].significant
    assert not rows["roberta"].significant and not rows["electra"].significant


def test_targeted_pairs_and_a_model_the_design_did_not_include():
    t = pd.DataFrame({"m1": ["a", "a", "b", "lstm"], "m2": ["b", "lstm", "c", "c"],
                      "S1": ["p", "q", "r", "s"], "S2": ["P", "Q", "R", "S"]})
    assert synthetic_pairs(t, "a", {"a", "b", "c"}) == ([("p", "P")], "targeted")
    assert synthetic_pairs(t, "c", {"a", "b", "c"}) == ([("r", "R")], "targeted")
    assert synthetic_pairs(t, "new", {"new"}) == ([("p", "P"), ("q", "Q"), ("r", "R"), ("s", "S")], "all")
    with pytest.raises(ValueError, match="no column 'S2'"):
        synthetic_pairs(t.drop(columns="S2"), "a", {"a"})


def test_shipped_triplets_give_40_pairs_per_transformer(datasets):
    triplets = selected_triplets("main")
    logprobs = reference_logprobs("main")
    assert len(triplets) == 360
    for m in TRANSFORMERS:
        pairs, selection = synthetic_pairs(triplets, m, TRANSFORMERS)
        assert (len(pairs), selection) == (40, "targeted")
        # the model prefers the sentence made to be accepted by it in every one (S1 is m1's)
        rows = triplets[(triplets.m1 == m) | (triplets.m2 == m)]
        rows = rows[rows.m1.isin(TRANSFORMERS) & rows.m2.isin(TRANSFORMERS)]
        for m1, s1, s2 in zip(rows.m1, rows.S1, rows.S2):
            accepted, rejected = (s1, s2) if m1 == m else (s2, s1)
            assert logprobs[m][accepted] > logprobs[m][rejected]
    # the character count: the authors' fallback for a model without a tokenizer; recounted here
    chars = {m: (lambda ss: [len(s) for s in ss]) for m in TRANSFORMERS}
    item = token_count_item("main", logprobs, chars)
    got = {r["model"]: (r["accepted_more"], r["equal"], r["rejected_more"]) for r in item["data"]["rows"]}
    for m in TRANSFORMERS:
        rows = triplets[((triplets.m1 == m) | (triplets.m2 == m)) & triplets.m1.isin(TRANSFORMERS)
                        & triplets.m2.isin(TRANSFORMERS)]
        diff = [len(s1) - len(s2) if m1 == m else len(s2) - len(s1) for m1, s1, s2 in zip(rows.m1, rows.S1, rows.S2)]
        assert got[m] == (sum(d > 0 for d in diff), sum(d == 0 for d in diff), sum(d < 0 for d in diff))
    assert item["id"] == "TS2" and item["kind"] == "token_counts"
    # a word-level count (every sentence has 8 words): nothing differs, nothing to test
    words = token_count_control(triplets, logprobs, {m: (lambda ss: [len(s.split()) for s in ss]) for m in TRANSFORMERS})
    assert all((r.equal, r.p) == (40, None) for r in words)
