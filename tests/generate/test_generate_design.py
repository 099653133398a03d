"""Experiment designs from selected pairs (Golan et al. 2023, "Design of the human experiment"),
built from the published natural pairs and triplets, and the generate natural -> select ->
design command chain on a small pool."""
from __future__ import annotations

import json
from collections import Counter
from itertools import combinations

import pandas as pd
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.data.contstim_trials import pair_id
from contstim_bench.data.load import dataset_folder
from contstim_bench.generate.design import DESIGN_TRIAL_COLUMNS, build_design
from contstim_bench.generate.inputs import load_pool
from contstim_bench.generate.triplet_table import read_triplets
from contstim_bench.study import MAIN_MODELS, TRIAL_COLUMNS

CONDITIONS = {("N", "S1"), ("N", "S2"), ("S1", "S2"), ("N1", "N2")}


@pytest.fixture(scope="module")
def published():
    folder = dataset_folder("contstim")
    natural = pd.read_parquet(folder / "natural_controversial_pairs" / "main.parquet")
    triplets = read_triplets("contstim:main")
    triplets = triplets[triplets["selected_for_human_testing"]].reset_index(drop=True)
    pool, _ = load_pool()
    design = build_design(natural, triplets, pool, groups=10, seed=1)
    return {"natural": natural, "triplets": triplets, "pool": pool, "design": design}


def test_design_layout_and_counts(published):
    d = published["design"]
    assert list(d.columns) == [c for c in TRIAL_COLUMNS if c not in ("participant", "rating", "confidence",
                                                                     "reaction_time_ms")]
    assert list(d.columns) == list(DESIGN_TRIAL_COLUMNS)
    assert sorted(d["group"].unique()) == list(range(1, 11))
    # per group: 36 model pairs x 4 conditions + 9 random natural pairs + 12 catch trials (the paper's 165)
    for g, rows in d.groupby("group"):
        assert len(rows) == 36 * 4 + 9 + 12
        assert rows["trial"].tolist() == list(range(1, len(rows) + 1))
        counts = rows["trial_type"].value_counts().to_dict()
        assert counts == {"natural_vs_synthetic": 72, "natural_controversial": 36, "synthetic_vs_synthetic": 36,
                          "natural_vs_shuffled": 12, "randomly_sampled_natural": 9}
    assert (d["pair_id"] == [pair_id(a, b) for a, b in zip(d["sentence1"], d["sentence2"])]).all()


def test_no_sentence_twice_per_group_and_every_pair_condition(published):
    d = published["design"]
    for g, rows in d.groupby("group"):
        shown = Counter(rows["sentence1"].tolist() + rows["sentence2"].tolist())
        assert max(shown.values()) == 1, f"group {g} sees a sentence twice"
        seen = set()
        for r in rows.itertuples(index=False):
            codes = frozenset((r.sentence1_type, r.sentence2_type))
            models = {m for m in (r.sentence1_accept_model, r.sentence1_reject_model, r.sentence2_accept_model,
                                  r.sentence2_reject_model) if pd.notna(m)}
            if codes in {frozenset(c) for c in CONDITIONS}:
                assert len(models) == 2
                seen.add((tuple(sorted(models)), tuple(sorted(codes))))
        expected = {(tuple(sorted(p)), tuple(sorted(c))) for p in combinations(MAIN_MODELS, 2) for c in CONDITIONS}
        assert seen == expected  # every model pair x condition exactly once (36 x 4 = 144 trials)
    # every selected triplet's three trials and every natural pair are shown, each to one group
    pairs = Counter(d["pair_id"])
    assert max(pairs.values()) == 1
    t = published["triplets"]
    for row in t.itertuples(index=False):
        groups = [d.loc[d["pair_id"] == pair_id(a, b), "group"] for a, b in
                  ((row.N, row.S1), (row.N, row.S2), (row.S1, row.S2))]
        assert all(len(x) == 1 for x in groups)
        assert len({int(x.iloc[0]) for x in groups}) == 3  # a triplet's trials go to three groups
    nat = set(pair_id(a, b) for a, b in zip(published["natural"]["sentence1"], published["natural"]["sentence2"]))
    assert nat <= set(pairs)


def test_targeting_catch_trials_and_random_pairs(published):
    d = published["design"]
    t = published["triplets"].iloc[0]
    row = d[d["pair_id"] == pair_id(t["S1"], t["S2"])].iloc[0]
    side = {row["sentence1"]: 1, row["sentence2"]: 2}[t["S1"]]
    assert row[f"sentence{side}_accept_model"] == t["m1"] and row[f"sentence{side}_reject_model"] == t["m2"]
    assert row[f"sentence{3 - side}_accept_model"] == t["m2"]
    n = published["natural"].iloc[0]
    row = d[d["pair_id"] == pair_id(n["sentence1"], n["sentence2"])].iloc[0]
    side = {row["sentence1"]: 1, row["sentence2"]: 2}[n["sentence1"]]
    assert row[f"sentence{side}_accept_model"] == n["model_2"] and row[f"sentence{side}_reject_model"] == n["model_1"]
    stimuli = set(published["natural"][["sentence1", "sentence2"]].stack()) | set(
        published["triplets"][["N", "S1", "S2"]].stack())
    pool = set(published["pool"])
    catch = d[d["trial_type"] == "natural_vs_shuffled"]
    for r in catch.itertuples(index=False):
        nat, shuf = (r.sentence1, r.sentence2) if r.sentence1_type == "C1" else (r.sentence2, r.sentence1)
        assert nat in pool and nat not in stimuli and shuf != nat
        assert sorted(nat.split()) == sorted(shuf.split())
        assert pd.isna([r.sentence1_accept_model, r.sentence1_reject_model, r.sentence2_accept_model,
                        r.sentence2_reject_model]).all()
    rand = d[d["trial_type"] == "randomly_sampled_natural"]
    rand_sents = rand["sentence1"].tolist() + rand["sentence2"].tolist()
    assert len(set(rand_sents)) == len(rand_sents) == 180 and set(rand_sents) <= pool - stimuli
    # sides are randomised: each kind of stimulus appears on both sides
    assert 0.3 < (d["sentence1_type"] == "S1").sum() / ((d["sentence1_type"] == "S1").sum()
                                                       + (d["sentence2_type"] == "S1").sum()) < 0.7


def test_design_is_deterministic_and_checks_input(published):
    p = published
    small = p["triplets"].groupby(["m1", "m2"]).head(3).reset_index(drop=True)
    a = build_design(None, small, p["pool"], groups=3, random_pairs=2, catch_trials=4, seed=7)
    b = build_design(None, small, p["pool"], groups=3, random_pairs=2, catch_trials=4, seed=7)
    pd.testing.assert_frame_equal(a, b)
    c = build_design(None, small, p["pool"], groups=3, random_pairs=2, catch_trials=4, seed=8)
    assert not a.equals(c)
    with pytest.raises(ValueError, match="3 triplets for 4 groups"):
        build_design(None, small, p["pool"], groups=4, seed=0)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        build_design(None, small, p["pool"], groups=0)
    with pytest.raises(ValueError, match="unused by the design"):
        build_design(None, small, p["pool"][:50], groups=3, random_pairs=9, catch_trials=0)


def test_generate_natural_select_design_chain(tmp_path, capsys):
    """`contstim generate natural` (two KenLM models on a 300-sentence pool), `select` (published
    pll triplets) and `design`, read back by the browser experiment's design reader."""
    pool = [s for s in load_pool("contstim")[0]]  # the whole 6,113-sentence pool (default: its start part)
    (tmp_path / "corpus.txt").write_text("\n".join(pool[300:]) + "\n", encoding="utf-8")
    (tmp_path / "pool.txt").write_text("\n".join(pool[:300]) + "\n", encoding="utf-8")
    specs = []
    for order, name in ((3, "tri"), (2, "bi")):
        arpa = tmp_path / f"{name}.arpa"
        assert cli_main(["train", "ngram", "--corpus", str(tmp_path / "corpus.txt"), "--order", str(order),
                         "--output", str(arpa)]) == 0
        specs.append(f"{name}=kenlm:{arpa}")
    assert cli_main(["generate", "natural", "--models", ",".join(specs), "--pool", str(tmp_path / "pool.txt"),
                     "--per-pair", "3", "--no-cache", "--quiet", "--output", str(tmp_path / "nat")]) == 0
    pairs = pd.read_parquet(tmp_path / "nat" / "natural" / "natural_controversial_pairs" / "train.parquet")
    assert len(pairs) == 3 and set(pairs["model_1"]) == {"tri"}
    assert (pairs["s1_ranked_log_prob_model_2"] >= 0.5).all() and (pairs["s2_ranked_log_prob_model_1"] >= 0.5).all()
    assert cli_main(["generate", "select", "--triplets", "contstim:pll", "--per-pair", "10",
                     "--output", str(tmp_path / "sel")]) == 0
    selected = read_triplets(tmp_path / "sel")
    assert len(selected) == 30 and selected.groupby(["m1", "m2"]).size().eq(10).all()
    assert (selected["p_N_given_m1_decile"].groupby([selected["m1"], selected["m2"]]).nunique() == 10).all()
    assert cli_main(["generate", "design", "--natural", str(tmp_path / "nat"), "--triplets", str(tmp_path / "sel"),
                     "--pool", str(tmp_path / "pool.txt"), "--groups", "3", "--random-pairs", "2",
                     "--catch-trials", "12", "--seed", "3", "--output", str(tmp_path / "design")]) == 0
    out = capsys.readouterr().out
    assert "3 groups" in out
    from contstim_bench.data.design_file import read_design

    design = read_design(tmp_path / "design")
    assert design["group"].nunique() == 3
    per_group = design.groupby("group").size()
    assert (per_group == 1 + 3 * 3 + 2 + 12).all()  # 1 natural pair type + 3 pll pairs x 3 triplet trials
    assert (design.groupby("group")["trial_type"].apply(lambda s: (s == "natural_vs_shuffled").sum()) == 12).all()
    meta = json.loads((tmp_path / "design" / "design" / "fingerprint.json").read_text())
    assert meta["rows"] == {"design/train": int(per_group.sum())}
    with pytest.raises(SystemExit):
        cli_main(["generate", "design", "--groups", "x", "--output", str(tmp_path / "x")])
    assert cli_main(["generate", "design", "--output", str(tmp_path / "x")]) == 1
    assert "needs --natural and/or --triplets" in capsys.readouterr().err
