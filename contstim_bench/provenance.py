"""Where a result came from: package version and git commit, library versions, dataset
fingerprint, device, dtype and time.

At the bottom of the package (beside ``_version``): every benchmark stamps its result with it,
and the package face uses :func:`repo_root` to find the development checkout.
"""
from __future__ import annotations

import datetime as _dt
import importlib.metadata
import subprocess
import sys
from pathlib import Path

from ._version import __version__


def repo_root() -> Path | None:
    """The development checkout this package lives in, or None for an installed wheel."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "setup.py").exists() else None


LIBRARIES = ("numpy", "scipy", "pandas", "pyarrow", "datasets", "evaluate", "torch", "transformers")


def git_commit() -> str | None:
    """HEAD commit of the development checkout (None for an installed package or without git)."""
    root = repo_root()
    if root is None or not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def library_versions() -> dict[str, str | None]:
    """Installed versions of Python and :data:`LIBRARIES` (None when a library is absent)."""
    versions: dict[str, str | None] = {"python": sys.version.split()[0]}
    for lib in LIBRARIES:
        try:
            versions[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            versions[lib] = None
    return versions


def provenance(dataset_fingerprint: str, device: str | None = None, dtype: str | None = None) -> dict:
    """Where a result came from: package version and git commit, library versions, dataset
    fingerprint, the device and dtype the model ran with (None when no network ran) and the
    UTC creation time."""
    return {
        "package_version": __version__,
        "git_commit": git_commit(),
        "libraries": library_versions(),
        "dataset_fingerprint": dataset_fingerprint,
        "device": device,
        "dtype": dtype,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
