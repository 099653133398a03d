"""``precomputed:NAME``: the reference models' log-probabilities shipped with the dataset.

NAME is a reference model as named in the source files (:data:`contstim_bench.study.ALL_REFERENCE_MODELS`:
gpt2, roberta, electra, bert, xlm, lstm, rnn, trigram, bigram and the three ``*_has_a_mouth``
PLL read-outs).  Values come from the built ``contstim`` dataset; no model is run:

- the ``sentences`` config (splits ``main`` and ``pll``: the stimuli of both experiments, among
  them the 720 sentences of the 360 selected natural controversial pairs; one float64
  natural-log probability per sentence and model, null where the model did not score it);
- the ``natural_pool`` split ``selection`` (the 231,725-sentence selection pool joined with the
  upstream ``.npy`` arrays) when that split was built, for sentences that are not stimuli.

A :class:`PrecomputedScorer` is a :class:`~contstim_bench.scoring.protocols.SentenceLookup`:
``can_score(sentences)`` says which sentences have a value, and scoring sentences without one
raises ValueError listing them.  :func:`pool_file_log_probs` reads the ``.npy`` arrays directly,
aligned with the lines of a pool file that is the upstream selection pool (checked by its git
blob SHA-1), for ``contstim generate natural --pool FILE``.

Spec options (``precomputed:NAME?split=pll``): ``split`` restricts the lookup to one split of
the ``sentences`` config (default: every split and the selection pool; a sentence scored
differently in two splits of ``sentences`` is an error, and a stimulus keeps its ``sentences``
value).

A stored value that is NaN or above 0 raises ValueError (the dataset itself is verified when
loaded), and so does scoring a sentence whose published value is ``-inf`` (:meth:`Scorer.score`
accepts finite values only).

``precomputed:FILE.npy?sentences=FILE.txt`` reads a pool array instead: one float64 natural-log
probability per line of the text file, in line order (the upstream layout of
``resources/precomputed_sentence_probabilities/*.npy``, and what ``contstim score --output
FILE.npy`` writes).  The array must be one-dimensional float64 with one finite value per line; a
sentence on two lines with two different values is an error naming both lines.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from ..study import ALL_REFERENCE_MODELS, EXPERIMENTS, is_paper_experiment
from .base import hash_files, LoadSettings, Scorer

DATASET = "contstim"
CONFIG = "sentences"


def reference_table(
    name: str, datasets_dir: str | os.PathLike | None = None, split: str | None = None
) -> dict[str, float]:
    """``{sentence: log-probability}`` of reference model ``name`` from the ``sentences`` config."""
    from ..data.load import dataset_folder

    if name not in ALL_REFERENCE_MODELS:
        raise ValueError(
            f"unknown reference model {name!r} in 'precomputed:{name}'; known: {', '.join(ALL_REFERENCE_MODELS)}"
        )
    splits = EXPERIMENTS if split is None else (split,)
    if split is not None and not is_paper_experiment(split):
        raise ValueError(f"unknown split {split!r} for precomputed:{name}; known: {', '.join(EXPERIMENTS)}")
    folder = Path(dataset_folder(DATASET, datasets_dir)) / CONFIG
    table: dict[str, float] = {}
    for sp in splits:
        path = folder / f"{sp}.parquet"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: rebuild with `contstim data build --only contstim`")
        cols = pq.read_table(path, columns=["sentence", name]).to_pydict()
        for sentence, value in zip(cols["sentence"], cols[name]):
            if value is None:
                continue
            if not value <= 0:  # NaN or above 0: not a natural-log probability (-inf is kept as published)
                raise ValueError(
                    f"precomputed:{name}: the {CONFIG!r} config of {folder.parent} gives sentence {sentence!r} the "
                    f"log-probability {value!r}, which is not a natural-log probability (at most 0); rebuild the "
                    f"dataset with `contstim data build`"
                )
            if sentence in table and table[sentence] != value:
                raise ValueError(
                    f"precomputed:{name}: sentence {sentence!r} has two different log-probabilities "
                    f"({table[sentence]} and {value}) in the splits of the {CONFIG!r} config; pick one "
                    f"with precomputed:{name}?split=..."
                )
            table[sentence] = float(value)
    if split is None:
        for sentence, value in _pool_values(name, folder.parent).items():
            table.setdefault(sentence, value)
    if not table:
        raise ValueError(f"precomputed:{name}: the dataset holds no log-probabilities for {name!r}")
    return table


def write_pool_array(path: str | os.PathLike, logprobs) -> Path:
    """Write ``.npy`` float64 values, one per line of the scored text file (the upstream
    precomputed-pool layout that :func:`pool_table` reads), atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npy")
    np.save(tmp, np.asarray(logprobs, dtype=np.float64))
    tmp.replace(path)
    return path


def pool_table(npy: str | os.PathLike, sentences: str | os.PathLike) -> dict[str, float]:
    """``{sentence: log-probability}`` from a pool array and its text file (see the module doc)."""
    npy, sentences = Path(npy).expanduser(), Path(sentences).expanduser()
    for path in (npy, sentences):
        if not path.is_file():
            raise FileNotFoundError(f"precomputed pool file not found: {path}")
    try:
        values = np.load(npy, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"{npy}: not a plain .npy array ({exc})") from None
    if values.dtype != np.float64 or values.ndim != 1:
        raise ValueError(f"{npy}: expected a 1-D float64 array (one value per line), got {values.dtype} {values.shape}")
    try:
        lines = sentences.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{sentences} is not UTF-8 text ({exc})") from None
    if len(lines) != len(values):
        raise ValueError(f"{npy} holds {len(values)} values but {sentences} has {len(lines)} lines: "
                         f"the array must have one value per line")
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise ValueError(f"{npy}: value {values[bad[0]]} at line {bad[0] + 1} is not finite")
    table: dict[str, float] = {}
    first_line: dict[str, int] = {}
    for number, (line, value) in enumerate(zip(lines, values.tolist()), start=1):
        s = line.strip()
        if s in table and table[s] != value:
            raise ValueError(f"{npy}: sentence {s!r} has {table[s]} at line {first_line[s]} and {value} at line "
                             f"{number} of {sentences}")
        table.setdefault(s, value)
        first_line.setdefault(s, number)
    return table


POOL_CONFIG = "natural_pool"
POOL_SPLITS_WITH_VALUES = ("selection",)
"""Splits of ``natural_pool`` that carry the reference models' log-probabilities when built."""


def _pool_values(name: str, dataset_folder: Path) -> dict[str, float]:
    """``{sentence: log-probability}`` of ``name`` from the built pool splits that have values
    (first occurrence of a repeated line)."""
    out: dict[str, float] = {}
    for sp in POOL_SPLITS_WITH_VALUES:
        path = dataset_folder / POOL_CONFIG / f"{sp}.parquet"
        if not path.exists() or name not in pq.read_schema(path).names:
            continue
        cols = pq.read_table(path, columns=["sentence", name]).to_pydict()
        for sentence, value in zip(cols["sentence"], cols[name]):
            if value is not None:
                out.setdefault(sentence, float(value))
    return out


def pool_file_log_probs(name: str, pool_file: str | os.PathLike,
                        source: str | os.PathLike | None = None) -> np.ndarray | None:
    """Natural-log probabilities of reference model ``name`` for every line of ``pool_file``,
    from the upstream ``.npy`` array (231,725 float64 values, one per line of the selection
    pool), when ``pool_file`` is that pool (its git blob SHA-1 matches the manifest); None for any
    other file or a model without such an array.  ValueError when the array's length differs
    from the file's number of lines."""
    from ..data.build_contstim import POOL_PROBS, POOL_SELECTION
    from ..data.sources import entry, git_blob_sha1, resolve
    from ..study import MAIN_MODELS

    path = Path(pool_file)
    if name not in MAIN_MODELS or not path.is_file():
        return None
    if git_blob_sha1(path) not in entry(POOL_SELECTION).accepted_blobs:
        return None
    values = np.load(resolve(POOL_PROBS.format(model=name), source=source), allow_pickle=False)
    values = np.asarray(values, dtype=np.float64).ravel()
    n_lines = len(path.read_text(encoding="utf-8").splitlines())
    if len(values) != n_lines:
        raise ValueError(f"{path}: {n_lines} lines, but the precomputed {name} array has {len(values)} values")
    return values


MAX_LISTED = 10
"""Sentences named in the error about sentences without a stored value."""


def missing_error(name: str, missing: list[str], total: int) -> ValueError:
    """The ValueError for sentences that ``precomputed:NAME`` has no value for (lists them)."""
    shown = "\n  ".join(repr(s) for s in missing[:MAX_LISTED])
    more = f"\n  ... and {len(missing) - MAX_LISTED} more" if len(missing) > MAX_LISTED else ""
    return ValueError(
        f"precomputed:{name}: sentence {missing[0]!r} is not in the dataset's reference log-probabilities "
        f"for {name!r}; {len(missing)} of {total} sentence(s) have no stored value (precomputed: only looks "
        f"up the contstim stimuli and, when built, the 231,725-sentence selection pool):\n  {shown}{more}\n"
        f"restrict the input to sentences every model can score (contstim generate natural "
        f"--restrict-to-scorable), or use a model that scores any sentence"
    )


class PrecomputedScorer(Scorer):
    """Looks sentences up in the dataset's reference log-probabilities (natural log)."""

    method = "precomputed"
    cacheable = False  # a lookup: nothing to cache

    def __init__(
        self,
        name: str,
        split: str | None = None,
        datasets_dir: str | os.PathLike | None = None,
        progress: bool = False,
        pool: str | os.PathLike | None = None,
    ):
        super().__init__(cache=False, progress=progress)
        self.name = name
        self.split = split
        self.datasets_dir = datasets_dir
        self.spec = f"precomputed:{name}" + (f"?split={split}" if split else "")
        self.pool = pool
        if pool is not None:
            self._table = pool_table(name, pool)
            self._dataset_fingerprint = hash_files([name, pool])  # the files, not a dataset
            return
        self._table = reference_table(name, datasets_dir, split)
        from ..data.load import fingerprint

        self._dataset_fingerprint = fingerprint(DATASET, datasets_dir)

    def fingerprint(self) -> str:
        key = f"precomputed:{self.name}:{self.split or '*'}:{self._dataset_fingerprint}"
        return hashlib.sha256(key.encode()).hexdigest()

    def describe(self) -> dict:
        if self.pool is not None:
            return {**super().describe(), "name": Path(self.name).stem,
                    "source": f"pool array {self.name} with the sentences of {self.pool}",
                    "files_sha256": self._dataset_fingerprint}
        return {
            **super().describe(),
            "name": self.name,
            "source": f"{DATASET} dataset, config {CONFIG!r}, column {self.name!r}",
            "dataset_fingerprint": self._dataset_fingerprint,
            "split": self.split,
        }

    def can_score(self, sentences) -> np.ndarray:
        """Boolean per sentence: True where the dataset holds a value (:class:`SentenceLookup`)."""
        return np.array([s in self._table for s in sentences], dtype=bool)

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        missing = [s for s in sentences if s not in self._table]
        if missing and self.pool is not None:
            raise ValueError(f"precomputed:{self.name}: sentence {missing[0]!r} is not in the lines of {self.pool}")
        if missing:
            raise missing_error(self.name, missing, len(sentences))
        return np.array([self._table[s] for s in sentences], dtype=np.float64)


OPTION_KEYS = {"split", "sentences"}
"""Options of a ``precomputed:`` spec (checked by the registry before building the scorer)."""


def from_spec(name: str, options: dict | None, load: LoadSettings) -> PrecomputedScorer:
    """Build the scorer of ``precomputed:NAME`` (registry entry point).

    ``options`` are the spec's query options (only ``split``); of ``load``, ``datasets_dir``
    and ``progress`` apply (a lookup has no device and caches nothing).
    """
    options = dict(options or {})
    unknown = set(options) - OPTION_KEYS
    if unknown:
        raise ValueError(
            f"precomputed:{name}: unknown option(s) {sorted(unknown)}; known: {sorted(OPTION_KEYS)}"
        )
    if name.endswith(".npy") or "sentences" in options:
        if "sentences" not in options or not name.endswith(".npy"):
            raise ValueError(f"precomputed:{name}: a pool array is precomputed:FILE.npy?sentences=FILE.txt "
                             f"(one float64 per line of the text file)")
        if "split" in options:
            raise ValueError(f"precomputed:{name}: split= applies to the dataset's reference models, not to a pool array")
        return PrecomputedScorer(name, pool=options["sentences"], progress=bool(load.options.progress))
    return PrecomputedScorer(
        name,
        split=options.get("split"),
        datasets_dir=load.datasets_dir,
        progress=bool(load.options.progress),
    )
