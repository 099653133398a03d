"""The planner's power, checked against the real participants: on the pll data, for the model pairs the
30 participants do separate (the pseudo-log-likelihood read-outs of RoBERTa, ELECTRA and BERT against
each other), the power `contstim round plan --effect observed` predicts (simulating the round under a
participant model fitted to the data) agrees within 0.1 with the power of rounds drawn from the real
participants' own choices (resampled: participants, their sentence pairs and their catch trials), at
the designs where that power lies between 0.2 and 0.9.  Both curves are pinned."""
from __future__ import annotations

import pytest

from contstim_bench.analysis.power import RoundDesign, resampled_power
from contstim_bench.planning.plan_folder import make_plan
from contstim_bench.planning.settings import PlanSettings
from contstim_bench.planning.targets import ModelSources

MODELS = ("precomputed:roberta_has_a_mouth", "precomputed:electra_has_a_mouth", "precomputed:bert_has_a_mouth")
PARTICIPANTS = (6, 8, 10)
SIMULATIONS = 1000

PREDICTED = {  # pair -> power at 6, 8, 10 participants with 10 trials each (one group, by participant)
    ("roberta_has_a_mouth", "electra_has_a_mouth"): (0.375, 0.612, 0.664),
    ("roberta_has_a_mouth", "bert_has_a_mouth"): (0.604, 0.881, 0.926),
    ("electra_has_a_mouth", "bert_has_a_mouth"): (0.623, 0.921, 0.947),
}
RESAMPLED = {
    ("roberta_has_a_mouth", "electra_has_a_mouth"): (0.365, 0.601, 0.670),
    ("roberta_has_a_mouth", "bert_has_a_mouth"): (0.591, 0.915, 0.953),
    ("electra_has_a_mouth", "bert_has_a_mouth"): (0.607, 0.949, 0.993),
}


@pytest.fixture(scope="module")
def planned():
    settings = PlanSettings(participants=PARTICIPANTS, trials_per_participant=(10,), effects=None,
                            simulations=SIMULATIONS, seed=0)
    plan, targets = make_plan(ModelSources(models=MODELS), settings, pool_check=False, log=lambda msg: None)
    return plan, targets


def test_plan_targets_the_separated_pairs_with_their_observed_effects(planned):
    plan, targets = planned
    assert [(t["model_a"], t["model_b"]) for t in plan["targets"]] == list(PREDICTED)
    assert all(p["separated"] for p in plan["evidence"]["pairs"])
    effects = [m["effect"] for m in plan["participant_model"]["per_pair"]]
    assert effects == pytest.approx([0.636, 0.756, 0.789], abs=1e-3)  # the observed shares (README: 0.64, 0.76, 0.79)


def test_predicted_power_agrees_with_resampled_real_participants(planned):
    plan, targets = planned
    predicted = {(r["model_a"], r["model_b"]): {} for r in plan["power"]}
    for r in plan["power"]:
        if r["test"] == "participants" and r["trials_per_participant"] == 10:
            predicted[(r["model_a"], r["model_b"])][r["participants"]] = r["power"]
    observed = [t.observed() for t in targets.targets]
    resampled = {pair: {} for pair in predicted}
    for n in PARTICIPANTS:
        got = resampled_power(observed, targets.evidence.catch, RoundDesign(n, 10), simulations=SIMULATIONS,
                              seed=[11, n])
        for (pair, _), est in zip(predicted.items(), got):
            resampled[pair][n] = est.power
    checked = 0
    for pair in predicted:
        for n in PARTICIPANTS:
            p, r = predicted[pair][n], resampled[pair][n]
            if 0.2 <= r <= 0.9:
                checked += 1
                assert abs(p - r) <= 0.1, (pair, n, p, r)
    assert checked >= 4  # the designs where power is informative (6-10 participants, 10 trials)
    for pair in predicted:
        assert tuple(predicted[pair][n] for n in PARTICIPANTS) == pytest.approx(PREDICTED[pair], abs=1e-9)
        assert tuple(resampled[pair][n] for n in PARTICIPANTS) == pytest.approx(RESAMPLED[pair], abs=1e-9)


def test_all_their_trials_give_power_near_one(planned):
    """With every pair each participant judged (29 shared pairs, the fewest of the three pairs), 8 of
    the real participants separate two of the three pairs almost always."""
    _, targets = planned
    got = resampled_power([t.observed() for t in targets.targets], targets.evidence.catch, RoundDesign(8, 29),
                          simulations=500, seed=3)
    assert [round(g.power, 2) >= 0.95 for g in got] == [False, True, True]
