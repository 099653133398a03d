"""`contstim round plan` as a user meets it: the plan folder's files, and every bad input named with
nothing written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from contstim_bench.cli import main as cli_main

REFS = ["precomputed:roberta_has_a_mouth", "precomputed:electra_has_a_mouth"]
FAST = ["--simulations", "100", "--no-pool-check", "--participants", "6", "10", "--quiet"]


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("p") / "plan"
    assert cli_main(["round", "plan", "--models", *REFS, "--effect", "observed", "--trials-per-participant", "10",
                     "--pay-per-hour", "12", *FAST, "--out", str(out)]) == 0
    return out


def test_the_plan_folder(plan):
    names = sorted(p.name for p in plan.iterdir())
    assert names == [".contstim-output.json", "plan.json", "plan.md", "power.png", "power.svg"]
    doc = json.loads((plan / "plan.json").read_text())
    assert doc["format"] == "contstim-bench-plan"
    row = doc["power"][0]
    assert {"model_a", "model_b", "participants", "trials_per_participant", "effect", "test", "power"} <= set(row)
    assert {r["test"] for r in doc["power"]} == {"participants", "items", "both"}
    assert {r["participants"] for r in doc["power"]} == {6, 10}
    c = doc["cost"]
    assert c["total"] == pytest.approx(c["participants"] * c["trials_per_participant_total"] * c["seconds_per_trial"]
                                       / 3600 * 12, abs=0.02)
    text = (plan / "plan.md").read_text()
    for section in ("## Hypotheses", "## Design", "## Sample size and why", "## Analysis", "## Exclusions", "## Cost"):
        assert section in text
    assert "roberta_has_a_mouth vs electra_has_a_mouth" in text


def test_a_plan_folder_is_replaced_only_when_the_planner_wrote_it(plan, tmp_path, capsys):
    before = (plan / "plan.json").read_bytes()
    assert cli_main(["round", "plan", "--models", *REFS, "--effect", "observed", "--trials-per-participant", "8", *FAST, "--out", str(plan)]) == 0
    assert (plan / "plan.json").read_bytes() != before
    (plan / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert cli_main(["round", "plan", "--models", *REFS, "--effect", "observed", "--trials-per-participant", "8", *FAST, "--out", str(plan)]) == 1
    assert "notes.txt" in capsys.readouterr().err and (plan / "notes.txt").read_text() == "mine"
    user = tmp_path / "mine"
    user.mkdir()
    (user / "index.html").write_text("<p>my page</p>")
    assert cli_main(["round", "plan", "--models", *REFS, "--effect", "observed", "--trials-per-participant", "8", *FAST, "--out", str(user)]) == 1
    assert "did not write" in capsys.readouterr().err and (user / "index.html").is_file()


@pytest.mark.parametrize("args,message", [
    ([], "no models"),
    (["--models", REFS[0]], "at least two"),
    (["--models", REFS[0], "nosuchfamily:x"], "nosuchfamily"),
    (["--models", *REFS, "--target-power", "1"], "--target-power must be a number strictly between 0 and 1"),
    (["--models", *REFS, "--target-power", "0"], "--target-power"),
    (["--models", *REFS, "--effect", "0.4"], "in [0.5, 1)"),
    (["--models", *REFS, "--effect", "1"], "in [0.5, 1)"),
    (["--models", *REFS, "--effect", "high"], "neither a share"),
    (["--models", *REFS, "--candidates", REFS[0]], "either --candidates"),
    (["--models", *REFS, "--min-catch-correct", "13"], "every participant would be excluded"),
    (["--models", *REFS, "--groups", "12", "--participants", "10"], "--groups 12 needs at least 12"),
])
def test_bad_input_is_named_and_nothing_is_written(args, message, tmp_path, capsys):
    out = tmp_path / "plan"
    assert cli_main(["round", "plan", *args, "--simulations", "50", "--no-pool-check", "--quiet",
                     "--out", str(out)]) in (1, 2)
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_zero_participants_refused_while_parsing(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli_main(["round", "plan", "--models", *REFS, "--participants", "0", "--out", str(tmp_path / "p")])
    assert "must be an integer >= 1" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_a_plan_folder_that_is_an_input_is_refused(tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    root = Path(__file__).resolve().parents[2] / "leaderboard" / "results"
    for name in ("roberta_has_a_mouth.json", "electra_has_a_mouth.json"):
        (results / name).write_bytes((root / name).read_bytes())
    files = [str(results / n) for n in sorted(p.name for p in results.iterdir())]
    for out in (results, results / "plan"):
        assert cli_main(["round", "plan", "--leaderboard", str(results), *FAST, "--out", str(out)]) == 1
        assert "--leaderboard" in capsys.readouterr().err
    assert cli_main(["round", "plan", "--results", *files, *FAST, "--out", files[0]]) == 1
    assert "is the input --results" in capsys.readouterr().err
    assert sorted(p.name for p in results.iterdir()) == ["electra_has_a_mouth.json", "roberta_has_a_mouth.json"]


def test_a_pool_too_small_for_the_pairs_asked(tmp_path, capsys):
    """Two n-gram models that disagree on a tiny pool: ten natural pairs per model pair cannot be
    selected from it, and the error says so before anything is written."""
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(["the cat sat on the mat today", "a dog ran in the park", "we like green tea",
                               "birds fly south in winter", "my brother plays the violin",
                               "rain fell on the quiet town", "she reads books at night",
                               "they built a small wooden boat"]) + "\n")
    lm = tmp_path / "uni.arpa"
    assert cli_main(["train", "ngram", "--order", "2", "--backend", "python", "--output", str(lm)]) == 0
    capsys.readouterr()
    out = tmp_path / "plan"
    assert cli_main(["round", "plan", "--models", f"bi=kenlm:{lm}", "smollm2=smollm2-135m", "--effect", "0.7",
                     "--pool", str(pool), "--simulations", "50", "--participants", "6", "--quiet",
                     "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "the pool is too small for the pairs asked" in err or "never disagree on the pool" in err, err
    assert not out.exists()
