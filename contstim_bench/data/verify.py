"""Verify a built dataset against its ``fingerprint.json`` every time it is loaded.

A built dataset records, per table, the sha256 of its parquet file and the digest of its decoded
content (:func:`.writer.table_digest`), and the sha256 of its card (``README.md``, which names
the files ``datasets.load_dataset`` reads).  :func:`verify_dataset` checks every one of them:

- the recorded fingerprint is the :func:`.writer.dataset_fingerprint` of the recorded table
  digests (the file is consistent with itself);
- each parquet file's bytes have the recorded sha256, or else its decoded content has the
  recorded digest (a file re-encoded with the same content, e.g. another compression, passes);
- the card has the recorded sha256 (datasets built before it was recorded skip this check);
- the folder holds nothing else (:func:`unlisted_files`): a file ``fingerprint.json`` does not
  list, e.g. a ``trials/main.parquet`` copied beside the real tables, would be read by a loader
  that opens ``<config>/<split>.parquet`` and its rows reported under the genuine fingerprint.
  Such files raise :class:`UnlistedFilesError` naming them; the way out is to move them out of
  the folder (a rebuild would delete them with it).  Names starting with a dot (``.git``,
  ``.cache``) are not looked at: no loader reads them.

Anything else raises :class:`CorruptDatasetError` naming the file and the way out (rebuild).
Checks are cheap: a file is verified once per process for each (path, modification time, size),
so loading the same dataset again costs one ``stat`` per file and a listing of its folders.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .writer import FINGERPRINT_FILE, dataset_fingerprint, parquet_table_digest, sha256_file

CARD_FILE = "README.md"
_VERIFIED: dict[str, tuple[int, int, str]] = {}
"""resolved path -> (mtime_ns, size, what it was verified against): files already verified."""


class CorruptDatasetError(ValueError):
    """A built dataset's file does not match its ``fingerprint.json`` (changed, damaged or missing)."""


class UnlistedFilesError(CorruptDatasetError):
    """A built dataset folder holds files its ``fingerprint.json`` does not list (``files``:
    paths relative to ``folder``, a folder's ending in ``/``); the dataset is not used."""

    def __init__(self, folder: Path, files: list[str]):
        self.folder = folder
        self.files = files
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        super().__init__(
            f"dataset folder {folder} holds {len(files)} file(s) that its {FINGERPRINT_FILE} does not list: "
            f"{shown}. A loader could read them as tables of the dataset under its recorded fingerprint, "
            f"so the dataset is not used; move them out of {folder} (rebuilding would delete them with the "
            f"folder)")


def unlisted_files(folder: str | os.PathLike, meta: dict) -> list[str]:
    """What a built dataset folder holds besides its ``fingerprint.json`` (``meta``), its card and
    the ``<table>.parquet`` files ``meta`` lists: sorted paths relative to ``folder``, a folder that
    holds no listed file as one entry ending in ``/``.  Names starting with a dot are skipped;
    folders are followed through symbolic links only where they hold listed files."""
    folder = Path(folder)
    listed = {FINGERPRINT_FILE, CARD_FILE} | {f"{table}.parquet" for table in meta["tables"]}
    holders = {"/".join(rel.split("/")[:i]) for rel in listed for i in range(1, rel.count("/") + 1)}
    found: list[str] = []
    todo = [""]
    while todo:
        here = todo.pop()
        with os.scandir(folder / here) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                rel = f"{here}/{entry.name}" if here else entry.name
                if entry.is_dir():
                    if rel in holders:
                        todo.append(rel)
                    else:
                        found.append(rel + "/")
                elif rel not in listed:
                    found.append(rel)
    return sorted(found)


def _rebuild_hint(folder: Path) -> str:
    return (f"rebuild it with `contstim data build --out {folder.parent} --only {folder.name}` (or delete "
            f"{folder} to have it rebuilt on first use)")


def _stat_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path.resolve()), st.st_mtime_ns, st.st_size


def verify_file(path: Path, sha256: str | None, digest: str | None, folder: Path) -> None:
    """Check one file against its recorded sha256 (or, for parquet, its content digest)."""
    if not path.is_file():
        raise CorruptDatasetError(f"dataset file {path} is missing; {_rebuild_hint(folder)}")
    key, mtime, size = _stat_key(path)
    expected = f"{sha256}:{digest}"
    if _VERIFIED.get(key) == (mtime, size, expected):
        return
    if sha256 is not None and sha256_file(path) == sha256:
        pass
    elif digest is not None and path.suffix == ".parquet" and _content_digest(path) == digest:
        pass  # re-encoded, same content
    else:
        raise CorruptDatasetError(
            f"dataset file {path} does not match {folder / FINGERPRINT_FILE}: its content changed after the "
            f"dataset was built, so results computed from it would carry the wrong fingerprint; {_rebuild_hint(folder)}"
        )
    _VERIFIED[key] = (mtime, size, expected)


def _content_digest(path: Path) -> str | None:
    try:
        return parquet_table_digest(path)
    except Exception:  # an unreadable parquet file has no content digest: it is corrupt
        return None


def read_checked_fingerprint(folder: str | os.PathLike) -> dict:
    """The ``fingerprint.json`` of a built dataset, checked to be consistent with itself."""
    folder = Path(folder)
    path = folder / FINGERPRINT_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{folder} is not a built dataset (no {FINGERPRINT_FILE})")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
        tables = meta["tables"]
        ok = isinstance(tables, dict) and meta["fingerprint"] == dataset_fingerprint(tables)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        ok = False
    if not ok:
        raise CorruptDatasetError(f"{path} is damaged or was edited (its fingerprint is not the one of its "
                                  f"tables); {_rebuild_hint(folder)}")
    return meta


def verify_dataset(folder: str | os.PathLike) -> dict:
    """Check every table and the card of a built dataset folder, and that it holds no other file
    (see the module docstring); returns its ``fingerprint.json``.  :class:`CorruptDatasetError`
    names a bad file, :class:`UnlistedFilesError` (checked first: the rebuild that mends a bad
    file would delete them) the files that do not belong."""
    folder = Path(folder)
    meta = read_checked_fingerprint(folder)
    extra = unlisted_files(folder, meta)
    if extra:
        raise UnlistedFilesError(folder, extra)
    files = meta.get("parquet_sha256") or {}
    for table, digest in meta["tables"].items():
        rel = f"{table}.parquet"
        verify_file(folder / rel, files.get(rel), digest, folder)
    if meta.get("card_sha256"):
        verify_file(folder / CARD_FILE, meta["card_sha256"], None, folder)
    return meta


def verify_parquet(path: str | os.PathLike) -> Path:
    """Check one parquet file read straight from a built dataset folder (``<dataset>/<config>/
    <split>.parquet``, e.g. a ``generate`` output); a parquet file outside such a folder (no
    ``fingerprint.json`` two levels up) is returned unchecked, since nothing records it."""
    path = Path(path)
    folder = path.parent.parent
    if not (folder / FINGERPRINT_FILE).is_file():
        return path
    meta = read_checked_fingerprint(folder)
    table = f"{path.parent.name}/{path.stem}"
    if table not in meta["tables"]:
        raise CorruptDatasetError(f"{path} is not a table of the dataset in {folder} (its {FINGERPRINT_FILE} "
                                  f"lists {', '.join(sorted(meta['tables']))})")
    verify_file(path, (meta.get("parquet_sha256") or {}).get(f"{table}.parquet"), meta["tables"][table], folder)
    return path
