"""One set of options and one output convention on every door.

Every command that runs a model takes the model options of
:class:`contstim_bench.driver.RunOptions` (``--device --dtype --threads --batch-size
--max-tokens-per-batch``); ``--output X.json`` writes one file on every command that writes a
result, and ``contstim leaderboard add`` takes what ``contstim evaluate`` writes.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from contstim_bench.cli import build_parser
from contstim_bench.cli import main as cli_main
from contstim_bench.commands._common import RUN_FLAGS

RUNS_A_MODEL = [
    ("evaluate",), ("score",), ("blimp",), ("plausibility",), ("compare",),
    ("generate", "synthetic"), ("generate", "natural"), ("generate", "design"), ("generate", "pool"),
    ("experiment", "simulate"), ("round", "plan"),
    ("leaderboard", "validate"), ("leaderboard", "build"), ("leaderboard", "push"), ("report",),
]
"""Every command that loads and runs a model (the leaderboard's to re-score submissions)."""


def _subparser(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


@pytest.mark.parametrize("path", RUNS_A_MODEL, ids=" ".join)
def test_every_command_that_runs_a_model_takes_the_same_options(path):
    flags = {s for a in _subparser(path)._actions for s in a.option_strings}
    missing = [f for f in RUN_FLAGS if f not in flags]
    assert not missing, f"contstim {' '.join(path)} lacks {missing}"


def test_no_other_command_runs_a_model():
    """A command with --model or --models runs a model: it is listed above (a new one must take
    the options too)."""
    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for name, sub in top.choices.items():
        subs = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        leaves = [((name, n), p) for n, p in subs[0].choices.items()] if subs else [((name,), sub)]
        for path, p in leaves:
            if {s for a in p._actions for s in a.option_strings} & {"--model", "--models", "--candidates"}:
                found.append(path)
    assert set(found) <= set(RUNS_A_MODEL), sorted(set(found) - set(RUNS_A_MODEL))


@pytest.fixture(scope="module")
def trigram(kn_trigram):
    """A Kneser-Ney trigram spec (conftest's ``kn_trigram``): a model that scores any sentence."""
    return f"kenlm:{kn_trigram}"


def _one_file(path: Path, fmt: str) -> dict:
    assert path.is_file(), f"{path} is not one file"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data.get("format", fmt) == fmt
    return data


def test_output_json_is_one_file_on_every_command(tmp_path, datasets, trigram, capsys):
    common = ["--datasets", str(datasets), "--threads", "1"]
    ev = tmp_path / "evaluate.json"
    assert cli_main(["evaluate", "--model", "precomputed:roberta", "--experiment", "pll", "--output", str(ev),
                     "--no-plots", *common]) == 0
    _one_file(ev, "contstim-bench-result")
    bench = tmp_path / "bench.json"
    assert cli_main(["evaluate", "--model", "precomputed:roberta", "--benchmark", "contstim.pll",
                     "--output", str(bench), *common]) == 0
    assert _one_file(bench, "contstim-bench-result")["benchmark"]["identifier"] == "contstim.pll"
    blimp = tmp_path / "blimp.json"
    assert cli_main(["blimp", "--model", trigram, "--paradigms", "adjunct_island", "--limit", "2",
                     "--output", str(blimp), "--quiet", *common]) == 0
    _one_file(blimp, "contstim-bench-blimp")
    plaus = tmp_path / "plausibility.json"
    assert cli_main(["plausibility", "--model", trigram, "--limit", "2", "--output", str(plaus), "--quiet",
                     *common]) == 0
    _one_file(plaus, "contstim-bench-plausibility")
    comp = tmp_path / "compare.json"
    assert cli_main(["compare", "--models", "precomputed:roberta,precomputed:bert", "--output", str(comp),
                     "--quiet", *common]) == 0
    assert set(_one_file(comp, "contstim-bench-comparison")["models"]) == {"roberta", "bert"}
    # several results for one file: refused before any model runs, naming the way out
    assert cli_main(["evaluate", "--model", "precomputed:roberta", "--benchmark", "contstim.pll",
                     "--benchmark", "blimp", "--output", str(tmp_path / "two.json"), *common]) == 1
    assert "this run writes 2 results: give a folder instead" in capsys.readouterr().err
    assert not (tmp_path / "two.json").exists()
    # without .json: a folder of <identifier>.json
    assert cli_main(["evaluate", "--model", "precomputed:roberta", "--benchmark", "contstim.pll",
                     "--output", str(tmp_path / "folder"), *common]) == 0
    assert [p.name for p in (tmp_path / "folder").iterdir()] == ["contstim.pll.json"]
    # the leaderboard takes what evaluate writes, either way it was asked for
    for i, result in enumerate((ev, bench)):
        board = tmp_path / f"board{i}"
        assert cli_main(["leaderboard", "add", str(result), "--results", str(board), "--datasets", str(datasets)]) == 0
        assert [p.name for p in board.glob("*.json")] == ["roberta.json"]


@pytest.mark.parametrize("path", RUNS_A_MODEL, ids=" ".join)
def test_threads_are_bounded_on_every_command(path):
    """``--threads`` takes 1 to 4 per CPU on every command that runs a model, refused while parsing."""
    from contstim_bench.scoring.parallel import max_threads

    [action] = [a for a in _subparser(path)._actions if "--threads" in a.option_strings]
    assert action.type("1") == 1 and action.type(str(max_threads())) == max_threads()
    for bad in ("0", str(max_threads() + 1), "100000", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            action.type(bad)


def test_huge_thread_count_is_refused_naming_it(tmp_path, trigram, capsys):
    """``--threads 100000`` once ran, started 100000 torch threads and ended in "the kenlm Python
    module is required"; it is an argument error naming the value, and nothing is written."""
    sentences = tmp_path / "s.txt"
    sentences.write_text("The cat sat.\n", encoding="utf-8")
    out = tmp_path / "scores.csv"
    with pytest.raises(SystemExit) as exc:
        cli_main(["score", "--model", trigram, "--input", str(sentences), "--output", str(out), "--threads", "100000"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --threads: threads 100000 is more than" in err and "kenlm" not in err
    assert not out.exists()
    from contstim_bench.driver import set_threads
    from contstim_bench.scoring.parallel import max_threads

    with pytest.raises(ValueError, match=f"threads {max_threads() + 1} is more than {max_threads()}"):
        set_threads(max_threads() + 1)  # the Python doors: the same bound
