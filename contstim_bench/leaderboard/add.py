"""``contstim leaderboard add RESULT.json``: put a validated result into a results folder.

The file is checked by the leaderboard's validator (:func:`.validate.validate_files`: schema,
dataset fingerprint, every sentence's log-probability, every score recomputed).  A results folder
holds one file per model (:mod:`.identity`): a second result of the same model is refused, naming
the file that has it, unless ``replace`` is given, which removes that file.  The result is copied
byte for byte (written to a temporary file, then renamed) as ``<display name>.json``
(:func:`.identity.display_name` made a file name), with the first characters of the identity
added when another model's file already has that name.

An add is atomic and exclusive: the file's bytes are read once, and those bytes are what is
validated, re-scored and installed (a file replaced while its model is re-scored changes nothing);
the whole add runs under a lock on the results folder (:data:`LOCK_FILE`, ``filelock``), so two adds
of one model started together leave exactly one entry and the second is told of the first.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from .. import names
from ..results.io import MAX_BYTES
from .duplicates import entry_keys, existing_keys, folder_results, listed_names, name_clash, same_numbers
from .identity import describe_identity, display_name, identity
from .validate import RESCORE_TOLERANCE, ValidationError
from .verification import file_verifier, validate_and_rescore


LOCK_FILE = ".leaderboard.lock"
"""The lock file of a results folder (not a ``*.json``: never read as a result)."""


@dataclass(frozen=True)
class Added:
    """What :func:`add_result` did: the file written, the display name, and the file of the
    same model it replaced (None when there was none)."""

    path: Path
    name: str
    replaced: Path | None
    verification: str = "unverified: not re-scored from its model spec"


def add_result(result_file: str | os.PathLike, results_dir: str | os.PathLike, *, replace: bool = False,
               datasets_dir=None, rescore: bool = True, tolerance: float = RESCORE_TOLERANCE, options=None,
               models_folder=None, log=None) -> Added:
    """Validate ``result_file``, verify it (with ``rescore``, the default: re-scored from its spec
    under :mod:`.spec_policy`, ``models_folder`` the maintainer's local models), and copy it into
    ``results_dir`` (created if missing).

    ValidationError lists the problems of an invalid file (or one whose re-scoring disagrees);
    ValueError names the file of ``results_dir`` that already holds the same model in the same
    group (verified or unverified, :mod:`.duplicates`: an unverified file never blocks a
    verified one; with ``replace``, that file is removed instead).  Nothing in ``results_dir``
    changes when an error is raised.
    """
    source = Path(result_file)
    folder = Path(results_dir)
    if not source.is_file():
        what = "is a folder: give one of its result files" if source.is_dir() else "does not exist"
        raise FileNotFoundError(f"result file {source} {what}")
    if source.stat().st_size > MAX_BYTES:
        raise ValidationError(str(source), [f"file is {source.stat().st_size:,} bytes, more than the {MAX_BYTES:,} accepted"])
    data = source.read_bytes()  # read once: these bytes are validated, re-scored and installed
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / LOCK_FILE)), tempfile.TemporaryDirectory(dir=folder, prefix=".add-") as private:
        staged = Path(private) / source.name
        staged.write_bytes(data)
        return _install(source, staged, folder, replace=replace, datasets_dir=datasets_dir, rescore=rescore,
                        tolerance=tolerance, options=options, models_folder=models_folder, log=log)


def add_results(result_files, results_dir: str | os.PathLike, *, done=None, **options) -> list[Added | Exception]:
    """:func:`add_result` for each of ``result_files`` (``options``: its keywords), each judged on its
    own: a file that fails (ValidationError, ValueError, OSError) gives its error in its place in
    the answer and the others are still added; with one file, its error is raised.  ``done(path,
    outcome)`` is called after each file (the command prints it then, not at the end of a long
    re-scoring run).  Each add may load a model to re-score, so this loop lives here and not in
    the command (ARCHITECTURE.md: a command calls one function)."""
    files = [Path(f) for f in result_files]
    outcomes: list[Added | Exception] = []
    for path in files:
        try:
            outcome: Added | Exception = add_result(path, results_dir, **options)
        except (ValidationError, ValueError, OSError) as exc:
            if len(files) == 1:
                raise
            outcome = exc
        outcomes.append(outcome)
        if done is not None:
            done(path, outcome)
    return outcomes


def _install(source: Path, staged: Path, folder: Path, *, replace: bool, datasets_dir, rescore: bool,
             tolerance: float, options, models_folder, log) -> Added:
    """:func:`add_result` under the folder's lock, on ``staged`` (the submitted bytes)."""
    [checked] = validate_and_rescore([staged], datasets_dir=datasets_dir, rescore_models=rescore, tolerance=tolerance,
                                     options=options, log=log, models_folder=models_folder)
    if not checked.ok:
        raise ValidationError(str(source), checked.problems)
    result = checked.result
    clash = name_clash(result, listed_names(folder, [source]))
    if clash is not None:
        raise ValidationError(str(source), [clash])
    key = identity(result)
    taken = existing_keys(folder, skip=[source])
    verified_file = file_verifier(datasets_dir, tolerance, options, models_folder, log) if rescore else None
    held = [f for k in entry_keys(result) for f in taken.get(k, [])  # one file per model and benchmark, in its group
            if (bool(verified_file(f)) if verified_file else False) == checked.verified]
    if checked.verified and verified_file is not None:  # a verified file with a verified file's numbers: one model
        held += [f for f, other in folder_results(folder, [source]) if same_numbers(result, other) and verified_file(f)]
    earlier = Path(held[0]) if held else None
    if earlier is not None and not replace:
        raise ValueError(f"{folder} already has this model in {earlier} ({describe_identity(result)}); "
                         f"replace it with `contstim leaderboard add {source} --results {folder} --replace`")
    name = display_name(result)
    stem = names.slug(name, max_length=80)
    mine = {source.resolve()} | ({earlier.resolve()} if earlier is not None else set())
    target = folder / f"{stem}.json"
    for length in (8, 16, 64):  # another file (another model's, or not a result) has the name
        if not target.exists() or target.resolve() in mine:
            break
        target = folder / f"{stem}-{key[:length]}.json"
    else:
        raise ValueError(f"{folder}: no free file name for {name!r} (tried {stem}.json and identity suffixes)")
    os.replace(staged, target)  # the validated bytes, installed by one rename
    if earlier is not None and earlier.resolve() != target.resolve():
        earlier.unlink()
    return Added(target, name, earlier, checked.verification)
