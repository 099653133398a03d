"""Locate and verify the raw source files of the benchmark.

Every raw file is listed in the package's ``manifest.tsv`` (a copy of the data folder's
``MANIFEST.tsv``): its path in the data folder, the upstream repository, the pinned commit, the
path there, the git blob SHA-1 and the size.  A file is resolved, in order, from

1. an explicit ``source`` directory (``--source`` on the command line) or ``$CONTSTIM_RAW_DATA`` (former name ``$CONTSTIM_DATA_DIR``);
2. a ``shared/data`` folder next to a development checkout (``../shared/data``);
3. the user cache (``$CONTSTIM_CACHE``, default ``~/.cache/contstim_bench/raw``);
4. a download from GitHub at the pinned commit into the user cache.

Whatever the origin, the bytes are verified against the manifest's git blob SHA-1 before use;
a mismatch raises :class:`CorruptSourceError` naming the file.
"""
from __future__ import annotations

import csv
import hashlib
import os
import re
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MANIFEST_PATH = Path(__file__).with_name("manifest.tsv")
ENV_RAW_DATA = "CONTSTIM_RAW_DATA"
"""The folder of raw source files (the contstimlang files, BLiMP, ...); distinct from
``$CONTSTIM_DATASETS``, the folder of built datasets."""
ENV_RAW_DATA_FORMER = "CONTSTIM_DATA_DIR"
"""The former name of :data:`ENV_RAW_DATA`, still read when the new one is not set."""
ENV_CACHE = "CONTSTIM_CACHE"
ENV_OFFLINE = "CONTSTIM_OFFLINE"
ENV_DOWNLOAD_BASE = "CONTSTIM_DOWNLOAD_BASE"
"""Where raw files are downloaded from: a base URL under which a file lies at
``<base>/<owner>/<repo>/<commit>/<path>`` (default :data:`DEFAULT_DOWNLOAD_BASE`; a mirror, or a
local server in the tests).  Whatever the base, the bytes are verified by git blob SHA-1."""
DEFAULT_DOWNLOAD_BASE = "https://raw.githubusercontent.com"


def download_base() -> str:
    """The base URL of downloads (``$CONTSTIM_DOWNLOAD_BASE`` or GitHub's raw files), without a
    trailing ``/``; ValueError names a value that is not an http(s) URL."""
    base = (os.environ.get(ENV_DOWNLOAD_BASE) or DEFAULT_DOWNLOAD_BASE).rstrip("/")
    if not re.match(r"^https?://[^/\s]+", base):
        raise ValueError(f"${ENV_DOWNLOAD_BASE} must be an http(s) URL, got {base!r}")
    return base


class SourceError(FileNotFoundError):
    """A raw source file could not be found or fetched."""


class CorruptSourceError(ValueError):
    """A raw source file is present but its content does not match the manifest."""


@dataclass(frozen=True)
class SourceFile:
    """One row of the manifest."""

    path: str  # path relative to the data folder, e.g. "contstimlang/resources/preps.pkl"
    repo: str  # upstream GitHub repository "owner/name"
    commit: str  # pinned commit
    upstream_path: str  # path inside the upstream repository
    blob_sha1: str  # git blob SHA-1 of the file's bytes
    size: int | None  # bytes, None when unknown
    license: str
    present_in_shared: bool  # False for the rows marked ABSENT in the shared data folder
    upstream_blob_sha1: str = ""  # blob SHA-1 at the pinned URL when the shared copy was modified

    @property
    def accepted_blobs(self) -> frozenset[str]:
        """Blob SHA-1s a valid copy may have: the shared copy's and, if modified, the upstream one."""
        return frozenset(b for b in (self.blob_sha1, self.upstream_blob_sha1) if b)

    @property
    def url_blob_sha1(self) -> str:
        """Blob SHA-1 of the file served at :attr:`url` (the upstream original)."""
        return self.upstream_blob_sha1 or self.blob_sha1

    @property
    def url(self) -> str:
        """Raw download URL at the pinned commit (under :func:`download_base`)."""
        return f"{download_base()}/{self.repo}/{self.commit}/{self.upstream_path}"


def _local_path_for_absent(repo: str, upstream_path: str) -> str:
    """Data-folder path an ABSENT row would have (mirrors the folder naming of present rows)."""
    top = {
        "dpmlab/contstimlang": "contstimlang",
        "carina-kauf/llm-plaus-prob": "llm-plaus-prob",
        "alexwarstadt/blimp": "blimp",
        "carina-kauf/better-mlm-scoring": "better-mlm-scoring",
    }.get(repo, repo.split("/")[-1])
    return f"{top}/{upstream_path}"


_BLOB = re.compile(r"^blob=([0-9a-f]{40})\b")
_UPSTREAM_BLOB = re.compile(r"upstream blob ([0-9a-f]{40})\b")


def _parse_blob(field: str) -> tuple[str, str]:
    """``(blob, upstream blob or "")`` from a manifest blob field.

    The field is ``blob=<sha1>``, optionally followed by a note such as
    ``(modified: ...; upstream blob <sha1>)`` for files changed in the shared copy.
    """
    m = _BLOB.match(field.strip())
    if not m:
        raise ValueError(f"manifest {MANIFEST_PATH}: malformed blob field {field!r}")
    up = _UPSTREAM_BLOB.search(field)
    return m.group(1), (up.group(1) if up else "")


@lru_cache(maxsize=1)
def manifest() -> dict[str, SourceFile]:
    """The manifest as ``{data-folder path: SourceFile}`` (ABSENT rows included)."""
    rows: dict[str, SourceFile] = {}
    with MANIFEST_PATH.open(encoding="utf-8", newline="") as fh:
        for rec in csv.reader(fh, delimiter="\t"):
            if not rec or rec[0].startswith("#") or len(rec) < 7:
                continue
            path, repo, commit, upstream_path, blob, size, lic = rec[:7]
            present = path != "ABSENT"
            if not present:
                path = _local_path_for_absent(repo, upstream_path)
            blob_sha1, upstream_blob = _parse_blob(blob)
            rows[path] = SourceFile(
                path=path,
                repo=repo,
                commit=commit,
                upstream_path=upstream_path,
                blob_sha1=blob_sha1,
                size=int(size) if size.isdigit() else None,
                license=lic,
                present_in_shared=present,
                upstream_blob_sha1=upstream_blob,
            )
    return rows


def git_blob_sha1(path: Path) -> str:
    """Git blob SHA-1 of a file: sha1(b"blob <size>\\0" + content)."""
    size = path.stat().st_size
    h = hashlib.sha1(f"blob {size}\0".encode())
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def default_cache_dir() -> Path:
    return Path(os.environ.get(ENV_CACHE, Path.home() / ".cache" / "contstim_bench" / "raw"))


def development_data_dir() -> Path | None:
    """``../shared/data`` next to a development checkout, if there is one."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent.parent / "shared" / "data"
        if (parent / "setup.py").exists() and cand.is_dir():
            return cand
    return None


def local_data_dir(source: str | os.PathLike | None = None) -> Path | None:
    """The local data folder raw files are read from before the user cache: ``source`` (an
    explicit ``--source``), else ``$CONTSTIM_RAW_DATA`` (or ``$CONTSTIM_DATA_DIR``), else ``../shared/data`` next to a
    development checkout; None when there is none.  (Tests find the data with this too.)"""
    if source is not None:
        return Path(source)
    for env in (ENV_RAW_DATA, ENV_RAW_DATA_FORMER):
        if os.environ.get(env):
            return Path(os.environ[env])
    return development_data_dir()


def search_dirs(source: str | os.PathLike | None = None) -> list[Path]:
    """Directories searched for raw files, in priority order: :func:`local_data_dir`, then the
    user cache."""
    local = local_data_dir(source)
    return ([local] if local is not None else []) + [default_cache_dir()]


def entry(rel_path: str) -> SourceFile:
    """The manifest row for a data-folder path; KeyError names unknown paths."""
    try:
        return manifest()[rel_path]
    except KeyError:
        raise KeyError(f"{rel_path!r} is not a file of the benchmark's source manifest") from None


def verify(path: Path, src: SourceFile) -> Path:
    """Check ``path`` against the manifest's blob SHA-1; raise CorruptSourceError if it differs."""
    got = git_blob_sha1(path)
    if got not in src.accepted_blobs:
        expected = " or ".join(sorted(src.accepted_blobs))
        raise CorruptSourceError(
            f"raw file {path} is corrupt: git blob SHA-1 {got} != expected {expected} "
            f"(upstream {src.repo}@{src.commit[:10]}:{src.upstream_path}). Replace it with the "
            f"original from {src.url}"
        )
    return path


def _download(src: SourceFile, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(src.url, timeout=60) as resp:
            shutil.copyfileobj(resp, out)
        got = git_blob_sha1(Path(tmp))
        if got not in src.accepted_blobs:
            raise CorruptSourceError(
                f"raw file {src.path!r} downloaded from {src.url} is corrupt: git blob SHA-1 {got} != expected "
                f"{' or '.join(sorted(src.accepted_blobs))}; it was not kept")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def resolve(
    rel_path: str,
    source: str | os.PathLike | None = None,
    download: bool | None = None,
) -> Path:
    """Path of a verified raw file, downloading it into the cache when allowed.

    ``download`` defaults to True unless ``$CONTSTIM_OFFLINE`` is set.  Raises
    :class:`SourceError` naming the file, where it was looked for, its URL and blob SHA-1 when
    it cannot be found, and :class:`CorruptSourceError` when its bytes do not match.
    """
    src = entry(rel_path)
    dirs = search_dirs(source)
    for d in dirs:
        cand = d / rel_path
        if cand.is_file():
            return verify(cand, src)
    if download is None:
        download = not os.environ.get(ENV_OFFLINE)
    errors = ""
    if download:
        try:
            return _download(src, default_cache_dir() / rel_path)
        except CorruptSourceError:
            raise
        except Exception as exc:  # network errors of every kind
            errors = f" Download failed: {type(exc).__name__}: {exc}."
    raise SourceError(
        f"raw file {rel_path!r} not found (looked in: {', '.join(str(d) for d in dirs)}).{errors} "
        f"Get it from {src.url} (git blob SHA-1 {src.url_blob_sha1}) and put it at "
        f"<data dir>/{rel_path}, the data dir being ${ENV_RAW_DATA} (or DIR of `contstim data build --source DIR`)."
    )


def fetch_all(out: str | os.PathLike, progress: bool = True) -> tuple[int, int]:
    """Download every raw file the shared data folder holds (the manifest's rows not marked ABSENT:
    the files absent there stay absent, so the tests see the same data) into ``out``, each verified
    by its git blob SHA-1 before it is moved into place; a file already in ``out`` and verified is
    kept.  Returns ``(downloaded, kept)``.  :class:`CorruptSourceError` names a file whose bytes do
    not match (nothing of it is written); :class:`SourceError` one that cannot be fetched, with the
    URL tried."""
    from ..progress import progress_bar

    out = Path(out)
    rows = [src for src in manifest().values() if src.present_in_shared]
    downloaded = kept = 0
    bar = progress_bar(total=len(rows), desc="raw files", unit="file", disable=not progress)
    for src in rows:
        dest = out / src.path
        if dest.is_file():
            try:
                verify(dest, src)
                kept += 1
                bar.update(1)
                continue
            except CorruptSourceError:
                pass  # fetched again below
        try:
            _download(src, dest)
        except CorruptSourceError:
            raise
        except Exception as exc:  # network errors of every kind
            raise SourceError(f"raw file {src.path!r} could not be fetched from {src.url}: "
                              f"{type(exc).__name__}: {exc}") from None
        downloaded += 1
        bar.update(1)
    bar.close()
    return downloaded, kept


def available(rel_path: str, source: str | os.PathLike | None = None) -> bool:
    """Whether a raw file is present locally (no download is attempted, nothing verified)."""
    return any((d / rel_path).is_file() for d in search_dirs(source))
