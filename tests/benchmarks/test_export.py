"""``contstim export RESULT --trials FILE``: one row per trial and model, tied to the evaluation.

Real inputs: the shipped result of SmolLM2-135M on the pll experiment
(``leaderboard/results/smollm2-135m.json``), the pll trials built from the raw data, and one trial
of the raw pll results file checked by hand."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contstim_bench import cli
from contstim_bench.benchmarks.contstim_export import COLUMNS, export_trials, trial_table, write_table
from contstim_bench.data import build_contstim as bc
from contstim_bench.study import TARGET_COLUMNS

RESULT = Path(__file__).resolve().parents[2] / "leaderboard" / "results" / "smollm2-135m.json"


@pytest.fixture(scope="module")
def result() -> dict:
    return json.loads(RESULT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def exported(datasets, tmp_path_factory):
    """The CSV and Parquet exports of the shipped result, through the command."""
    out = tmp_path_factory.mktemp("export")
    for suffix in ("csv", "parquet"):
        assert cli.main(["export", str(RESULT), "--trials", str(out / f"trials.{suffix}")]) == 0
    return out


def test_rows_columns_and_the_evaluation(exported, result):
    table = pd.read_csv(exported / "trials.csv")
    assert len(table) == 3960 == 30 * 132
    assert tuple(table.columns) == COLUMNS  # the pll trials have every optional column
    assert table.groupby("participant").size().eq(132).all() and table["participant"].nunique() == 30
    assert set(table["experiment"]) == {"pll"} and set(table["unit_type"]) == {"participant"}
    assert (table["unit"] == table["participant"]).all()
    assert set(table["model"]) == {"hf-causal:smollm2-135m"} and set(table["ties"]) == {"half"}
    assert table["condition"].value_counts().to_dict() == {"synthetic_vs_synthetic": 3600, "natural_vs_shuffled": 360}
    assert np.allclose(table["log_ratio"], table["logprob_sentence2"] - table["logprob_sentence1"], rtol=0, atol=1e-9)
    assert ((table["participant_choice"] == 2) == (table["rating"] >= 4)).all()
    assert table["model_tie"].sum() == 0 and set(table["model_choice"]) == {1, 2}
    assert ((table["model_choice"] == table["participant_choice"]) == (table["hit"] == 1)).all()
    assert table["targets_model"].sum() == 0  # no trial targets SmolLM2
    # the mean hit per participant, averaged, is the result's accuracy on every pll trial
    expected = result["experiments"]["pll"]["all"]["accuracy"]
    assert expected == pytest.approx(0.8573232323, abs=1e-9)
    assert table.groupby("unit")["hit"].mean().mean() == pytest.approx(expected, abs=1e-12)
    syn = table[table["condition"] == "synthetic_vs_synthetic"]
    assert syn.groupby("unit")["hit"].mean().mean() == pytest.approx(
        result["experiments"]["pll"]["synthetic_vs_synthetic"]["accuracy"], abs=1e-12)


def test_one_trial_by_hand(exported, result, raw_data_dir):
    """Participant 7, trial 9 of the raw pll file: rated resp2 (sentence1), Confident."""
    raw = pd.read_csv(raw_data_dir / bc.PLL_RESULTS)
    row = raw[(raw["subject"] == 7) & (raw["Trial Number"] == 9)].iloc[0]
    assert row["Zone Name"] == "resp2" and row["Response"] == "Confident"
    table = pd.read_parquet(exported / "trials.parquet")
    got = table[(table["participant"] == "pll-s07") & (table["trial"] == 9)]
    assert len(got) == 1
    got = got.iloc[0]
    lp1, lp2 = result["logprobs"][row["sentence1"]], result["logprobs"][row["sentence2"]]
    assert (got["sentence1"], got["sentence2"]) == (row["sentence1"], row["sentence2"])
    assert got["logprob_sentence1"] == lp1 and got["logprob_sentence2"] == lp2
    assert got["log_ratio"] == lp2 - lp1 and lp2 > lp1  # the model prefers sentence2 ...
    assert got["rating"] == 2 and got["participant_choice"] == 1  # ... the participant sentence1
    assert got["model_choice"] == 2 and got["model_tie"] == 0 and got["hit"] == 0.0
    assert got["confidence"] == 2 and got["reaction_time_ms"] == pytest.approx(row["Reaction Time"])
    assert got["condition"] == "synthetic_vs_synthetic" and got["group"] == 1
    targeted = [got[c] for c in TARGET_COLUMNS]
    assert all(isinstance(t, str) for t in targeted) and targeted[0] == targeted[3]  # accepted 1 = rejected 2


def test_csv_and_parquet_hold_the_same_frame(exported):
    csv = pd.read_csv(exported / "trials.csv")
    parquet = pd.read_parquet(exported / "trials.parquet")
    pd.testing.assert_frame_equal(csv, parquet, check_dtype=False)
    assert not list(exported.glob(".*tmp"))  # written atomically: no temporary file left


def test_ties_are_marked_and_scored_by_the_results_convention(datasets, result):
    tied = copy.deepcopy(result)
    first = trial_table(result).iloc[0]
    tied["logprobs"][first["sentence2"]] = tied["logprobs"][first["sentence1"]]
    rows = trial_table(tied)
    pair = rows[rows["pair_id"] == first["pair_id"]]
    assert len(pair) == 30 and (pair["model_tie"] == 1).all() and pair["model_choice"].isna().all()
    assert (pair["hit"] == 0.5).all()
    tied["analysis"]["ties"] = "miss"
    assert (trial_table(tied).loc[pair.index, "hit"] == 0.0).all()


def test_bad_inputs_are_named(datasets, result, tmp_path, capsys):
    with pytest.raises(ValueError, match=r"--trials .*trials\.xlsx: unknown suffix '\.xlsx'.*\.csv or \.parquet"):
        export_trials(RESULT, tmp_path / "trials.xlsx")
    missing = tmp_path / "nowhere.json"
    assert cli.main(["export", str(missing), "--trials", str(tmp_path / "t.csv")]) == 1
    assert f"result file {missing} does not exist" in capsys.readouterr().err
    cut = copy.deepcopy(result)
    sentence = trial_table(result).iloc[5]["sentence1"]
    del cut["logprobs"][sentence]
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(cut), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{path}: no log-probability for sentence '{sentence}' of the pll trials "
                                         r"\(1 of 264 sentences missing\); the result file is incomplete"):
        export_trials(path, tmp_path / "t.csv")
    other = copy.deepcopy(result)
    other["benchmark"]["dataset_fingerprint"] = other["provenance"]["dataset_fingerprint"] = "0" * 64
    with pytest.raises(ValueError, match="another version of the data .*fingerprint 000000000000.*--datasets"):
        trial_table(other, source="other.json")
    with pytest.raises(ValueError, match="x.json: not a contstim result \\(format 'contstim-bench-blimp'\\)"):
        trial_table({"format": "contstim-bench-blimp"}, source="x.json")
    copied = tmp_path / "result.csv"  # an output that is the input is refused before anything is written
    shutil.copy(RESULT, copied)
    with pytest.raises(ValueError, match="--trials .*result.csv is the input RESULT"):
        export_trials(copied, copied)
    assert copied.read_bytes() == RESULT.read_bytes()


def test_csv_cells_a_spreadsheet_would_run_are_quoted(tmp_path):
    frame = pd.DataFrame({"sentence1": ["=HYPERLINK(1)", "plain"], "logprob_sentence1": [-3.5, -1.0]})
    write_table(frame, tmp_path / "t.csv")
    back = pd.read_csv(tmp_path / "t.csv")
    assert back["sentence1"].tolist() == ["'=HYPERLINK(1)", "plain"] and back["logprob_sentence1"].tolist() == [-3.5, -1.0]
    write_table(frame, tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "t.parquet"), frame)
