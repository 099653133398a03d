"""Tables 1-3 and the token-count control (Golan et al. 2023) for a submitted model: the shipped
SmolLM2-135M result (leaderboard/results/smollm2-135m.json: per-sentence log-probabilities of
the pll experiment), one row recounted by hand from the trials."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contstim_bench.benchmarks.contstim import load_experiment
from contstim_bench.benchmarks.contstim_golan import result_token_counts, scorer_token_counter
from contstim_bench.benchmarks.model_report import model_report

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results" / "smollm2-135m.json"


@pytest.fixture(scope="module")
def smollm2_result():
    return json.loads(SHIPPED.read_text(encoding="utf-8"))


def test_table_2_for_smollm2_by_hand(datasets, smollm2_result):
    items = {i["id"]: i for i in model_report(smollm2_result, datasets, seed=0)["items"]}  # its report page
    # the pll experiment has synthetic pairs only
    assert items["pll_T1"]["unavailable"] == "the pll experiment has no controversial natural trials"
    assert items["pll_T3"]["unavailable"].startswith("the pll experiment has no natural")
    (row,) = items["pll_T2"]["data"]["rows"]
    lp = smollm2_result["logprobs"]
    trials, refs = load_experiment("pll")
    t = trials[trials.trial_type == "synthetic_vs_synthetic"]
    # by hand: each trial is right when the model prefers the sentence the participant chose
    chose2 = t.rating.to_numpy() >= 4
    prefers2 = np.array([lp[b] > lp[a] for a, b in zip(t.sentence1, t.sentence2)])
    per_pair = pd.Series((chose2 == prefers2).astype(float), index=t.pair_id.to_numpy()).groupby(level=0).mean()
    assert row["accuracy"] == pytest.approx(per_pair.min(), abs=1e-12)
    assert row["n_tied_pairs"] == int((per_pair == per_pair.min()).sum()) and row["selection"] == "all"
    rows = t[t.pair_id == row["pair_id"]]
    a, b = row["sentence1"], row["sentence2"]
    assert {a, b} == set(rows.iloc[0][["sentence1", "sentence2"]])
    n_a = int(sum((r.sentence2 == a) == (r.rating >= 4) for r in rows.itertuples()))
    assert tuple(row["human_choices"]) == (n_a, len(rows) - n_a) and n_a > len(rows) / 2
    assert tuple(row["logprob_model"]) == (lp[a], lp[b]) and lp[b] > lp[a]  # SmolLM2 prefers the rejected one
    # model 2: a model the pair targets, preferring what most participants chose
    targeted = set(rows.iloc[0][["sentence1_accept_model", "sentence1_reject_model"]])
    assert row["other"] in targeted and refs[row["other"]][a] > refs[row["other"]][b]
    assert tuple(row["logprob_other"]) == (refs[row["other"]][a], refs[row["other"]][b])
    # the pair: 24 of 30 participants chose the sentence that SmolLM2 finds 30 nats less probable
    # (and that the PLL read-out of RoBERTa, which targeted the pair, prefers)
    assert (row["pair_id"], row["accuracy"], row["human_choices"], row["other"]) == (
        "7ab706150286ccdb", 0.2, (24, 6), "roberta_has_a_mouth")
    assert a == "If undergraduates have studied elsewhere check exam results"


def test_token_counts_of_a_submitted_model(datasets, smollm2_result):
    chars = lambda ss: [len(s) for s in ss]  # noqa: E731  (a stand-in tokenizer: one token per character)
    items, skipped = result_token_counts(smollm2_result, chars)
    assert skipped == {} and [i["id"] for i in items] == ["TS2"]
    (row,) = items[0]["data"]["rows"]
    assert (row["model"], row["selection"], row["n_pairs"]) == ("hf-causal:smollm2-135m", "all", 120)
    lp = smollm2_result["logprobs"]
    from contstim_bench.benchmarks.contstim_golan import selected_triplets

    t = selected_triplets("pll")
    diff = [len(s1) - len(s2) if lp[s1] > lp[s2] else len(s2) - len(s1) for s1, s2 in zip(t.S1, t.S2)]
    assert (row["accepted_more"], row["equal"], row["rejected_more"]) == (
        sum(d > 0 for d in diff), sum(d == 0 for d in diff), sum(d < 0 for d in diff))
    # a model without word pieces has nothing to test
    items, skipped = result_token_counts(smollm2_result, None)
    assert items == [] and "no word pieces" in skipped["TS2/pll"]
    assert scorer_token_counter(object()) is None
