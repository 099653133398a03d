"""A plan that holds, end to end on small models the test builds: plan a round for a pair the pll data
cannot separate (a bigram and a trigram trained here never disagree on a pll pair), generate its natural
pairs and design (`round plan --generate`), export and serve it, let simulated participants answer as the
plan says people do (`experiment simulate --plan`), ingest, and evaluate: over repeated simulated rounds
the share that `evaluate` reports separated ("supported") is within the plan's Monte Carlo interval of
its predicted power."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from contstim_bench.cli import main as cli_main

ROUNDS = 16
EFFECT, PARTICIPANTS, TRIALS = "0.8", 8, 6


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("lms")
    for order, name in ((3, "tri"), (2, "bi")):
        assert cli_main(["train", "ngram", "--order", str(order), "--backend", "python",
                         "--output", str(root / f"{name}.arpa")]) == 0
    return {"tri": f"tri=kenlm:{root / 'tri.arpa'}", "bi": f"bi=kenlm:{root / 'bi.arpa'}"}


@pytest.fixture(scope="module")
def plan_dir(models, tmp_path_factory, capsys_module=None) -> Path:
    out = tmp_path_factory.mktemp("plan") / "plan"
    assert cli_main(["round", "plan", "--models", models["tri"], models["bi"], "--effect", EFFECT,
                     "--participants", str(PARTICIPANTS), "--trials-per-participant", str(TRIALS),
                     "--participant-sd", "0.3", "--item-sd", "0.2", "--simulations", "2000", "--generate",
                     "--round-name", "planned", "--seed", "1", "--quiet", "--out", str(out)]) == 0
    return out


def served(export_dir: Path, db: Path, seed: int):
    """The experiment server (the Flask app `experiment serve` runs) in a thread; yields its URL."""
    from werkzeug.serving import make_server

    from contstim_bench.experiment.server import create_app
    from served import in_thread

    return in_thread(make_server("127.0.0.1", 0, create_app(export_dir, db, seed=seed), threaded=True))


def test_the_plan_targets_the_pair_and_writes_a_design(plan_dir):
    plan = json.loads((plan_dir / "plan.json").read_text())
    assert [(t["model_a"], t["model_b"]) for t in plan["targets"]] == [("tri", "bi")]
    assert plan["evidence"]["pairs"][0]["verdict"].startswith("never disagree")
    assert plan["design"]["participants"] == PARTICIPANTS and plan["design"]["valid"]
    assert plan["stimuli"]["pool_check"]["selected"] == TRIALS
    assert (plan_dir / "design" / "plan.json").is_file() and (plan_dir / "natural").is_dir()


def test_simulated_rounds_separate_the_pair_as_often_as_planned(plan_dir, models, tmp_path, capsys):
    from contstim_bench.api import evaluate_model

    plan = json.loads((plan_dir / "plan.json").read_text())
    hypothesis = plan["hypotheses"][0]
    predicted, se = hypothesis["predicted_power"], hypothesis["predicted_power_mc_se"]
    assert 0.3 <= predicted <= 0.9  # a round that may or may not separate the pair: the check can fail
    exp = tmp_path / "web"
    assert cli_main(["experiment", "export", "--design", str(plan_dir / "design"), "--out", str(exp)]) == 0
    supported = 0
    for r in range(ROUNDS):
        root = tmp_path / f"round{r}"
        root.mkdir()
        with served(exp, root / "responses.sqlite", seed=r) as base:
            assert cli_main(["experiment", "simulate", "--url", base + "/", "--participants", str(PARTICIPANTS),
                             "--plan", str(plan_dir), "--seed", str(100 + r)]) == 0
        assert cli_main(["experiment", "ingest", "--db", str(root / "responses.sqlite"), "--out",
                         str(root / "datasets"), "--experiment", "planned", "--design", str(plan_dir / "design")]) == 0
        result = evaluate_model(models["tri"].split("=", 1)[1], benchmarks=["contstim.planned"],
                                datasets_dir=root / "datasets", log=lambda msg: None)["contstim.planned"]
        check = result["plan_check"]["hypotheses"][0]
        assert (check["model_a"], check["model_b"], check["n_pairs"]) == ("tri", "bi", TRIALS)
        supported += check["outcome"] == "supported"
        if r == 0:
            capsys.readouterr()
            from contstim_bench.report import summary

            text = summary(result)
            assert "against its plan" in text and "H1 tri vs bi" in text
            pilot = root / "replan"
            assert cli_main(["round", "plan", "--pilot", "planned", "--datasets", str(root / "datasets"),
                             "--participants", "8", "12", "--no-pool-check", "--simulations", "200", "--quiet",
                             "--out", str(pilot)]) == 0
            replanned = json.loads((pilot / "plan.json").read_text())
            assert replanned["settings"]["pilot"] == "planned" and replanned["evidence"]["experiment"] == "planned"
            model = replanned["participant_model"]["per_pair"][0]
            assert (model["model_a"], model["model_b"]) in (("tri", "bi"), ("bi", "tri"))
            assert model["effect"] == pytest.approx(check["share"] if model["model_a"] == "tri"
                                                    else 1 - check["share"], abs=1e-9)
    rate = supported / ROUNDS
    tolerance = 3 * math.sqrt(predicted * (1 - predicted) / ROUNDS + se ** 2)
    assert abs(rate - predicted) <= tolerance, (rate, predicted, tolerance)
