"""Distributed, resumable synthesis runs: a 2-process CPU launch (torchrun) gives the same
triplets as one process, a run killed mid-way and resumed gives the output of an uninterrupted
run, and a resume with different arguments is refused."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.data.sources import resolve
from contstim_bench.generate.inputs import StartSentence
from contstim_bench.generate.pairing import ModelEntry, parse_models
from contstim_bench.generate.synthetic_run import JOBS_DIR, job_seed, make_jobs, shard
from contstim_bench.data.build_contstim import POOL_SYNTHESIS

POOL = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool
HELD_OUT = 30
N_START = 4


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Trigram and bigram trained on the pool minus 30 held-out lines (the start-sentence pool),
    and a vocabulary file of the 800 most frequent words of each list."""
    tmp = tmp_path_factory.mktemp("runner")
    lines = resolve(POOL).read_text(encoding="utf-8").splitlines()
    (tmp / "corpus.txt").write_text("\n".join(lines[HELD_OUT:]) + "\n", encoding="utf-8")
    (tmp / "starts.txt").write_text("\n".join(lines[:HELD_OUT]) + "\n", encoding="utf-8")
    models = []
    for order, name in ((3, "tri"), (2, "bi")):
        arpa = tmp / f"{name}.arpa"
        assert cli_main(["train", "ngram", "--corpus", str(tmp / "corpus.txt"), "--order", str(order),
                         "--output", str(arpa)]) == 0
        models.append(f"{name}=kenlm:{arpa}")
    from contstim_bench.data.load import dataset_folder

    vocab = pd.read_parquet(dataset_folder("contstim") / "vocabulary" / "train.parquet")
    vocab = vocab.sort_values("frequency", ascending=False, kind="stable")
    top = pd.concat([vocab[vocab["capitalized"]].head(800), vocab[~vocab["capitalized"]].head(800)])
    top[["word", "capitalized"]].to_parquet(tmp / "vocab.parquet")
    args = ["synthetic", "--models", ",".join(models), "--start-sentences", str(N_START), "--seed", "5",
            "--pool", str(tmp / "starts.txt"), "--vocabulary", str(tmp / "vocab.parquet"), "--no-cache", "--quiet"]
    reference = tmp / "reference"
    assert generate_main([*args, "--output", str(reference)]) == 0  # one process, uninterrupted
    return {"tmp": tmp, "args": args, "reference": reference}


def generate_main(argv: list[str]) -> int:
    """``contstim generate ARGV`` in this process (what ``python -m contstim_bench generate`` runs)."""
    return cli_main(["generate", *argv])


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONUNBUFFERED"] = "1"
    e["OMP_NUM_THREADS"] = "1"
    return e


def fingerprint(run: Path) -> str:
    return json.loads((run / "triplets" / "fingerprint.json").read_text())["fingerprint"]


def test_reference_run_layout(setup):
    ref = setup["reference"]
    record = json.loads((ref / "run.json").read_text())
    assert [m["name"] for m in record["models"]] == ["tri", "bi"]
    assert len(record["starts"]) == N_START and record["seed"] == 5
    jobs = sorted(p.name for p in (ref / JOBS_DIR).glob("*.json"))
    assert jobs == sorted(f"00-01_{s['index']:06d}.json" for s in record["starts"])
    table = pd.read_parquet(ref / "triplets" / "synthetic_triplets" / "train.parquet")
    assert table["N_idx"].tolist() == [s["index"] for s in record["starts"]]  # job order
    assert (table["lp_S1_given_m1"] >= table["lp_N_given_m1"]).all()
    assert (table["lp_S2_given_m2"] >= table["lp_N_given_m2"]).all()
    assert (table["controversiality"] > 0).any()
    assert not list((ref / "running").glob("*.json"))


def test_two_process_accelerate_launch_gives_the_same_triplets(setup):
    out = setup["tmp"] / "two_procs"
    # torchrun: two CPU processes (accelerate launch --cpu --num_processes 2 starts one without MPI)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "contstim_bench", "generate",
           *setup["args"], "--output", str(out)]
    proc = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # each process says its share at its start: the two split the jobs
    half = N_START // 2
    assert f"process 0 of 2: jobs 1-{N_START - half} of {N_START}" in proc.stderr, proc.stderr[-3000:]
    assert f"process 1 of 2: jobs {N_START - half + 1}-{N_START} of {N_START}" in proc.stderr
    assert fingerprint(out) == fingerprint(setup["reference"])
    ref = pd.read_parquet(setup["reference"] / "triplets" / "synthetic_triplets" / "train.parquet")
    two = pd.read_parquet(out / "triplets" / "synthetic_triplets" / "train.parquet")
    pd.testing.assert_frame_equal(ref, two)


def test_killed_run_resumes_to_identical_output(setup):
    out = setup["tmp"] / "killed"
    cmd = [sys.executable, "-m", "contstim_bench", "generate", *setup["args"], "--output", str(out)]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    jobs = out / JOBS_DIR
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        if jobs.is_dir() and any(jobs.glob("*.json")):
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = list(jobs.glob("*.json"))
    assert 1 <= len(done) < N_START  # killed mid-way
    assert not (out / "triplets").exists()
    before = {p.name: p.read_bytes() for p in done}
    assert generate_main([*setup["args"], "--output", str(out)]) == 0
    assert fingerprint(out) == fingerprint(setup["reference"])
    for name, content in before.items():  # finished jobs were not redone
        assert (jobs / name).read_bytes() == content
    assert sorted(p.name for p in jobs.glob("*.json")) == sorted(p.name for p in (setup["reference"] / JOBS_DIR).glob("*.json"))


def test_resume_with_different_arguments_is_refused(setup, capsys):
    args = list(setup["args"])
    args[args.index("--seed") + 1] = "6"
    assert generate_main([*args, "--output", str(setup["reference"])]) == 1
    err = capsys.readouterr().err
    assert "different arguments" in err and "seed: was 5, now 6" in err
    # the weights' dtype is part of the run: a resume in another one is refused, from the options given
    assert generate_main([*setup["args"], "--dtype", "float64", "--output", str(setup["reference"])]) == 1
    assert 'dtype: was null, now "float64"' in capsys.readouterr().err


def test_a_launch_that_does_not_split_says_so(monkeypatch):
    """`accelerate launch --cpu --num_processes 2` starts one process (no WORLD_SIZE): it says so."""
    from contstim_bench.scoring.parallel import launch_line

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("ACCELERATE_USE_CPU", raising=False)
    assert launch_line(0, 1, range(0, 6), 6) == "process 0 of 1: jobs 1-6 of 6"
    monkeypatch.setenv("ACCELERATE_USE_CPU", "True")
    assert "`accelerate launch --cpu` starts one process" in launch_line(0, 1, range(0, 6), 6)
    assert launch_line(1, 2, range(3, 6), 6) == "process 1 of 2: jobs 4-6 of 6"


def test_jobs_seeds_and_shards():
    starts = [StartSentence(i, f"sentence {i}") for i in (3, 9, 4)]
    jobs = make_jobs(3, starts)
    assert [(j.i, j.j, j.start.index) for j in jobs][:4] == [(0, 1, 3), (0, 1, 9), (0, 1, 4), (0, 2, 3)]
    assert len(jobs) == 9 and len({j.key for j in jobs}) == 9
    for n_proc in (1, 2, 4, 9, 12):
        covered = [k for p in range(n_proc) for k in shard(len(jobs), n_proc, p)]
        assert covered == list(range(len(jobs)))  # every job exactly once, contiguous blocks
    a, b = ModelEntry("a", "kenlm:a.arpa"), ModelEntry("b", "kenlm:b.arpa")
    assert job_seed(5, a, b, starts[0]) == job_seed(5, a, b, starts[0])
    assert len({job_seed(5, a, b, s) for s in starts} | {job_seed(6, a, b, starts[0])}) == 4
    assert parse_models("x=kenlm:a.arpa, smollm2-135m") == [ModelEntry("x", "kenlm:a.arpa"),
                                                             ModelEntry("smollm2-135m", "smollm2-135m")]
    with pytest.raises(ValueError, match="at least two"):
        parse_models("smollm2-135m")
    with pytest.raises(ValueError, match="given twice"):
        parse_models("a=kenlm:x,a=kenlm:y")
