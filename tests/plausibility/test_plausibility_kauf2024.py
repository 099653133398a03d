"""Kauf et al. (2024) completed: the human reference values against the paper's and the authors'
published analysis, the Appendix E similarity (hand-checked and on the real human data), the
Appendix D GLMM (recovering simulated effects; the runner over two results), free and
constrained generation and the Appendix F prompting in the runner (tiny causal LM built here),
and real SmolLM2 values on a small subset."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from contstim_bench import cli
from contstim_bench.benchmarks import plausibility as runner
from contstim_bench.benchmarks.plausibility_glmm import result_pair_hits, run_glmm
from contstim_bench.plausibility import metrics
from contstim_bench.plausibility.glmm import fit_glmm, formula, separation
from contstim_bench.plausibility.similarity import euclidean_similarity, pattern_similarity
from contstim_bench.report.plausibility import glmm_table, summary_table
from contstim_bench.scoring.base import Scorer
from plausibility_runs import plausibility_result as _plaus
from contstim_bench.scoring.prompting import parse_answer, TEMPLATES

HUMAN = {"context": runner.HUMAN_CONTEXT, "no_context": runner.HUMAN_NO_CONTEXT}



# --------------------------------------------------------------------------- human reference values


def test_experiment1_human_values_are_the_papers(pairs):
    """§3.4: humans 1.0 on EventsAdapt AI, 0.95 on AA, 0.99 on DTFit (active-voice EventsAdapt)."""
    res = metrics.experiment1_accuracy(pairs, np.ones(len(pairs), bool))
    assert round(res["eventsadapt_ai"]["active"]["human_accuracy"], 2) == 1.0
    assert round(res["eventsadapt_aa"]["active"]["human_accuracy"], 2) == 0.95
    assert round(res["dtfit"]["both"]["human_accuracy"], 2) == 0.99
    # the authors' DTFit notebook: mean 0.989873, s.e.m. 0.005044 over 395 items
    human = metrics.pair_hit_vector(pairs[pairs.subset == "dtfit"], pairs[pairs.subset == "dtfit"].human_mean_plausible,
                                    pairs[pairs.subset == "dtfit"].human_mean_implausible)
    assert human.mean() == pytest.approx(0.989873, abs=1e-6)
    assert human.std(ddof=1) / math.sqrt(len(human)) == pytest.approx(0.005044, abs=1e-6)


def test_socialn400_human_values_are_the_authors(tables):
    """The human sensibility judgments behind Figures 3 and 4, as the authors'
    ``SocialN400-analysis`` notebook prints them (trial means per condition and perspective; means
    of item means; item 1)."""
    j = tables["socialn400_judgments"]
    trial = j.groupby(["condition", "perspective"]).response.mean()
    authors_trial = {("Control", "context"): 0.954545, ("Control", "no_context"): 0.941818,
                     ("Critical", "context"): 0.863636, ("Critical", "no_context"): 0.280000,
                     ("SemAnom", "context"): 0.221818, ("SemAnom", "no_context"): 0.223636}
    for key, value in authors_trial.items():
        assert trial[key] == pytest.approx(value, abs=1e-6)
    means = metrics.condition_means(tables["socialn400"], runner.HUMAN_NO_CONTEXT, runner.HUMAN_CONTEXT)
    authors_items = {"context": {"Control": 0.954, "Critical": 0.861, "SemAnom": 0.218},
                     "no_context": {"Control": 0.939333, "Critical": 0.279, "SemAnom": 0.220}}
    for persp, conds in authors_items.items():
        for cond, value in conds.items():
            assert means[persp][cond] == pytest.approx(value, abs=1e-6)
    item1 = tables["socialn400"].set_index(["item", "condition"]).loc[1]
    assert item1.loc["Control", runner.HUMAN_CONTEXT] == pytest.approx(0.6)
    assert item1.loc["Control", runner.HUMAN_NO_CONTEXT] == 1.0
    assert item1.loc["Critical", runner.HUMAN_CONTEXT] == pytest.approx(5 / 6)
    assert item1.loc["Critical", runner.HUMAN_NO_CONTEXT] == 0.0
    assert item1.loc["SemAnom", runner.HUMAN_CONTEXT] == 0.0


# --------------------------------------------------------------------------- Appendix E similarity


def _frame(values):
    rows = [(item, cond, nc, cx) for item, conds in values.items() for cond, (nc, cx) in conds.items()]
    return pd.DataFrame(rows, columns=["item", "condition", "nc", "cx"])


def test_euclidean_similarity():
    assert euclidean_similarity([0, 0, 0], [0, 0, 0]) == 1.0
    assert euclidean_similarity([0, 0, 0], [1, 1, 1]) == pytest.approx(0.0)
    assert euclidean_similarity([0, 0, 0], [1, 0, 0]) == pytest.approx(1 - 1 / math.sqrt(3))
    with pytest.raises(ValueError, match="two vectors of one length"):
        euclidean_similarity([0, 1], [0, 1, 2])


def test_pattern_similarity_hand_checked():
    # model log-probs over two items; min -10, max 0 -> scaled = (v + 10) / 10
    model = _frame({1: {"Control": (-2, 0), "SemAnom": (-10, -10), "Critical": (-10, -5)},
                    2: {"Control": (-4, -4), "SemAnom": (-6, -8), "Critical": (-6, -2)}})
    human = _frame({1: {"Control": (1.0, 1.0), "SemAnom": (0.0, 0.0), "Critical": (0.0, 1.0)},
                    2: {"Control": (1.0, 0.5), "SemAnom": (0.5, 0.0), "Critical": (0.5, 0.5)}})
    cols = {"no_context": "nc", "context": "cx"}
    got = pattern_similarity(model, cols, human, cols)
    scaled = {1: {"nc": [0.8, 0.0, 0.0], "cx": [1.0, 0.0, 0.5]}, 2: {"nc": [0.6, 0.4, 0.4], "cx": [0.6, 0.2, 0.8]}}
    hum = {1: {"nc": [1.0, 0.0, 0.0], "cx": [1.0, 0.0, 1.0]}, 2: {"nc": [1.0, 0.5, 0.5], "cx": [0.5, 0.0, 0.5]}}

    def sim(a, b):
        return 1 - math.dist(a, b) / math.sqrt(3)

    # conditions in the order Control, SemAnom, Critical
    hc_mc = [sim(hum[i]["cx"], scaled[i]["cx"]) for i in (1, 2)]
    hn_mn = [sim(hum[i]["nc"], scaled[i]["nc"]) for i in (1, 2)]
    hc_mn = [sim(hum[i]["cx"], scaled[i]["nc"]) for i in (1, 2)]
    hn_mc = [sim(hum[i]["nc"], scaled[i]["cx"]) for i in (1, 2)]
    assert got["human_context_model_context"] == pytest.approx(np.mean(hc_mc))
    assert got["human_no_context_model_no_context"] == pytest.approx(np.mean(hn_mn))
    assert got["human_context_model_no_context"] == pytest.approx(np.mean(hc_mn))
    assert got["matched"] == pytest.approx((np.mean(hc_mc) + np.mean(hn_mn)) / 2)
    assert got["unmatched"] == pytest.approx((np.mean(hc_mn) + np.mean(hn_mc)) / 2)
    from scipy.stats import ttest_rel

    t = ttest_rel(hc_mc + hn_mn, hc_mn + hn_mc)
    assert got["t_statistic"] == pytest.approx(t.statistic) and got["p_value"] == pytest.approx(t.pvalue)
    assert got["df"] == 3 and got["n_items"] == 2 and got["defined"]


def test_pattern_similarity_constant_model_is_undefined(tables):
    stim = tables["socialn400"]
    const = stim[["item", "condition"]].assign(nc=1.0, cx=1.0)
    got = pattern_similarity(const, {"no_context": "nc", "context": "cx"}, stim, HUMAN)
    assert got["defined"] is False and got["matched"] is None
    assert "every model response is the same value" in got["undefined_because"]


def test_human_pattern_against_itself(tables):
    """On the real data: humans against themselves are identical in the matched perspectives;
    the unmatched similarity measures how much the context changes the human pattern."""
    stim = tables["socialn400"]
    got = pattern_similarity(stim, HUMAN, stim, HUMAN)
    assert got["n_items"] == 100 and got["matched"] == 1.0
    assert got["unmatched"] == pytest.approx(0.6114283756, abs=1e-9)  # = the notebook-style loop
    assert got["t_statistic"] == pytest.approx(43.942976, abs=1e-5) and got["df"] == 199


# --------------------------------------------------------------------------- Appendix D GLMM


def _simulated_trials(seed=0, n_items=300):
    """Items with random intercepts (sd 1), a 2 x 2 model design (family, version) and both voices:
    logit = 1.0 + 0.5 * version[base] - 0.4 * voice[passive] - 0.5 * version[base]:voice[passive]."""
    rng = np.random.default_rng(seed)
    b = rng.normal(0, 1.0, n_items)
    rows = []
    for item in range(n_items):
        for fam in ("A", "B"):
            for version, v_sum in (("base", 1), ("instruct", -1)):
                for voice in ("active", "passive"):
                    passive = voice == "passive"
                    eta = 1.0 + 0.5 * v_sum - 0.4 * passive - 0.5 * v_sum * passive + b[item]
                    rows.append((item, fam, version, voice, rng.random() < 1 / (1 + math.exp(-eta))))
    return pd.DataFrame(rows, columns=["item", "family", "version", "voice", "hit"])


def test_glmm_recovers_simulated_effects():
    pytest.importorskip("gpboost")
    fit = fit_glmm(_simulated_trials(), ["family", "version"])
    assert fit["formula"] == formula(["family", "version"]) == \
        "hit ~ C(family, Sum) * C(version, Sum) * C(voice, Treatment('active'))"
    coef = {c["term"]: c for c in fit["coefficients"]}
    assert set(coef) == {"Intercept", "family[A]", "version[base]", "voice[passive]", "family[A]:version[base]",
                         "family[A]:voice[passive]", "version[base]:voice[passive]",
                         "family[A]:version[base]:voice[passive]"}
    truth = {"Intercept": 1.0, "family[A]": 0.0, "version[base]": 0.5, "voice[passive]": -0.4,
             "version[base]:voice[passive]": -0.5, "family[A]:version[base]": 0.0}
    for term, value in truth.items():
        assert abs(coef[term]["estimate"] - value) < 3 * coef[term]["std_error"], term
    assert coef["version[base]"]["p"] < 1e-6 and coef["version[base]:voice[passive]"]["p"] < 1e-3
    assert coef["family[A]"]["p"] > 0.01
    assert 0.6 < fit["item_variance"] < 1.6 and fit["n_items"] == 300 and fit["n_observations"] == 2400
    # pinned: the fit is deterministic
    assert coef["version[base]"]["estimate"] == pytest.approx(0.47876, abs=1e-3)
    # a well-behaved fit: converged, every cell has hits and misses, no warning
    assert fit["warnings"] == [] and fit["converged"] is True and fit["optimizer_iterations"] > 0


def _separated_trials(n_items=10):
    """Two models x two voices; model A gets every passive pair right, the other cells have both
    outcomes (A active: even items; B active: items not divisible by 3; B passive: all but 1, 5, 9)."""
    rule = {("A", "active"): lambda i: i % 2 == 0, ("A", "passive"): lambda i: True,
            ("B", "active"): lambda i: i % 3 != 0, ("B", "passive"): lambda i: i % 4 != 1}
    rows = [(item, model, voice, rule[model, voice](item)) for item in range(n_items)
            for model in ("A", "B") for voice in ("active", "passive")]
    return pd.DataFrame(rows, columns=["item", "model", "voice", "hit"])


def test_glmm_warns_of_separation_and_non_convergence():
    pytest.importorskip("gpboost")
    trials = _separated_trials()
    assert trials.groupby(["model", "voice"]).hit.mean().to_dict() == {
        ("A", "active"): 0.5, ("A", "passive"): 1.0, ("B", "active"): 0.6, ("B", "passive"): 0.7}
    fit = fit_glmm(trials, ["model"])
    assert fit["converged"] is True  # gpboost stops: its optimiser sees nothing wrong ...
    assert fit["warnings"] == [  # ... but the estimates of the A x passive cell are not finite
        "separation: every observation with model=A, voice=passive is a hit (10 of 10): the maximum-likelihood "
        "estimates of the terms involving model, voice are not finite; what the fit reports for them (estimate, "
        "standard error, z, p) means nothing"]
    coef = {c["term"]: c for c in fit["coefficients"]}
    assert coef["voice[passive]"]["std_error"] > 10 * coef["Intercept"]["std_error"]  # the blown-up fit it warns of
    assert "warning: separation: every observation with model=A, voice=passive is a hit" in glmm_table(
        {"glmm": fit, "subsets": ["eventsadapt_ai"], "results": []})
    # a level of one factor separated: named once, its cells not again
    whole = trials.assign(hit=trials["hit"] | (trials["voice"] == "passive"))
    assert [w.split(":")[0] + ":" + w.split(":")[1] for w in fit_glmm(whole, ["model"])["warnings"]] == [
        "separation: every observation with voice=passive is a hit (20 of 20)"]
    b_wrong = trials.assign(hit=trials["hit"] & (trials["model"] == "A"))
    assert separation(b_wrong, ["model", "voice"]) == [
        "separation: every observation with model=B is a miss (20 of 20): the maximum-likelihood estimates of the "
        "terms involving model are not finite; what the fit reports for them (estimate, standard error, z, p) means "
        "nothing", fit["warnings"][0]]  # coarsest first; the B cells are not named again
    assert separation(trials[trials["model"] == "B"], ["model", "voice"]) == []
    # levels that hold a ':' (model specs) keep it in the term names
    specs = trials.assign(model=trials["model"].map({"A": "hf-causal:a", "B": "hf-causal:b"}))
    assert [c["term"] for c in fit_glmm(specs, ["model"])["coefficients"]] == [
        "Intercept", "model[hf-causal:a]", "voice[passive]", "model[hf-causal:a]:voice[passive]"]
    # gpboost's own non-convergence, recorded from its status and its log
    short = fit_glmm(_simulated_trials(n_items=40), ["family", "version"], max_iterations=2)
    assert short["converged"] is False and short["warnings"][0] == (
        "gpboost did not converge: the maximal number of iterations was reached")
    assert any(w.startswith("gpboost: GPModel: parameter estimation did not converge after the maximum number of "
                            "iterations (2") for w in short["warnings"])


def test_glmm_refuses_what_it_cannot_separate():
    pytest.importorskip("gpboost")
    trials = _simulated_trials(n_items=40)
    confounded = trials.assign(size=trials["family"].map({"A": "small", "B": "large"}))
    with pytest.raises(ValueError, match="rank deficient.*do not vary independently"):
        fit_glmm(confounded, ["family", "size"])
    with pytest.raises(ValueError, match="factor 'family' has one level"):
        fit_glmm(trials[trials["family"] == "A"], ["family"])
    with pytest.raises(ValueError, match=r"missing columns \['model'\]"):
        fit_glmm(trials, ["model"])


class WordScorer(Scorer):
    """Hand-made log-probabilities: -length - ``penalty`` x (number of words in ``disliked``)."""

    method = "words"

    def __init__(self, penalty: float, name: str):
        super().__init__(cache=False)
        self.penalty, self.spec = penalty, f"test:{name}"

    def fingerprint(self) -> str:
        return self.spec

    def _score_unique(self, sentences):
        return np.array([-len(s) - self.penalty * s.count(" by ") for s in sentences], dtype=np.float64)


def test_run_glmm_over_two_results(tmp_path, capsys):
    pytest.importorskip("gpboost")
    a = runner.run_plausibility(WordScorer(0.0, "plain"), log=lambda m: None, limit=40)
    b = runner.run_plausibility(WordScorer(3.0, "passive-averse"), log=lambda m: None, limit=40)
    pairs = runner.limit_pairs(runner.load()["experiment1"], 40)
    hits = result_pair_hits(a, pairs)
    assert len(hits) == len(pairs) and hits == a["scores"]["experiment1"]["pair_hits"]
    old = json.loads(json.dumps(a))
    del old["scores"]["experiment1"]["pair_hits"]  # a result written before pair_hits: recomputed
    assert result_pair_hits(old, pairs) == hits
    report = run_glmm([a, b], {"scorer": ["plain", "passive-averse"]})
    assert report["results"][0]["n_pairs"] == 160 and report["glmm"]["n_items"] == 80
    terms = [c["term"] for c in report["glmm"]["coefficients"]]
    assert terms == ["Intercept", "scorer[passive-averse]", "voice[passive]", "scorer[passive-averse]:voice[passive]"]
    assert "Appendix D" in glmm_table(report)
    # the CLI over result files
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a)), pb.write_text(json.dumps(b))
    out = tmp_path / "glmm.json"
    assert cli.main(["plausibility-glmm", str(pa), str(pb), "--factor", "scorer=plain,passive-averse",
                     "--output", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["glmm"] == report["glmm"] and "warnings" in written["glmm"]
    assert written["provenance"]["dataset_fingerprint"] == report["dataset_fingerprint"]
    assert written["provenance"]["package_version"] == report["package_version"] and written["provenance"]["created"]
    assert "scorer[passive-averse]:voice[passive]" in capsys.readouterr().out
    with pytest.raises(ValueError, match="has 1 levels for 2 results"):
        run_glmm([a, b], {"scorer": ["plain"]})
    with pytest.raises(ValueError, match="at least two results"):
        run_glmm([a])


# --------------------------------------------------------------------------- runner: generation, Appendix F


@pytest.fixture(scope="module")
def tiny_causal(tmp_path_factory, tables):
    """A random 2-layer GPT-2 with a WordPiece tokenizer trained on the stimuli and prompts."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import tiny_mlm  # tests/tiny_mlm.py

    sn = tables["socialn400"]
    corpus = (list(tables["eventsadapt"].sentence) + list(tables["dtfit"].sentence_plausible)
              + list(tables["dtfit"].sentence_implausible) + list(sn.context) + list(sn.target_sentence)
              + [t.text for t in TEMPLATES.values()] + ["Answer: 1 2 3 4 5 6 7 Yes No"] * 20)
    tok = tiny_mlm.train_wordpiece(corpus, 600)
    torch.manual_seed(1)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=512, n_embd=32, n_layer=2, n_head=2))
    folder = tiny_mlm.save(model.eval(), tok, tmp_path_factory.mktemp("tiny-causal-gen"))
    return f"hf-causal:{folder}?start=[CLS]"


LIMIT = 3


def test_free_and_constrained_likert(tiny_causal, pairs):
    r = _plaus(tiny_causal, "prompt:likert", progress=False, log=lambda m: None, limit=LIMIT,
                                free_generation=True, max_new_tokens=3)
    sub = runner.limit_pairs(pairs, LIMIT)
    ratings = r["scores"]["experiment1"]["sentence_scores"]
    assert set(ratings.values()) <= {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0}  # the constrained answers
    texts = r["scores"]["experiment1_free"]["sentence_texts"]
    answer = {s: parse_answer(TEMPLATES["likert"], t) for s, t in texts.items()}
    hits, valid = metrics.answer_hits("likert", [answer[s] for s in sub.sentence_plausible],
                                      [answer[s] for s in sub.sentence_implausible])
    assert r["experiment1_free"] == metrics.answer_accuracy(sub, hits, valid, 0.5)
    assert "free generation" in r["readout"]["experiment1_free"]
    assert "Experiment 1 by free generation" in summary_table(r)


def test_free_choice_and_appendix_f(tiny_causal, pairs, tables):
    r = _plaus(tiny_causal, "prompt:sentence-choice-1", progress=False, log=lambda m: None,
                                limit=LIMIT, free_generation=True, max_new_tokens=2)
    sub = runner.limit_pairs(pairs, LIMIT)
    texts = pd.DataFrame(r["scores"]["experiment1_free"]["pair_texts"])
    assert texts.pair_id.tolist() == sub.pair_id.tolist()
    tpl = TEMPLATES["sentence-choice-1"]
    hits, valid = metrics.choice_answer_hits([parse_answer(tpl, t) for t in texts.plausible_first],
                                             [parse_answer(tpl, t) for t in texts.plausible_second])
    assert r["experiment1_free"] == metrics.answer_accuracy(sub, hits, valid, 0.5)
    # Appendix F prompting of SocialN400 comes with prompt:sentence-judgment
    sj = _plaus(tiny_causal, "prompt:sentence-judgment", progress=False, log=lambda m: None,
                                 limit=LIMIT)
    ep = sj["experiment2_prompting"]
    values = pd.DataFrame(sj["scores"]["experiment2_prompting"]["values"])
    assert len(values) == 3 * LIMIT
    frame = values.assign(nc=(values.log_odds_no_context > 0).astype(float),
                          cx=(values.log_odds_context > 0).astype(float))
    assert ep["condition_means"] == metrics.condition_means(frame, "nc", "cx")
    stim = tables["socialn400"][tables["socialn400"]["item"] <= LIMIT]
    assert ep["similarity"] == pattern_similarity(frame, {"no_context": "nc", "context": "cx"}, stim, HUMAN)
    assert "Here is a context:" in ep["prompts"]["context"]
    assert "experiment2" not in sj and "Appendix F" in summary_table(sj)


def test_free_generation_needs_a_prompt(tiny_causal, tmp_path, capsys):
    with pytest.raises(ValueError, match="free generation reads out a prompt"):
        _plaus(tiny_causal, free_generation=True, log=lambda m: None, limit=1)
    out = tmp_path / "x.json"
    assert cli.main(["plausibility", "--model", tiny_causal, "--free-generation", "--output", str(out)]) == 1
    assert "free generation reads out a prompt" in capsys.readouterr().err and not out.exists()


def test_threads_and_dtype_flags(tiny_causal, tmp_path):
    import torch

    before = torch.get_num_threads()
    out = tmp_path / "p.json"
    try:
        assert cli.main(["plausibility", "--model", tiny_causal, "--limit", "1", "--dtype", "float64",
                         "--threads", "1", "--output", str(out), "--quiet"]) == 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    result = json.loads(out.read_text())
    assert result["model"]["dtype"] == "float64" and result["provenance"]["dtype"] == "float64"
    with pytest.raises(SystemExit):
        cli.main(["plausibility", "--model", tiny_causal, "--threads", "x", "--output", str(out)])


# --------------------------------------------------------------------------- real SmolLM2, a small subset


def test_smollm2_kauf2024_subset(smollm2, pairs, tables):
    """Real values on the first 2 pairs per subset and voice and 3 SocialN400 items."""
    from contstim_bench.scoring.prompting import PromptScorer

    r = runner.run_plausibility(smollm2, log=lambda m: None, limit=3)
    sim = r["experiment2"]["word"]["similarity"]
    assert sim["n_items"] == 3 and sim["defined"]
    assert sim["matched"] == pytest.approx(0.51140, abs=1e-3)
    assert sim["unmatched"] == pytest.approx(0.48154, abs=1e-3)
    likert = PromptScorer(smollm2, "likert", cache=False)
    sub = runner.limit_pairs(pairs, 1)
    # the tiny instruction-tuned model answers 7 to every sentence: every pair is a tie (a miss)
    assert likert.judge(list(sub.sentence_plausible) + list(sub.sentence_implausible)).tolist() == [7.0] * 10
    text = likert.generate([sub.sentence_plausible.iloc[0]])[0]
    assert text == " 7\n\nThe sentence is 7." and parse_answer(likert.template, text) is None  # two numbers
    judge = PromptScorer(smollm2, "sense-judgment-context", cache=False)
    stim = tables["socialn400"].iloc[:3]
    odds = judge.judge_in_context(list(zip(stim.context, stim.target_sentence)))
    np.testing.assert_allclose(odds, [-0.6183, -0.8408, -0.4682], atol=2e-3)  # it answers No


@pytest.mark.parametrize("command", ["score", "evaluate", "blimp", "plausibility"])
def test_every_scoring_command_takes_dtype_and_threads(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--dtype DTYPE" in out and "--threads THREADS" in out
