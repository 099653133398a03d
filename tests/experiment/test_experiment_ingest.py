"""`contstim experiment ingest`: real pll participants replayed through the server API (their
published ratings, re-oriented to the sides each simulated participant was shown), ingested
back into the trials layout, checked against the originals and fed to the analysis."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from contstim_bench.analysis.evaluation import evaluate_logprobs
from contstim_bench.cli import main as cli_main
from contstim_bench.data.contstim_trials import pair_id, trials_schema
from contstim_bench.data.design_file import design_from_trials
from contstim_bench.experiment.export import export_experiment
from contstim_bench.experiment.ingest import catch_correct, ingest, ingest_to_dataset
from contstim_bench.experiment.server import create_app
from contstim_bench.study import TRIAL_COLUMNS
from contstim_bench.scoring.precomputed import reference_table

REPLAYED = [f"pll-s{i:02d}" for i in range(8)]  # published participants replayed unchanged
ONE_ERROR, TWO_ERRORS, INCOMPLETE = "pll-s08", "pll-s09", "pll-s10"
N_INCOMPLETE = 50


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def replay(client, real: pd.DataFrame, flip_catch: int = 0, stop_after: int | None = None) -> None:
    """Answer as the real participant did: look up the shown pair, re-orient the published
    rating to the shown sides; answer the first ``flip_catch`` catch trials wrongly."""
    by_pair = real.set_index("pair_id")
    token = client.post("/api/participants", json={"external_id": None}).json["token"]
    headers = {"Authorization": f"Bearer {token}"}
    st = client.get("/api/state", headers=headers).json
    flipped = 0
    while not st["done"] and (stop_after is None or st["n_answered"] < stop_after):
        left, right = st["trial"]["left"], st["trial"]["right"]
        row = by_pair.loc[pair_id(left, right)]
        rating = int(row.rating) if row.sentence1 == left else 7 - int(row.rating)
        if row.trial_type == "natural_vs_shuffled" and flipped < flip_catch:
            rating, flipped = 7 - rating, flipped + 1
        r = client.post("/api/responses", headers=headers,
                        json={"trial": st["trial"]["id"], "rating": rating, "reaction_time_ms": float(row.reaction_time_ms)})
        assert r.status_code == 201, r.json
        st = r.json


@pytest.fixture(scope="module")
def db(tmp_path_factory, pll) -> Path:
    root = tmp_path_factory.mktemp("ingest")
    exp = export_experiment(design_from_trials(pll), root / "exp")
    app = create_app(exp, root / "responses.sqlite", completion_code="DONE")
    client = app.test_client()
    for p in REPLAYED:
        replay(client, pll[pll["participant"] == p])
    replay(client, pll[pll["participant"] == ONE_ERROR], flip_catch=1)
    replay(client, pll[pll["participant"] == TWO_ERRORS], flip_catch=2)
    replay(client, pll[pll["participant"] == INCOMPLETE], stop_after=N_INCOMPLETE)
    app.extensions["contstim_store"].close()
    return root / "responses.sqlite"


@pytest.fixture(scope="module")
def ingested(db, tmp_path_factory):
    before = sha256(db)
    result = ingest_to_dataset(db, tmp_path_factory.mktemp("datasets"), "web")
    assert sha256(db) == before
    return result


def test_published_participants_pass_the_catch_rule(pll):
    # the published pll data is after exclusion: every participant chose the natural sentence
    # in at least 11 of the 12 catch trials (28 in all 12)
    ok = pd.Series(catch_correct(pll), index=pll.index)[pll["trial_type"] == "natural_vs_shuffled"]
    per = ok.groupby(pll["participant"]).sum()
    assert len(per) == 30 and per.min() >= 11
    assert (per == 12).sum() == 28


def test_rows_in_trials_layout(ingested):
    t = ingested.trials
    assert list(t.columns) == list(TRIAL_COLUMNS)
    table = pq.read_table(ingested.dataset_folder / "trials" / "web.parquet")
    assert table.schema.equals(trials_schema())
    assert table.num_rows == len(t) == 9 * 132
    assert set(t["experiment"]) == {"web"}
    assert t.groupby("participant")["trial"].apply(lambda s: sorted(s) == list(range(1, 133))).all()
    assert ((t["confidence"] == t["rating"].map({1: 3, 2: 2, 3: 1, 4: 1, 5: 2, 6: 3}))).all()
    assert t["group"].eq(1).all()


def test_ratings_match_the_published_ones(ingested, pll):
    t = ingested.trials
    ids = sorted(t["participant"].unique())
    assert ids == [f"web-p{i:03d}" for i in range(1, 10)]
    for ours, real_id in zip(ids, REPLAYED):
        mine = t[t["participant"] == ours].set_index("pair_id")
        real = pll[pll["participant"] == real_id].set_index("pair_id").loc[mine.index]
        same_side = (mine["sentence1"] == real["sentence1"]).to_numpy()
        assert (same_side | (mine["sentence1"] == real["sentence2"]).to_numpy()).all()
        oriented = np.where(same_side, mine["rating"], 7 - mine["rating"])
        assert (oriented == real["rating"].to_numpy()).all()
        assert np.allclose(mine["reaction_time_ms"], real["reaction_time_ms"])
        # types and targets follow their sentences when the sides were swapped
        s1_type = np.where(same_side, real["sentence1_type"], real["sentence2_type"])
        assert (mine["sentence1_type"].to_numpy() == s1_type).all()
        acc = np.where(same_side, real["sentence1_accept_model"].astype(object), real["sentence2_accept_model"].astype(object))
        assert [a if isinstance(a, str) else None for a in acc] == [a if isinstance(a, str) else None for a in mine["sentence1_accept_model"]]
        assert 0 < (~same_side).sum() < 132  # sides were randomised for this participant


def test_exclusion_rule(ingested):
    p = ingested.participants.set_index("participant")
    assert len(p) == 11
    assert p["included"].sum() == 9
    assert p.loc["web-p009", "included"] and p.loc["web-p009", "catch_correct"] == 11  # one error: kept
    assert p.loc["web-p010", "exclusion_reason"] == (
        "catch trials: chose the natural sentence in 10 of 12 (at least 11 required)"
    )
    reason = p.loc["web-p011", "exclusion_reason"]
    assert reason.startswith(f"incomplete: answered {N_INCOMPLETE} of 132 trials")
    assert sorted(ingested.excluded["participant"]) == ["web-p010", "web-p011"]
    assert not ingested.trials["participant"].isin(["web-p010", "web-p011"]).any()


def test_card_records_source_and_date(ingested, db):
    card = (ingested.dataset_folder / "README.md").read_text()
    assert f"source_db_sha256: {sha256(db)}" in card
    assert "ingested_at: '20" in card or "ingested_at: 20" in card
    assert "EXCLUDED web-p010 (group 1): catch trials: chose the natural sentence in 10 of 12" in card
    assert "responses.sqlite" in card


def test_ingested_rows_work_with_the_analysis(ingested, pll):
    lp = reference_table("roberta", split="pll")
    t = ingested.trials
    ours = t[t["participant"].isin([f"web-p{i:03d}" for i in range(1, 9)])]
    real = pll[pll["participant"].isin(REPLAYED)]
    got = evaluate_logprobs(ours, lp, "roberta")
    want = evaluate_logprobs(real, lp, "roberta")
    assert set(got) == set(want) == {"synthetic_vs_synthetic", "natural_vs_shuffled", "all"}
    for cond in want:
        assert got[cond]["n_trials"] == want[cond]["n_trials"]
        assert got[cond]["accuracy"] == pytest.approx(want[cond]["accuracy"])
        assert sorted(got[cond]["accuracy_by_unit"].values()) == pytest.approx(sorted(want[cond]["accuracy_by_unit"].values()))
        assert got[cond]["srcs"] == pytest.approx(want[cond]["srcs"])
        assert got[cond]["accuracy_noise_ceiling"]["lower"] == pytest.approx(want[cond]["accuracy_noise_ceiling"]["lower"])
    assert 0.6 < got["all"]["accuracy"] < 1.0


def test_cli_ingest_and_db_untouched(db, tmp_path, capsys):
    before = sha256(db)
    wal = db.with_name(db.name + "-wal")
    code = cli_main(["experiment", "ingest", "--db", str(db), "--out", str(tmp_path), "--experiment", "web2",
                     "--name", "my-judgments"])
    out = capsys.readouterr().out
    assert code == 0
    assert "11 participant(s): 9 included, 2 excluded" in out
    assert "excluded web2-p011 (group 1): incomplete: answered 50 of 132 trials" in out
    assert (tmp_path / "my-judgments" / "trials" / "web2.parquet").is_file()
    assert sha256(db) == before
    assert not wal.exists() or wal.stat().st_size == 0


def test_keep_incomplete_and_stricter_rule(db):
    loose = ingest(db, "x", keep_incomplete=True).participants.set_index("participant")
    incomplete = loose.loc["x-p011"]
    assert incomplete["n_answered"] == N_INCOMPLETE
    # kept or not only by its catch trials answered so far
    assert bool(incomplete["included"]) == (incomplete["catch_correct"] >= 11)
    assert incomplete["included"] or "incomplete" not in incomplete["exclusion_reason"]
    strict = ingest(db, "x", min_catch_correct=12).participants
    complete = strict["n_answered"] == strict["n_trials"]
    assert (strict["included"] == (complete & (strict["catch_correct"] == 12))).all()
    assert not strict.set_index("participant").loc["x-p009", "included"]  # its one catch error now excludes it


def test_bad_inputs(tmp_path, db):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ingest(tmp_path / "absent.sqlite", "x")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError, match="not an SQLite database"):
        ingest(junk, "x")
    with pytest.raises(ValueError, match="experiment name"):
        ingest(db, "two words")
    seen = []
    with pytest.raises(ValueError, match="no participant of"):
        ingest_to_dataset(db, tmp_path / "out", "x", min_catch_correct=13, on_ingested=seen.append)
    # the caller saw every participant (all excluded) before the write was refused
    [result] = seen
    assert len(result.participants) == 11 and len(result.excluded) == 11 and result.dataset_folder is None
    assert not (tmp_path / "out").exists()


def test_round_versions_are_kept_side_by_side(db, tmp_path, capsys):
    """Ingesting again as version 2 (what the error for a repeated version advises) keeps version 1;
    the same version with other data is refused unless --replace; the identifier names the latest."""
    from contstim_bench.data.rounds import discover_rounds, read_meta

    out = tmp_path / "datasets"
    common = ["experiment", "ingest", "--db", str(db), "--out", str(out), "--experiment", "web3"]
    assert cli_main(common) == 0
    v1 = out / "contstim-web3"
    before = {p.name: p.read_bytes() for p in (v1 / "trials").iterdir()}
    assert cli_main([*common, "--round-version", "2", "--min-catch-correct", "12"]) == 0
    assert read_meta(v1)["version"] == "1" and {p.name: p.read_bytes() for p in (v1 / "trials").iterdir()} == before
    assert read_meta(out / "contstim-web3-v2")["version"] == "2"
    assert discover_rounds(out) == {"contstim.web3": out / "contstim-web3-v2"}
    capsys.readouterr()
    assert cli_main([*common, "--round-version", "2"]) == 1  # the same version with other data (the looser rule)
    assert "--replace" in capsys.readouterr().err
    assert cli_main([*common, "--round-version", "2", "--replace"]) == 0
    assert read_meta(v1)["version"] == "1"  # --replace replaces that version only
