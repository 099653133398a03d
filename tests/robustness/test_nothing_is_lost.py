"""Nothing a user gave is lost (issue 52): every command that writes a folder writes it beside the
old one and renames it into place, replaces only a folder of the kind it wrote that holds nothing
else, and never writes over, into or around what it reads; each case here deleted or overwrote a
user's data before (docs/reliability.md lists them)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.staging import MARKER, check_replaceable, replace_folder
from folder_snapshot import refused

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"


def test_a_site_build_never_deletes_its_datasets_or_a_foreign_site(tmp_path, datasets, capsys):
    results = tmp_path / "results"
    results.mkdir()
    shutil.copyfile(SHIPPED / "roberta.json", results / "roberta.json")
    site = tmp_path / "site"
    shutil.copytree(datasets, site / "datasets")  # a datasets folder kept inside an earlier site
    (site / "index.html").write_text("<p>an earlier site</p>")
    refused(capsys, ["leaderboard", "build", "--results", str(results), "--out", str(site), "--datasets",
                     str(site / "datasets"), "--no-validate"], tmp_path, "lies inside it", "nothing was written")
    pages = tmp_path / "docs"  # a GitHub Pages folder: an index.html the package did not write
    pages.mkdir()
    (pages / "index.html").write_text("<h1>my project</h1>")
    (pages / "guide.html").write_text("<p>guide</p>")
    refused(capsys, ["leaderboard", "build", "--results", str(results), "--out", str(pages), "--datasets",
                     str(datasets), "--no-validate"], tmp_path, "did not write", "nothing was written")


def test_a_task_folder_never_eats_its_datasets_or_the_current_folder(tmp_path, datasets, capsys, monkeypatch):
    tasks = tmp_path / "T"
    assert cli_main(["lm-eval", "tasks", "--out", str(tasks), "--datasets", str(datasets)]) == 0
    shutil.copytree(datasets, tasks / "ds")
    refused(capsys, ["lm-eval", "tasks", "--out", str(tasks), "--datasets", str(tasks / "ds")], tmp_path,
            "lies inside it", "nothing was written")
    shutil.rmtree(tasks / "ds")
    (tasks / "mynotes.txt").write_text("mine")
    refused(capsys, ["lm-eval", "tasks", "--out", str(tasks), "--datasets", str(datasets)], tmp_path,
            "mynotes.txt", "nothing was written")
    monkeypatch.chdir(tasks)
    refused(capsys, ["lm-eval", "tasks", "--out", ".", "--datasets", str(datasets)], tmp_path,
            "the current folder", "nothing was written")


def test_an_import_never_writes_over_the_run_it_reads(tmp_path, capsys):
    run = tmp_path / "run" / "model"
    run.mkdir(parents=True)
    own = run / "results_2026-01-01T00-00-00.json"
    own.write_text(json.dumps({"configs": {}}))
    refused(capsys, ["import", "lm-eval", str(tmp_path / "run"), "--output", str(own)], tmp_path,
            f"--output {own} lies inside the input folder OUTPUT_DIR", "nothing was written")


def test_a_pool_never_overwrites_its_vocabulary_or_models(tmp_path, kn_trigram, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat on the mat in the sun.\n")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the\ncat\n")
    refused(capsys, ["generate", "pool", "--corpus", str(corpus), "--vocabulary", str(vocab), "--out", str(vocab)],
            tmp_path, f"--out {vocab} is the input --vocabulary {vocab}")
    model = tmp_path / "tri.arpa"
    shutil.copyfile(kn_trigram, model)
    refused(capsys, ["generate", "pool", "--corpus", str(corpus), "--models", f"kenlm:{model}", "--vocabulary",
                     "none", "--out", str(model)], tmp_path, f"--out {model} is the input --models {model}")


def test_a_dataset_folder_holding_a_user_file_is_not_rebuilt_over(tmp_path, datasets, capsys):
    out = tmp_path / "built"
    shutil.copytree(datasets / "contstim", out / "contstim")
    (out / "contstim" / "notes.txt").write_text("my notes")
    refused(capsys, ["data", "build", "--only", "contstim", "--out", str(out)], tmp_path, "notes.txt",
            "nothing was written")


def test_a_failed_write_leaves_the_old_folder_whole(tmp_path):
    folder = tmp_path / "out"
    with replace_folder(folder, kind="thing") as tmp:
        (tmp / "a.txt").write_text("first")
    with pytest.raises(RuntimeError):
        with replace_folder(folder, kind="thing") as tmp:
            (tmp / "a.txt").write_text("second")
            raise RuntimeError("interrupted")
    assert (folder / "a.txt").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folder left beside it
    marker = json.loads((folder / MARKER).read_text())
    assert marker["kind"] == "thing" and marker["files"] == ["a.txt"]
    with pytest.raises(ValueError, match="holds a thing the package wrote, not a site"):
        check_replaceable(folder, kind="site")
    link = tmp_path / "link"
    os.symlink(folder, link)
    with pytest.raises(ValueError, match="symbolic link"):
        check_replaceable(link, kind="thing")
