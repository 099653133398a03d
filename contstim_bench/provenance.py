"""Where a result came from: package version and git commit, library versions, dataset
fingerprint, device, dtype and time.

At the bottom of the package (beside ``_version``): every benchmark stamps its result with it,
and the package face uses :func:`repo_root` to find the development checkout.  :func:`extra_for`
reads the installed package's metadata too: which extra installs a missing module (the CLI's
error line, the ``contstim models`` listing).
"""
from __future__ import annotations

import datetime as _dt
import importlib.metadata
import re
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


def extra_for(module: str) -> str | None:
    """The package extra whose requirements include the distribution named like ``module``'s
    top-level package (from the installed package's metadata; the narrowest extra, not ``all``),
    or None when no extra has it."""
    name = module.split(".")[0].lower().replace("_", "-")
    try:
        requirements = importlib.metadata.requires("contstim-bench") or []
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return None
    for requirement in requirements:
        dist = re.match(r"[A-Za-z0-9._-]+", requirement)
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", requirement)
        if dist and extra and extra.group(1) not in ("all", "dev", "test"):
            if dist.group(0).lower().replace("_", "-") == name:
                return extra.group(1)
    return None
