"""Inputs of sentence synthesis: the replacement vocabulary and the natural start sentences
(Golan et al. 2023, Methods "Defining a shared vocabulary" and "Generating synthetic
controversial sentence pairs").

The vocabulary has two lists, as upstream: the capitalised words that may start a sentence
(``vocab_cap``) and the words of every other position (``vocab_low``).  By default both come from
the ``vocabulary`` config of the built ``contstim`` dataset (29,157 entries); a text file with
one word per line, or a parquet/CSV file with columns ``word`` and ``capitalized``, can replace it.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..staging import read_bounded, regular_file

DATASET = "contstim"
"""Name of the built dataset that holds the default vocabulary and pool.  (The 42 function words
that may repeat come from :func:`contstim_bench.generate.natural_ilp.load_function_words`.)"""


@dataclass(frozen=True)
class Vocabulary:
    """Replacement words: ``first`` for position 0 (capitalised), ``rest`` for positions 1.."""

    first: tuple[str, ...]
    rest: tuple[str, ...]
    source: str

    def at(self, position: int) -> tuple[str, ...]:
        """The replacement words allowed at word ``position`` (0-based)."""
        return self.first if position == 0 else self.rest

    def __len__(self) -> int:
        return len(self.first) + len(self.rest)


def _check_words(words: Sequence[str], where: str) -> tuple[str, ...]:
    out = []
    seen = set()
    for i, w in enumerate(words):
        if not isinstance(w, str) or not w.strip() or any(ch.isspace() for ch in w):
            raise ValueError(f"{where}: entry {i} ({w!r}) is not a single word without spaces")
        if w not in seen:
            seen.add(w)
            out.append(w)
    return tuple(out)


def vocabulary_from_table(table: pd.DataFrame, source: str) -> Vocabulary:
    """A :class:`Vocabulary` from a frame with columns ``word`` and ``capitalized`` (bool)."""
    for col in ("word", "capitalized"):
        if col not in table.columns:
            raise ValueError(f"vocabulary {source}: column {col!r} is missing (need word, capitalized)")
    caps = table["capitalized"]
    if caps.isna().any() or not set(caps.unique()) <= {True, False}:
        raise ValueError(f"vocabulary {source}: column 'capitalized' must hold True/False")
    first = _check_words(table.loc[caps.astype(bool), "word"].tolist(), f"vocabulary {source}")
    rest = _check_words(table.loc[~caps.astype(bool), "word"].tolist(), f"vocabulary {source}")
    if not first or not rest:
        raise ValueError(f"vocabulary {source}: needs both capitalised (first-word) and other words")
    return Vocabulary(first=first, rest=rest, source=source)


def vocabulary_from_words(words: Iterable[str], source: str) -> Vocabulary:
    """A :class:`Vocabulary` from a plain word list: every word serves positions 1.., and its
    form with an upper-case first letter serves position 0."""
    rest = _check_words(list(words), f"vocabulary {source}")
    if not rest:
        raise ValueError(f"vocabulary {source} has no words")
    first = _check_words([w[:1].upper() + w[1:] for w in rest], f"vocabulary {source}")
    return Vocabulary(first=first, rest=rest, source=source)


def load_vocabulary(spec: str | os.PathLike | None = None, datasets_dir: str | os.PathLike | None = None,
                    *, size: int | None = None, keep: Iterable[str] = ()) -> Vocabulary:
    """The replacement vocabulary named by ``spec``.

    ``None`` or ``"contstim"``: the 29,157-entry vocabulary of the built contstim dataset.  A
    ``.txt`` file: one word per line (see :func:`vocabulary_from_words`).  A ``.parquet`` or
    ``.csv`` file: columns ``word`` and ``capitalized`` (and ``frequency``, as written by
    ``contstim vocab build``).  ``size``: only the ``size`` most frequent words of each list, the
    words of ``keep`` (the function words) kept too (see
    :func:`contstim_bench.generate.vocabulary.most_frequent`; needs a ``frequency`` column).
    FileNotFoundError names a missing file.
    """
    if spec is None or str(spec) == DATASET:
        from contstim_bench.data.load import dataset_folder

        path = dataset_folder(DATASET, datasets_dir) / "vocabulary" / "train.parquet"
        table, source = pd.read_parquet(path), f"{DATASET}:vocabulary"
    else:
        path = Path(spec).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"vocabulary file not found: {path}")
        regular_file(path, MAX_TEXT_BYTES, "vocabulary file")  # never a FIFO or a device
        source = str(path)
        if path.suffix == ".parquet":
            from contstim_bench.data.verify import verify_parquet

            table = pd.read_parquet(verify_parquet(path))
        elif path.suffix == ".csv":
            table = pd.read_csv(path, keep_default_na=False, na_values=[""])
        else:
            if size is not None:
                raise ValueError(f"vocabulary {path}: a word list has no frequencies, so no vocabulary size can be "
                                 f"taken from it; give a .parquet/.csv with a frequency column (`contstim vocab "
                                 f"build` writes one)")
            lines = [ln.strip() for ln in _text(path, "vocabulary file").splitlines()]
            return vocabulary_from_words([ln for ln in lines if ln], str(path))
    if size is not None:
        from .vocabulary import most_frequent

        table = most_frequent(table, size, keep, source)
        source = f"{source} (the {size:,} most frequent words of each list, function words kept)"
    return vocabulary_from_table(table, source)


@dataclass(frozen=True)
class StartSentence:
    """A natural start sentence and its line number in the pool (0-based)."""

    index: int
    sentence: str


DEFAULT_POOL = "contstim:start"
"""The default natural-sentence pool of generation: the ``start`` part of the synthesis pool,
held out from the default training corpus of ``contstim train`` (:mod:`contstim_bench.data.pool_split`)."""


def load_pool(source: str | os.PathLike | None = None, datasets_dir: str | os.PathLike | None = None
              ) -> tuple[list[str], str]:
    """The natural-sentence pool and a description of where it came from.

    ``source`` ``None``: :data:`DEFAULT_POOL`.  ``"contstim"``: the whole ``natural_pool`` split
    ``synthesis`` of the built dataset (6,113 lines); ``"contstim:start"`` / ``"contstim:train"``:
    its two held-apart parts (:mod:`contstim_bench.data.pool_split`; 1,206 and 4,907 lines, in
    pool order); ``"contstim:<split>"`` another split of ``natural_pool``; otherwise a UTF-8 text
    file with one sentence per line.  ValueError names a blank line.
    """
    from contstim_bench.data.pool_split import PARTS, describe, split_part

    source = DEFAULT_POOL if source is None else source
    if str(source) == DATASET or str(source).startswith(DATASET + ":"):
        from contstim_bench.data.load import dataset_folder

        split = "synthesis" if str(source) == DATASET else str(source).split(":", 1)[1]
        part = split if split in PARTS else None
        path = dataset_folder(DATASET, datasets_dir) / "natural_pool" / f"{'synthesis' if part else split}.parquet"
        if not path.is_file():
            raise FileNotFoundError(f"the {DATASET} dataset has no natural_pool split {split!r} ({path})")
        lines = pd.read_parquet(path, columns=["sentence"])["sentence"].tolist()
        if part:
            return split_part(lines, part), f"{DATASET}:natural_pool/synthesis, {describe(part)}"
        return lines, f"{DATASET}:natural_pool/{split}"
    path = Path(source).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"natural-sentence pool not found: {path} (a text file, one sentence per line)")
    lines = _text(path, "natural-sentence pool").splitlines()
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            raise ValueError(f"{path}: line {i} is blank; the pool needs one sentence per line")
    return [ln.strip() for ln in lines], str(path)


MAX_TEXT_BYTES = 2 << 30
"""Largest vocabulary or pool text file read (bytes)."""


def _text(path: Path, what: str) -> str:
    """A UTF-8 text file a user gave: regular, bounded, its byte-order mark dropped."""
    try:
        return read_bounded(path, MAX_TEXT_BYTES, what).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def choose_start_sentences(pool: Sequence[str], n: int, seed: int) -> list[StartSentence]:
    """``n`` distinct pool sentences drawn without replacement with ``seed`` (numpy PCG64),
    returned in pool order.  Only the first occurrence of a repeated line can be drawn."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of start sentences must be a positive integer, got {n!r}")
    first: dict[str, int] = {}
    for i, s in enumerate(pool):
        first.setdefault(s, i)
    candidates = sorted(first.values())
    if n > len(candidates):
        raise ValueError(f"asked for {n} start sentences but the pool has only {len(candidates)} distinct ones")
    rng = np.random.default_rng(seed)
    picked = sorted(rng.choice(len(candidates), size=n, replace=False).tolist())
    return [StartSentence(candidates[k], pool[candidates[k]]) for k in picked]
