"""Design files (validation, from a trials frame, reading) and `contstim experiment export`."""
from __future__ import annotations

import json
import re

import pandas as pd
import pyarrow.parquet as pq
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.data.design_file import (
    DESIGN_COLUMNS,
    design_from_trials,
    design_schema,
    read_design,
    validate_design,
    write_design,
)
from contstim_bench.experiment.export import (
    DEFAULT_TITLE,
    EXPERIMENT_FILE,
    export_and_load,
    export_experiment,
    load_experiment,
)


@pytest.fixture(scope="module")
def design(pll) -> pd.DataFrame:
    return design_from_trials(pll)


def test_design_from_pll_trials(design, pll):
    assert list(design.columns) == list(DESIGN_COLUMNS)
    assert len(design) == 132 and set(design["group"]) == {1}
    assert list(design["trial"]) == list(range(1, 133))
    assert (design["trial_type"] == "natural_vs_shuffled").sum() == 12
    first = pll[pll["participant"] == "pll-s00"].sort_values("trial")
    assert list(design["pair_id"]) == list(first["pair_id"])
    assert list(design["sentence1"]) == list(first["sentence1"])


def test_design_from_trials_refuses_mixed_groups(pll):
    broken = pll[~((pll["participant"] == "pll-s03") & (pll["trial"] == 5))]
    with pytest.raises(ValueError, match="group 1: participant 'pll-s03' saw 1 pair"):
        design_from_trials(broken)


def _bad(design, i, **changes):
    d = design.copy()
    for col, v in changes.items():
        d.loc[i, col] = v
    return d


@pytest.mark.parametrize("change,fragment", [
    ({"pair_id": "0000000000000000"}, "is not the pair id of its sentences"),
    ({"trial_type": "natural_controversial"}, "does not match the type codes"),
    ({"sentence1_type": "Q9"}, "unknown pair of sentence type codes"),
    ({"sentence1": ""}, "column 'sentence1' must be a non-empty string"),
    ({"trial": 200}, "trial numbers must be 1..132 without gaps"),
    ({"trial": 0}, "must be an integer >= 1"),
    ({"sentence1_accept_model": ""}, "must be a model name or null"),
])
def test_validate_design_names_the_problem(design, change, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        validate_design(_bad(design, 4, **change))


def test_validate_design_other_errors(design):
    with pytest.raises(ValueError, match=r"missing column\(s\) \['trial_type'\]"):
        validate_design(design.drop(columns="trial_type"))
    with pytest.raises(ValueError, match="is shown twice"):
        twice = pd.concat([design, design.iloc[[0]].assign(trial=133)], ignore_index=True)
        validate_design(twice)
    with pytest.raises(ValueError, match="the same sentence"):
        validate_design(_bad(design, 0, sentence2=design.loc[0, "sentence1"]))
    with pytest.raises(ValueError, match="empty"):
        validate_design(design.iloc[:0])


def test_write_and_read_design(design, pll, tmp_path):
    path = write_design(design, tmp_path / "d" / "design.parquet")
    assert pq.read_table(path).schema.equals(design_schema())
    pd.testing.assert_frame_equal(read_design(path), design)
    pd.testing.assert_frame_equal(read_design(tmp_path / "d"), design)
    # the trials layout (with or without ratings) is accepted too
    pll.to_parquet(tmp_path / "trials.parquet")
    pd.testing.assert_frame_equal(read_design(tmp_path / "trials.parquet"), design)
    no_ratings = design.assign(experiment="new", participant=None, rating=None, confidence=None, reaction_time_ms=None)
    no_ratings.to_parquet(tmp_path / "no_ratings.parquet")
    pd.testing.assert_frame_equal(read_design(tmp_path / "no_ratings.parquet"), design)
    (tmp_path / "two").mkdir()
    design.to_parquet(tmp_path / "two" / "a.parquet")
    design.to_parquet(tmp_path / "two" / "b.parquet")
    with pytest.raises(ValueError, match="exactly one parquet file"):
        read_design(tmp_path / "two")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_design(tmp_path / "absent")


def test_cli_export(design, tmp_path, capsys):
    write_design(design, tmp_path / "design.parquet")
    code = cli_main(["experiment", "export", "--design", str(tmp_path / "design.parquet"), "--out", str(tmp_path / "exp")])
    out = capsys.readouterr().out
    assert code == 0 and "exported 132 trials in 1 group(s) (group 1: 132)" in out
    exp = load_experiment(tmp_path / "exp")
    assert exp.randomize_order and exp.randomize_sides
    pd.testing.assert_frame_equal(exp.design, design)
    for name in ("index.html", "static/app.js", "static/style.css"):
        text = (tmp_path / "exp" / name).read_text()
        assert not re.search(r"https?://|//cdn|@import", text), name  # self-contained: nothing remote
    html = (tmp_path / "exp" / "index.html").read_text()
    assert 'src="static/app.js"' in html and "Very confident" in html and "Proceed" in html
    # the same design with fixed order/sides is another experiment
    fixed = export_experiment(design, tmp_path / "fixed", randomize_order=False, randomize_sides=False)
    assert load_experiment(fixed).experiment_id != exp.experiment_id
    # the command's one library call: export, then read back as the server will
    again, loaded = export_and_load(design, tmp_path / "fixed", randomize_order=False, randomize_sides=False)
    assert again == fixed and loaded.experiment_id == load_experiment(fixed).experiment_id
    assert loaded.title == DEFAULT_TITLE and not loaded.randomize_order


def test_export_refuses_unrelated_folder_and_edited_file(design, tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="already holds files the package did not write"):
        export_experiment(design, tmp_path / "busy")
    exp = export_experiment(design, tmp_path / "exp")
    meta = json.loads((exp / EXPERIMENT_FILE).read_text())
    meta["trials"][0]["sentence1"], meta["trials"][0]["sentence2"] = meta["trials"][0]["sentence2"], meta["trials"][0]["sentence1"]
    (exp / EXPERIMENT_FILE).write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="experiment_id does not match its trials"):
        load_experiment(exp)
    assert cli_main(["experiment", "export", "--design", str(tmp_path / "absent.parquet"), "--out", str(tmp_path / "x")]) == 1
