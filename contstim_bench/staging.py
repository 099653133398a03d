"""What outputs may do, the one rule of every command that writes: nothing a user gave is lost.

- :func:`check_inputs_kept`: an output is never an input, never inside an input folder the
  command reads whole, and no input lies inside an output folder that is replaced;
- :func:`read_bounded`: a file read from a folder a user gave is a regular file (never a device,
  a FIFO or a link to one), read with a size bound;
- :func:`replace_folder`: a folder is written whole, beside the old one, and renamed into place,
  so a failure leaves the old one untouched; an existing folder is replaced only when the package
  wrote it (its marker, :data:`MARKER`, names the kind of folder and every file written there), and
  holds nothing else: a folder the package did not write, a folder of another kind, a file a user
  added to a package folder, the current folder or one above it are refused before anything is
  written;

Each check raises ValueError naming the flag, the path and why, so the command stops before any
work; nothing is written or deleted.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

MODEL_FLAGS = frozenset({"--model", "--models", "--candidates", "--references"})
"""Flags of model inputs: a model given as a folder (an RNN checkpoint, a converted model) is read
whole, so no output may lie inside it (:func:`check_inputs_kept`)."""

Paths = Iterable[tuple[str, "str | os.PathLike | None"]]
"""(flag, path) pairs, e.g. ``("--output", "scores.csv")``; a None path (a flag not given) is skipped."""

MARKER = ".contstim-output.json"
"""The file by which a folder says the package wrote it: ``{"written_by", "kind", "files"}``."""
MARKER_MAX_BYTES = 4 << 20


def _real(path: str | os.PathLike) -> Path:
    return Path(os.path.abspath(Path(path).expanduser())).resolve()


def check_inputs_kept(writes: Paths, reads: Paths, folders: Iterable[str] = ()) -> None:
    """Refuse, before anything is written, an output that would overwrite or delete an input.

    ``writes``: the files a command writes and the folders it replaces whole; ``reads``: the files
    and folders it reads; ``folders``: the flags of ``reads`` whose folders the command reads whole
    (a results folder it scans, a datasets folder), which no output may lie inside (a later run would
    read it as an input).  ValueError naming both flags and paths when an existing input is one of
    the outputs (by any path: ``./x``, a symbolic or a hard link), lies inside an output folder, or
    is such a folder an output lies inside.  The one check of every command that reads files and
    writes others.
    """
    folders = set(folders) | MODEL_FLAGS
    outputs = [(flag, path, Path(path).expanduser()) for flag, path in writes if path is not None]
    present = [(flag, given, Path(given).expanduser()) for flag, given in reads
               if given is not None and Path(given).expanduser().exists()]  # a missing input: named by the command
    for in_flag, given, source in present:
        for out_flag, written, target in outputs:
            # an output not there yet may still name the input: sub/../in.txt once sub is made
            if os.path.samefile(source, target) if target.exists() else _real(target) == _real(source):
                raise ValueError(f"{out_flag} {written} is the input {in_flag} {given}: writing it would overwrite "
                                 f"the input; nothing was written, give another {out_flag}")
            if _real(target) in _real(source).parents:
                raise ValueError(f"{out_flag} {written} would be replaced, and the input {in_flag} {given} lies "
                                 f"inside it; nothing was written, give another {out_flag} (or move the input)")
    for in_flag, given, source in present:
        if in_flag not in folders or not source.is_dir():
            continue
        for out_flag, written, target in outputs:
            if _real(source) in _real(target).parents:
                raise ValueError(f"{out_flag} {written} lies inside the input folder {in_flag} {given}, which the "
                                 f"command reads whole; nothing was written, give another {out_flag}")


def regular_file(path: str | os.PathLike, max_bytes: int, what: str = "file") -> Path:
    """``path`` when it is a regular file (a link is followed) of at most ``max_bytes``; ValueError
    naming it otherwise (a device such as /dev/zero, a FIFO, a folder, a file too large), so that
    reading it can neither hang nor exhaust memory; FileNotFoundError when it does not exist."""
    import stat

    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {path} does not exist") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file"
        raise ValueError(f"{what} {path} is {kind}, not a regular file; it is not read")
    if st.st_size > max_bytes:
        raise ValueError(f"{what} {path} is {st.st_size:,} bytes, more than the {max_bytes:,} accepted; it is not read")
    return path


def read_bounded(path: str | os.PathLike, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of a :func:`regular_file`, never more than ``max_bytes`` (a file that grows while it
    is read is refused too)."""
    path = regular_file(path, max_bytes, what)
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"{what} {path} grew past the {max_bytes:,} bytes accepted while it was read")
    return data


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def _folders(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_dir() and not p.is_symlink())


def sha256_file(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes (read in 1 MiB chunks): the one file digest of the package."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _written(folder: Path) -> dict[str, str]:
    """Every file of a folder being written, with its sha256 (what the marker records)."""
    return {rel: sha256_file(folder / rel) for rel in _files(folder)}


def _tolerated(rel: str) -> bool:
    """Files Python itself leaves beside a module the package wrote (lm-eval imports a task folder's
    utils.py): compiled bytecode only."""
    parts = rel.split("/")
    return len(parts) >= 2 and parts[-2] == "__pycache__" and parts[-1].endswith(".pyc")


def read_marker(folder: str | os.PathLike) -> dict | None:
    """The marker of a folder the package wrote (None without one; ValueError for a marker that is
    not one: not a regular file, too large, not the package's JSON)."""
    path = Path(folder) / MARKER
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MARKER_MAX_BYTES:
        raise ValueError(f"{path} is not a marker the package writes (a regular file under "
                         f"{MARKER_MAX_BYTES >> 20} MiB)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"{path} is not a marker the package writes (not its JSON)") from None
    if not (isinstance(data, dict) and data.get("written_by") == "contstim-bench" and isinstance(data.get("kind"), str)
            and isinstance(data.get("files"), (dict, list))
            and all(isinstance(f, str) for f in data["files"])
            and (isinstance(data["files"], list) or all(isinstance(h, str) for h in data["files"].values()))):
        raise ValueError(f"{path} is not a marker the package writes")
    return data


Legacy = Callable[[Path], "Iterable[str] | None"]
"""How a folder written before the marker existed is recognised: the files the package wrote
there (paths relative to the folder), or None when the folder is not one of its kind.  Only kinds
whose files are known exactly have one (a dataset lists its files in ``fingerprint.json``)."""


def legacy_files(*names: str, contains: tuple[str, str] | None = None,
                 written: Callable[[Path], Iterable[str]] | None = None) -> Legacy:
    """A :data:`Legacy` test: the folder holds every file of ``names`` (and ``contains`` = (file,
    text): that file, read up to 1 MiB, holds the text); the package's files are ``written(folder)``
    (default: ``names``)."""
    def recognise(folder: Path):
        if not all((folder / n).is_file() and not (folder / n).is_symlink() for n in names):
            return None
        if contains is not None:
            path = folder / contains[0]
            if not path.is_file() or path.is_symlink():
                return None
            with open(path, "rb") as fh:
                if contains[1].encode() not in fh.read(1 << 20):
                    return None
        return list(written(folder)) if written is not None else list(names)
    return recognise


def check_replaceable(final: str | os.PathLike, *, kind: str, flag: str = "--out",
                      legacy: Legacy | None = None, owned: bool = False) -> None:
    """Refuse (ValueError naming ``flag``) to replace ``final`` unless it is absent, empty, or a
    folder of ``kind`` the package wrote that holds only the files it wrote (see the module
    docstring).  ``legacy``: how a folder of ``kind`` written before markers existed is recognised,
    and which of its files the package wrote (:func:`legacy_files`); it too is replaced only when it
    holds nothing else.  ``owned``: ``final`` lies in the package's own cache (a converted model):
    whatever is there is the package's, a leftover of an interrupted run."""
    path = Path(final).expanduser()
    real = _real(path)
    here = _real(Path.cwd())
    if real == here or real in here.parents:
        raise ValueError(f"{flag} {final} is the current folder or one above it: it cannot be replaced while it holds "
                         f"the command's own working folder; nothing was written, give a new folder for {flag}")
    if path.is_symlink():
        raise ValueError(f"{flag} {final} is a symbolic link; give the folder itself (nothing was written)")
    if not path.exists():
        return
    if not path.is_dir():
        raise ValueError(f"{flag} {final} is a file, not a folder; nothing was written, give a folder for {flag}")
    if owned or not any(path.iterdir()):
        return
    marker = read_marker(path)
    hashes: dict[str, str] | None = None
    if marker is None:
        known = legacy(path) if legacy is not None else None
        if known is None:
            raise ValueError(f"{flag} {final} already holds files the package did not write (no {MARKER}, or written "
                             f"by an earlier version): it is never replaced; nothing was written, give a new or empty "
                             f"folder for {flag} (or remove this one yourself)")
        written = set(known)
    else:
        if marker["kind"] != kind:
            raise ValueError(f"{flag} {final} holds a {marker['kind']} the package wrote, not a {kind}: it is not "
                             f"replaced by one; nothing was written, give another folder for {flag}")
        # the first markers listed names only; each file's sha256 is checked where the marker has it
        hashes = marker["files"] if isinstance(marker["files"], dict) else None
        written = set(marker["files"])
    files = _files(path)
    extra = sorted(f for f in set(files) - written - {MARKER} if not _tolerated(f))
    holders = {"/".join(rel.split("/")[:i]) for rel in written for i in range(1, rel.count("/") + 1)}
    extra += sorted(f"{d}/" for d in _folders(path) if d not in holders and d.rsplit("/", 1)[-1] != "__pycache__")
    if hashes is not None:
        extra += sorted(f"{f} (changed since it was written)" for f in files
                        if f in hashes and not (path / f).is_symlink() and sha256_file(path / f) != hashes[f])
    if extra:
        listed = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        raise ValueError(f"{flag} {final} holds what the package did not write there ({listed}); it would be lost with "
                         f"the folder, so it is not replaced and nothing was written: move it, or give another folder "
                         f"for {flag}")


@contextmanager
def replace_folder(final: str | os.PathLike, *, kind: str, flag: str = "--out", mode: int | None = 0o755,
                   legacy: Legacy | None = None, owned: bool = False) -> Iterator[Path]:
    """A new temporary folder beside ``final`` to write into; when the block ends without an
    error it gets the marker of ``kind`` (with every file written) and takes ``final``'s place by
    renaming (the old folder is renamed aside first and removed only once the new one is in
    place); otherwise it is removed and ``final`` is untouched.  :func:`check_replaceable` runs
    first.  ``mode``: permissions of the new folder."""
    check_replaceable(final, kind=kind, flag=flag, legacy=legacy, owned=owned)
    final = Path(os.path.abspath(Path(final).expanduser()))  # SITE/models/.. is SITE: written beside SITE
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}-new-", dir=final.parent))
    aside: Path | None = None
    if mode is not None:
        os.chmod(tmp, mode)
    try:
        yield tmp
        (tmp / MARKER).write_text(json.dumps({"written_by": "contstim-bench", "kind": kind, "files": _written(tmp)},
                                             indent=1) + "\n", encoding="utf-8")
        check_replaceable(final, kind=kind, flag=flag, legacy=legacy, owned=owned)  # nothing changed meanwhile
        if final.exists():
            aside = Path(tempfile.mkdtemp(prefix=f".{final.name}-old-", dir=final.parent))
            os.replace(final, aside / "old")
        os.replace(tmp, final)
    except BaseException:
        if aside is not None and (aside / "old").exists() and not final.exists():
            os.replace(aside / "old", final)  # put the old folder back
        raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


