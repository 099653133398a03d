"""The ``contstim`` dataset: counts, schemas and spot values against the raw files, the
fixture-based ``main`` path, the missing-``main`` error and determinism."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contstim_bench.data import build_contstim as bc
from contstim_bench.data import safe_pickle, sources
from contstim_bench.data.contstim_tables import pool_table, read_lines, sentences_from_trial_columns
from contstim_bench.data.contstim_trials import align_trials, pair_id, targeting_from_stimuli
from contstim_bench.data.load import card_warnings
from contstim_bench.data.writer import read_fingerprint, write_dataset
from contstim_bench.study import ALL_REFERENCE_MODELS, MAIN_MODELS, PLL_MODELS, TRIAL_COLUMNS, TRIAL_TYPES

from fixtures_main import link_source_dir, write_main_fixture


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTSTIM_OFFLINE", "1")
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("CONTSTIM_DATASETS", str(tmp_path_factory.mktemp("datasets_default")))
        mp.setenv("CONTSTIM_CACHE", str(tmp_path_factory.mktemp("raw_cache")))
        yield


@pytest.fixture(scope="module")
def built(env, tmp_path_factory) -> Path:
    """The dataset built from the shared raw data (no main results file)."""
    out = tmp_path_factory.mktemp("built")
    return write_dataset(bc.build_spec(), out)


@pytest.fixture(scope="module")
def fixture_build(env, tmp_path_factory):
    """A linked source folder plus a fake main results file, built with the dataset script."""
    import importlib.util

    root = tmp_path_factory.mktemp("fixture")
    src = link_source_dir(root / "src")
    info = write_main_fixture(root / "fake_main_results.csv", src, n_groups=3, participants_per_group=2, seed=7)
    spec = importlib.util.spec_from_file_location(
        "contstim_script", Path(__file__).resolve().parents[2] / "dataset_scripts" / "contstim.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rc = script.main(["--source", str(src), "--out", str(root / "out"), "--main-results", str(info.path)])
    assert rc == 0
    return root / "out" / "contstim", info, src


def _table(folder: Path, config: str, split: str) -> pd.DataFrame:
    return pq.read_table(folder / config / f"{split}.parquet").to_pandas()


def _raw(rel: str) -> pd.DataFrame:
    return bc.read_csv(sources.resolve(rel))


# ---------------------------------------------------------------- counts and schemas


def test_row_counts(built):
    rows = read_fingerprint(built)["rows"]
    assert rows == {
        "trials/pll": 3960,
        "sentences/main": 2240,
        "sentences/pll": 264,
        "natural_controversial_pairs/main": 360,
        "synthetic_triplets/main": 3600,
        "synthetic_triplets/pll": 285,
        "vocabulary/train": 29157,
        "function_words/train": 42,
        "natural_pool/synthesis": 6113,
    }


def test_trials_schema_is_the_contract(built):
    schema = pq.read_schema(built / "trials" / "pll.parquet")
    assert schema.names == list(TRIAL_COLUMNS)
    for name, typ in TRIAL_COLUMNS.items():
        assert schema.field(name).type == pa.type_for_alias(typ), name


def test_load_dataset_pll(built, tmp_path):
    import datasets

    ds = datasets.load_dataset(str(built), "trials", split="pll", cache_dir=str(tmp_path / "hf"))
    df = ds.to_pandas()
    assert len(df) == 3960
    assert df.participant.nunique() == 30
    assert set(df.groupby("participant").size()) == {132}
    assert df.trial_type.value_counts().to_dict() == {"synthetic_vs_synthetic": 3600, "natural_vs_shuffled": 360}
    assert set(df.group) == {1}
    assert set(df.experiment) == {"pll"}
    assert sorted(df.participant.unique())[:2] == ["pll-s00", "pll-s01"]


def test_every_column_documented_in_card(built):
    card = (built / "README.md").read_text()
    for col in TRIAL_COLUMNS:
        assert f"| `{col}` |" in card
    assert "Nature Machine Intelligence" in card and "10.1038/s42256-023-00718-1" in card
    assert "license: mit" in card
    assert "natural logarithm" in card
    assert "f5304aefa257d28358347a8f7456de529dfc23d2" in card


# ---------------------------------------------------------------- trials against the raw export


def test_known_participant_rating(built):
    df = _table(built, "trials", "pll")
    first = df[(df.participant == "pll-s00") & (df.trial == 1)].iloc[0]
    assert first.sentence1.startswith("Neighbours unsatisfactory")
    assert (first.rating, first.confidence) == (4, 1)
    assert first.trial_type == "synthetic_vs_synthetic"
    # "Neighbours ..." is S2 of a bert vs bert_has_a_mouth triplet: accepted by m2
    assert (first.sentence1_accept_model, first.sentence1_reject_model) == ("bert_has_a_mouth", "bert")
    assert (first.sentence2_accept_model, first.sentence2_reject_model) == ("bert", "bert_has_a_mouth")


def test_rating_and_confidence_match_raw_zone(built):
    raw = _raw(bc.PLL_RESULTS)
    df = _table(built, "trials", "pll")
    raw = raw.assign(participant=[f"pll-s{s:02d}" for s in raw.subject], trial=raw["Trial Number"])
    m = df.merge(raw, on=["participant", "trial"], validate="one_to_one")
    assert len(m) == 3960
    zone = m["Zone Name"].str.removeprefix("resp").astype(int)
    assert (m.rating == zone).all()
    conf = {"Very confident": 3, "Confident": 2, "Somewhat confident": 1}
    assert (m.confidence == m.Response.map(conf)).all()
    assert (m.sentence1_x == m.sentence1_y).all() and (m.sentence2_x == m.sentence2_y).all()
    assert np.allclose(m.reaction_time_ms, m["Reaction Time"])
    # same pair, same id, regardless of display order
    assert m.groupby("pair_id").apply(lambda g: len(set(map(frozenset, zip(g.sentence1_x, g.sentence2_x))))).max() == 1


def test_targeting_filled_and_consistent_with_triplets(built):
    df = _table(built, "trials", "pll")
    best = _raw(bc.TRIPLETS["pll"][1])
    syn = df[df.trial_type == "synthetic_vs_synthetic"]
    assert len(syn) == 3600
    cols = ["sentence1_accept_model", "sentence1_reject_model", "sentence2_accept_model", "sentence2_reject_model"]
    assert syn[cols].notna().all().all()
    assert (syn.sentence1_accept_model == syn.sentence2_reject_model).all()
    by_s1 = best.set_index("S1")
    by_s2 = best.set_index("S2")
    for r in syn.itertuples():
        for sent, acc, rej in ((r.sentence1, r.sentence1_accept_model, r.sentence1_reject_model),
                               (r.sentence2, r.sentence2_accept_model, r.sentence2_reject_model)):
            if sent in by_s1.index:
                assert (acc, rej) == (by_s1.loc[sent, "m1"], by_s1.loc[sent, "m2"])
            else:
                assert (acc, rej) == (by_s2.loc[sent, "m2"], by_s2.loc[sent, "m1"])
    # the raw export's own sentence*_model column names the accepting model
    raw = _raw(bc.PLL_RESULTS)
    raw_syn = raw[raw.sentence1_type.isin(["S1", "S2"])]
    acc = dict(zip(syn.sentence1, syn.sentence1_accept_model)) | dict(zip(syn.sentence2, syn.sentence2_accept_model))
    assert all(acc[s] == m for s, m in zip(raw_syn.sentence1, raw_syn.sentence1_model))
    catch = df[df.trial_type == "natural_vs_shuffled"]
    assert catch[cols].isna().all().all()
    assert set(catch.sentence1_type) | set(catch.sentence2_type) == {"C1", "C2"}


# ---------------------------------------------------------------- sentences


def test_sentences_reference_log_probs(built):
    main = _table(built, "sentences", "main").set_index("sentence")
    pll = _table(built, "sentences", "pll").set_index("sentence")
    assert list(main.columns) == list(ALL_REFERENCE_MODELS)
    assert main.loc["Those applying these bawling face up again enough", "bigram"] == -131.686279296875
    probs = safe_pickle.load(sources.resolve(bc.STIM_PROBS))
    for m in MAIN_MODELS:
        d = {str(k): float(v) for k, v in probs[m].items()}
        assert np.array_equal(main[m].to_numpy(), np.array([d[s] for s in main.index]))
    assert main[list(PLL_MODELS[1::2])].isna().all().all()  # *_has_a_mouth: not in the main pickle
    assert np.isneginf(main.xlm).sum() == 3
    neighbours = [s for s in pll.index if s.startswith("Neighbours unsatisfactory gastrointestinal acknowledgment")]
    assert pll.loc[neighbours[0], "bert"] == pytest.approx(-362.3968811035156, abs=0)
    assert pll.loc[neighbours[0], "bert_has_a_mouth"] == pytest.approx(-4.913071523187738, abs=0)
    assert pll[[m for m in MAIN_MODELS if m not in PLL_MODELS]].isna().all().all()
    assert pll[list(PLL_MODELS)].notna().all().all()
    trials = _table(built, "trials", "pll")
    assert set(pll.index) == set(trials.sentence1) | set(trials.sentence2)


def test_inconsistent_per_trial_log_prob_is_an_error():
    raw = _raw(bc.PLL_RESULTS).head(40).copy()
    sentences_from_trial_columns(raw, PLL_MODELS, "x.csv")  # consistent
    dup = pd.concat([raw.head(1), raw.head(1)], ignore_index=True)
    dup.loc[1, "sentence1_roberta_prob"] += 0.5
    with pytest.raises(ValueError, match="two roberta log-probabilities"):
        sentences_from_trial_columns(dup, PLL_MODELS, "x.csv")


# ---------------------------------------------------------------- stimulus tables


def test_natural_controversial_pairs(built):
    nc = _table(built, "natural_controversial_pairs", "main")
    assert len(nc) == 360 and nc.pair_id.is_unique
    probs = safe_pickle.load(sources.resolve(bc.STIM_PROBS))
    probs = {str(m): {str(s): float(v) for s, v in d.items()} for m, d in probs.items()}
    for r in nc.itertuples():
        acc1, acc2 = r.sentence1_accept_model, r.sentence2_accept_model
        assert (acc1, acc2) == (r.model_2, r.model_1)
        # the accepting model gives its sentence the higher log-probability (the pair's controversy)
        assert probs[acc1][r.sentence1] > probs[acc1][r.sentence2]
        assert probs[acc2][r.sentence2] > probs[acc2][r.sentence1]


def test_synthetic_triplets(built):
    main = _table(built, "synthetic_triplets", "main")
    pll = _table(built, "synthetic_triplets", "pll")
    assert (len(main), int(main.selected.sum())) == (3600, 360)
    assert (len(pll), int(pll.selected.sum())) == (285, 120)
    assert set(main[main.selected].groupby(["m1", "m2"]).size()) == {10}
    assert set(pll[pll.selected].groupby(["m1", "m2"]).size()) == {40}
    assert (main.selected == main.selected_for_human_testing).all()
    for c in ("m1", "m2", "N_idx", "N", "S1", "S2", "lp_S1_given_m1", "lp_S2_given_m2", "p_N_given_m1_decile"):
        assert c in main.columns
    raw = _raw(bc.TRIPLETS["main"][0])
    assert main.S1.tolist() == raw.S1.tolist()
    assert np.array_equal(main.lp_S1_given_m1.to_numpy(), raw.lp_S1_given_m1.to_numpy())


def test_vocabulary_and_function_words(built):
    voc = _table(built, "vocabulary", "train")
    assert len(voc) == 29157 and int(voc.capitalized.sum()) == 5977
    low = safe_pickle.load(sources.resolve(bc.VOCAB["vocab_low"]))
    low_f = safe_pickle.load(sources.resolve(bc.VOCAB["vocab_low_freqs"]))
    cap_f = safe_pickle.load(sources.resolve(bc.VOCAB["vocab_cap_freqs"]))
    assert voc.word.iloc[: len(low)].tolist() == list(low)
    assert voc.frequency.iloc[1] == float(low_f[1])
    assert voc.frequency.iloc[-1] == float(cap_f[-1])
    fw = _table(built, "function_words", "train")
    assert len(fw) == 42 and fw.word.is_unique
    assert fw.word.iloc[:3].tolist() == ["the", "a", "an"]
    assert {"betwixt", "atop", "amidst", "via"} <= set(fw.word)
    assert fw.word.iloc[-1] == "atop"


def test_natural_pool(built):
    pool = _table(built, "natural_pool", "synthesis")
    assert len(pool) == 6113
    assert pool.sentence.iloc[0] == "It seems like that studio just gets it"
    assert pool.sentence.iloc[-1] == "Those in heaven will be unable to sin"  # the line without a newline
    assert pool[list(MAIN_MODELS)].isna().all().all()
    triplets = _table(built, "synthetic_triplets", "main")
    assert all(pool.sentence.iloc[i] == n for i, n in zip(triplets.N_idx, triplets.N))


def test_pool_join_by_line():
    lines = read_lines("first one\nsecond one\nthird", "t")
    assert lines == ["first one", "second one", "third"]
    arrays = {m: np.arange(3, dtype="float64") * -(k + 1) for k, m in enumerate(MAIN_MODELS)}
    t = pool_table(lines, MAIN_MODELS, arrays, "t").to_pandas()
    assert t.line.tolist() == [0, 1, 2] and t.sentence.tolist() == lines
    assert t.gpt2.tolist() == [0.0, -1.0, -2.0] and t.bigram.tolist() == [0.0, -9.0, -18.0]
    with pytest.raises(ValueError, match="gpt2 log-probabilities have 2 values for 3 lines"):
        pool_table(lines, MAIN_MODELS, {**arrays, "gpt2": np.zeros(2)}, "t")
    with pytest.raises(ValueError, match="empty line"):
        read_lines("a\n\nb\n", "t")


def test_selection_pool_is_joined_by_line(env, tmp_path, monkeypatch):
    """The build's `selection` branch, with a generated stand-in for the absent 231,725-line text
    (the real, verified .npy arrays are joined to it by line number)."""
    n = len(np.load(sources.resolve(bc.POOL_PROBS.format(model="gpt2"))))
    fake = tmp_path / "selection.txt"
    fake.write_text("\n".join(f"generated sentence number {i}" for i in range(n)) + "\n")
    real = bc._resolve_optional
    monkeypatch.setattr(bc, "_resolve_optional", lambda rel, source: fake if rel == bc.POOL_SELECTION else real(rel, source))
    spec = bc.build_spec()
    pool = next(c for c in spec.configs if c.name == "natural_pool")
    sel = pool.splits["selection"]
    assert sel.num_rows == n == 231725
    assert sel.schema == pool.splits["synthesis"].schema
    for m in ("gpt2", "bigram"):
        arr = np.load(sources.resolve(bc.POOL_PROBS.format(model=m)))
        assert np.array_equal(sel.column(m).to_numpy(), arr)
    assert sel.column("sentence")[12345].as_py() == "generated sentence number 12345"
    assert not any("MISSING: the `natural_pool`" in ln for ln in spec.notes.splitlines())


# ---------------------------------------------------------------- the missing main split


def test_missing_main_is_reported(built):
    card = (built / "README.md").read_text()
    missing = [ln for ln in card.splitlines() if ln.lstrip("- ").startswith("MISSING")]
    src = sources.entry(bc.MAIN_RESULTS)
    assert any(src.url in ln and src.blob_sha1 in ln for ln in missing)
    # what `contstim data build|info` prints as notes
    assert card_warnings(built) == [ln.strip("- ").strip() for ln in missing]
    assert all(w.startswith("MISSING") for w in card_warnings(built))
    assert not (built / "trials" / "main.parquet").exists()
    with pytest.raises(FileNotFoundError) as err:
        bc.load_trials("main", datasets_dir=built.parent)
    msg = str(err.value)
    assert bc.MAIN_RESULTS in msg and src.url in msg and src.blob_sha1 in msg
    assert len(bc.load_trials("pll", datasets_dir=built.parent)) == 3960
    with pytest.raises(ValueError, match="unknown experiment"):
        bc.load_trials("other", datasets_dir=built.parent)


# ---------------------------------------------------------------- the fixture main path


def test_fixture_main_split(fixture_build):
    folder, info, _ = fixture_build
    df = bc.load_trials("main", datasets_dir=folder.parent)
    assert list(df.columns) == list(TRIAL_COLUMNS)
    n_participants = info.n_groups * info.participants_per_group
    assert df.participant.nunique() == n_participants
    assert len(df) == len(info.raw) - 1  # one repeated presentation dropped
    assert set(df.group) == {1, 2, 3}
    for g, sub in df.groupby("group"):
        assert set(sub.trial_type) == set(TRIAL_TYPES), g
        assert sub.participant.nunique() == info.participants_per_group
    assert set(df.groupby("participant").size()) == {info.trials_per_participant}
    # participant ids follow the sorted Participant Private IDs
    ids = sorted(info.raw["Participant Private ID"].unique())
    raw = info.raw.assign(participant=info.raw["Participant Private ID"].map({p: f"main-s{i:02d}" for i, p in enumerate(ids)}),
                          trial=info.raw["Trial Number"])
    m = df.merge(raw, on=["participant", "trial"], how="left", validate="one_to_one")
    assert (m.rating == m["Zone Name"].str[-1].astype(int)).all()
    assert (m.group == m["counterbalance-o1ql"].str.extract(r"set (\d+)_")[0].astype(int)).all()
    pid, t = info.repeated
    rep = raw[(raw["Participant Private ID"] == pid)]
    assert t not in set(df[df.participant == rep.participant.iloc[0]].trial)


def test_fixture_main_targeting(fixture_build):
    folder, info, _ = fixture_build
    df = bc.load_trials("main", datasets_dir=folder.parent)
    best = _raw(bc.TRIPLETS["main"][1])
    nat = _raw(bc.NATURAL_PAIRS)
    acc = dict(zip(best.S1, best.m1)) | dict(zip(best.S2, best.m2)) | dict(zip(nat.sentence1, nat.model_2)) | dict(zip(nat.sentence2, nat.model_1))
    rej = dict(zip(best.S1, best.m2)) | dict(zip(best.S2, best.m1)) | dict(zip(nat.sentence1, nat.model_1)) | dict(zip(nat.sentence2, nat.model_2))
    for r in df.itertuples():
        for k in (1, 2):
            typ = getattr(r, f"sentence{k}_type")
            sent = getattr(r, f"sentence{k}")
            a, j = getattr(r, f"sentence{k}_accept_model"), getattr(r, f"sentence{k}_reject_model")
            if typ in ("S1", "S2", "N1", "N2"):
                assert (a, j) == (acc[sent], rej[sent])
            else:
                assert pd.isna(a) and pd.isna(j)
    nvs = df[df.trial_type == "natural_vs_synthetic"]
    assert set(nvs.sentence1_type) | set(nvs.sentence2_type) == {"N", "S1", "S2"}
    card = (folder / "README.md").read_text()
    assert "OVERRIDE" in card and info.path.name in card
    assert not any(ln.lstrip("- ").startswith("MISSING: the main") for ln in card.splitlines())


def test_fixture_at_pinned_path_is_corrupt(fixture_build, tmp_path):
    _, info, _ = fixture_build
    src = link_source_dir(tmp_path / "src")
    dest = src / bc.MAIN_RESULTS
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(info.path, dest)
    with pytest.raises(sources.CorruptSourceError, match="contstim_Aug2021_n100_results_anon.csv"):
        bc.build_spec(src)


def test_bad_raw_rows_are_named(fixture_build):
    _, info, src = fixture_build
    targeting = targeting_from_stimuli(_raw(bc.TRIPLETS["main"][1]), _raw(bc.NATURAL_PAIRS))
    raw = info.raw.copy()
    align_trials(raw, "main", targeting, "f.csv")
    bad = raw.copy()
    bad.loc[4, "Zone Name"] = "continue"
    with pytest.raises(ValueError, match="f.csv row 5: Zone Name 'continue'"):
        align_trials(bad, "main", targeting, "f.csv")
    bad = raw.copy()
    bad.loc[2, ["sentence1_type", "sentence2_type"]] = ["X1", "X2"]
    with pytest.raises(ValueError, match="row 3: unknown pair of sentence type codes"):
        align_trials(bad, "main", targeting, "f.csv")
    bad = raw.copy()
    i = int(np.flatnonzero(bad.sentence1_type.isin(["S1", "S2"]))[0])
    bad.loc[i, "sentence1"] = "An invented sentence in no triplet at all"
    with pytest.raises(ValueError, match=f"row {i + 1}: synthetic sentence1 .* is in no tested triplet"):
        align_trials(bad, "main", targeting, "f.csv")
    with pytest.raises(ValueError, match="missing raw columns"):
        align_trials(raw.drop(columns=["counterbalance-o1ql"]), "main", targeting, "f.csv")


def test_pair_id_is_order_free():
    assert pair_id("a b", "c d") == pair_id("c d", "a b") != pair_id("a b", "c e")
    assert len(pair_id("x", "y")) == 16


# ---------------------------------------------------------------- determinism


def test_build_is_deterministic(built, tmp_path):
    again = write_dataset(bc.build_spec(), tmp_path)
    a, b = read_fingerprint(built), read_fingerprint(again)
    assert a["fingerprint"] == b["fingerprint"]
    for rel in a["parquet_sha256"]:
        assert (built / rel).read_bytes() == (again / rel).read_bytes(), rel
    assert (built / "README.md").read_text() == (again / "README.md").read_text()


def test_fingerprint_is_over_content_not_parquet_bytes(built, tmp_path):
    """Rewriting a table with another compression, row-group size, encoding, chunking or row order
    leaves the content fingerprint unchanged; changing one rating changes it."""
    from contstim_bench.data.writer import compute_fingerprint

    recorded = read_fingerprint(built)
    assert compute_fingerprint(built) == {"fingerprint": recorded["fingerprint"], "tables": recorded["tables"]}
    assert set(recorded["tables"]) == {rel[: -len(".parquet")] for rel in recorded["parquet_sha256"]}
    assert f"`{recorded['fingerprint']}`" in (built / "README.md").read_text()

    copy = tmp_path / "contstim"
    shutil.copytree(built, copy)
    trials = copy / "trials" / "pll.parquet"
    table = pq.read_table(trials)
    before = trials.read_bytes()
    pq.write_table(table, trials, compression="gzip", row_group_size=1000, use_dictionary=False)
    assert trials.read_bytes() != before
    assert compute_fingerprint(copy)["fingerprint"] == recorded["fingerprint"]
    pq.write_table(table, trials, compression="snappy", row_group_size=7)
    assert compute_fingerprint(copy)["fingerprint"] == recorded["fingerprint"]
    reordered = table.take(pa.array(np.random.default_rng(0).permutation(table.num_rows)))
    pq.write_table(reordered, trials, compression="none")
    assert compute_fingerprint(copy)["fingerprint"] == recorded["fingerprint"]

    ratings = table.column("rating").to_pylist()
    ratings[0] = 7 - ratings[0]
    changed = table.set_column(table.schema.get_field_index("rating"), "rating", [ratings])
    pq.write_table(changed, trials)
    after = compute_fingerprint(copy)
    assert after["fingerprint"] != recorded["fingerprint"]
    assert {k for k in after["tables"] if after["tables"][k] != recorded["tables"][k]} == {"trials/pll"}


def test_data_layer_imports_run_one_way():
    """load -> builders -> writer -> paths, with no cycle: builders never imports load."""
    import subprocess
    import sys

    code = ("import sys, contstim_bench.data.builders as b; "
            "assert 'contstim_bench.data.load' not in sys.modules; "
            "from contstim_bench.data.load import default_datasets_dir, ENV_DATASETS, dataset_folder, fingerprint; "
            "from contstim_bench.data import paths; assert default_datasets_dir is paths.default_datasets_dir")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_table_digest_is_exact_and_canonical():
    import math

    from contstim_bench.data.writer import table_digest

    def digest(**columns):
        return table_digest(pa.table(columns))

    base = digest(x=pa.array([1.0, 2.0], pa.float64()), s=["a", "b"])
    assert base == table_digest(pa.concat_tables([pa.table({"x": pa.array([v], pa.float64()), "s": [t]})
                                                  for v, t in ((2.0, "b"), (1.0, "a"))]))  # chunks, row order
    assert base == digest(x=pa.array([1.0, 2.0], pa.float64()), s=pa.array(["a", "b"]).dictionary_encode())
    assert base != digest(x=pa.array([1.0, math.nextafter(2.0, 3.0)], pa.float64()), s=["a", "b"])  # float64 exact
    assert base != digest(x=pa.array([1, 2], pa.int64()), s=["a", "b"])  # the type counts
    assert base != digest(y=pa.array([1.0, 2.0], pa.float64()), s=["a", "b"])  # the name counts
    assert base != digest(x=pa.array([1.0, 2.0, 2.0], pa.float64()), s=["a", "b", "b"])  # duplicates count
    nan, none = digest(x=pa.array([float("nan")], pa.float64())), digest(x=pa.array([None], pa.float64()))
    assert nan != none != digest(x=pa.array([0.0], pa.float64())) != digest(x=pa.array([-0.0], pa.float64()))
    assert digest(s=pa.array([None], pa.string())) != digest(s=["None"]) != digest(s=["null"])


def test_cli_build_with_main_results_equals_the_script(fixture_build, tmp_path):
    """`contstim data build --main-results` builds the same main split as the dataset script."""
    from contstim_bench.cli import main as cli_main
    from contstim_bench.data.writer import read_fingerprint

    folder, info, src = fixture_build
    out = tmp_path / "cli"
    rc = cli_main(["data", "build", "--only", "contstim", "--source", str(src), "--out", str(out),
                   "--main-results", str(info.path)])
    assert rc == 0
    assert read_fingerprint(out / "contstim")["parquet_sha256"] == read_fingerprint(folder)["parquet_sha256"]
    main = bc.load_trials("main", datasets_dir=out)
    assert main.participant.nunique() == info.n_groups * info.participants_per_group
