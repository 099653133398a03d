"""A natural-sentence pool from your own text, filtered as Golan et al. (2023) built theirs:
``contstim generate pool`` (:func:`build_pool`).

The paper (Methods, "Selection of controversial natural-sentence pairs" and "Defining a shared
vocabulary"): Reddit comments were scraped, "all unique eight-word sentences were saved", and they
were "filtered to exclude blatant spelling errors, inappropriate language, and individual words
that were not included in the corpus used to train the n-gram and recurrent neural network
models"; the shared vocabulary (29,157 words: SUBTLEX words seen at least 300 times in that
corpus) unifies what every model can evaluate; "we also excluded sentences in which any word
(except for prepositions) appeared more than once".  The filters here, in this order, each
counted (:attr:`Pool.removed`):

1. ``length``: sentences of exactly ``words`` words (default 8);
2. ``vocabulary``: every word in the shared vocabulary (default: the contstim dataset's 29,157
   entries): the first word among its capitalised first-word list, the others among either list
   (so that a name such as ``Trump`` may stand inside a sentence, as in the paper's own pool, all
   of whose 6,113 synthesis sentences pass); it also removes misspellings, numbers, and words that
   carry punctuation;
3. ``excluded``: no word (case-insensitive) of an excluded-word list (``inappropriate language``;
   the authors' list is not published, so none by default);
4. ``model_vocabulary``: every word known to each given word-level model (a
   :class:`~contstim_bench.scoring.protocols.WordVocabulary`: n-gram, RNN/LSTM), the words "not
   included in the corpus used to train" them; models that read any text (word pieces) remove none;
5. ``repeated``: no word but the 42 function words occurring twice (case-sensitive, as
   :func:`contstim_bench.generate.natural_ilp.repeated_words`);
6. ``duplicate``: each sentence once, first occurrence kept ("all unique ... sentences").

Sentences: each line of a corpus file is split after ``.``, ``!`` or ``?`` followed by white space;
a sentence's closing ``.``/``!``/``?`` (and any quotes around it) is removed and its white space
made single, the form of the paper's pool (``Anger consumes me as I read this reply``).  The pool
is a text file, one sentence per line, which ``contstim generate natural --pool`` and
``generate synthetic --pool`` read.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..scoring.run_options import RunOptions
from ..staging import read_bounded, regular_file

MAX_CORPUS_BYTES = 64 << 30
"""Largest corpus file read (bytes); it is read line by line."""
MAX_WORD_LIST_BYTES = 64 << 20
"""Largest word list read (bytes)."""

FILTERS = ("length", "vocabulary", "excluded", "model_vocabulary", "repeated", "duplicate")
"""The filters of :func:`build_pool`, in the order they apply."""

PAPER_WORDS = 8
"""The paper's sentence length in words."""

_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_CLOSING = ".!?\"')]"


@dataclass
class Pool:
    """The sentences kept and, per filter of :data:`FILTERS`, how many sentences it removed."""

    sentences: list[str]
    n_read: int
    removed: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def corpus_sentences(paths: Sequence[str | os.PathLike]) -> Iterator[str]:
    """The sentences of UTF-8 text files (module docstring), in file and line order; blank ones
    skipped.  FileNotFoundError names a missing file, ValueError a file that is not UTF-8."""
    for path in paths:
        p = Path(path).expanduser()
        if p.is_dir():
            raise IsADirectoryError(f"corpus {p} is a folder: give its text files (`contstim generate pool --corpus "
                                    f"{p}/*.txt`)")
        if not p.exists():
            raise FileNotFoundError(f"corpus file not found: {p} (a UTF-8 text file)")
        regular_file(p, MAX_CORPUS_BYTES, "corpus file")  # never a FIFO or a device
        with p.open(encoding="utf-8-sig") as fh:  # a leading byte-order mark is no part of the first sentence
            try:
                for line in fh:
                    for part in _BOUNDARY.split(line.strip()):
                        text = " ".join(part.strip().strip(_CLOSING).split())
                        if text:
                            yield text
            except UnicodeDecodeError as exc:
                raise ValueError(f"corpus file {p} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_word_list(path: str | os.PathLike) -> frozenset[str]:
    """Lower-cased words of a text file, one per line (blank lines and ``#`` comments skipped).
    ValueError names a line that holds more than one word."""
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"word list not found: {p} (one word per line)")
    words = set()
    try:
        text = read_bounded(p, MAX_WORD_LIST_BYTES, "word list").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"word list {p} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    for n, line in enumerate(text.splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if len(text.split()) != 1:
            raise ValueError(f"{p}: line {n} ({text!r}) is not one word")
        words.add(text.lower())
    return frozenset(words)


def build_pool(corpus: Sequence[str | os.PathLike], *, words: int = PAPER_WORDS, vocabulary=None,
               excluded: Iterable[str] = (), model_vocabularies: Sequence[tuple[str, object]] = (),
               function_words: Iterable[str] | None = None,
               log: Callable[[str], None] = lambda message: None) -> Pool:
    """The pool of ``corpus`` (module docstring).

    ``vocabulary``: a :class:`~contstim_bench.generate.inputs.Vocabulary` (None: no vocabulary
    filter); ``excluded``: words no sentence may hold (compared lower-cased);
    ``model_vocabularies``: ``(name, scorer)`` pairs, each scorer a
    :class:`~contstim_bench.scoring.protocols.WordVocabulary` (others are noted and remove
    nothing); ``function_words``: the words that may repeat (None: the paper's 42).  ValueError
    for a length below 1 and for a corpus that yields no sentence."""
    from ..scoring.protocols import WordVocabulary
    from .natural_ilp import load_function_words, repeated_words

    if isinstance(words, bool) or not isinstance(words, int) or words < 1:
        raise ValueError(f"the sentence length in words must be a positive integer, got {words!r}")
    fw = frozenset(function_words) if function_words is not None else load_function_words()
    banned = frozenset(w.lower() for w in excluded)
    first = frozenset(vocabulary.at(0)) if vocabulary is not None else None
    # a later word may be any entry (a name such as "Trump" is in the first-word list only): every
    # sentence of the paper's published pool passes this rule, none of the stricter one
    rest = frozenset(vocabulary.at(1)) | first if vocabulary is not None else None
    notes, knowers = [], []
    for name, scorer in model_vocabularies:
        if isinstance(scorer, WordVocabulary):
            knowers.append((name, scorer))
        else:
            notes.append(f"{name}: reads any word (word pieces), so it removes no sentence")
    removed = dict.fromkeys(FILTERS, 0)
    kept: list[str] = []
    seen: set[str] = set()
    known: dict[str, bool] = {}
    n_read = 0
    for sentence in corpus_sentences(corpus):
        n_read += 1
        ws = sentence.split()
        if len(ws) != words:
            removed["length"] += 1
        elif first is not None and not (ws[0] in first and all(w in rest for w in ws[1:])):
            removed["vocabulary"] += 1
        elif banned and any(w.lower() in banned for w in ws):
            removed["excluded"] += 1
        elif knowers and not _all_known(ws, knowers, known):
            removed["model_vocabulary"] += 1
        elif repeated_words(sentence, fw):
            removed["repeated"] += 1
        elif sentence in seen:
            removed["duplicate"] += 1
        else:
            seen.add(sentence)
            kept.append(sentence)
        if n_read % 100_000 == 0:
            log(f"pool: {n_read:,} sentences read, {len(kept):,} kept")
    if n_read == 0:
        raise ValueError(f"the corpus ({', '.join(map(str, corpus))}) holds no sentence")
    return Pool(sentences=kept, n_read=n_read, removed=removed, notes=notes)


def _all_known(ws: list[str], knowers, known: dict[str, bool]) -> bool:
    """Whether every model knows every word of ``ws`` (``known`` memoises per word)."""
    fresh = [w for w in dict.fromkeys(ws) if w not in known]
    if fresh:
        verdict = [True] * len(fresh)
        for _, scorer in knowers:
            verdict = [v and k for v, k in zip(verdict, scorer.known_words(fresh))]
        known.update(zip(fresh, verdict))
    return all(known[w] for w in ws)


def write_pool(pool: Pool, out: str | os.PathLike) -> Path:
    """Write the kept sentences, one per line (UTF-8), through a temporary file so that an
    interrupted run leaves no half-written pool.  ValueError when no sentence was kept."""
    if not pool.sentences:
        raise ValueError("no sentence passed the filters (" + ", ".join(f"{k}: {v:,} removed"
                                                                       for k, v in pool.removed.items()) + ")")
    path = Path(out).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text("".join(s + "\n" for s in pool.sentences), encoding="utf-8")
    os.replace(tmp, path)
    return path


def make_pool(corpus: Sequence[str | os.PathLike], out: str | os.PathLike, *, words: int = PAPER_WORDS,
              vocabulary: str | None = "contstim", exclude: str | os.PathLike | None = None,
              models: str | None = None, function_words: str | os.PathLike | None = None,
              datasets_dir: str | os.PathLike | None = None, options: RunOptions = RunOptions(),
              log: Callable[[str], None] = lambda message: None) -> tuple[Path, Pool]:
    """``contstim generate pool``: read the options' files, load ``models`` (``SPEC,SPEC`` or
    ``NAME=SPEC``; only their vocabularies are used), :func:`build_pool` and :func:`write_pool`.
    ``vocabulary``: ``contstim`` (the shared 29,157-entry vocabulary), a vocabulary file
    (:func:`contstim_bench.generate.inputs.load_vocabulary`) or ``none``; ``exclude`` and
    ``function_words``: word lists (:func:`read_word_list`; default none and the paper's 42);
    ``options``: how the models load (an RNN's device and dtype; a vocabulary lookup runs no batch)."""
    from ..scoring.registry import load_scorer
    from .inputs import load_vocabulary
    from .pairing import parse_models

    vocab = None if vocabulary is not None and str(vocabulary).lower() == "none" else \
        load_vocabulary(vocabulary, datasets_dir)
    banned = read_word_list(exclude) if exclude is not None else frozenset()
    fw = read_word_list(function_words) if function_words is not None else None
    loaded = []
    if models:
        # only the vocabularies are read: nothing is scored, so nothing is cached and no bar is drawn
        quiet = replace(options, cache=False, progress=False)
        for entry in parse_models(models, minimum=1):
            loaded.append((entry.name, load_scorer(entry.spec, quiet, datasets_dir=datasets_dir)))
    pool = build_pool(corpus, words=words, vocabulary=vocab, excluded=banned, model_vocabularies=loaded,
                      function_words=fw, log=log)
    return write_pool(pool, out), pool
