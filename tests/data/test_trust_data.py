"""Built datasets are verified on every load against their ``fingerprint.json`` (parquet sha256,
or the decoded content's digest; the card's sha256; the file's own consistency), cheaply (once per
file state per process), and a file it does not list is refused and named (``data info`` lists
them); the selection pool's precomputed log-probability arrays are verified by git blob SHA-1,
shape and range in every build, even when the pool's sentences are absent."""
from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.data import sources, verify
from contstim_bench.data.build_contstim import POOL_PROBS, build_spec, load_trials
from contstim_bench.data.load import dataset_folder, fingerprint
from contstim_bench.data.verify import CorruptDatasetError, UnlistedFilesError
from contstim_bench.data.writer import ConfigSpec, DatasetSpec, write_dataset
from contstim_bench.generate.design import read_natural_pairs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("datasets")
    dataset_folder("contstim", root)
    return root


@pytest.fixture()
def copy(built, tmp_path):
    shutil.copytree(built / "contstim", tmp_path / "contstim")
    return tmp_path


def flip_first_rating(path):
    table = pq.read_table(path)
    ratings = table.column("rating").to_pylist()
    ratings[0] = 7 - ratings[0]
    pq.write_table(table.set_column(table.schema.get_field_index("rating"), "rating", [ratings]), path)
    return ratings


def test_changed_rating_is_refused_on_load(copy, built):
    genuine = fingerprint("contstim", built)
    trials = copy / "contstim" / "trials" / "pll.parquet"
    flip_first_rating(trials)
    for load in (lambda: load_trials("pll", copy), lambda: fingerprint("contstim", copy)):
        with pytest.raises(CorruptDatasetError) as err:
            load()
        assert str(trials) in str(err.value) and "contstim data build" in str(err.value)
    assert fingerprint("contstim", built) == genuine  # the untouched build still loads


def test_evaluation_on_a_changed_dataset_is_refused(copy):
    from contstim_bench.api import evaluate_model

    flip_first_rating(copy / "contstim" / "trials" / "pll.parquet")
    with pytest.raises(CorruptDatasetError):
        evaluate_model("precomputed:roberta", experiments="pll", datasets_dir=copy, log=lambda m: None)


def test_re_encoded_file_with_the_same_content_still_loads(copy, built):
    trials = copy / "contstim" / "trials" / "pll.parquet"
    before = trials.read_bytes()
    pq.write_table(pq.read_table(trials), trials, compression="gzip", row_group_size=1000)
    assert trials.read_bytes() != before
    assert load_trials("pll", copy).equals(load_trials("pll", built))


def test_edited_card_and_fingerprint_file_are_refused(copy):
    card = copy / "contstim" / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("trials/pll.parquet", "trials/other.parquet"),
                    encoding="utf-8")
    with pytest.raises(CorruptDatasetError, match="README.md"):
        dataset_folder("contstim", copy)
    meta_path = copy / "contstim" / "fingerprint.json"
    meta = json.loads(meta_path.read_text())
    meta["tables"]["trials/pll"] = "0" * 64
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CorruptDatasetError, match="fingerprint.json is damaged or was edited"):
        dataset_folder("contstim", copy)


def test_missing_table_is_named(copy):
    (copy / "contstim" / "sentences" / "pll.parquet").unlink()
    with pytest.raises(CorruptDatasetError, match=r"sentences/pll.parquet is missing"):
        dataset_folder("contstim", copy)


def test_verification_is_memoised_per_file_state(copy, monkeypatch):
    calls = []
    real = verify.sha256_file
    monkeypatch.setattr(verify, "sha256_file", lambda p: calls.append(p) or real(p))
    verify._VERIFIED.clear()
    dataset_folder("contstim", copy)
    first = len(calls)
    assert first >= 9  # every parquet file and the card
    dataset_folder("contstim", copy)
    assert len(calls) == first  # nothing hashed again
    flip_first_rating(copy / "contstim" / "trials" / "pll.parquet")
    with pytest.raises(CorruptDatasetError):
        dataset_folder("contstim", copy)
    assert len(calls) == first + 1  # only the changed file


def test_data_info_reports_a_corrupt_dataset(copy, capsys):
    assert cli_main(["data", "info", "--out", str(copy)]) == 0
    assert "every file verified" in capsys.readouterr().out
    flip_first_rating(copy / "contstim" / "trials" / "pll.parquet")
    assert cli_main(["data", "info", "--out", str(copy)]) == 1
    assert "contstim: CORRUPT: dataset file" in capsys.readouterr().out


def test_unlisted_file_is_refused_on_load(copy, built):
    """A parquet file fingerprint.json does not list (here the main experiment's trials, which
    this build lacks, copied from pll) is never read as part of the dataset."""
    folder = copy / "contstim"
    genuine = fingerprint("contstim", built)
    with pytest.raises(FileNotFoundError):
        load_trials("main", copy)  # not in the build
    stray = folder / "trials" / "main.parquet"
    shutil.copyfile(folder / "trials" / "pll.parquet", stray)
    (folder / ".git").mkdir()  # names starting with a dot are no loader's: not looked at
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    for load in (lambda: load_trials("main", copy), lambda: fingerprint("contstim", copy),
                 lambda: load_trials("pll", copy)):
        with pytest.raises(UnlistedFilesError) as err:
            load()
        text = str(err.value)
        assert str(folder) in text and "trials/main.parquet" in text and "does not list" in text
        assert "move them out" in text
    assert err.value.files == ["trials/main.parquet"] and isinstance(err.value, CorruptDatasetError)
    assert stray.is_file()  # refused, not deleted
    stray.rename(copy / "main.parquet")  # moved out of the dataset folder: the dataset loads again
    assert fingerprint("contstim", copy) == genuine


def test_data_info_lists_unlisted_files(copy, capsys):
    folder = copy / "contstim"
    shutil.copyfile(folder / "trials" / "pll.parquet", folder / "trials" / "main.parquet")
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    (folder / "extra").mkdir()
    (folder / "extra" / "train.parquet").write_bytes((folder / "vocabulary" / "train.parquet").read_bytes())
    assert cli_main(["data", "info", "--out", str(copy)]) == 1
    out = capsys.readouterr().out
    assert f"contstim: NOT VERIFIED: {folder} holds 3 file(s)" in out and "every file verified" not in out
    assert "  unlisted: extra/\n  unlisted: notes.txt\n  unlisted: trials/main.parquet\n" in out
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_generated_dataset_is_verified_when_read(tmp_path):
    table = pa.table({"model_1": ["a"], "model_2": ["b"], "sentence1": ["One two."], "sentence2": ["Two one."]})
    write_dataset(DatasetSpec("natural", "t", "other", "d", "c", ["s"],
                              [ConfigSpec("natural_controversial_pairs", {"train": table}, "pairs")]), tmp_path)
    assert read_natural_pairs(tmp_path)["sentence1"].tolist() == ["One two."]
    path = tmp_path / "natural" / "natural_controversial_pairs" / "train.parquet"
    pq.write_table(table.set_column(2, "sentence1", [["Changed."]]), path)
    with pytest.raises(CorruptDatasetError, match="train.parquet does not match"):
        read_natural_pairs(tmp_path)


def test_corrupt_pool_array_fails_the_build_even_without_the_pool_sentences(tmp_path):
    """The 231,725-sentence selection pool is absent here; its 9 arrays are present and verified."""
    shared = sources.development_data_dir() or sources.search_dirs()[0]
    source = tmp_path / "raw"
    for path in shared.rglob("*"):
        if path.is_file():
            target = source / path.relative_to(shared)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    spec = build_spec(source)  # the genuine arrays pass
    assert "were verified by git blob SHA-1, shape and range" in spec.notes
    bad = source / POOL_PROBS.format(model="gpt2")
    data = bytearray(bad.read_bytes())
    data[-3] ^= 0x01  # one bit of the last value
    bad.unlink()
    bad.write_bytes(bytes(data))
    with pytest.raises(sources.CorruptSourceError) as err:
        build_spec(source)
    assert str(bad) in str(err.value)


def test_precomputed_value_above_zero_is_refused(tmp_path):
    """A (consistent) dataset whose reference log-probability is positive is not used."""
    from contstim_bench.scoring.precomputed import reference_table

    table = pa.table({"sentence": ["One two three.", "Three two one."], "bert": [-20.5, 0.25]})
    write_dataset(DatasetSpec("contstim", "t", "mit", "d", "c", ["s"],
                              [ConfigSpec("sentences", {"pll": table}, "sentences")]), tmp_path)
    with pytest.raises(ValueError, match=r"'Three two one.' the log-probability 0.25, which is not a natural-log"):
        reference_table("bert", tmp_path, split="pll")
