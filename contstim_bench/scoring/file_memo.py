"""Per-process memos of what depends only on the bytes of model files: the sha256 digest that keys a
model's scores in the score cache (:func:`~.base.hash_files`) and a loaded tokenizer
(:func:`~.hf_loading.load_tokenizer`).  Commands run one after another in one process (a notebook,
``contstim_bench.cli.main`` called in turn, the test suite) then hash a 1 GB weights file and parse
a 33 MB ``tokenizer.json`` once per model instead of once per scorer (about 1 and 4 CPU-seconds for
Gemma-3-270m).

An entry is keyed by each file's identity: resolved path, device, inode, size, and modification and
change times in nanoseconds, so a file written again, replaced or moved gets a new key and is read
again.  A file's times only advance by a kernel tick, so a file rewritten with the same size in the
tick in which it was read could keep its key; as git does for the files of its index ("racily
clean"), nothing is remembered for a file changed less than :data:`SETTLE_S` seconds before it was
read (such a file is read again every time).  Digests are short strings, all kept; loaded objects
are large (a Gemma tokenizer holds about 250 MB), so only the :data:`MAX_OBJECTS` most recently used
are kept.  An object handed out here is shared by its callers: they must not change it.
"""
from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

SETTLE_S = 2.0
"""Seconds since a file's last change (modification or metadata) before its identity is trusted."""
MAX_OBJECTS = 2
"""Loaded objects (tokenizers) kept, most recently used first."""

_DIGESTS: dict[Hashable, str] = {}
_OBJECTS: OrderedDict[Hashable, object] = OrderedDict()


def files_key(paths: Sequence[str | os.PathLike]) -> tuple | None:
    """The identity of ``paths`` (in order), or None when one of them cannot be read with
    :func:`os.stat` or changed less than :data:`SETTLE_S` seconds ago (then nothing is
    remembered for it)."""
    settled = time.time_ns() - int(SETTLE_S * 1e9)
    key = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            return None
        if max(st.st_mtime_ns, st.st_ctime_ns) > settled:
            return None
        key.append((str(Path(p).resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(key)


def digest(paths: Sequence[str | os.PathLike], settings: Hashable, compute: Callable[[], str]) -> str:
    """``compute()`` (a digest of the files ``paths`` and ``settings``), computed once per process
    for the same files and settings."""
    files = files_key(paths)
    if files is None:
        return compute()
    key = (files, settings)
    if key not in _DIGESTS:
        _DIGESTS[key] = compute()
    return _DIGESTS[key]


def shared(kind: str, paths: Sequence[str | os.PathLike], load: Callable[[], T]) -> T:
    """``load()`` (an object made from the files ``paths``, e.g. a tokenizer: ``kind``), loaded once
    per process for the same files while it is among the :data:`MAX_OBJECTS` most recently used.
    Every caller gets the same object: it must not be changed."""
    files = files_key(paths)
    if files is None:
        return load()
    key = (kind, files)
    if key in _OBJECTS:
        _OBJECTS.move_to_end(key)
        return _OBJECTS[key]  # type: ignore[return-value]
    obj = load()
    _OBJECTS[key] = obj
    while len(_OBJECTS) > MAX_OBJECTS:
        _OBJECTS.popitem(last=False)
    return obj


def forget() -> None:
    """Drop every remembered digest and object (the next call reads the files again)."""
    _DIGESTS.clear()
    _OBJECTS.clear()
