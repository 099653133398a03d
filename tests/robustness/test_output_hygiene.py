"""What a new user's first commands leave behind: every default output folder of the commands of the
README and the docs/ pages is ignored by git, and the set-up script filters setuptools' editable-install banner."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from contstim_bench.results import default_output, default_plots_dir

ROOT = Path(__file__).resolve().parents[2]


def _ignored(path: str) -> bool:
    return subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index", path]).returncode == 0


@pytest.fixture(scope="module")
def git_checkout():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    return ROOT


def test_default_outputs_are_ignored(git_checkout):
    result = default_output("smollm2-135m")
    assert str(result) == "results/smollm2-135m.json"
    paths = [str(result), str(default_plots_dir(result) / "pll_accuracy.png"), "results/roberta/contstim.pll.json"]
    # the output folders and files of every command line of the README and the docs/ pages
    readme = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    shown = re.findall(r"--(?:output|out|plots) ([\w./-]+)", readme)
    assert len(shown) > 15
    for target in shown:  # folders, and files inside folders (a file name at the top is the user's choice)
        target = target.rstrip("/.`")
        if target in {"DIR", "SITE", "FILE"} or ("/" not in target and "." in target):
            continue
        paths.append(f"{target}/x.json" if "." not in Path(target).name else target)
    not_ignored = [p for p in paths if not _ignored(p)]
    assert not_ignored == []
    assert not _ignored("leaderboard/results/bert.json") and not _ignored("contstim_bench/results/io.py")


def test_setup_filters_the_editable_install_banner():
    text = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if re.search(r"pip_ install .*-e ", ln))
    assert 'PYTHONWARNINGS="ignore:Editable installation"' in line
