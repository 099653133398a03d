"""A resumed synthesis run trusts nothing it did not check: a job file edited after it was written
is refused by name, and a model whose content changed at the same path (an ``.arpa`` retrained in
place) is refused before one output can mix two versions of it."""
from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("kenlm")

from contstim_bench.cli import main as cli_main  # noqa: E402
from contstim_bench.data.build_contstim import POOL_SYNTHESIS  # noqa: E402
from contstim_bench.data.sources import resolve  # noqa: E402
from contstim_bench.generate.synthetic_run import JOBS_DIR, record_checksum  # noqa: E402

N_START = 3


def train(arpa, corpus, order: int) -> None:
    assert cli_main(["train", "ngram", "--corpus", str(corpus), "--order", str(order), "--output", str(arpa),
                     "--backend", "python"]) == 0


@pytest.fixture()
def run(tmp_path):
    lines = resolve(POOL_SYNTHESIS).read_text(encoding="utf-8").splitlines()
    (tmp_path / "corpus.txt").write_text("\n".join(lines[20:2000]) + "\n", encoding="utf-8")
    (tmp_path / "other.txt").write_text("\n".join(lines[2000:3000]) + "\n", encoding="utf-8")
    (tmp_path / "starts.txt").write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
    words = sorted({w for line in lines[20:400] for w in line.split()})[:300]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    train(tmp_path / "tri.arpa", tmp_path / "corpus.txt", 3)
    train(tmp_path / "bi.arpa", tmp_path / "corpus.txt", 2)
    args = ["generate", "synthetic", "--models", f"tri=kenlm:{tmp_path / 'tri.arpa'},bi=kenlm:{tmp_path / 'bi.arpa'}",
            "--start-sentences", str(N_START), "--seed", "1", "--pool", str(tmp_path / "starts.txt"),
            "--vocabulary", str(tmp_path / "vocab.txt"), "--no-cache", "--quiet", "--output", str(tmp_path / "out")]
    assert cli_main(args) == 0
    return tmp_path, args


def job_files(tmp_path):
    return sorted((tmp_path / "out" / JOBS_DIR).glob("*.json"))


def test_job_files_record_fingerprints_and_a_checksum(run):
    tmp_path, _ = run
    files = job_files(tmp_path)
    assert len(files) == N_START
    for path in files:
        record = json.loads(path.read_text())
        assert set(record["models"]) == {"tri", "bi"} and len(record["models"]["tri"]) == 64
        assert record["sha256"] == record_checksum(record)
    card = (tmp_path / "out" / "triplets" / "README.md").read_text(encoding="utf-8")
    assert f"(content fingerprint {record['models']['tri'][:16]})" in card


def test_edited_job_file_is_refused(run, capsys):
    tmp_path, args = run
    path = job_files(tmp_path)[1]
    record = json.loads(path.read_text())
    record["row"]["S1"] = "A sentence nobody synthesised ."
    path.write_text(json.dumps(record))
    assert cli_main(args) == 1
    err = capsys.readouterr().err
    assert f"job file {path} fails its checksum" in err and "delete it to redo the job" in err
    path.unlink()  # the way out: the job is redone
    assert cli_main(args) == 0
    frame = pd.read_parquet(tmp_path / "out" / "triplets" / "synthetic_triplets" / "train.parquet")
    assert "A sentence nobody synthesised ." not in frame["S1"].tolist()


def test_model_retrained_in_place_is_refused_on_resume(run, capsys):
    tmp_path, args = run
    first, *rest = job_files(tmp_path)
    for path in rest:  # as if the run had been killed after its first job
        path.unlink()
    train(tmp_path / "tri.arpa", tmp_path / "other.txt", 3)  # same path, new content
    assert cli_main(args) == 1
    err = capsys.readouterr().err
    assert "model 'tri'" in err and "changed since this run started" in err and str(first) in err
    assert len(job_files(tmp_path)) == 1  # nothing computed with the new model


def test_job_files_of_two_model_versions_are_refused(run, capsys):
    tmp_path, args = run
    path = job_files(tmp_path)[0]
    record = json.loads(path.read_text())
    record["models"]["bi"] = "f" * 64  # as written by a run with another bigram file
    record["sha256"] = record_checksum(record)
    path.write_text(json.dumps(record))
    assert cli_main(args) == 1
    err = capsys.readouterr().err
    assert "different contents of model 'bi'" in err and str(path) in err
