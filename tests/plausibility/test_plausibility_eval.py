"""Plausibility evaluation (Kauf et al. 2024): metrics on hand-made scores, human accuracy from the
real data, the conditional log-probability definition, the runner and the CLI with a tiny causal
LM built here, and bad input.  Real SmolLM2 only on a handful of texts."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from contstim_bench import cli
from contstim_bench.data.plausibility_human import human_accuracy_dtfit, human_accuracy_eventsadapt
from contstim_bench.benchmarks import plausibility as runner
from contstim_bench.plausibility import conditional, metrics
from contstim_bench.report.plausibility import summary_table
from contstim_bench.scoring.base import Scorer
from plausibility_runs import plausibility_result as _plaus

# --------------------------------------------------------------------------- fixtures



@pytest.fixture(scope="module")
def tiny_causal(tmp_path_factory, tables):
    """A randomly initialised 2-layer GPT-2 with a WordPiece tokenizer trained on the stimuli,
    saved as a Hugging Face folder: spec ``hf-causal:<folder>?start=[CLS]``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import tiny_mlm  # tests/tiny_mlm.py
    from contstim_bench.scoring.prompting import TEMPLATES

    sn = tables["socialn400"]
    corpus = (list(tables["eventsadapt"].sentence) + list(tables["dtfit"].sentence_plausible)
              + list(tables["dtfit"].sentence_implausible) + list(sn.context) + list(sn.target_sentence)
              + [t.text for t in TEMPLATES.values()] + ["Answer: 1 2 3 4 5 6 7 Yes No"])
    tok = tiny_mlm.train_wordpiece(corpus, 600)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=512, n_embd=32, n_layer=2, n_head=2))
    folder = tiny_mlm.save(model.eval(), tok, tmp_path_factory.mktemp("tiny-causal"))
    return f"hf-causal:{folder}?start=[CLS]"


class CharScorer(Scorer):
    """Hand-checkable scorer: log p(text) = -0.5 * number of characters."""

    method = "chars"

    def __init__(self):
        super().__init__(cache=False)
        self.spec = "test:chars"

    def fingerprint(self) -> str:
        return "chars-v1"

    def _score_unique(self, sentences):
        return np.array([-0.5 * len(s) for s in sentences])


# --------------------------------------------------------------------------- Experiment 1 metrics


def test_experiment1_pairs_counts(pairs):
    counts = pairs.groupby(["subset", "voice"]).size().to_dict()
    assert counts == {("dtfit", "active"): 395, ("eventsadapt_aa", "active"): 129, ("eventsadapt_aa", "passive"): 129,
                      ("eventsadapt_ai", "active"): 128, ("eventsadapt_ai", "passive"): 128}
    assert pairs.pair_id.is_unique


def test_human_accuracy_matches_paper(pairs, tables):
    res = metrics.experiment1_accuracy(pairs, np.ones(len(pairs), bool))
    # Kauf et al. 2024: humans 1.0 on EventsAdapt AI, 0.95 on AA (active voice), 0.99 on DTFit
    assert res["eventsadapt_ai"]["active"]["human_accuracy"] == 1.0
    assert res["eventsadapt_aa"]["active"]["human_accuracy"] == pytest.approx(122 / 129)
    assert round(res["eventsadapt_aa"]["active"]["human_accuracy"], 2) == 0.95
    assert res["dtfit"]["both"]["human_accuracy"] == pytest.approx(391 / 395)
    # the same numbers as the data module's own functions
    human = human_accuracy_eventsadapt(tables["eventsadapt"], voice="active")
    assert res["eventsadapt_ai"]["active"]["human_accuracy"] == human["AI"]
    assert res["eventsadapt_aa"]["active"]["human_accuracy"] == human["AAN"]
    assert res["dtfit"]["both"]["human_accuracy"] == human_accuracy_dtfit(tables["dtfit"])
    both = human_accuracy_eventsadapt(tables["eventsadapt"], voice=None)
    assert res["eventsadapt_aa"]["both"]["human_accuracy"] == pytest.approx(both["AAN"]) == pytest.approx(247 / 258)


def test_experiment1_accuracy_hand_made(pairs):
    # 2 AI active, 1 AI passive, 2 AA active, 3 DTFit pairs with hand-made scores
    sub = pd.concat([pairs[(pairs.subset == "eventsadapt_ai") & (pairs.voice == "active")].head(2),
                     pairs[(pairs.subset == "eventsadapt_ai") & (pairs.voice == "passive")].head(1),
                     pairs[(pairs.subset == "eventsadapt_aa") & (pairs.voice == "active")].head(2),
                     pairs[pairs.subset == "dtfit"].head(3)], ignore_index=True)
    good = [-10.0, -12.0, -20.0, -15.0, -9.0, -30.0, -31.0, -8.0]
    bad = [-11.0, -12.0, -19.0, -16.5, -9.5, -29.0, -40.0, -8.5]
    # hits:  yes    tie=no  no     yes    yes    no     yes    yes
    hits = metrics.pair_hit_vector(sub, good, bad)
    assert hits.tolist() == [True, False, False, True, True, False, True, True]
    res = metrics.experiment1_accuracy(sub, hits)
    assert res["eventsadapt_ai"]["active"]["accuracy"] == 0.5
    assert res["eventsadapt_ai"]["passive"]["accuracy"] == 0.0
    assert res["eventsadapt_ai"]["both"] == {"n_pairs": 3, "hits": 1, "accuracy": pytest.approx(1 / 3),
                                             "human_accuracy": 1.0, "chance": 0.5}
    assert res["eventsadapt_aa"]["active"]["accuracy"] == 1.0
    assert res["dtfit"]["both"]["accuracy"] == pytest.approx(2 / 3)
    assert set(res["dtfit"]) == {"active", "both"}


def test_judgment_and_choice_rules(pairs):
    sub = pairs[(pairs.subset == "eventsadapt_ai") & (pairs.voice == "active")].head(4).reset_index(drop=True)
    # Sentence Judgment: hit only when plausible > 0 and implausible < 0 (chance 0.25)
    j = metrics.pair_hit_vector(sub, [1.0, 1.0, -1.0, 0.2], [-1.0, 0.5, -2.0, 0.0], rule="judgment")
    assert j.tolist() == [True, False, False, False]
    # Sentence Choice I: log-odds of "1"; plausible first hit when > 0, plausible second when < 0
    c = metrics.choice_hit_vector(sub, [2.0, -1.0, 0.5, 0.3], [-1.0, -3.0, 0.2, 1.0])
    assert c.tolist() == [[True, True], [False, True], [True, False], [True, False]]
    res = metrics.experiment1_accuracy(sub, c, chance=0.5)["eventsadapt_ai"]["active"]
    assert res["accuracy"] == pytest.approx(5 / 8)
    assert res["accuracy_plausible_first"] == 0.75 and res["accuracy_plausible_second"] == 0.5
    assert res["n_presentations"] == 8 and res["hits"] == 5
    # averaged over both orders: (first - second) > 0 -> 3 > 0, 2 > 0, 0.3 > 0, -0.7 < 0
    avg = metrics.choice_order_averaged_hits(sub, [2.0, -1.0, 0.5, 0.3], [-1.0, -3.0, 0.2, 1.0])
    assert avg.tolist() == [True, True, True, False]


# --------------------------------------------------------------------------- Experiment 2 metrics


def _frame(values):
    rows = [(item, cond, nc, cx) for item, conds in values.items() for cond, (nc, cx) in conds.items()]
    return pd.DataFrame(rows, columns=["item", "condition", "nc", "cx"])


def test_context_metrics_hand_made():
    f = _frame({
        1: {"Control": (-5, -4), "SemAnom": (-9, -9), "Critical": (-9, -6)},   # GP yes, CDP yes, CS yes
        2: {"Control": (-8, -7), "SemAnom": (-6, -5), "Critical": (-7, -6)},   # GP no, CDP yes, CS no
        3: {"Control": (-3, -3), "SemAnom": (-8, -4), "Critical": (-8, -8)},   # GP yes, CDP tie, CS no
    })
    hits = metrics.context_metric_hits(f, "nc", "cx")
    assert hits.general_plausibility.tolist() == [True, False, True]
    assert hits.context_dependent_plausibility.tolist() == [True, True, False]
    assert hits.context_sensitivity.tolist() == [True, False, False]
    res = metrics.context_metrics(f, "nc", "cx")
    assert res["general_plausibility"] == {"n_items": 3, "hits": 2, "accuracy": pytest.approx(2 / 3), "ties": 0}
    assert res["context_dependent_plausibility"]["ties"] == 1
    assert res["context_sensitivity"]["accuracy"] == pytest.approx(1 / 3)
    means = metrics.condition_means(f, "nc", "cx")
    assert means["no_context"]["Critical"] == pytest.approx(-8.0)
    assert means["context"]["SemAnom"] == pytest.approx(-6.0)


def test_human_context_metrics_from_raw_judgments(tables):
    """The human analogue from the stimulus table's rates equals the one recomputed from the
    per-subject judgments."""
    stim = tables["socialn400"]
    res = metrics.context_metrics(stim, runner.HUMAN_NO_CONTEXT, runner.HUMAN_CONTEXT)
    j = tables["socialn400_judgments"]
    rates = j.groupby(["item", "condition", "perspective"]).response.mean().unstack("perspective").reset_index()
    again = metrics.context_metrics(rates, "no_context", "context")
    assert res == again
    assert res["general_plausibility"]["n_items"] == 100
    # Critical sentences make sense far more often with the context than without it
    means = metrics.condition_means(stim, runner.HUMAN_NO_CONTEXT, runner.HUMAN_CONTEXT)
    assert means["context"]["Critical"] > 0.8 > 0.35 > means["no_context"]["Critical"]
    assert res["context_dependent_plausibility"]["accuracy"] > 0.9


def test_context_metrics_errors():
    f = _frame({1: {"Control": (-5, -4), "SemAnom": (-9, -9), "Critical": (float("nan"), -6)}})
    with pytest.raises(ValueError, match="item 1 Critical"):
        metrics.context_metric_hits(f, "nc", "cx")
    g = _frame({1: {"Control": (-5, -4), "SemAnom": (-9, -9)}})
    with pytest.raises(ValueError, match="no Critical rows"):
        metrics.context_metric_hits(g, "nc", "cx")
    with pytest.raises(ValueError, match="pair EA001-active"):
        metrics.pair_hit_vector(pd.DataFrame({"pair_id": ["EA001-active"]}), [float("nan")], [1.0])


# --------------------------------------------------------------------------- conditional values


def test_conditional_values_hand_checkable(tables):
    stim = tables["socialn400"].head(6)
    values, texts = conditional.socialn400_values(CharScorer(), stim)
    r = stim.iloc[0]  # item 1 Control: "I went to a mechanic to fix my car." / "My car has big" + "wheels"
    assert (r.context, r.prefix, r.target_word) == ("I went to a mechanic to fix my car.", "My car has big", "wheels")
    v = values.iloc[0]
    assert v.word_no_context == pytest.approx(-0.5 * len(" wheels"))
    assert v.word_context == pytest.approx(-0.5 * len(" wheels"))
    assert v.sentence_no_context == pytest.approx(-0.5 * len("My car has big wheels now."))
    assert v.sentence_context == pytest.approx(-0.5 * len(" My car has big wheels now."))
    preceding = "I went to a mechanic to fix my car. My car has big"
    assert texts[preceding] == pytest.approx(-0.5 * len(preceding))


def test_conditional_is_chain_rule_for_causal_lm(tiny_causal):
    """score(y + ' ' + x) - score(y) equals the sum of x's token log-probabilities given y."""
    import torch

    from contstim_bench.scoring.registry import load_scorer

    sc = load_scorer(tiny_causal, cache=False, progress=False)
    y, x = "The girl dressed up as a canary for Halloween. The girl had a little", "beak"
    frame = pd.DataFrame([{"item": 1, "condition": "Critical", "context": y.split(". ")[0] + ".",
                           "target_sentence": "The girl had a little beak.", "target_word": x,
                           "prefix": "The girl had a little"}])
    values, _ = conditional.socialn400_values(sc, frame)
    ids_y = [sc.start_id] + sc.tokenizer(y, add_special_tokens=False)["input_ids"]
    ids_x = sc.tokenizer(" " + x, add_special_tokens=False)["input_ids"]
    full = torch.tensor([ids_y + ids_x])
    with torch.no_grad():
        lp = torch.log_softmax(sc.model(full).logits[0].double(), -1)
    naive = sum(float(lp[len(ids_y) - 1 + k, t]) for k, t in enumerate(ids_x))
    assert values.word_context[0] == pytest.approx(naive, abs=1e-4)


# --------------------------------------------------------------------------- runner and CLI

LIMIT = 6  # pairs per subset and voice, SocialN400 items: keeps the module fast on a busy CPU


@pytest.fixture(scope="module")
def tiny_result(tiny_causal):
    return _plaus(tiny_causal, progress=False, log=lambda m: None, limit=LIMIT)


def test_run_plausibility_logprobs(tiny_result, pairs, tables):
    r = tiny_result
    pairs = runner.limit_pairs(pairs, LIMIT)
    assert len(pairs) == 5 * LIMIT and r["benchmark"]["limit"] == LIMIT
    assert r["method"] == "logprobs" and r["format"] == "contstim-bench-plausibility"
    lp = r["scores"]["experiment1"]["sentence_scores"]
    assert len(lp) == len(set(pairs.sentence_plausible) | set(pairs.sentence_implausible))
    # every accuracy recomputes from the stored scores
    hits = metrics.pair_hit_vector(pairs, pairs.sentence_plausible.map(lp), pairs.sentence_implausible.map(lp))
    assert r["experiment1"] == metrics.experiment1_accuracy(pairs, hits)
    assert r["experiment1"]["eventsadapt_ai"]["active"]["human_accuracy"] == 1.0
    e2 = r["experiment2"]
    values = pd.DataFrame(r["scores"]["experiment2"]["values"])
    assert len(values) == 3 * LIMIT and values["item"].tolist() == sorted(values["item"])
    assert e2["word"]["metrics"] == metrics.context_metrics(values, "word_no_context", "word_context")
    assert e2["sentence"]["metrics"] == metrics.context_metrics(values, "sentence_no_context", "sentence_context")
    texts = r["scores"]["experiment2"]["logprobs"]
    row = tables["socialn400"].iloc[2]
    assert values.sentence_context[2] == pytest.approx(
        texts[f"{row.context} {row.target_sentence}"] - texts[row.context])
    prov = r["provenance"]
    assert prov["dataset_fingerprint"] == r["benchmark"]["dataset_fingerprint"]
    assert {"package_version", "libraries", "created", "git_commit"} <= set(prov)
    assert r["model"]["fingerprint"]


def test_cli_plausibility_writes_json_and_uses_cache(tiny_causal, tmp_path, capsys):
    out = tmp_path / "p.json"
    assert cli.main(["plausibility", "--model", tiny_causal, "--output", str(out), "--limit", "4"]) == 0
    table = capsys.readouterr().out
    assert "EventsAdapt AA (unlikely)" in table and "Context Sensitivity" in table
    first = json.loads(out.read_text())
    assert first["experiment2"]["word"]["metrics"]["general_plausibility"]["n_items"] == 4
    # second run: served from the score cache
    assert cli.main(["plausibility", "--model", tiny_causal, "--output", str(out), "--quiet", "--limit", "4"]) == 0
    second = json.loads(out.read_text())
    assert second["provenance"]["model_sentences_scored"] == 0
    assert second["experiment1"] == first["experiment1"]


def test_run_plausibility_prompt_choice(tiny_causal, pairs):
    r = _plaus(tiny_causal, "prompt:sentence-choice-1", progress=False, log=lambda m: None,
                                limit=LIMIT)
    pairs = runner.limit_pairs(pairs, LIMIT)
    assert r["method"] == "prompt:sentence-choice-1"
    assert "experiment2" not in r and "experiment2" in r["skipped"]
    odds = pd.DataFrame(r["scores"]["experiment1"]["pair_log_odds"])
    assert odds.pair_id.tolist() == pairs.pair_id.tolist()
    hits = metrics.choice_hit_vector(pairs, odds.plausible_first, odds.plausible_second)
    expected = metrics.experiment1_accuracy(pairs, hits)
    avg = metrics.experiment1_accuracy(
        pairs, metrics.choice_order_averaged_hits(pairs, odds.plausible_first, odds.plausible_second))
    for subset, voices in expected.items():
        for voice, entry in voices.items():
            entry["accuracy_order_averaged"] = avg[subset][voice]["accuracy"]
    assert r["experiment1"] == expected
    assert "1st/2nd" in summary_table(r)
    aa = r["experiment1"]["eventsadapt_aa"]["both"]
    assert aa["n_presentations"] == 2 * aa["n_pairs"]


def test_method_and_spec_errors(tiny_causal, tmp_path, capsys):
    from contstim_bench.scoring.spec import ModelSpec

    assert runner.spec_for(ModelSpec.parse("smollm2-135m"), "prompt:sc1").typed == \
        "prompt:smollm2-135m?template=sentence-choice-1"
    assert runner.spec_for(ModelSpec.parse("hf-causal:x?start=A"), "prompt:likert").typed == \
        "prompt:hf-causal:x?start=A&template=likert"
    with pytest.raises(ValueError, match="unknown plausibility method 'pll'"):
        runner.parse_method("pll")
    with pytest.raises(ValueError, match="unknown prompt template 'nope'"):
        runner.parse_method("prompt:nope")
    with pytest.raises(ValueError, match="already a prompt"):
        runner.spec_for(ModelSpec.parse("prompt:smollm2-135m?template=likert"), "prompt:likert")
    with pytest.raises(FileNotFoundError, match="/nonexistent/model"):
        _plaus("hf-causal:/nonexistent/model", progress=False, log=lambda m: None)
    out = tmp_path / "x.json"
    assert cli.main(["plausibility", "--model", tiny_causal, "--method", "prompt:bogus", "--output", str(out)]) == 1
    assert "unknown prompt template 'bogus'" in capsys.readouterr().err
    assert not out.exists()


def test_nan_scores_are_rejected(tables):
    class NanScorer(CharScorer):
        def score(self, sentences):
            v = np.array([-0.5 * len(s) for s in sentences])
            v[3] = np.nan
            return v

    with pytest.raises(ValueError, match="not a finite number|returned nan"):
        runner.run_plausibility(NanScorer(), log=lambda m: None, limit=3)
    with pytest.raises(ValueError, match="limit must be a positive integer"):
        runner.run_plausibility(CharScorer(), log=lambda m: None, limit=0)


def test_ready_scorer_and_method():
    """A ready scorer is used as it is; a method it does not read out is refused before any scoring."""
    with pytest.raises(ValueError, match="does not match the given scorer 'test:chars'"):
        runner.run_plausibility(CharScorer(), "prompt:likert", log=lambda m: None, limit=2)
    runner.check_scorer_method(CharScorer(), "logprobs")  # a log-probability scorer reads out logprobs


# --------------------------------------------------------------------------- real SmolLM2, a handful of texts


# the session fixture ``smollm2`` is in conftest.py


def test_smollm2_target_word_logprob(smollm2, tables):
    """Target-word value of a real item equals the sum of the word's token log-probabilities."""
    stim = tables["socialn400"].iloc[[0, 2]].reset_index(drop=True)  # item 1: Control, Critical
    values, _ = conditional.socialn400_values(smollm2, stim)
    crit = stim.iloc[1]
    toks = smollm2.token_logprobs(f"{crit.prefix} {crit.target_word}")
    n_word = len(smollm2.tokenizer(" " + crit.target_word, add_special_tokens=False)["input_ids"])
    assert values.word_no_context[1] == pytest.approx(sum(lp for _, lp in toks[-n_word:]), abs=2e-3)
    # "wheels" after "My car has big" is likelier than after "My boat has big"
    assert values.word_no_context[0] > values.word_no_context[1]
    # the licensing context ("I decided to turn my boat into a car.") makes the Critical word likelier
    assert values.word_context[1] > values.word_no_context[1]
