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
from contstim_bench.staging import MARKER, check_inputs_kept, check_replaceable, replace_folder
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
    assert marker["kind"] == "thing" and list(marker["files"]) == ["a.txt"]  # with its sha256
    with pytest.raises(ValueError, match="holds a thing the package wrote, not a site"):
        check_replaceable(folder, kind="site")
    link = tmp_path / "link"
    os.symlink(folder, link)
    with pytest.raises(ValueError, match="symbolic link"):
        check_replaceable(link, kind="thing")


def test_edits_empty_folders_and_older_folders_are_never_replaced(tmp_path):
    """The marker records every file's sha256: a file a user edited, a folder a user added (even
    empty), and a folder written before markers existed (whose files cannot be told from a user's)
    keep the folder from being replaced; Python's bytecode beside a written module does not."""
    folder = tmp_path / "site"
    with replace_folder(folder, kind="site") as tmp:
        (tmp / "index.html").write_text("<p>built</p>")
        (tmp / "utils.py").write_text("x = 1\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "utils.cpython-311.pyc").write_bytes(b"\x00")
    check_replaceable(folder, kind="site")  # compiled bytecode is tolerated
    (folder / "drafts").mkdir()
    with pytest.raises(ValueError, match="drafts/"):
        check_replaceable(folder, kind="site")
    (folder / "drafts").rmdir()
    (folder / "index.html").write_text("<p>built</p><!-- my edit -->")
    with pytest.raises(ValueError, match=r"index\.html \(changed since it was written\)"):
        check_replaceable(folder, kind="site")
    (folder / "index.html").write_text("<p>built</p>")
    (folder / MARKER).unlink()  # as an earlier version left it
    with pytest.raises(ValueError, match="or written by an earlier version"):
        check_replaceable(folder, kind="site")


def test_an_old_task_folder_keeps_a_users_task(tmp_path, datasets, capsys):
    tasks = tmp_path / "T"
    assert cli_main(["lm-eval", "tasks", "--out", str(tasks), "--datasets", str(datasets)]) == 0
    (tasks / MARKER).unlink()
    (tasks / ".contstim-lm-eval-tasks").write_text("contstim-bench 0.1.0\n")  # the marker of earlier versions
    assert cli_main(["lm-eval", "tasks", "--out", str(tasks), "--datasets", str(datasets)]) == 0  # recognised
    (tasks / MARKER).unlink()
    (tasks / ".contstim-lm-eval-tasks").write_text("contstim-bench 0.1.0\n")
    (tasks / "my_task.yaml").write_text("task: mine\n")
    refused(capsys, ["lm-eval", "tasks", "--out", str(tasks), "--datasets", str(datasets)], tmp_path, "my_task.yaml")


def test_exports_and_reports_never_replace_a_users_page(tmp_path, capsys):
    from small_study import small_design

    from contstim_bench.data.design_file import write_design

    design = write_design(small_design(), tmp_path / "design.parquet")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.html").write_text("<h1>my project</h1>")
    (docs / "experiment.json").write_text("{}")  # looked like an earlier export before
    refused(capsys, ["experiment", "export", "--design", str(design), "--out", str(docs)], tmp_path, "did not write")
    web = tmp_path / "web"
    assert cli_main(["experiment", "export", "--design", str(design), "--out", str(web)]) == 0
    (web / "index.html").write_text((web / "index.html").read_text() + "<!-- my edit -->")
    refused(capsys, ["experiment", "export", "--design", str(design), "--out", str(web)], tmp_path, "changed since")
    refused(capsys, ["report", str(SHIPPED / "bert.json"), "--out", str(docs)], tmp_path, "did not write")


def test_no_output_inside_a_model_folder_or_the_datasets_read(tmp_path, datasets):
    from contstim_bench.driver import check_outputs

    model = tmp_path / "rnnm"
    model.mkdir()
    (model / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="lies inside the input folder --model"):
        check_inputs_kept([("--output", model / "config.json")], [("--model", model)])
    with pytest.raises(ValueError, match="lies inside the input folder --datasets"):
        check_outputs(datasets / "contstim" / "fingerprint.json", 1, datasets_dir=datasets)


def test_a_result_written_over_a_hard_link_leaves_the_other_name_whole(tmp_path):
    from contstim_bench.results.io import write_result

    kept = tmp_path / "run_results.json"
    kept.write_text('{"kept": true}')
    os.link(kept, tmp_path / "out.json")
    write_result({"new": 1}, tmp_path / "out.json")
    assert json.loads(kept.read_text()) == {"kept": True}
    assert json.loads((tmp_path / "out.json").read_text()) == {"new": 1}


def test_a_terminated_write_leaves_the_old_folder_and_no_temporary_one(tmp_path):
    """SIGTERM (a `timeout`, a cluster's job limit) runs the same clean-up as an interrupt."""
    import subprocess
    import sys

    folder = tmp_path / "out"
    with replace_folder(folder, kind="thing") as tmp:
        (tmp / "a.txt").write_text("first")
    script = (
        "import os, signal, sys\n"
        "from contstim_bench import cli\n"
        "from contstim_bench.staging import replace_folder\n"
        "cli._terminate_as_interrupt()\n"
        "try:\n"
        f"    with replace_folder({str(folder)!r}, kind='thing') as tmp:\n"
        "        (tmp / 'a.txt').write_text('second')\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "except cli.Terminated:\n"
        "    sys.exit(143)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 143, proc.stderr
    assert (folder / "a.txt").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_leftover_hidden_round_folder_is_no_round(tmp_path):
    from contstim_bench.data.rounds import discover_rounds

    (tmp_path / ".contstim-web-new-abc").mkdir()
    (tmp_path / ".contstim-web-new-abc" / "round.json").write_text("{}")
    assert discover_rounds(tmp_path) == {}
