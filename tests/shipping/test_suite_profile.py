"""tests/suite_profile.py: a py-spy profile of a test run, read into CPU-seconds by kind of work and
by the command of each process the run started (a profile written here, line for line in
py-spy's raw format)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import suite_profile  # noqa: E402  (tests/suite_profile.py)

CONTROLLER = 'process 10:"python -m pytest -q -n 2"'
WORKER = 'process 11:"/v/bin/python -u -c import sys;exec(eval(sys.stdin.readline()))"'
README_EVALUATE = 'process 40:"/v/bin/python /v/bin/contstim evaluate --model smollm2-135m"'
PIP = 'process 12:"/t/venv/bin/python -m pip install -q x.whl[scoring]"'
PROFILE = "\n".join([
    f"{CONTROLLER};main (pytest/__main__.py:9) 5",
    f"{CONTROLLER};{WORKER};<module> (<string>:1);_find_and_load (<frozen importlib._bootstrap>:1176) 50",
    f"{CONTROLLER};{WORKER};test_x (test_a.py:3);LlamaModel.forward (transformers/models/llama/modeling_llama.py:394) 100",
    f"{CONTROLLER};{WORKER};test_x (test_a.py:3);savefig (matplotlib/figure.py:3490) 25",
    f"{CONTROLLER};{WORKER};{PIP};main (pip/_internal/cli/main.py:80) 75",
    # started by bash (a README block): no Python parent in the profile
    f"{README_EVALUATE};<module> (contstim:8);_find_and_load (<frozen importlib._bootstrap>:1176) 20",
    f"{README_EVALUATE};main (contstim_bench/cli.py:40);evaluate (contstim_bench/driver.py:200) 30",
    # a `python -c` program whose text holds a newline: one stack over two lines
    f'{CONTROLLER};{WORKER};process 13:"/v/bin/python -c import os',
    'print(1)";<module> (<string>:2) 10',
]) + "\n"


def test_seconds_by_kind_and_by_command(tmp_path, capsys):
    path = tmp_path / "run.prof"
    path.write_text(PROFILE, encoding="utf-8")
    assert suite_profile.main([str(path), "--rate", "25"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "13 CPU-s sampled at 25/s"  # 315 samples
    rows = {line[:32].strip(): line[32:].split() for line in out[2:8]}
    assert rows == {"imports": ["2", "1", "3"], "model forward passes": ["4", "0", "4"],
                    "loading models and tokenizers": ["0", "0", "0"], "figures (matplotlib)": ["1", "0", "1"],
                    "pip": ["0", "3", "3"], "other": ["0", "2", "2"]}
    started = out[out.index("started processes, by command (CPU-s, of which imports):") + 1:]
    assert started == ["     3.0     0.0  python -m pip install", "     2.0     0.8  contstim evaluate",
                       "     0.4     0.0  python -c"]


def test_commands_are_named_without_interpreters_and_folders():
    assert suite_profile.short_command("/v/bin/python /v/bin/contstim leaderboard build --out site") \
        == "contstim leaderboard"
    assert suite_profile.short_command("/v/bin/python -u -m contstim_bench generate synthetic") \
        == "python -m contstim_bench generate"
    assert suite_profile.short_command("/v/bin/python /tmp/x/readme0/docs_models_md_118.py") \
        == "python docs_models_md_118.py"


@pytest.mark.parametrize("text, problem", [
    ("main (pytest/__main__.py:9) 5\n", "line 1: a stack without a process frame"),
    (f"{CONTROLLER};main (x.py:1) 5\n{CONTROLLER};main (x.py:1)\n", "line 2: not 'STACK COUNT'"),
    ("\n", "no stack"),
])
def test_a_file_that_is_not_a_profile_is_named(tmp_path, text, problem):
    path = tmp_path / "run.prof"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=problem):
        suite_profile.read_profile(path)


def test_a_program_line_that_ends_in_a_number_does_not_end_its_stack(tmp_path):
    """A ``python -c`` program (tests/brainscore's BAD_SUBJECT) whose line ends in a number, ``/ 7``,
    is still one stack: the next stack begins with a process frame, not after any number."""
    program = 'process 14:"/v/bin/python -c import sys\nbits = len(sys.argv[1]) / 7\nprint(bits)"'
    path = tmp_path / "run.prof"
    path.write_text(f"{CONTROLLER};{WORKER};{program};<module> (<string>:3) 12\n"
                    f"{CONTROLLER};main (pytest/__main__.py:9) 5\n", encoding="utf-8")
    samples = suite_profile.read_profile(path)
    assert [(s.command, s.role, s.samples) for s in samples] == [("python -c", "started", 12), ("python -m pytest -q", "pytest", 5)]
