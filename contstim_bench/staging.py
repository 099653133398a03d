"""Folders that appear whole or not at all: :func:`staged_folder`."""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged_folder(final: str | os.PathLike, *, prefix: str, mode: int | None = None) -> Iterator[Path]:
    """A new temporary folder beside ``final`` to write into; when the block ends without an
    error it replaces ``final`` (a folder left there before is removed first) by one rename, and
    otherwise it is removed, so a reader never sees half a folder.  ``mode``: permissions of the
    new folder (``tempfile.mkdtemp`` makes it private, 0o700)."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent))
    if mode is not None:
        os.chmod(tmp, mode)
    try:
        yield tmp
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
