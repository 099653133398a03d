"""Figure S8b of Golan et al. (2023), recomputed from the raw follow-up experiment (pll).

30 participants rated 120 synthetic pairs that pit each bidirectional model's approximate
log-likelihood (bert, roberta, electra) against its pseudo-log-likelihood read-out
(``*_has_a_mouth``), plus 12 catch trials.  The values below were computed by this package from
the raw data and the reference log-probabilities it contains, checked against an independent
re-implementation that follows the paper's code (behav_exp_analysis.py), and pinned.

Qualitative checks against the paper (Fig. S8b caption, Supplementary Results): for each model
the approximate log-likelihood is significantly (q < .05) and considerably more human-consistent
than PLL; the PLL read-outs fall far below the noise ceiling (below chance on the pairs that
target them).
"""
from __future__ import annotations

import numpy as np
import pytest

from contstim_bench.analysis.evaluation import log_ratios_from_logprobs, reference_panel
from contstim_bench.benchmarks.contstim import load_experiment

MODELS = ("roberta", "roberta_has_a_mouth", "electra", "electra_has_a_mouth", "bert", "bert_has_a_mouth")
CONTRASTS = [("bert", "bert_has_a_mouth"), ("electra", "electra_has_a_mouth"), ("roberta", "roberta_has_a_mouth")]

from pinned_pll import PINNED, PINNED_CONTRASTS  # noqa: E402  (tests/pinned_pll.py)


@pytest.fixture(scope="module")
def pll(built_contstim):
    trials, refs = load_experiment("pll", built_contstim.parent)
    log_ratios = {m: log_ratios_from_logprobs(trials, refs[m]) for m in MODELS}
    panels = {c: reference_panel(trials, log_ratios, c, CONTRASTS) for c in PINNED}
    return trials, refs, panels


def test_pll_data_shape(pll):
    trials, refs, _ = pll
    assert len(trials) == 3960
    assert trials["participant"].nunique() == 30
    assert trials["trial_type"].value_counts().to_dict() == {"synthetic_vs_synthetic": 3600, "natural_vs_shuffled": 360}
    assert sorted(refs) == sorted(MODELS)


@pytest.mark.parametrize("cond", list(PINNED))
def test_figure_s8b_values(pll, cond):
    panel = pll[2][cond]
    for model, expected in PINNED[cond].items():
        b = panel["models"][model]
        got = (
            b["accuracy"],
            b["accuracy_noise_ceiling"]["lower"],
            b["accuracy_noise_ceiling"]["upper"],
            b["srcs"],
            b["srcs_noise_ceiling"]["lower"],
            b["srcs_noise_ceiling"]["upper"],
            b["p_vs_lower_ceiling"]["accuracy"],
            b["p_vs_lower_ceiling"]["srcs"],
        )
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9, err_msg=f"{cond}/{model}")
        assert b["unit"] == "participant" and b["n_units"] == 30
        expected_selection = "targeted" if cond == "synthetic_vs_synthetic" else "all"
        assert b["selection"] == expected_selection
        assert b["n_trials"] == (1200 if cond == "synthetic_vs_synthetic" else 3960)
    for c in panel["contrasts"]:
        np.testing.assert_allclose(
            (c["accuracy_p_bh"], c["srcs_p_bh"]), PINNED_CONTRASTS[cond][c["model1"]], rtol=0, atol=1e-12
        )


@pytest.mark.parametrize("cond", list(PINNED))
def test_figure_s8b_significance_pattern(pll, cond):
    """Approximate log-likelihood beats PLL for every model (q < .05); every PLL read-out is
    below its lower noise ceiling; on the targeted synthetic pairs PLL is below chance."""
    panel = pll[2][cond]
    for c in panel["contrasts"]:
        assert c["model2"] == c["model1"] + "_has_a_mouth"
        for measure in ("accuracy", "srcs"):
            assert c[f"{measure}_better"] == c["model1"] and c[f"{measure}_significant"], (cond, c)
    models = panel["models"]
    for m in MODELS:
        if m.endswith("_has_a_mouth"):
            assert models[m]["below_lower_ceiling"] == {"accuracy": True, "srcs": True}
    below_srcs = {m for m in MODELS if models[m]["below_lower_ceiling"]["srcs"]}
    assert below_srcs == set(MODELS)  # SRCS: every model, approx-LL included, is below the ceiling
    if cond == "synthetic_vs_synthetic":
        for m in MODELS:
            chance_side = models[m]["accuracy"] < 0.5
            assert chance_side == m.endswith("_has_a_mouth")
        # ELECTRA's approximate log-likelihood sides with the majority on every targeted pair
        assert models["electra"]["accuracy"] == models["electra"]["accuracy_noise_ceiling"]["lower"]
        assert not models["electra"]["below_lower_ceiling"]["accuracy"]
        assert models["roberta"]["below_lower_ceiling"]["accuracy"]
        assert models["bert"]["below_lower_ceiling"]["accuracy"]


def test_targeted_selection_is_the_40_pairs_of_each_model(pll):
    panel = pll[2]["synthetic_vs_synthetic"]
    for m in MODELS:
        assert panel["models"][m]["n_pairs"] == 40


def _assert_same(a, b, path=""):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _assert_same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, float):
        assert a == pytest.approx(b, abs=1e-12), path
    else:
        assert a == b, path


def test_pll_results_invariant_to_swapping_sentences(pll):
    """Swap sentence1/sentence2 (with their targeting columns) in a random half of the real
    trials and mirror the ratings: every number of the evaluation stays the same."""
    from contstim_bench.analysis.evaluation import evaluate_logprobs

    trials, refs, _ = pll
    others = {m: refs[m] for m in MODELS if m != "roberta"}
    before = evaluate_logprobs(trials, refs["roberta"], "roberta", others)
    rows = np.flatnonzero(np.random.default_rng(0).random(len(trials)) < 0.5)
    swapped = trials.copy()
    for a, b in [("sentence1", "sentence2"), ("sentence1_type", "sentence2_type"),
                 ("sentence1_accept_model", "sentence2_accept_model"),
                 ("sentence1_reject_model", "sentence2_reject_model")]:
        swapped.loc[rows, [a, b]] = trials.loc[rows, [b, a]].to_numpy()
    swapped.loc[rows, "rating"] = 7 - trials.loc[rows, "rating"]
    after = evaluate_logprobs(swapped, refs["roberta"], "roberta", others)
    _assert_same(before, after)
    assert before["synthetic_vs_synthetic"]["srcs"] == pytest.approx(PINNED["synthetic_vs_synthetic"]["roberta"][3], abs=1e-12)


def test_standard_errors_by_hand(pll):
    """The standard errors of accuracy and SRCS across the 30 participants (the one estimator,
    :func:`contstim_bench.uncertainty.standard_error`), against a hand computation from the
    raw trials: per participant, the share of trials on which roberta's log-probabilities prefer
    the sentence the participant chose (a tie 0.5), then SD (ddof=1) / sqrt(30)."""
    from contstim_bench.analysis.evaluation import evaluate_logprobs

    trials, refs, _ = pll
    lp = refs["roberta"]
    out = evaluate_logprobs(trials, lp, "roberta")
    for cond, rows in (("all", trials), ("natural_vs_shuffled", trials[trials["trial_type"] == "natural_vs_shuffled"])):
        ratio = np.array([lp[b] - lp[a] for a, b in zip(rows["sentence1"], rows["sentence2"])])
        chose2 = rows["rating"].to_numpy() >= 4
        hit = np.where(ratio == 0, 0.5, ((ratio > 0) == chose2).astype(float))
        per_participant = rows.assign(hit=hit).groupby("participant")["hit"].mean().to_numpy()
        assert per_participant.size == 30
        e = out[cond]
        assert e["accuracy"] == pytest.approx(per_participant.mean(), abs=1e-12)
        hand = per_participant.std(ddof=1) / np.sqrt(30)
        assert e["accuracy_stderr"] == pytest.approx(hand, abs=1e-12)
        srcs = np.array(list(e["srcs_by_unit"].values()))
        assert e["srcs_stderr"] == pytest.approx(srcs.std(ddof=1) / np.sqrt(30), abs=1e-12)
    # pinned: roberta on every pll trial
    assert out["all"]["accuracy_stderr"] == pytest.approx(0.01701406154898371, abs=1e-12)


def test_standard_error_is_scipys_sem_bit_for_bit():
    """``standard_error`` computes scipy.stats.sem's formula without its per-call checks: equal to
    ``sem(x, ddof=1)`` exactly, on samples of every size a result holds and of the scales it holds."""
    from scipy.stats import sem

    from contstim_bench.uncertainty import standard_error

    rng = np.random.default_rng(53)
    for n in (2, 3, 7, 20, 30, 100, 1001):
        for scale in (1e-3, 1.0, 1e3):
            x = rng.normal(0.5, 0.2, n) * scale
            assert standard_error(x) == float(sem(x, ddof=1)), (n, scale)
    assert standard_error([0.25, 0.25]) == 0.0 and standard_error([0.5]) is None
