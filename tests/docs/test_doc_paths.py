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


DOTTED = re.compile(r"\bcontstim_bench(?:\.\w+)+")


def resolves(dotted: str) -> bool:
    """Whether ``contstim_bench.a.b.name`` names a module or an attribute of one."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_every_named_python_object_exists():
    """A dotted name in the README, docs/ or ARCHITECTURE.md (``contstim_bench.generate.
    triplet_table.read_triplets``) is importable: a function moved to another module takes its
    mentions with it (docs/generation.md once named ``generate.synthetic.read_triplets``)."""
    missing = []
    for doc in [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for dotted in DOTTED.findall(line):
                if not resolves(dotted.rstrip(".")):
                    missing.append(f"{doc.relative_to(ROOT)}:{n}: {dotted}")
    assert not missing, "named Python objects that do not exist:\n" + "\n".join(missing)
    assert not resolves("contstim_bench.generate.synthetic.read_triplets")
    assert resolves("contstim_bench.generate.triplet_table.read_triplets")
