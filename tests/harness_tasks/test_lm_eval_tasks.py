"""The benchmark as an lm-evaluation-harness task group, and back (contstim_bench.harness_tasks).

`lm_eval` runs the written task folder as a user runs it (a subprocess, SmolLM2's converted folder
on the `hf` backend with the start token as prefix), and its numbers are those `contstim evaluate
--model smollm2-135m` writes; the same through `simple_evaluate` (a tiny Llama, in process);
`contstim import lm-eval` turns the run's output folder into a result file that validates and
renders, whose log-probabilities are the samples'; a bad run is refused by name."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.harness_tasks.folder import write_task_folder
from contstim_bench.harness_tasks.metrics import FIELDS, field_value, metric_name

pytest.importorskip("lm_eval")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory, datasets) -> Path:
    notes: list[str] = []
    folder, names = write_task_folder(tmp_path_factory.mktemp("tasks") / "contstim_tasks", datasets, log=notes.append)
    assert names == ["contstim_pll"]  # the main experiment's human data is absent from the shared data
    assert any("no task for the main experiment" in n for n in notes)
    return folder


@pytest.fixture(scope="module")
def lm_eval_run(tasks, tmp_path_factory) -> Path:
    """`lm_eval --model hf ... --tasks contstim_pll --include_path TASKS --log_samples` on SmolLM2."""
    pytest.importorskip("gguf")
    from contstim_bench.scoring import offline

    model = offline.model_dir("smollm2-135m", progress=False)
    out = tmp_path_factory.mktemp("lm_eval_out")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    cmd = [str(Path(sys.executable).with_name("lm_eval")), "--model", "hf", "--model_args",
           f"pretrained={model},prefix_token_id=0,dtype=float32,softmax_dtype=float64", "--tasks", "contstim_pll",
           "--include_path", str(tasks), "--device", "cpu", "--batch_size", "32", "--output_path", str(out),
           "--log_samples"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "acc_synthetic_vs_synthetic" in done.stdout and "|Stderr|" in done.stdout.replace(" ", "")
    return out


def _results(out: Path) -> dict:
    (path,) = out.rglob("results_*.json")
    return json.loads(path.read_text())["results"]["contstim_pll"]


def _samples(out: Path) -> dict[str, float]:
    (path,) = out.rglob("samples_contstim_pll_*.jsonl")
    lp = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        for sentence, resp in zip(rec["doc"]["choices"], rec["filtered_resps"]):
            lp[sentence] = float(resp[0])
    return lp


@pytest.fixture(scope="module")
def evaluated(datasets, pll_logprobs, run_score_cache) -> dict:
    """`contstim evaluate --model smollm2-135m --experiment pll` (its scores from the run's cache)."""
    from contstim_bench.driver import RunOptions, evaluate
    from contstim_bench.scoring.cache import ScoreCache

    options = RunOptions(cache=ScoreCache(run_score_cache), progress=False)
    return evaluate("smollm2-135m", ["contstim.pll"], options=options, datasets_dir=datasets,
                    log=lambda msg: None)["contstim.pll"]


def _assert_same_numbers(reported: dict, result: dict, what: str) -> None:
    entries = result["experiments"]["pll"]
    assert set(entries) == {"synthetic_vs_synthetic", "natural_vs_shuffled", "all"}
    for cond, entry in entries.items():
        for field in FIELDS:
            got = reported[f"{metric_name(field, cond)},none"]
            want = field_value(entry, field)
            assert got == pytest.approx(want, abs=1e-9), (what, cond, field, got, want)


def _assert_independent_numbers(reported: dict, logprobs: dict[str, float], datasets: Path) -> None:
    """lm-eval's accuracy, SRCS and their standard errors equal the ones computed from
    ``logprobs`` and the trials without the package (tests/independent_metrics.py), within 1e-9."""
    from independent_metrics import pll_scores

    for cond, want in pll_scores(logprobs, datasets).items():
        for field, value in want.items():
            key = metric_name({"accuracy": "acc", "accuracy_stderr": "acc_stderr"}.get(field, field), cond) + ",none"
            assert reported[key] == pytest.approx(value, abs=1e-9), (cond, field, reported[key], value)


def test_task_folder(tasks, tmp_path, datasets):
    yaml_text = (tasks / "contstim_pll.yaml").read_text()
    assert "custom_dataset: !function utils.docs_contstim_pll" in yaml_text
    assert 'doc_to_text: ""' in yaml_text and 'target_delimiter: ""' in yaml_text
    for cond in ("synthetic_vs_synthetic", "natural_vs_shuffled"):
        assert f"metric: acc_{cond}_stderr\n" in yaml_text and f"metric: srcs_ceiling_lower_{cond}\n" in yaml_text
    assert "metric: acc\n" in yaml_text and "metric: acc_stderr\n" in yaml_text
    assert (tasks / "contstim.yaml").read_text().splitlines()[1:4] == ["group: contstim", "task:", "  - contstim_pll"]
    assert str(datasets.resolve()) in (tasks / "utils.py").read_text()  # the tasks read the built datasets
    assert not list(tasks.glob("*.parquet")) and not list(tasks.glob("*.csv"))  # no copy of the data
    write_task_folder(tasks, datasets)  # its own folder is written again
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="already holds files the package did not write"):
        write_task_folder(mine, datasets)
    assert (mine / "notes.txt").read_text() == "keep me"


def test_lm_eval_tasks_command_prints_the_folder(tmp_path, datasets, capsys):
    assert cli_main(["lm-eval", "tasks", "--out", str(tmp_path / "t"), "--datasets", str(datasets)]) == 0
    printed = capsys.readouterr()
    assert printed.out.strip() == str(tmp_path / "t") and "contstim_pll" in printed.err


@pytest.mark.slow
def test_lm_eval_cli_gives_the_numbers_of_contstim_evaluate(lm_eval_run, evaluated, datasets):
    """Per condition: accuracy, SRCS, their standard errors, both noise ceilings and the normalised
    accuracy of the lm-eval run equal the result of `contstim evaluate` within 1e-9, its
    log-probabilities being within 1e-4 nats of hf-causal's; `acc_stderr` is the result file's.
    Accuracy, SRCS and their errors also equal those computed from the run's own samples without
    the package (tests/independent_metrics.py): both sides of the first comparison go through the
    driver, which this pins."""
    samples = _samples(lm_eval_run)
    assert set(samples) == set(evaluated["logprobs"]) and len(samples) == 264
    assert max(abs(samples[s] - evaluated["logprobs"][s]) for s in samples) < 1e-4
    reported = _results(lm_eval_run)
    _assert_same_numbers(reported, evaluated, "lm_eval CLI")
    all_trials = evaluated["experiments"]["pll"]["all"]
    assert reported["acc_stderr,none"] == all_trials["accuracy_stderr"]
    assert reported["srcs_synthetic_vs_synthetic_stderr,none"] == \
        evaluated["experiments"]["pll"]["synthetic_vs_synthetic"]["srcs_stderr"]
    assert reported["acc,none"] == pytest.approx(0.8573232323232322, abs=1e-12)  # the README's 0.857
    _assert_independent_numbers(reported, samples, datasets)


@pytest.mark.slow
def test_import_lm_eval_validates_and_renders(lm_eval_run, datasets, tmp_path, capsys):
    out = tmp_path / "imported.json"
    assert cli_main(["import", "lm-eval", str(lm_eval_run), "--output", str(out), "--datasets", str(datasets)]) == 0
    printed = capsys.readouterr().out
    assert "contstim.pll: lm-eval 0.4.13 run results_" in printed and "accuracy 0.8573 (SE 0.0170)" in printed
    result = json.loads(out.read_text())
    assert result["logprobs"] == _samples(lm_eval_run)  # exactly the samples' values
    model = result["model"]
    assert model["spec"].startswith("lm-eval:hf?dtype=float32&prefix_token_id=0&pretrained=")
    assert model["lm_eval"]["version"] == "0.4.13" and model["backend"] == "hf" and model["dtype"] == "float32"
    assert model["lm_eval"]["tasks"]["contstim_pll"]["version"] == "1.1"
    assert model["model_args"]["softmax_dtype"] == "float64"
    assert model["name"] == Path(model["model_args"]["pretrained"]).name  # the folder's name, not the long spec
    _assert_same_numbers(_results(lm_eval_run), result, "import")
    (tmp_path / "board").mkdir()
    assert cli_main(["leaderboard", "validate", str(out), "--results", str(tmp_path / "board")]) == 0
    shown = capsys.readouterr()
    assert "1 valid (0 verified, 1 unverified), 0 invalid" in shown.out + shown.err
    assert cli_main(["report", str(out), "--out", str(tmp_path / "pages"), "--datasets", str(datasets)]) == 0
    pages = list((tmp_path / "pages").glob("*.html"))
    html = "".join(p.read_text() for p in pages)
    assert len(pages) == 2 and "<th>accuracy SE</th>" in html and "<th>pll SRCS SE</th>" in html
    assert "has no word pieces" not in html  # Table S2 counts the lm-eval backend's tokens


def _copy_run(run: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (results,) = copy.rglob("results_*.json")
    (samples,) = copy.rglob("samples_*.jsonl")
    return copy, results, samples


@pytest.mark.slow
def test_import_refuses_a_bad_run(lm_eval_run, datasets, tmp_path):
    from contstim_bench.harness_tasks.samples import import_run

    run, results, samples = _copy_run(lm_eval_run, tmp_path)
    lines = samples.read_text().splitlines()
    rec = json.loads(lines[3])
    rec["filtered_resps"][0][0] = "nan"
    samples.write_text("\n".join(lines[:3] + [json.dumps(rec)] + lines[4:]) + "\n")
    with pytest.raises(ValueError, match=r"line 4: log-likelihood of .* is nan, not a finite value <= 0"):
        import_run(run, datasets_dir=datasets)
    samples.write_text("\n".join(lines[:-1]) + "\n")  # one pair short
    with pytest.raises(ValueError, match=r"samples_contstim_pll_.*\.jsonl\) are incomplete: .* have no given"):
        import_run(run, datasets_dir=datasets)
    samples.unlink()
    with pytest.raises(FileNotFoundError, match="without --log_samples"):
        import_run(run, datasets_dir=datasets)
    data = json.loads(results.read_text())
    data["config"]["limit"] = 10
    results.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"limited to 10 documents per task \(--limit\)"):
        import_run(run, datasets_dir=datasets)
    data["config"]["limit"] = None
    data["config"]["model_args"]["api_key"] = "sk-live-123456secret"
    results.write_text(json.dumps(data))
    with pytest.raises(ValueError) as err:
        import_run(run, datasets_dir=datasets)
    assert "sk-live-123456secret" not in str(err.value)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="holds no lm-eval results file"):
        import_run(empty, datasets_dir=datasets)


@pytest.mark.slow
def test_simple_evaluate_gives_the_numbers_of_contstim_evaluate(tasks, datasets, tmp_path):
    """lm-eval's Python entry point on a tiny Llama (its BOS <s>, id 0, as prefix) reports what the
    driver computes for `hf-causal:<the same folder>`."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from contstim_bench.driver import RunOptions, evaluate
    from tiny_causal import save_tiny_llama

    folder = tmp_path / "tiny"
    save_tiny_llama(folder)
    # only this folder's tasks are indexed (lm-eval's 14,000 built-in ones take 12 CPU-s): the CLI run
    # (test_lm_eval_cli_gives_the_numbers_of_contstim_evaluate) indexes them beside ours
    out = simple_evaluate(model="hf", model_args=f"pretrained={folder},prefix_token_id=0,dtype=float32,"
                          "softmax_dtype=float64", tasks=["contstim_pll"], device="cpu", batch_size=32,
                          task_manager=TaskManager(include_path=str(tasks), include_defaults=False))
    ours = evaluate(f"hf-causal:{folder}", ["contstim.pll"], options=RunOptions(cache=False, progress=False),
                    datasets_dir=datasets, log=lambda msg: None)["contstim.pll"]
    reported = out["results"]["contstim_pll"]
    from contstim_bench.scoring.registry import load_scorer

    sentences = ["The cat sat on the mat.", "Colorless green ideas sleep furiously."]
    harness = load_scorer(f"lm-eval:hf?pretrained={folder}", cache=False, progress=False)
    causal = load_scorer(f"hf-causal:{folder}", cache=False, progress=False)
    assert harness.token_lengths(sentences) == causal.token_lengths(sentences)  # Table S2 of an lm-eval result
    assert reported["acc_stderr,none"] == ours["experiments"]["pll"]["all"]["accuracy_stderr"]
    _assert_same_numbers(reported, ours, "simple_evaluate")
    _assert_independent_numbers(reported, ours["logprobs"], datasets)  # the driver's aggregation, pinned
    assert np.isfinite(reported["srcs,none"])


def test_a_task_without_its_data_says_how_to_build_it(datasets):
    """The main experiment's results file is absent from the shared data: its task's documents
    cannot be read, and the error says how to build the dataset."""
    from contstim_bench.harness_tasks.hooks import docs

    with pytest.raises(FileNotFoundError, match=r"build it with `contstim data build --only contstim`"):
        docs("contstim.main", datasets)
    assert len(docs("contstim.pll", datasets)["test"]) == 132  # one document per sentence pair
