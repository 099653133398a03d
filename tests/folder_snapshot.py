"""Snapshots of a folder and the check that a refused command changed nothing in it: a test helper
on ``sys.path`` (tests/robustness)."""
from __future__ import annotations

from pathlib import Path

from contstim_bench.cli import main as cli_main


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a folder)."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def refused(capsys, argv: list[str], folder: Path, *named: str) -> str:
    """Run ``argv``; assert it failed, changed nothing under ``folder`` and named ``named``."""
    before = snapshot(folder)
    assert cli_main(argv) == 1
    err = capsys.readouterr().err
    assert snapshot(folder) == before, "something under the folder changed"
    for text in named:
        assert text in err, err
    return err
