"""Progress output: plain lines without carriage returns or escape sequences when stderr is not a
terminal (a log, a pipe, CI), tqdm bars on a terminal, and the libraries' bars turned off in a log."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time

import pytest

from contstim_bench import progress

CONTROL = re.compile(r"[\r\x1b]")


def _nested(out: io.StringIO, every: float) -> None:
    outer = progress.PlainProgress(total=3, desc="jobs", unit="job", out=out, every=every)
    for _ in range(3):
        for _ in progress.PlainProgress(range(4), desc="inner", unit="sent", leave=False, out=out, every=every):
            time.sleep(0.01)
        outer.update(1)
        outer.set_postfix(running=0, refresh=False)
        outer.refresh()
    outer.close()


def test_plain_lines_have_no_control_characters():
    out = io.StringIO()
    _nested(out, every=0.0)
    text = out.getvalue()
    assert not CONTROL.search(text)
    lines = text.splitlines()
    assert lines[-1].startswith("jobs: 3/3 job (100%), ") and lines[-1].endswith("running=0")
    assert "inner: 4/4 sent (100%)" in text
    assert all(re.fullmatch(r"(jobs|inner): \d+/\d+ (job|sent) \(\d+%\), .*", line) for line in lines), lines


def test_plain_lines_are_periodic():
    out = io.StringIO()
    _nested(out, every=60.0)  # the whole loop is shorter than the interval: nothing at all
    assert out.getvalue() == ""
    out = io.StringIO()
    bar = progress.PlainProgress(total=100, desc="slow", unit="sent", out=out, every=0.05)
    for _ in range(10):
        time.sleep(0.02)
        bar.update(10)
    bar.close()
    lines = out.getvalue().splitlines()
    assert 2 <= len(lines) <= 6, lines  # about one line per 0.05 s over 0.2 s, and the last one
    assert lines[-1].startswith("slow: 100/100 sent (100%)")


def test_progress_bar_picks_plain_or_tqdm(monkeypatch):
    from tqdm.auto import tqdm as auto_tqdm

    monkeypatch.setattr(progress, "interactive", lambda stream=None: False)
    assert isinstance(progress.progress_bar(total=1, desc="x"), progress.PlainProgress)
    monkeypatch.setattr(progress, "interactive", lambda stream=None: True)
    bar = progress.progress_bar(total=1, desc="x", file=io.StringIO())
    assert isinstance(bar, auto_tqdm) and not isinstance(bar, progress.PlainProgress)
    bar.close()
    silent = progress.progress_bar(range(3), desc="x", disable=True)
    assert list(silent) == [0, 1, 2]


def test_interval_from_the_environment(monkeypatch):
    monkeypatch.setenv(progress.ENV_INTERVAL, "2.5")
    assert progress.interval() == 2.5
    monkeypatch.setenv(progress.ENV_INTERVAL, "soon")
    with pytest.raises(ValueError, match="CONTSTIM_PROGRESS_INTERVAL must be a number of seconds, got 'soon'"):
        progress.interval()


def test_interactive_detection():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert progress.interactive(Tty()) is True
    assert progress.interactive(io.StringIO()) is ("ipykernel" in sys.modules)


def test_scorer_progress_in_a_log_is_plain(tmp_path):
    """A real scorer's bar and the libraries' bars, in a process whose stderr is a file."""
    script = (
        "import sys\n"
        "from contstim_bench.cli import main\n"
        "sys.exit(main(['train', 'ngram', '--order', '2', '--corpus', sys.argv[1], '--output', sys.argv[2], "
        "'--backend', 'python', '--discount-fallback']) or main(['score', '--model', 'kenlm:' + sys.argv[2], '--input', sys.argv[1], "
        "'--output', sys.argv[3], '--no-cache']))\n"
    )
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"the cat number {i} sat on the mat\n" for i in range(3000)), encoding="utf-8")
    env = {**os.environ, progress.ENV_INTERVAL: "0"}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    with open(tmp_path / "stderr.txt", "w") as err:
        proc = subprocess.run([sys.executable, "-c", script, str(corpus), str(tmp_path / "m.arpa"),
                               str(tmp_path / "s.csv")], stdout=subprocess.PIPE, stderr=err, env=env, timeout=300)
    text = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert proc.returncode == 0, text
    assert "kenlm m.arpa: 3000/3000 sent (100%)" in text  # the scorer's bar, as plain lines
    assert not CONTROL.search(text), repr(text[:500])


def test_quiet_library_bars(monkeypatch):
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    progress.quiet_library_bars(io.StringIO())
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    from huggingface_hub.utils import are_progress_bars_disabled

    assert are_progress_bars_disabled()


def test_library_bars_are_routed_through_the_helper(monkeypatch):
    """A library's own ``tqdm`` (transformers' GGUF loader has one) draws plain lines in a log."""
    import types

    from tqdm import tqdm as real_tqdm

    lib = types.ModuleType("fake_library_with_bars")
    lib.tqdm = real_tqdm
    monkeypatch.setitem(sys.modules, lib.__name__, lib)
    monkeypatch.setattr(progress, "interactive", lambda stream=None: False)
    monkeypatch.setenv(progress.ENV_INTERVAL, "0")
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with progress.library_bars(lib.__name__):
        bar = lib.tqdm(range(3), desc="Converting")
        assert isinstance(bar, progress.PlainProgress) and list(bar) == [0, 1, 2]
    assert lib.tqdm is real_tqdm
    assert "Converting: 3/3 it (100%)" in err.getvalue() and not CONTROL.search(err.getvalue())
    with progress.library_bars(lib.__name__, enabled=False):
        assert list(lib.tqdm(range(2), desc="silent")) == [0, 1]
    assert "silent" not in err.getvalue()
    with progress.library_bars("no_such_module_for_bars"):
        pass
