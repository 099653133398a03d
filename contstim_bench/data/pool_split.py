"""A fixed split of the 6,113-sentence synthesis pool into a training corpus and start sentences.

The contstim data offers one small natural-sentence corpus offline: the pool from which Golan et
al. (2023) drew the start sentences of their synthetic pairs
(``natural_sentences_for_synthetic_controversial_sentence_pair_optimization.txt``).  An n-gram or
RNN model trained on that whole pool has seen every start sentence: its log-probability of a
start sentence N is inflated, no one-word replacement of N can reach it, and a synthesis that
this model must *accept* never moves (S = N).  So the package splits the pool once, by content,
into two disjoint parts:

- ``start`` (about a fifth of the distinct sentences): the default pool of start sentences and
  natural pairs (``contstim generate synthetic|natural|design``);
- ``train`` (the rest): the default corpus of ``contstim train ngram|rnn|lstm``.

A sentence belongs to ``start`` when the first 8 bytes of ``sha256(SALT + sentence)``, read as a
big-endian integer, are divisible by :data:`START_MODULUS`.  The rule depends on the sentence's
text only (not on its line, the file's order or a random generator), so a repeated line always
falls on the same side and no start sentence is ever in the training corpus.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence

SALT = "contstim-pool-split/1\x00"
START_MODULUS = 5
PARTS = ("start", "train")


def is_start_sentence(sentence: str) -> bool:
    """Whether ``sentence`` (surrounding whitespace ignored) is in the ``start`` part."""
    digest = hashlib.sha256((SALT + sentence.strip()).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % START_MODULUS == 0


def split_part(lines: Sequence[str], part: str) -> list[str]:
    """The lines of ``part`` (``"start"`` or ``"train"``), in their order in ``lines``
    (repeats kept).  ValueError for another part name."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r} of the synthesis pool; known: {', '.join(PARTS)}")
    want = part == "start"
    return [ln for ln in lines if is_start_sentence(ln) == want]


def describe(part: str) -> str:
    """One line naming the rule, for dataset cards, run records and log lines."""
    return (f"the {part!r} part of the contstim synthesis pool (sentences whose sha256 with salt "
            f"{SALT[:-1]!r} is divisible by {START_MODULUS} are 'start', the others 'train')")
