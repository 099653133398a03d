"""The ``blimp`` dataset (Warstadt et al. 2020) built from the real raw files."""
from __future__ import annotations

import json

import datasets
import pyarrow.parquet as pq
import pytest

from contstim_bench.data import build_blimp as bb
from contstim_bench.data import builders
from contstim_bench.data.writer import read_fingerprint


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return builders.build("blimp", tmp_path_factory.mktemp("datasets"))


@pytest.fixture(scope="module")
def pairs(built):
    return pq.read_table(built / "pairs" / "test.parquet").to_pandas()


def test_configs_load_with_datasets(built):
    rows = {"pairs": 67000, "human_validation": 69, "reported_model_accuracy": 80}
    docs = {"pairs": bb.PAIRS_COLUMNS, "human_validation": bb.HUMAN_COLUMNS, "reported_model_accuracy": bb.MODEL_COLUMNS}
    for config, n in rows.items():
        ds = datasets.load_dataset(str(built), config, split="test")
        assert ds.num_rows == n
        assert list(ds.features) == list(docs[config])
    assert read_fingerprint(built)["rows"] == {f"{c}/test": n for c, n in rows.items()}
    card = (built / "README.md").read_text()
    assert "license: cc-by-4.0" in card and "warstadt2020blimp" in card


def test_counts_per_paradigm(pairs):
    files = bb.paradigm_files()
    assert len(files) == 67
    per = pairs.groupby("paradigm").size()
    assert per.index.tolist() == sorted(f.split("/")[-1][: -len(".jsonl")] for f in files)
    assert (per == 1000).all()
    assert (pairs.groupby("paradigm").pair_id.agg(["min", "max", "nunique"]).values == [0, 999, 1000]).all()
    assert pairs.paradigm.is_monotonic_increasing
    assert pairs.groupby("field").size().to_dict() == {
        "morphology": 18000, "semantics": 9000, "syntax": 26000, "syntax_semantics": 14000}
    assert pairs.phenomenon.nunique() == 12 and pairs.linguistics_term.nunique() == 13
    assert pairs.groupby("phenomenon").paradigm.nunique().to_dict() == {
        "anaphor_agreement": 2, "argument_structure": 9, "binding": 7, "control_raising": 5,
        "determiner_noun_agreement": 8, "ellipsis": 2, "filler_gap_dependency": 7, "irregular_forms": 2,
        "island_effects": 8, "npi_licensing": 7, "quantifiers": 4, "subject_verb_agreement": 6}
    same = pairs[pairs.sentence_good == pairs.sentence_bad]  # upstream generation errors, kept
    assert same.groupby("paradigm").size().to_dict() == {"passive_1": 2, "principle_A_case_2": 5}
    assert same[same.paradigm == "passive_1"].pair_id.tolist() == [324, 810]


def test_spot_values(pairs):
    first = pairs.iloc[0]
    assert (first.paradigm, first.pair_id, first.field, first.linguistics_term) == ("adjunct_island", 0, "syntax", "island_effects")
    assert first.sentence_good == "Who should Derek hug after shocking Richard?"
    assert first.sentence_bad == "Who should Derek hug Richard after shocking?"
    assert (first.simple_lm_method, first.one_prefix_method, first.two_prefix_method, first.lexically_identical) == (
        True, False, False, True)
    idx = pairs.set_index(["paradigm", "pair_id"])
    ana = idx.loc[("anaphor_gender_agreement", 0)]
    assert (ana.one_prefix_prefix, ana.one_prefix_word_good, ana.one_prefix_word_bad) == (
        "Katherine can't help", "herself", "himself")
    assert idx.loc[("superlative_quantifiers_1", 0)].crucial_item == "at most"
    s_sel = idx.loc[("animate_subject_trans", 0)]
    assert (s_sel.linguistics_term, s_sel.phenomenon) == ("s-selection", "argument_structure")
    assert idx.loc[("principle_A_case_2", 0)].field == "syntax_semantics"  # raw "syntax/semantics"
    assert pairs.dependency_length.notna().sum() == 2000
    assert set(pairs[pairs.dependency_length.notna()].paradigm) == {
        "distractor_agreement_relational_noun", "distractor_agreement_relative_clause"}


def test_human_validation_and_reported_accuracy(built):
    hv = pq.read_table(built / "human_validation" / "test.parquet").to_pandas().set_index("paradigm")
    assert hv.in_release.sum() == 67
    assert sorted(hv.index[~hv.in_release]) == [
        "coordinate_structure_constraint_subject_extraction", "wh_questions_object_gap_long_distance"]
    assert hv.loc["adjunct_island"].tolist() == [5, 0.94, 100, True]
    assert hv.loc["wh_questions_object_gap_long_distance"].tolist() == [2, 0.47, 100, False]
    rep = pq.read_table(built / "reported_model_accuracy" / "test.parquet").to_pandas()
    assert (rep.paradigm != "overall").sum() == 67 and (rep.paradigm == "overall").sum() == 13
    grand = rep[(rep.paradigm == "overall") & (rep.linguistics_term == "overall")].iloc[0]
    assert (grand.ngram, grand.lstm, grand.txl, grand.gpt2) == pytest.approx((0.612403, 0.698119, 0.696254, 0.830239))
    assert rep.set_index("paradigm").loc["anaphor_gender_agreement"].gpt2 == 0.994


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _row(i, **over):
    r = {"sentence_good": "A b.", "sentence_bad": "B a.", "field": "syntax", "linguistics_term": "t",
         "UID": "toy", "simple_LM_method": True, "one_prefix_method": False, "two_prefix_method": False,
         "lexically_identical": True, "pairID": str(i)}
    r.update(over)
    return r


def test_malformed_paradigm_files_are_named(tmp_path):
    good = [_row(i) for i in range(1000)]
    assert len(bb._read_paradigm(_write(tmp_path / "toy.jsonl", good), "blimp/data/toy.jsonl")) == 1000
    dup = good[:999] + [_row(5)]
    with pytest.raises(ValueError, match=r"blimp/data/toy.jsonl: 1000 pairs, .*duplicates \[5\]"):
        bb._read_paradigm(_write(tmp_path / "toy.jsonl", dup), "blimp/data/toy.jsonl")
    extra = good[:3] + [_row(3, surprise=1)] + good[4:]
    with pytest.raises(ValueError, match=r"line 4: missing fields \[\], unknown fields \['surprise'\]"):
        bb._read_paradigm(_write(tmp_path / "toy.jsonl", extra), "blimp/data/toy.jsonl")
    wrong_uid = [_row(0, UID="other")] + good[1:]
    with pytest.raises(ValueError, match=r"line 1: UID 'other' != file name 'toy'"):
        bb._read_paradigm(_write(tmp_path / "toy.jsonl", wrong_uid), "blimp/data/toy.jsonl")
    mixed = good[:999] + [_row(999, field="semantics")]
    with pytest.raises(ValueError, match="field is not constant"):
        bb._read_paradigm(_write(tmp_path / "toy.jsonl", mixed), "blimp/data/toy.jsonl")


def test_dataset_script_names_a_missing_source(tmp_path, capsys, monkeypatch):
    """`python dataset_scripts/blimp.py --source EMPTY` fails with one line naming the file and its URL."""
    from contstim_bench.data.builders import script_main

    monkeypatch.setenv("CONTSTIM_OFFLINE", "1")
    monkeypatch.setenv("CONTSTIM_CACHE", str(tmp_path / "cache"))
    rc = script_main("blimp", "build blimp", ["--source", str(tmp_path / "empty"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("blimp: error: SourceError: raw file 'blimp/")
    assert "https://raw.githubusercontent.com/alexwarstadt/blimp/3e56b06fcabca9b30822fc66435fca6b1aa40bb1/" in err
    assert not (tmp_path / "out" / "blimp").exists()
