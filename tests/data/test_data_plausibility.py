"""The ``plausibility`` dataset (Kauf et al. 2024) built from the real raw files, and the human
accuracy of Experiment 1."""
from __future__ import annotations

import datasets
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from contstim_bench.data import build_plausibility as bp
from contstim_bench.data import builders, sources
from contstim_bench.data import plausibility_dtfit as dt_reader
from contstim_bench.data import plausibility_eventsadapt as ea_reader
from contstim_bench.data import plausibility_human as ph
from contstim_bench.data import plausibility_raw as raw
from contstim_bench.data import plausibility_socialn400 as sn_reader
from contstim_bench.data.writer import read_fingerprint

CONFIGS = ("eventsadapt", "eventsadapt_ratings", "dtfit", "socialn400", "socialn400_judgments")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return builders.build("plausibility", tmp_path_factory.mktemp("datasets"))


@pytest.fixture(scope="module")
def tables(built):
    return {c: pq.read_table(built / c / "test.parquet").to_pandas() for c in CONFIGS}


def test_configs_load_with_datasets_and_match_documented_columns(built, tables):
    spec_cols = {"eventsadapt": bp.EVENTSADAPT_COLUMNS, "eventsadapt_ratings": bp.RATINGS_COLUMNS,
                 "dtfit": bp.DTFIT_COLUMNS, "socialn400": bp.SOCIALN400_COLUMNS,
                 "socialn400_judgments": bp.JUDGMENT_COLUMNS}
    rows = {"eventsadapt": 1564, "eventsadapt_ratings": 35882, "dtfit": 395, "socialn400": 300,
            "socialn400_judgments": 3300}
    for c in CONFIGS:
        ds = datasets.load_dataset(str(built), c, split="test")
        assert ds.num_rows == rows[c]
        assert list(ds.features) == list(spec_cols[c])
    assert read_fingerprint(built)["rows"] == {f"{c}/test": rows[c] for c in CONFIGS}
    card = (built / "README.md").read_text()
    assert "evaluation only" in card.lower() and "do not redistribute" in card
    assert "pseudonymous rater id" in card.lower()


def test_eventsadapt_counts_and_spot_values(tables):
    ea = tables["eventsadapt"]
    assert ea.item.nunique() == 391
    assert ea.groupby("trial_type").item.nunique().to_dict() == {"AAN": 129, "AAR": 134, "AI": 128}
    cells = ea.groupby(["trial_type", "voice", "plausibility"]).size()
    assert len(cells) == 12 and (cells == cells.index.get_level_values(0).map({"AI": 128, "AAN": 129, "AAR": 134})).all()
    assert ea.sentence.is_unique and ea.pair_id.nunique() == 782
    assert ea.synonym_pair.isna().sum() == 568 and set(ea.synonym_version.dropna()) == {1, 2}
    row = ea.set_index("sentence").loc["The raider caught the illness."]
    assert (row["item"], row.trial_type, row.voice, row.plausibility, row.pair_id) == (1, "AI", "active", "plausible", "EA001-active")
    assert row.human_mean == pytest.approx(5.545454545454546) and row.human_n == 22
    aar = ea.set_index("sentence").loc["The athlete vexed the commentator."]
    assert (aar.trial_type, aar.plausibility, aar["item"]) == ("AAR", "implausible", 183)


def test_eventsadapt_ratings_are_pseudonymised_and_give_the_means(tables):
    ea, r = tables["eventsadapt"], tables["eventsadapt_ratings"]
    assert r.rater.nunique() == 658
    assert r.rater.iloc[0] == "R001" and r.rater.max() == "R658"
    assert not r.rater.str.fullmatch(r"W[0-9A-F]{13}").any()  # no hashed WorkerIds
    assert r.rating.isna().sum() == 145
    assert set(r.rating.dropna()) == {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0}
    assert r.duplicated(["rater", "sentence"]).sum() == 50  # one rater saw 50 sentences twice
    means = r.groupby("sentence").rating.agg(["mean", "count"])
    np.testing.assert_allclose(ea.human_mean, ea.sentence.map(means["mean"]), rtol=0, atol=1e-12)
    assert (ea.human_n == ea.sentence.map(means["count"])).all()


def test_rater_ids_do_not_depend_on_the_worker_id_hashes(tmp_path, monkeypatch, tables):
    """The upstream original (real MTurk ids) and the pseudonymised copy build the same table."""
    raw_csv = pd.read_csv(sources.resolve(raw.EA_HUMAN), keep_default_na=False, dtype=str)
    other = {w: f"A{i * 7919 % 100003:06d}XYZ" for i, w in enumerate(dict.fromkeys(raw_csv.WorkerId), start=1)}
    raw_csv["WorkerId"] = raw_csv.WorkerId.map(other)
    alt = tmp_path / "human.csv"
    raw_csv.to_csv(alt, index=False)
    real = ea_reader.resolve
    monkeypatch.setattr(ea_reader, "resolve", lambda rel, source: alt if rel == raw.EA_HUMAN else real(rel, source))
    _, ratings = ea_reader.eventsadapt_tables()
    pd.testing.assert_frame_equal(ratings, tables["eventsadapt_ratings"], check_dtype=False)


def test_dtfit_pairs(tables):
    dt = tables["dtfit"]
    assert dt["item"].is_unique and dt["item"].min() == 1 and dt["item"].max() == 397
    assert set(range(1, 398)) - set(dt["item"]) == {251, 297}
    first = dt.iloc[0]
    assert (first.sentence_plausible, first.sentence_implausible) == ("The actor won the award.", "The actor won the battle.")
    assert (first.human_mean_plausible, first.human_mean_implausible) == (5.8, 2.6)
    tie = dt.set_index("item").loc[333]
    assert tie.human_mean_plausible == tie.human_mean_implausible == 3.5


def test_socialn400_stimuli(tables):
    sn = tables["socialn400"]
    assert sn.groupby("condition").size().to_dict() == {"Control": 100, "Critical": 100, "SemAnom": 100}
    assert (sn.prefix + " " + sn.target_word + sn.spillover == sn.target_sentence).all()
    first = sn.iloc[0]
    assert (first["item"], first.condition, first.context, first.target_word, first.prefix, first.spillover) == (
        1, "Control", "I went to a mechanic to fix my car.", "wheels", "My car has big", " now.")
    assert (first.list, first.comprehension_question, first.comprehension_answer) == (1, "Did he go to a toystore?", "no")
    key = sn[(sn["item"] == 87) & (sn.condition == "Control")].iloc[0]
    assert (key.target_word, key.spillover) == ("key", ", without any success.")
    pivot = sn.pivot(index="item", columns="condition", values="target_sentence")
    assert (pivot.Critical == pivot.SemAnom).sum() == 93
    assert sn.groupby("list").size().tolist() == [75, 75, 75, 75]
    assert (sn.human_n_context + sn.human_n_no_context == 11).all()
    rates = sn.groupby("condition")[["human_sense_rate_context", "human_sense_rate_no_context"]].mean()
    assert rates.loc["Control"].tolist() == pytest.approx([0.954, 0.939333333])
    assert rates.loc["Critical"].tolist() == pytest.approx([0.861, 0.279])
    assert rates.loc["SemAnom"].tolist() == pytest.approx([0.218, 0.220])


def test_socialn400_judgments(tables):
    j, sn = tables["socialn400_judgments"], tables["socialn400"]
    assert j.subject.nunique() == 22 and (j.groupby("subject").size() == 150).all()
    assert (j.groupby(["subject", "run"]).confederate.nunique() == 1).all()
    assert (j.groupby("subject").confederate.nunique() == 2).all()
    assert set(j.perspective) == {"context", "no_context"}
    assert (j.perspective == j.confederate.map({0: "context", 1: "no_context"})).all()
    assert j.onset_s.isna().sum() == 29 and j.rt_s.notna().all()
    first = j.iloc[0]
    assert (first.subject, first.run, first.confederate, first.trial, first["item"], first.condition, first.response) == (
        "EEG_03032016a", 1, 1, 20, 2, "SemAnom", 0)
    assert first.rt_s == pytest.approx(1.438787301)
    # the per-stimulus rates are the means of these judgments
    crit = j[(j["item"] == 1) & (j.condition == "Critical")]
    row = sn[(sn["item"] == 1) & (sn.condition == "Critical")].iloc[0]
    assert row.human_sense_rate_context == pytest.approx(crit[crit.perspective == "context"].response.mean())
    assert row.human_n_no_context == (crit.perspective == "no_context").sum()


def test_human_accuracy_eventsadapt(built, tables, monkeypatch):
    ea = tables["eventsadapt"]
    both = ph.human_accuracy_eventsadapt(ea)
    assert both == {"AI": 254 / 256, "AAN": 247 / 258}
    # the paper's figures (AI 1.0, AA 0.95) are the active-voice pairs
    assert ph.human_accuracy_eventsadapt(ea, voice="active") == {"AI": 1.0, "AAN": 122 / 129}
    assert round(122 / 129, 2) == 0.95
    assert ph.human_accuracy_eventsadapt(ea, voice="passive") == {"AI": 126 / 128, "AAN": 125 / 129}
    assert ph.human_accuracy_eventsadapt(ea, trial_types=("AAR",)) == {"AAR": 140 / 268}  # control: chance
    # a datasets.Dataset, and the default (the built dataset in $CONTSTIM_DATASETS)
    ds = datasets.load_dataset(str(built), "eventsadapt", split="test")
    assert ph.human_accuracy_eventsadapt(ds, voice="active") == {"AI": 1.0, "AAN": 122 / 129}
    monkeypatch.setenv("CONTSTIM_DATASETS", str(built.parent))
    assert ph.human_accuracy_eventsadapt() == both


def test_human_accuracy_dtfit(tables):
    assert ph.human_accuracy_dtfit(tables["dtfit"]) == 391 / 395
    assert round(391 / 395, 2) == 0.99


def test_eventsadapt_pairs(tables):
    ea = tables["eventsadapt"]
    pairs = ph.eventsadapt_pairs(ea)
    assert len(pairs) == 514 and pairs.pair_id.is_unique
    assert pairs.groupby("trial_type").size().to_dict() == {"AAN": 258, "AI": 256}
    assert len(ph.eventsadapt_pairs(ea, trial_types=("AI", "AAN", "AAR"))) == 782
    first = pairs.iloc[0]
    assert (first.pair_id, first.sentence_plausible, first.sentence_implausible) == (
        "EA001-active", "The raider caught the illness.", "The illness caught the raider.")
    failing = pairs[pairs.human_mean_plausible <= pairs.human_mean_implausible]
    assert failing[failing.trial_type == "AI"].pair_id.tolist() == ["EA025-passive", "EA037-passive"]


def test_bad_inputs_are_named(tables):
    ea = tables["eventsadapt"]
    with pytest.raises(ValueError, match=r"missing columns \['human_mean'\]"):
        ph.human_accuracy_eventsadapt(ea.drop(columns="human_mean"))
    broken = ea[~((ea["item"] == 5) & (ea.voice == "active") & (ea.plausibility == "implausible"))]
    with pytest.raises(ValueError, match=r"item 5 \(active\)"):
        ph.eventsadapt_pairs(broken)
    with pytest.raises(ValueError, match="voice must be"):
        ph.eventsadapt_pairs(ea, voice="middle")
    with pytest.raises(ValueError, match="unknown EventsAdapt trial types"):
        ph.eventsadapt_pairs(ea, trial_types=("AA",))
    nan = ea.copy()
    nan.loc[0, "human_mean"] = np.nan
    with pytest.raises(ValueError, match="missing score for pair 0"):
        ph.human_accuracy_eventsadapt(nan)
    with pytest.raises(TypeError, match="list"):
        ph.human_accuracy_dtfit([1, 2])


def test_raw_reader_helpers(tmp_path):
    cr = tmp_path / "cr.csv"
    cr.write_bytes(b"a,b\rx,NA\ry,2\r")
    df = raw.read_csv(cr)
    assert df.a.tolist() == ["x", "y"] and df.b.tolist() == ["NA", "2"]  # "NA" is text until declared
    assert raw.r_missing(df, ["b"], "cr.csv").b.isna().tolist() == [True, False]
    with pytest.raises(ValueError, match=r"cr.csv: row 2: b 'oops'"):
        raw.r_missing(df.assign(b=["oops", "2"]), ["b"], "cr.csv")
    gap = pd.DataFrame({"ItemNum": [1.0, None, 3.0, None]})
    with pytest.raises(ValueError, match="f.csv: row 3 has no ItemNum"):
        raw.drop_blank_rows(gap, "ItemNum", "f.csv")
    assert len(raw.drop_blank_rows(gap.iloc[[0, 2, 3]].reset_index(drop=True), "ItemNum", "f.csv")) == 2
    assert sn_reader._split_target("Tina saw the car key, sadly.", 5, "x") == ("Tina saw the car", "key", ", sadly.")
    with pytest.raises(ValueError, match="position 9 outside 1..3"):
        sn_reader._split_target("A b c.", 9, "x")


def test_corpus_cross_checks_catch_disagreement(tables):
    dt = tables["dtfit"]
    corpus = raw.read_csv(sources.resolve(raw.DT_CORPUS))
    dt_reader._check_dtfit_corpus(dt, corpus)  # the real data agree
    corpus.loc[3, "bad_human_score"] += 0.5
    with pytest.raises(ValueError, match=r"corpus.csv: row 5: pair 'The ant stacked the supply.'"):
        dt_reader._check_dtfit_corpus(dt, corpus)


def test_build_is_deterministic(built, tmp_path):
    again = builders.build("plausibility", tmp_path)
    for c in CONFIGS:
        assert (again / c / "test.parquet").read_bytes() == (built / c / "test.parquet").read_bytes()
    assert read_fingerprint(again) == read_fingerprint(built)
    assert (again / "README.md").read_text() == (built / "README.md").read_text()
