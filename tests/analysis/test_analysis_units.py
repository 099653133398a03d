"""The analysis on small hand-made trials: definitions, ties, selections, invariances, bad input."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import false_discovery_control

from contstim_bench.analysis.accuracy import trial_accuracy
from contstim_bench.analysis.evaluation import evaluate_log_ratios, evaluate_logprobs
from contstim_bench.analysis.inference import bh_adjust, wilcoxon_p
from contstim_bench.analysis.noise_ceiling import accuracy_ceiling_per_trial
from contstim_bench.analysis.srcs import (
    rank_norm,
    semi_srcs,
    signed_ranks,
    srcs,
    srcs_ceiling_by_participant,
    srcs_random_tiebreak,
)
from contstim_bench.analysis.trials import prepare_trials


# ---------------------------------------------------------------- small data sets
def make_trials(seed: int = 0, groups: int = 1, participants: int = 5) -> tuple[pd.DataFrame, dict]:
    """Random trials of every trial type, each participant seeing every pair of their group in a
    random left/right order, and log-probabilities of models m1, m2, m3 (m3 is never targeted)."""
    rng = np.random.default_rng(seed)
    rows, logprobs = [], {}
    kinds = [
        ("randomly_sampled_natural", None),
        ("natural_controversial", ("m1", "m2")),
        ("synthetic_vs_synthetic", ("m1", "m2")),
        ("synthetic_vs_synthetic", ("m2", "m1")),
        ("natural_vs_synthetic", ("m1", "m2")),
        ("natural_vs_synthetic", ("m2", "m1")),
        ("natural_vs_shuffled", None),
    ]
    for g in range(1, groups + 1):
        pairs = []
        for k in range(3):
            for j, (ttype, models) in enumerate(kinds):
                a, b = f"g{g} pair {k}-{j} first sentence.", f"g{g} pair {k}-{j} second sentence."
                for s in (a, b):
                    logprobs[s] = float(np.round(rng.normal(-50, 10), 1))
                if models is None:
                    target = (None, None, None, None)
                elif ttype == "natural_vs_synthetic":  # b is synthetic: accepted by models[0]
                    target = (None, None, models[0], models[1])
                else:  # a accepted by models[0] and rejected by models[1], b the reverse
                    target = (models[0], models[1], models[1], models[0])
                pairs.append((f"g{g}-{k}-{j}", ttype, a, b, target))
        for p in range(participants):
            for pid, ttype, a, b, target in pairs:
                rating = int(rng.integers(1, 7))
                s1, s2, t = a, b, target
                if rng.random() < 0.5:  # shown the other way round
                    s1, s2, t, rating = b, a, (target[2], target[3], target[0], target[1]), 7 - rating
                rows.append(
                    dict(
                        participant=f"g{g}p{p}",
                        group=g,
                        pair_id=pid,
                        sentence1=s1,
                        sentence2=s2,
                        trial_type=ttype,
                        sentence1_accept_model=t[0],
                        sentence1_reject_model=t[1],
                        sentence2_accept_model=t[2],
                        sentence2_reject_model=t[3],
                        rating=rating,
                    )
                )
    models = {}
    for m in ("m1", "m2", "m3"):
        models[m] = {s: v + float(np.round(rng.normal(0, 5), 1)) for s, v in logprobs.items()}
    return pd.DataFrame(rows), models


def swap(trials: pd.DataFrame, rows) -> pd.DataFrame:
    """Swap sentence1/sentence2 (and their columns) in ``rows``, mirroring the rating."""
    out = trials.copy()
    for a, b in [("sentence1", "sentence2"), ("sentence1_accept_model", "sentence2_accept_model"),
                 ("sentence1_reject_model", "sentence2_reject_model")]:
        out.loc[rows, [a, b]] = trials.loc[rows, [b, a]].to_numpy()
    out.loc[rows, "rating"] = 7 - trials.loc[rows, "rating"]
    return out


# ---------------------------------------------------------------- Eq. 10 / 11
def _tie_breaking_orders(x: np.ndarray):
    """Every equally likely signed-rank vector of ``x`` under random tie-breaking (Eq. 8-9)."""
    nz = np.flatnonzero(x != 0)
    mags = np.abs(x[nz])
    base = {}
    for v in sorted(set(mags.tolist())):
        base[v] = int(np.sum(mags < v)) + 1
    groups = {v: np.flatnonzero(mags == v) for v in base}
    choices = [list(itertools.permutations(range(len(idx)))) for idx in groups.values()]
    for combo in itertools.product(*choices):
        r = np.zeros_like(x)
        for (v, idx), perm in zip(groups.items(), combo):
            for pos, k in zip(idx, perm):
                r[nz[pos]] = np.sign(x[nz[pos]]) * (base[v] + k)
        yield r


def _eq10(ra: np.ndarray, rb: np.ndarray) -> float:
    return float(ra @ rb / (np.linalg.norm(ra) * np.linalg.norm(rb)))


@pytest.mark.parametrize(
    "a,b",
    [
        ([2.5, -1.5, 0.5, 2.5, -2.5, 0.5], [3.0, -1.0, 0.0, 3.0, 2.0, -1.0]),
        ([1.5, 1.5, -1.5, 0.5, -0.5, 2.5], [0.7, 0.7, -0.7, 0.0, 0.2, 0.2]),
        ([-2.5, -2.5, -2.5, 1.5, 1.5, 0.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    ],
)
def test_closed_form_equals_exact_mean_over_tie_breaking(a, b):
    a, b = np.array(a), np.array(b)
    draws = [_eq10(ra, rb) for ra in _tie_breaking_orders(a) for rb in _tie_breaking_orders(b)]
    assert len(draws) > 1
    assert srcs(a, b) == pytest.approx(float(np.mean(draws)), abs=1e-12)


def test_closed_form_equals_mean_of_many_random_draws():
    rng = np.random.default_rng(7)
    a = rng.integers(1, 7, size=40) - 3.5  # Likert ratings: many ties, no zeros
    b = np.round(rng.normal(0, 2, size=40))  # log-ratios with ties and zeros
    draws = np.array([srcs_random_tiebreak(a, b, rng) for _ in range(4000)])
    se = draws.std(ddof=1) / math.sqrt(len(draws))
    assert se > 0  # the draws really differ
    assert abs(draws.mean() - srcs(a, b)) < 4 * se + 1e-12


def test_signed_ranks_and_norm():
    np.testing.assert_array_equal(signed_ranks([-3.0, 0.0, 1.0, 1.0, -0.5]), [-4.0, 0.0, 2.5, 2.5, -1.0])
    assert rank_norm(3) == pytest.approx(math.sqrt(14))
    assert srcs([1.0, 2.0, -3.0], [2.0, 4.0, -9.0]) == pytest.approx(1.0)
    assert srcs([1.0, 2.0, -3.0], [-2.0, -4.0, 9.0]) == pytest.approx(-1.0)
    assert srcs([0.0, 0.0], [1.0, -1.0]) == 0.0  # undefined cosine -> 0
    assert semi_srcs([2.5, -0.5], [3.0, 4.0]) == pytest.approx((2 * 3 - 1 * 4) / (math.sqrt(5) * 5))


# ---------------------------------------------------------------- accuracy and ceilings
def test_trial_accuracy_with_model_tie():
    np.testing.assert_array_equal(
        trial_accuracy(np.array([1.0, -1.0, 0.0, 2.0]), np.array([True, True, False, False])), [1, 0, 0.5, 0]
    )


def _pair_frame(choices: dict[str, list[int]]) -> pd.DataFrame:
    rows = []
    for pair, ratings in choices.items():
        for i, r in enumerate(ratings):
            rows.append(dict(participant=f"p{i}", group=1, pair_id=pair, sentence1=f"{pair} a", sentence2=f"{pair} b",
                             trial_type="randomly_sampled_natural", sentence1_accept_model=None,
                             sentence1_reject_model=None, sentence2_accept_model=None,
                             sentence2_reject_model=None, rating=r))
    return pd.DataFrame(rows)


def test_accuracy_ceiling_majority_votes_and_ties():
    # pair x: 3 of 4 choose sentence2; pair y: 2 of 4 (a tied upper-bound vote)
    frame = prepare_trials(_pair_frame({"x": [6, 5, 4, 1], "y": [6, 4, 2, 3]})).frame
    lower, upper = accuracy_ceiling_per_trial(frame)
    # x: p0/p1/p2 others vote 2:1 for s2 -> correct; p3's others 3:0 for s2 -> wrong
    # y: p0's others (s2, s1, s1) -> s1 -> wrong; p2's others (s2, s2, s1) -> s2 -> wrong
    np.testing.assert_array_equal(lower, [1, 1, 1, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(upper, [1, 1, 1, 0, 0.5, 0.5, 0.5, 0.5])


def test_lower_ceiling_tie_scores_half_and_lonely_pair_raises():
    frame = prepare_trials(_pair_frame({"x": [6, 1, 5]})).frame
    lower, upper = accuracy_ceiling_per_trial(frame)
    np.testing.assert_array_equal(lower, [0.5, 0, 0.5])  # p0's others: one s1, one s2
    np.testing.assert_array_equal(upper, [1, 0, 1])
    with pytest.raises(ValueError, match="rated only by participant 'p0'.*at least two"):
        accuracy_ceiling_per_trial(prepare_trials(_pair_frame({"x": [6]})).frame)


def test_srcs_ceiling_hand_computed():
    frame = prepare_trials(_pair_frame({"a": [6, 5, 3], "b": [2, 1, 4]})).frame
    lower, upper = srcs_ceiling_by_participant(frame)
    # p0: centred (2.5, -1.5) -> ranks (2, -1); others' mean of normalised ranks:
    # p1 (1.5, -2.5) -> (1, -2)/sqrt5, p2 (-0.5, 0.5) -> (-1.5, 1.5)/sqrt5 -> mean (-0.25, -0.25)/sqrt5
    # -> tied signed ranks (-1.5, -1.5): (2*-1.5 + -1*-1.5) / 5 = -0.3
    assert lower["p0"] == pytest.approx(-0.3)
    mean_all = (np.array([2, -1]) + np.array([1, -2]) + np.array([-1.5, 1.5])) / 3
    assert upper["p0"] == pytest.approx(np.array([2, -1]) / math.sqrt(5) @ mean_all / np.linalg.norm(mean_all))


# ---------------------------------------------------------------- selections
@pytest.fixture(scope="module")
def small():
    trials, models = make_trials(seed=3)
    res = evaluate_logprobs(trials, models["m1"], "m1", {"m2": models["m2"], "m3": models["m3"]})
    return trials, models, res


def test_selections_and_counts(small):
    trials, models, res = small
    assert list(res) == ["randomly_sampled_natural", "natural_controversial", "synthetic_vs_synthetic",
                         "natural_vs_synthetic", "natural_vs_synthetic_reject", "natural_vs_shuffled", "all"]
    sel = {k: (v["selection"], v["n_trials"], v["n_pairs"]) for k, v in res.items()}
    assert sel == {
        "randomly_sampled_natural": ("all", 15, 3),
        "natural_controversial": ("targeted", 15, 3),
        "synthetic_vs_synthetic": ("targeted", 30, 6),
        "natural_vs_synthetic": ("targeted_accept", 15, 3),
        "natural_vs_synthetic_reject": ("targeted_reject", 15, 3),
        "natural_vs_shuffled": ("all", 15, 3),
        "all": ("all", 105, 21),
    }
    comps = res["natural_controversial"]["comparisons"]
    assert comps["m2"]["selection"] == "targeted"
    assert comps["m3"]["selection"] == "all"  # never targeted -> every trial of the condition
    untargeted = evaluate_logprobs(trials, models["m3"], "m3")
    assert untargeted["synthetic_vs_synthetic"]["selection"] == "all"
    assert untargeted["synthetic_vs_synthetic"]["n_trials"] == 30
    assert untargeted["natural_vs_synthetic_reject"]["selection"] == "all"


def test_accuracy_matches_direct_count(small):
    trials, models, res = small
    lp = models["m1"]
    mask = (trials["trial_type"] == "natural_vs_synthetic") & (
        (trials["sentence1_accept_model"] == "m1") | (trials["sentence2_accept_model"] == "m1"))
    sub = trials[mask]
    model_second = np.array([lp[b] > lp[a] for a, b in zip(sub["sentence1"], sub["sentence2"])])
    correct = pd.Series(model_second == (sub["rating"].to_numpy() >= 4), index=sub["participant"])
    by_p = correct.groupby(level=0).mean()
    entry = res["natural_vs_synthetic"]
    assert entry["accuracy_by_unit"] == pytest.approx(by_p.to_dict())
    assert entry["accuracy"] == pytest.approx(by_p.mean())


def test_p_values_are_bh_within_the_papers_families(small):
    """Methods: model-vs-lower-ceiling tests form one family (every model of the panel), model-vs-model
    tests another (every pair compared like for like); each adjusted on its own, per measure."""
    trials, models, res = small
    e = res["all"]
    alone = {m: evaluate_logprobs(trials, models[m], m, conditions=["all"])["all"] for m in ("m1", "m2", "m3")}
    assert e["bh_families"] == {
        "p_vs_lower_ceiling": {"family": "model_vs_lower_ceiling", "size": 3},
        "comparisons": {"family": "model_vs_model", "size": 3},
        "head_to_head": {"family": "head_to_head", "size": e["bh_families"]["head_to_head"]["size"]},
        "head_to_head_by_item": {"family": "head_to_head_by_item", "size": e["bh_families"]["head_to_head"]["size"]},
    }
    for measure in ("accuracy", "srcs"):
        raw = [alone[m]["p_vs_lower_ceiling_uncorrected"][measure] for m in ("m1", "m2", "m3")]
        assert e["p_vs_lower_ceiling_uncorrected"][measure] == raw[0]
        assert e["p_vs_lower_ceiling"][measure] == pytest.approx(false_discovery_control(raw, method="bh")[0])

        def by_unit(m):
            return pd.Series(alone[m][f"{measure}_by_unit"]).sort_index().to_numpy()

        pairs = [("m1", "m2"), ("m1", "m3"), ("m2", "m3")]
        raw = [wilcoxon_p(by_unit(a), by_unit(b)) for a, b in pairs]
        adj = false_discovery_control(raw, method="bh")
        for (_, other), p, q in zip(pairs[:2], raw, adj):
            c = e["comparisons"][other]
            assert c["basis"] == "same_trials" and c[f"{measure}_p"] == pytest.approx(p)
            assert c[f"{measure}_p_bh"] == pytest.approx(q)
            assert c[f"{measure}_delta"] == pytest.approx((by_unit("m1") - by_unit(other)).mean())


def _disagreement_shares(trials, lp_a, lp_b, mask):
    """Per participant: share of the rows of ``mask`` where a and b disagree on which the participant
    chose a's sentence, counted directly on the raw (unoriented) trials."""
    t = trials[mask]
    ra = np.array([lp_a[y] - lp_a[x] for x, y in zip(t["sentence1"], t["sentence2"])])
    rb = np.array([lp_b[y] - lp_b[x] for x, y in zip(t["sentence1"], t["sentence2"])])
    dis = np.sign(ra) * np.sign(rb) < 0
    chose_a = (t["rating"].to_numpy() >= 4) == (ra > 0)
    return pd.Series(chose_a[dis].astype(float), index=t["participant"].to_numpy()[dis]).groupby(level=0).mean(), int(dis.sum())


def test_head_to_head_counts_by_hand(small):
    trials, models, res = small
    # all trials: m1 vs m3 on every trial where they disagree
    h = res["all"]["head_to_head"]["m3"]
    shares, n = _disagreement_shares(trials, models["m1"], models["m3"], np.ones(len(trials), dtype=bool))
    assert h["selection"] == "all" and h["n_trials"] == n > 0
    assert h["share_by_unit"] == pytest.approx({str(k): v for k, v in shares.items()})
    assert h["share"] == pytest.approx(shares.mean())
    assert h["p"] == pytest.approx(wilcoxon_p(shares.to_numpy(), np.full(len(shares), 0.5)))
    assert h["better"] == ("m1" if shares.mean() > 0.5 else "m3" if shares.mean() < 0.5 else "tie")
    # a targeted condition: m1 vs m2 on the trials synthesised to contrast them (Fig. S4)
    syn = res["synthetic_vs_synthetic"]["head_to_head"]
    mask = (trials["trial_type"] == "synthetic_vs_synthetic").to_numpy()
    shares, n = _disagreement_shares(trials, models["m1"], models["m2"], mask)
    assert syn["m2"]["selection"] == "targeted_both" and syn["m2"]["n_trials"] == n
    assert syn["m2"]["share"] == pytest.approx(shares.mean())
    # m3 is never targeted: it meets m1 on every synthetic trial (the same trials for both models)
    assert syn["m3"]["selection"] == "all"
    # symmetric: m2's view of m1 is the complement
    other = evaluate_logprobs(trials, models["m2"], "m2", {"m1": models["m1"], "m3": models["m3"]})
    back = other["synthetic_vs_synthetic"]["head_to_head"]["m1"]
    assert back["share"] == pytest.approx(1 - syn["m2"]["share"]) and back["p"] == pytest.approx(syn["m2"]["p"])
    assert back["p_bh"] == pytest.approx(syn["m2"]["p_bh"])


def test_unlike_selections_are_not_compared(small):
    """A model evaluated on all trials is never compared on per-unit scores with a model evaluated on
    its own targeted trials; the head-to-head compares them on the same trials instead."""
    trials, models, _ = small
    res = evaluate_logprobs(trials, models["m3"], "m3", {"m1": models["m1"], "m2": models["m2"]})
    nat = res["natural_vs_synthetic"]  # m1 and m2 are each accept-targeted by half of these trials
    assert nat["selection"] == "all"
    assert nat["comparisons"] == {}
    assert set(nat["head_to_head"]) == {"m1", "m2"}
    # the references are still compared with each other in the family (own selections, as in the paper)
    assert nat["bh_families"]["comparisons"] == {"family": "model_vs_model", "size": 1}
    m1 = evaluate_logprobs(trials, models["m1"], "m1", {"m2": models["m2"], "m3": models["m3"]})
    assert m1["natural_vs_synthetic"]["comparisons"]["m2"]["basis"] == "own_selection"
    assert set(m1["natural_vs_synthetic"]["comparisons"]) == {"m2"}


def test_identical_models_are_not_separable(small):
    trials, models, _ = small
    res = evaluate_logprobs(trials, models["m1"], "copy", {"m1": models["m1"]})
    h = res["all"]["head_to_head"]["m1"]
    assert h["n_trials"] == h["n_pairs"] == 0
    assert h["share"] is None and h["p"] is None and h["p_bh"] is None and h["better"] is None
    assert res["all"]["bh_families"]["head_to_head"]["size"] == 0


@pytest.mark.parametrize("ties, expected", [("half", 0.5), ("miss", 0.0), ("hit", 1.0)])
def test_tie_conventions(ties, expected):
    trials, models = make_trials(seed=5)
    tied = dict(models["m1"])
    s1, s2 = trials.iloc[0]["sentence1"], trials.iloc[0]["sentence2"]
    tied[s2] = tied[s1]  # one pair with equal log-probabilities
    res = evaluate_logprobs(trials, tied, "m", ties=ties, conditions=["all"])["all"]
    pid = trials.iloc[0]["pair_id"]
    rows = trials[trials["pair_id"] == pid]
    base = evaluate_logprobs(trials, tied, "m", ties="miss", conditions=["all"])["all"]
    per_participant_trials = trials.groupby("participant").size()
    for participant in rows["participant"]:
        gain = expected / per_participant_trials[participant]
        assert res["accuracy_by_unit"][participant] == pytest.approx(base["accuracy_by_unit"][participant] + gain)
    with pytest.raises(ValueError, match="unknown tie convention 'coin'.*half, miss, hit"):
        evaluate_logprobs(trials, tied, "m", ties="coin")


def test_inference_helpers():
    assert wilcoxon_p([1, 2, 3], [1, 2, 3]) == 1.0
    x = np.arange(12.0)
    assert wilcoxon_p(x + 1, x) < 0.01
    np.testing.assert_allclose(bh_adjust([0.01, 0.04, 0.03]), [0.03, 0.04, 0.04])
    with pytest.raises(ValueError, match="NaN"):
        wilcoxon_p([1.0, np.nan], [1.0, 2.0])


# ---------------------------------------------------------------- units
def test_group_units_average_participants():
    trials, models = make_trials(seed=5, groups=3, participants=2)
    res = evaluate_logprobs(trials, models["m2"], "m2", {"m1": models["m1"]})
    e = res["all"]
    assert e["unit"] == "group" and e["n_units"] == 3 and set(e["accuracy_by_unit"]) == {"1", "2", "3"}
    per_participant = evaluate_logprobs(trials, models["m2"], "m2", unit="participant")["all"]
    assert per_participant["n_units"] == 6
    for g in ("1", "2", "3"):
        vals = [v for p, v in per_participant["srcs_by_unit"].items() if p.startswith(f"g{g}")]
        assert e["srcs_by_unit"][g] == pytest.approx(np.mean(vals))
        accs = [v for p, v in per_participant["accuracy_by_unit"].items() if p.startswith(f"g{g}")]
        assert e["accuracy_by_unit"][g] == pytest.approx(np.mean(accs))  # equal trials per participant


# ---------------------------------------------------------------- invariance
def _assert_same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, float):
        assert a == pytest.approx(b, abs=1e-12)
    else:
        assert a == b


@pytest.mark.parametrize("seed", [0, 1])
def test_every_measure_invariant_to_swapping_sentences(seed):
    trials, models = make_trials(seed=seed, groups=2, participants=3)
    refs = {"m2": models["m2"], "m3": models["m3"]}
    before = evaluate_logprobs(trials, models["m1"], "m1", refs, unit="participant")
    rows = np.flatnonzero(np.random.default_rng(seed + 10).random(len(trials)) < 0.5)
    after = evaluate_logprobs(swap(trials, rows), models["m1"], "m1", refs, unit="participant")
    _assert_same(before, after)
    # the same through per-trial log-ratios (what the evaluate metric receives)
    swapped = swap(trials, rows)
    lr = np.array([models["m1"][b] - models["m1"][a] for a, b in zip(swapped["sentence1"], swapped["sentence2"])])
    via_ratios = evaluate_log_ratios(
        swapped, lr, "m1",
        {r: [models[r][b] - models[r][a] for a, b in zip(swapped["sentence1"], swapped["sentence2"])] for r in refs},
        unit="participant",
    )
    _assert_same(before, via_ratios)


# ---------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def base():
    trials, models = make_trials(seed=11, participants=3)
    return trials, models["m1"]


def _bad(trials, lp, match, **kw):
    with pytest.raises(ValueError, match=match):
        evaluate_logprobs(trials, lp, "m1", **kw)


def test_bad_inputs(base):
    trials, lp = base
    _bad(trials.iloc[:0], lp, "empty")
    _bad(trials.drop(columns=["pair_id"]), lp, "missing column.*pair_id")
    t = trials.copy(); t.loc[4, "rating"] = 7
    _bad(t, lp, r"row 4 .*rating 7 is outside 1..6")
    t = trials.copy(); t["rating"] = t["rating"].astype(float); t.loc[2, "rating"] = 3.5
    _bad(t, lp, r"row 2 .*rating 3.5 is outside")
    t = trials.copy(); t["rating"] = t["rating"].astype(object); t.loc[1, "rating"] = None
    _bad(t, lp, r"row 1 .*rating None")
    t = trials.copy(); t.loc[3, "trial_type"] = "natural_vs_natural"
    _bad(t, lp, r"row 3 .*unknown trial type 'natural_vs_natural'")
    t = trials.copy(); t.loc[5, "participant"] = "  "
    _bad(t, lp, r"row 5 .*participant.*empty")
    t = trials.copy(); t.loc[5, "participant"] = None
    _bad(t, lp, r"row 5 .*participant.*missing")
    _bad(pd.concat([trials, trials.iloc[[7]]], ignore_index=True), lp, "duplicated trial: participant 'g1p0'")
    t = trials.copy(); t.loc[0, "sentence2"] = "A sentence nobody else saw."
    _bad(t, lp, "pair id 'g1-0-0' is used for more than one sentence pair")
    t = trials.copy(); t.loc[0, "group"] = 2
    _bad(t, lp, "participant 'g1p0' appears in more than one group")

    missing = dict(lp); gone = trials["sentence1"].iloc[0]; del missing[gone]
    _bad(trials, missing, f"no log-probability for sentence {gone!r}")
    nan = dict(lp); nan[gone] = float("nan")
    _bad(trials, nan, f"log-probability of sentence {gone!r} is not finite")
    inf = dict(lp); inf[gone] = float("-inf")
    _bad(trials, inf, f"log-probability of sentence {gone!r} is not finite")
    _bad(trials, lambda sents: [0.0] * (len(sents) - 1), "returned .* log-probabilities for .* sentences")
    _bad(trials, lp, "m2: no log-probability", reference_logprobs={"m2": {}})

    with pytest.raises(ValueError, match=r"expected 63 per-trial log-ratios, got shape \(104,\)"):
        evaluate_log_ratios(trials, np.zeros(104), "m1")
    with pytest.raises(ValueError, match="log-ratio of trial 3 is not finite"):
        evaluate_log_ratios(trials, np.where(np.arange(63) == 3, np.nan, 1.0), "m1")
    with pytest.raises(ValueError, match="unit must be"):
        evaluate_log_ratios(trials, np.ones(63), "m1", unit="sentence")
    with pytest.raises(ValueError, match="unknown condition 'natural'"):
        evaluate_log_ratios(trials, np.ones(63), "m1", conditions=["natural"])
    with pytest.raises(TypeError, match="DataFrame"):
        evaluate_logprobs(trials.to_dict("records"), lp, "m1")


def test_callable_scorer_is_called_once_with_unique_sentences(base):
    trials, lp = base
    calls = []

    def scorer(sentences):
        calls.append(list(sentences))
        return [lp[s] for s in sentences]

    assert evaluate_logprobs(trials, scorer, "m1") == evaluate_logprobs(trials, lp, "m1")
    assert len(calls) == 1 and len(calls[0]) == len(set(calls[0])) == 42
