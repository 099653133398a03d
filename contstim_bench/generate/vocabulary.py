"""Smaller and other vocabularies for sentence synthesis.

The paper's shared vocabulary (Golan et al. 2023, Methods "Defining a shared vocabulary") is the
words of the SUBTLEX database that occur at least 300 times in the 300M-word training corpus
(frequency of at least one in a million); it has two lists, the words of positions 2.. and the
capitalised words that may start a sentence, each with its relative frequency (the ``vocabulary``
config of the ``contstim`` dataset).

- :func:`most_frequent`: the ``size`` most frequent entries of each list, the function words
  (which synthesis lets repeat) always kept: ``contstim generate synthetic --vocabulary-size N``.
  On a CPU, a causal model's search time grows with the vocabulary.
- :func:`build_vocabulary`: a vocabulary in the same layout from a corpus of another domain,
  filtered as the paper's: words of letters only, counted in the corpus, kept when counted at
  least ``min_count`` times (``contstim vocab build``).

A vocabulary table has the columns ``word``, ``frequency`` (relative frequency within its list),
``capitalized`` (True: the list of the first position) and, when built from a corpus, ``count``.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

WORD = re.compile(r"[A-Za-z]+")
"""A vocabulary word: letters only, as every word of the paper's vocabulary."""
STRIP = ".,!?;:\"'()[]"
"""Characters stripped from both ends of a corpus token before it is checked against :data:`WORD`."""
COLUMNS = ("word", "frequency", "capitalized")


def _capitalise(word: str) -> str:
    return word[:1].upper() + word[1:]


def most_frequent(table: pd.DataFrame, size: int, keep: Iterable[str] = (), source: str = "vocabulary") -> pd.DataFrame:
    """The ``size`` most frequent words of each list of ``table`` (the first-position list and
    the list of the other positions; ties keep the table's order), plus the words of ``keep``
    that the table has (the function words: lower-case in the other-position list, capitalised in
    the first-position list), in the table's order.

    ValueError when ``size`` is not a positive integer or the table has no ``frequency`` column.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"the vocabulary size must be a positive integer, got {size!r}")
    for col in COLUMNS:
        if col not in table.columns:
            raise ValueError(f"{source}: a vocabulary size needs word frequencies, and column {col!r} is missing "
                             f"(the contstim vocabulary and the files of `contstim vocab build` have them)")
    keep = {w.lower() for w in keep}
    frame = table.reset_index(drop=True)
    chosen = pd.Series(False, index=frame.index)
    for capitalized in (False, True):
        part = frame[frame["capitalized"].astype(bool) == capitalized]
        top = part["frequency"].astype(float).sort_values(ascending=False, kind="stable").index[:size]
        chosen[top] = True
        words = part["word"].astype(str)
        kept = words.str.lower().isin(keep) & ((words == words.str.lower()) | capitalized)
        chosen[part.index[kept.to_numpy()]] = True
    return frame[chosen.to_numpy()].reset_index(drop=True)


def corpus_tokens(line: str) -> list[str]:
    """The words of one corpus line: whitespace-split, punctuation stripped from both ends,
    tokens that are not letters only dropped."""
    out = []
    for raw in line.split():
        token = raw.strip(STRIP)
        if WORD.fullmatch(token):
            out.append(token)
    return out


def build_vocabulary(corpus: str | os.PathLike, min_count: int) -> pd.DataFrame:
    """A vocabulary from a UTF-8 text corpus (one sentence or text line per line), filtered as
    the paper's: words of letters only, counted in the corpus, kept when counted at least
    ``min_count`` times.

    A word keeps its case (``I``, ``London``); the first word of a line counts as its
    lower-case form when that form occurs elsewhere in the corpus (``The`` -> ``the``).  Every
    kept word serves positions 2.. (``capitalized`` False) and, capitalised, the first position
    (``capitalized`` True); ``frequency`` is its count over the kept words' counts, ``count``
    the count.  ValueError for a bad ``min_count``, FileNotFoundError for a missing corpus,
    ValueError when no word is kept.
    """
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be a positive integer, got {min_count!r}")
    path = Path(corpus).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"corpus not found: {path} (a text file, one sentence per line)")
    inner: Counter[str] = Counter()
    first: Counter[str] = Counter()
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            tokens = corpus_tokens(line)
            if tokens:
                first[tokens[0]] += 1
                inner.update(tokens[1:])
    counts = Counter(inner)
    for word, n in first.items():
        lower = word.lower()
        counts[lower if lower != word and lower in inner else word] += n
    kept = sorted(((w, n) for w, n in counts.items() if n >= min_count), key=lambda wn: (-wn[1], wn[0]))
    if not kept:
        top = max(counts.values(), default=0)
        raise ValueError(f"{path}: no word occurs {min_count} times or more (the most frequent occurs {top} "
                         f"times); lower the minimum count (`contstim vocab build --min-count`)")
    total = sum(n for _, n in kept)
    rows = [{"word": w, "frequency": n / total, "capitalized": False, "count": n} for w, n in kept]
    caps: dict[str, int] = {}
    for w, n in kept:
        caps[_capitalise(w)] = caps.get(_capitalise(w), 0) + n
    rows += [{"word": w, "frequency": n / total, "capitalized": True, "count": n}
             for w, n in sorted(caps.items(), key=lambda wn: (-wn[1], wn[0]))]
    return pd.DataFrame(rows, columns=[*COLUMNS, "count"])


def write_vocabulary(table: pd.DataFrame, out: str | os.PathLike) -> Path:
    """Write a vocabulary table as ``.parquet`` or ``.csv`` (by the suffix of ``out``), the
    formats ``contstim generate synthetic --vocabulary FILE`` reads."""
    path = Path(out).expanduser()
    if path.suffix not in (".parquet", ".csv"):
        raise ValueError(f"vocabulary file {path}: the name must end in .parquet or .csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        table.to_parquet(path, index=False)
    else:
        table.to_csv(path, index=False)
    return path
