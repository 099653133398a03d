"""The power of a planned round (contstim_bench.analysis.power): the batched head-to-head test is the
package's test row by row, the simulation agrees with an exact calculation where one exists, makes no
false discoveries at no effect, and knows the designs that can never succeed."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import binom, wilcoxon

from contstim_bench.analysis import participant_model as pm
from contstim_bench.analysis import power as pw
from contstim_bench.analysis.head_to_head import share_p_values
from contstim_bench.analysis.inference import bh_adjust, wilcoxon_p, wilcoxon_p_rows


def scipy_p(d) -> float:
    if np.all(d == 0):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(wilcoxon(d, zero_method="zsplit", alternative="two-sided").pvalue)


def test_rows_are_tested_as_scipy_tests_each_alone():
    rng = np.random.default_rng(7)
    for n in (1, 3, 6, 9, 11, 14, 30, 51):
        ties = np.round(rng.binomial(10, 0.62, (6, n)) / 10 - 0.5, 12)  # shares of 10 trials: ties and zeros
        plain = rng.normal(size=(6, n))
        for d in (ties, plain, np.vstack([ties[:3], ties[:3][::-1]])):  # repeated rows: the de-duplicated path
            assert wilcoxon_p_rows(d).tolist() == [scipy_p(row) for row in d], n
    assert wilcoxon_p(np.array([0.7, 0.9, 0.6]), np.array([0.5, 0.5, 0.5])) == scipy_p(np.array([0.2, 0.4, 0.1]))


def test_share_p_values_skip_absent_units():
    shares = np.array([[0.8, 0.9, np.nan, 0.7, 0.6, 1.0, 0.9], [np.nan] * 7])
    p = share_p_values(shares)
    assert p[0] == scipy_p(np.round(np.array([0.8, 0.9, 0.7, 0.6, 1.0, 0.9]) - 0.5, 12))
    assert math.isnan(p[1])
    assert bh_adjust(np.array([[0.01, 0.04], [0.03, 0.5]])).tolist() == [[0.02, 0.04], [0.06, 0.5]]


def test_exact_power_by_hand():
    # one trial per unit: the pair is separated only when all six units chose A (p = 2/64)
    for e in (0.5, 0.7, 0.9):
        assert pw.exact_power(e, 6, 1) == pytest.approx(e ** 6, rel=1e-12)
    # five units can never be separated, whatever the effect
    assert pw.exact_power(0.99, 5, 3) == 0.0


@pytest.mark.parametrize("n_units,trials", [(8, 6), (12, 4)])
def test_simulated_power_matches_the_exact_power(n_units, trials):
    """No spread between participants or items, no lapses, nobody excluded: every unit's share is
    binomial, and the exact power (every outcome enumerated) is what the simulation must find, within
    3.5 Monte Carlo standard errors (4,000 simulated rounds per effect)."""
    design = pw.RoundDesign(n_units, trials, catch_trials=0, min_catch_correct=0)
    for effect in (0.5, 0.6, 0.7, 0.8):
        exact = pw.exact_power(effect, n_units, trials)
        sim = pw.power([pm.ChoiceModel(effect, 0.0, 0.0, 0.0)], design, simulations=4000,
                       seed=[n_units, trials, int(effect * 100)])[0]
        se = math.sqrt(exact * (1 - exact) / 4000) or 1 / 4000
        assert abs(sim.power - exact) <= 3.5 * se, (effect, sim.power, exact)


def test_exact_power_against_every_ordered_outcome():
    """The multinomial sum over sets of unit shares equals the plain sum over every ordered outcome
    (4**6 of them, each unit's successes binomial), tested with scipy one outcome at a time."""
    import itertools

    n, t, e = 6, 3, 0.7
    pmf = binom.pmf(np.arange(t + 1), t, e)
    cache: dict[tuple, float] = {}
    total = 0.0
    for outcome in itertools.product(range(t + 1), repeat=n):
        key = tuple(sorted(outcome))
        if key not in cache:
            shares = np.array(key) / t
            cache[key] = scipy_p(np.round(shares - 0.5, 12)) if shares.mean() > 0.5 else 1.0
        if cache[key] < 0.05:
            total += float(np.prod(pmf[list(outcome)]))
    assert pw.exact_power(e, n, t) == pytest.approx(total, rel=1e-12)
    # and two values the simulation test above is held to
    assert pw.exact_power(0.7, 8, 6) == pytest.approx(0.517220, abs=5e-6)
    assert pw.exact_power(0.6, 12, 4) == pytest.approx(0.157484, abs=5e-6)


def test_no_false_discoveries_at_no_effect():
    """At effect 0.5 the rate of q < .05 (either direction, BH over three pairs) is at most the nominal
    .05 within Monte Carlo error, with the spreads and lapses of the pll data, for every test whose
    units each judge their own sentence pairs: by item, and by participant group when each group has
    its own pairs (the paper's main experiment)."""
    models = [pm.ChoiceModel(0.5, 0.35, 2.0, 0.011)] * 3
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)
    for n, t, groups, tests in ((8, 10, 1, ("items",)), (20, 6, 1, ("items",)), (24, 5, 6, pw.TESTS),
                                (40, 4, 10, pw.TESTS)):
        sims = pw.simulate_tests(models, pw.RoundDesign(n, t, groups=groups), 2000, seed=[5, n])
        verdicts = pw.separated(sims, None, seed=[5, n])
        for test in tests:
            rate = verdicts[test][1].mean(axis=0)
            assert (rate <= bound).all(), (n, groups, test, rate)
    # no spread between sentence pairs: the by-participant test of one group is valid too
    flat = [pm.ChoiceModel(0.5, 0.35, 0.0, 0.011)] * 3
    rate = pw.separated(pw.simulate_tests(flat, pw.RoundDesign(10, 10), 2000, seed=9), None)["participants"][1]
    assert (rate.mean(axis=0) <= bound).all()


def test_shared_sentence_pairs_make_the_by_participant_test_lie():
    """Clark's (1973) language-as-fixed-effect fallacy, as the planner flags it: when every participant
    judges the same few sentence pairs and pairs differ, the by-participant test separates two equal
    models far more often than 5% of the time (the pairs that happen to lean one way decide)."""
    models = [pm.ChoiceModel(0.5, 0.35, 2.0, 0.011)]
    verdicts = pw.separated(pw.simulate_tests(models, pw.RoundDesign(10, 10), 2000, seed=4), None)
    assert verdicts["participants"][1].mean() > 0.2
    assert verdicts["items"][1].mean() <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)


def test_designs_that_cannot_succeed():
    assert pw.least_attainable_p(5) == pytest.approx(0.0625)
    assert pw.least_attainable_p(6) == pytest.approx(0.03125)
    assert pw.cannot_succeed(pw.RoundDesign(5, 10), "participants").startswith("a two-sided Wilcoxon over 5 participants")
    # two groups as units: nothing can ever be separated (as a simulated round showed)
    assert "over 2 groups" in pw.cannot_succeed(pw.RoundDesign(20, 10, groups=2), "participants")
    assert pw.cannot_succeed(pw.RoundDesign(6, 10), "participants") is None
    assert "sentence pairs" in pw.cannot_succeed(pw.RoundDesign(20, 4), "items")
    strong = [pm.ChoiceModel(0.95, 0.0, 0.0, 0.0)]
    assert pw.power(strong, pw.RoundDesign(40, 10, groups=2), simulations=200)[0].power == 0.0


def test_exclusion_removes_inattentive_participants():
    model = pm.ChoiceModel(0.7, 0.0, 0.0, 0.5)  # a lapse on half the trials: a catch trial failed a quarter of the time
    tests = pw.simulate_tests([model], pw.RoundDesign(30, 5), 400, seed=1)
    kept = 1 - binom.cdf(1, 12, 0.25)  # more than one of 12 failed -> excluded
    assert tests.included.mean() / 30 == pytest.approx(1 - kept, abs=0.02)


def test_participant_model_recovers_its_spreads():
    """Choices simulated from a known model (40 participants x 60 pairs, every participant every
    pair) give back its effect and spreads."""
    truth = pm.ChoiceModel(0.7, 0.5, 1.0, 0.02)
    rng = np.random.default_rng(3)
    u = rng.normal(0, truth.participant_sd, (40, 1))
    w = rng.normal(0, truth.item_sd, (1, 60))
    y = rng.random((40, 60)) < truth.probability(u, w)
    people, items = np.meshgrid(np.arange(40), np.arange(60), indexing="ij")
    fit = pm.estimate(y.ravel(), people.ravel(), items.ravel(), truth.lapse)
    assert fit.effect == pytest.approx(y.mean(), abs=1e-12)
    assert fit.participant_sd == pytest.approx(0.5, abs=0.2)
    assert fit.item_sd == pytest.approx(1.0, abs=0.25)


@pytest.mark.parametrize("bad,match", [
    (dict(effect=0.999, participant_sd=0, item_sd=0, lapse=0.1), "cannot be reached"),
    (dict(effect=0.6, participant_sd=-1, item_sd=0, lapse=0), "participant sd"),
    (dict(effect=0.6, participant_sd=0, item_sd=0, lapse=1.0), "lapse"),
])
def test_bad_participant_models_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        pm.ChoiceModel(**bad)
    with pytest.raises(ValueError, match="two participants"):
        pm.estimate([True, False], ["p1", "p1"], ["i1", "i2"], 0.0)
    with pytest.raises(ValueError, match="groups need at least"):
        pw.RoundDesign(3, 10, groups=4)
