"""What outputs may do: never overwrite an input (:func:`check_inputs_kept`), and folders that
appear whole or not at all (:func:`staged_folder`)."""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

Paths = Iterable[tuple[str, "str | os.PathLike | None"]]
"""(flag, path) pairs, e.g. ``("--output", "scores.csv")``; a None path (a flag not given) is skipped."""


def _real(path: str | os.PathLike) -> Path:
    return Path(os.path.abspath(Path(path).expanduser())).resolve()


def check_inputs_kept(writes: Paths, reads: Paths) -> None:
    """Refuse, before anything is written, an output that would overwrite an input.

    ``writes``: the files a command writes and the folders it replaces whole; ``reads``: the files
    and folders it reads.  ValueError naming both flags and paths when an existing input is one of
    the outputs (by any path: ``./x``, a symbolic or a hard link) or lies inside an output folder
    that the command replaces.  The one check of every command that reads files and writes others.
    """
    outputs = [(flag, path, Path(path).expanduser()) for flag, path in writes if path is not None]
    for in_flag, given in reads:
        if given is None or not Path(given).expanduser().exists():
            continue  # nothing there to lose; the command names a missing input itself
        source = Path(given).expanduser()
        for out_flag, written, target in outputs:
            # an output not there yet may still name the input: sub/../in.txt once sub is made
            if os.path.samefile(source, target) if target.exists() else _real(target) == _real(source):
                raise ValueError(f"{out_flag} {written} is the input {in_flag} {given}: writing it would overwrite "
                                 f"the input; nothing was written, give another {out_flag}")
            if _real(target) in _real(source).parents:
                raise ValueError(f"{out_flag} {written} would be replaced, and the input {in_flag} {given} lies "
                                 f"inside it; nothing was written, give another {out_flag} (or move the input)")


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
