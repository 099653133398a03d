"""Every test file the documentation and the code name exists: the README, the pages under docs/,
ARCHITECTURE.md, the package's docstrings, bench/ and scripts/ point readers at tests (``tests/
scoring/test_lm_eval_family.py``, ``tests/generate/test_generate_*.py``), so a moved or renamed test
file must take its mentions with it."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MENTION = re.compile(r"\btests/[\w/*.-]*\.(?:py|txt)")


def documents() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("contstim_bench", "bench", "scripts", "leaderboard", "metrics", ".ci"):
        found += sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".sh", ".md", ""} and p.is_file())
    return [p for p in found if p.exists()]


def test_every_named_test_file_exists():
    missing = []
    for doc in documents():
        for n, line in enumerate(doc.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for mention in MENTION.findall(line):
                if not any(ROOT.glob(mention)):
                    missing.append(f"{doc.relative_to(ROOT)}:{n}: {mention}")
    assert not missing, "named test files that do not exist:\n" + "\n".join(missing)


def test_the_check_finds_the_mentions():
    """The pattern sees the forms the documents use (a path, a glob, a path with ::test)."""
    line = "see `tests/docs/test_readme.py::test_x`, tests/generate/test_generate_*.py and tests/slow_tests.txt."
    assert MENTION.findall(line) == ["tests/docs/test_readme.py", "tests/generate/test_generate_*.py",
                                     "tests/slow_tests.txt"]
    assert any(ROOT.glob("tests/generate/test_generate_*.py")) and not any(ROOT.glob("tests/test_readme.py"))
