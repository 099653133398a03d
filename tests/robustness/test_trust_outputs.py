"""Outputs never overwrite inputs: a command whose output path is one of its inputs (by any
path: ``./x``, ``sub/../x``, a symbolic or a hard link), or whose output folder, replaced whole,
holds one of its inputs, is refused before anything is read or written, naming both paths
(:func:`contstim_bench.staging.check_inputs_kept`)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from contstim_bench.cli import main as cli_main
from folder_snapshot import refused as refused_unchanged

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"


def refused(capsys, argv: list[str], folder: Path, *named: str) -> str:
    """:func:`folder_snapshot.refused`, the message saying that nothing was written."""
    return refused_unchanged(capsys, argv, folder, *named, "nothing was written")


def test_score_refuses_to_overwrite_its_input(tmp_path, kn_trigram, capsys):
    sentences = tmp_path / "s.txt"
    sentences.write_text("The cat sat on the mat.\nA dog ran.\n", encoding="utf-8")
    os.link(sentences, tmp_path / "hard.txt")
    (tmp_path / "soft.txt").symlink_to(sentences)
    model = tmp_path / "tri.arpa"
    shutil.copyfile(kn_trigram, model)
    score = ["score", "--model", f"kenlm:{model}", "--input", str(sentences), "--quiet", "--output"]
    for output in (sentences, tmp_path / "sub" / ".." / "s.txt", tmp_path / "hard.txt", tmp_path / "soft.txt"):
        refused(capsys, [*score, str(output)], tmp_path, f"--output {output} is the input --input {sentences}",
                "writing it would overwrite the input")
    assert not (tmp_path / "sub").exists()
    refused(capsys, [*score, str(model)], tmp_path, f"--output {model} is the input --model {model}")
    assert cli_main([*score, str(tmp_path / "scores.csv")]) == 0  # another output: scored as usual
    assert (tmp_path / "scores.csv").read_text(encoding="utf-8").startswith("sentence,logprob\n")


def test_compare_refuses_to_overwrite_a_result_it_reads(tmp_path, datasets, capsys):
    result = tmp_path / "roberta.json"
    shutil.copyfile(SHIPPED / "roberta.json", result)
    common = ["compare", "--results", str(result), "--models", "precomputed:bert", "--datasets", str(datasets),
              "--quiet", "--output"]
    refused(capsys, [*common, str(result)], tmp_path, f"--output {result} is the input --results {result}")
    folder = tmp_path / "cmp"
    folder.mkdir()
    inside = folder / "comparison.json"  # a result kept where the comparison folder writes its JSON
    result.rename(inside)
    common[2] = str(inside)
    refused(capsys, [*common, str(folder)], tmp_path, f"--output {inside} is the input --results {inside}")
    assert cli_main([*common, str(tmp_path / "other")]) == 0
    assert set(json.loads((tmp_path / "other" / "comparison.json").read_text())["models"]) == {"roberta", "bert"}
    # the output convention of every command (driver.check_outputs): never in the datasets folder read,
    # and a path without .json is a folder, not a file that is there
    refused(capsys, [*common, str(datasets / "cmp.json")], datasets, f"lies inside the input folder --datasets {datasets}")
    notes = tmp_path / "notes"
    notes.write_text("keep me", encoding="utf-8")
    refused_unchanged(capsys, [*common, str(notes)], tmp_path, f"--output {notes} is a file")
    assert notes.read_text(encoding="utf-8") == "keep me"


def _corpus(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("the cat sat\nthe dog ran\na cat ran\n", encoding="utf-8")
    return path


def test_other_commands_refuse_before_reading(tmp_path, capsys):
    """Commands that read files and write others, each given an output that is (or holds) an input."""
    corpus = _corpus(tmp_path / "corpus.csv")
    refused(capsys, ["train", "ngram", "--corpus", str(corpus), "--output", str(corpus), "--discount-fallback"],
            tmp_path, f"--output {corpus} is the input --corpus {corpus}")
    refused(capsys, ["vocab", "build", "--corpus", str(corpus), "--min-count", "1", "--out", str(corpus)],
            tmp_path, f"--out {corpus} is the input --corpus {corpus}")
    weights = _corpus(tmp_path / "ckpt" / "vocab.json")
    refused(capsys, ["train", "lstm", "--corpus", str(weights), "--output", str(weights.parent), "--max-steps", "1"],
            tmp_path, "is the input --corpus", str(weights))
    results = [tmp_path / "a.json", tmp_path / "b.json"]
    for r in results:
        shutil.copyfile(SHIPPED / "roberta.json", r)
    refused(capsys, ["plausibility-glmm", *map(str, results), "--output", str(results[1])], tmp_path,
            f"--output {results[1]} is the input RESULT {results[1]}")
    # folders replaced whole: a previous site holding the results folder it is built from
    site = tmp_path / "site"
    (site / "results").mkdir(parents=True)
    (site / "index.html").write_text("<html></html>", encoding="utf-8")
    shutil.copyfile(SHIPPED / "roberta.json", site / "results" / "roberta.json")
    refused(capsys, ["leaderboard", "build", "--results", str(site / "results"), "--out", str(site), "--no-rescore"],
            tmp_path, f"--out {site} would be replaced, and the input --results {site / 'results'} lies inside it")
    # a dataset folder built over the raw files it is built from
    raw = tmp_path / "data" / "contstim" / "raw"
    raw.mkdir(parents=True)
    (raw / "keep.txt").write_text("raw file", encoding="utf-8")
    refused(capsys, ["data", "build", "--out", str(tmp_path / "data"), "--source", str(raw), "--only", "contstim"],
            tmp_path, f"--out {tmp_path / 'data' / 'contstim'} would be replaced", f"--source {raw} lies inside it")
    # a selection written over the triplets of the run it selects from
    run = tmp_path / "run"
    (run / "triplets" / "synthetic_triplets").mkdir(parents=True)
    (run / "triplets" / "synthetic_triplets" / "train.parquet").write_bytes(b"PAR1")
    refused(capsys, ["generate", "select", "--triplets", str(run), "--output", str(run)], tmp_path,
            f"--output {run / 'triplets'} is the input --triplets {run / 'triplets'}")
    # a round written over the response database it is ingested from
    db = tmp_path / "rounds" / "contstim-web" / "responses.sqlite"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"SQLite format 3\x00")
    refused(capsys, ["experiment", "ingest", "--db", str(db), "--out", str(tmp_path / "rounds"), "--experiment", "web"],
            tmp_path, f"--db {db} lies inside it")


def test_the_check_itself(tmp_path):
    from contstim_bench.staging import check_inputs_kept

    source = tmp_path / "in.txt"
    source.write_text("data", encoding="utf-8")
    check_inputs_kept([("--output", tmp_path / "out.txt")], [("--input", source)])  # distinct: fine
    check_inputs_kept([("--output", source)], [("--input", None), ("--input", tmp_path / "missing.txt")])
    check_inputs_kept([("--output", tmp_path / "x" / "in.txt")], [("--input", source)])  # same name, other folder
    check_inputs_kept([("--out", tmp_path / "sub")], [("--source", tmp_path)])  # output inside an input: kept
    with pytest.raises(ValueError, match=r"--out .* would be replaced, and the input --input .*in\.txt lies inside"):
        check_inputs_kept([("--out", tmp_path)], [("--input", source)])
    with pytest.raises(ValueError, match="is the input"):  # a relative path to the same file
        check_inputs_kept([("--output", Path(os.path.relpath(source)))], [("--input", source)])


def test_result_outputs_never_overwrite_the_model_they_come_from(tmp_path):
    """The driver's output convention (evaluate, blimp, plausibility and the Python API): the result
    file, or a folder's ``<identifier>.json``, is never a file the model is read from."""
    from contstim_bench.driver import check_outputs, model_inputs

    sentences = tmp_path / "pool.json"
    sentences.write_text("[]", encoding="utf-8")
    reads = model_inputs(f"precomputed:{tmp_path / 'pool.npy'}?sentences={sentences}")
    assert reads == [("--model", str(tmp_path / "pool.npy")), ("--model", str(sentences))]
    with pytest.raises(ValueError, match=f"--output {sentences} is the input --model {sentences}"):
        check_outputs(sentences, 1, reads=reads)
    clash = tmp_path / "contstim.json"
    clash.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="contstim.json is the input --model"):
        check_outputs(tmp_path, 1, identifiers=["contstim"], reads=[("--model", clash)])
    assert check_outputs(tmp_path, 1, identifiers=["blimp"], reads=[("--model", clash)]) == tmp_path
    assert model_inputs("kenlm:lm.arpa") == [("--model", "lm.arpa")] and model_inputs("precomputed:roberta") == []
