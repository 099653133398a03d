"""``precomputed:NAME``: the reference models' log-probabilities shipped with the dataset.

NAME is a reference model as named in the source files (:data:`contstim_bench.schema.ALL_REFERENCE_MODELS`:
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
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from ..schema import ALL_REFERENCE_MODELS, EXPERIMENTS
from .base import Scorer

DATASET = "contstim"
CONFIG = "sentences"


def reference_table(
    name: str, datasets_dir: str | os.PathLike | None = None, split: str | None = None
) -> dict[str, float]:
    """``{sentence: log-probability}`` of reference model ``name`` from the ``sentences`` config."""
    from ..data.load import dataset_dir

    if name not in ALL_REFERENCE_MODELS:
        raise ValueError(
            f"unknown reference model {name!r} in 'precomputed:{name}'; known: {', '.join(ALL_REFERENCE_MODELS)}"
        )
    splits = EXPERIMENTS if split is None else (split,)
    if split is not None and split not in EXPERIMENTS:
        raise ValueError(f"unknown split {split!r} for precomputed:{name}; known: {', '.join(EXPERIMENTS)}")
    folder = Path(dataset_dir(DATASET, datasets_dir)) / CONFIG
    table: dict[str, float] = {}
    for sp in splits:
        path = folder / f"{sp}.parquet"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: rebuild with `contstim data build --only contstim`")
        cols = pq.read_table(path, columns=["sentence", name]).to_pydict()
        for sentence, value in zip(cols["sentence"], cols[name]):
            if value is None:
                continue
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
    from ..schema import MAIN_MODELS

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
    ):
        super().__init__(cache=False, progress=progress)
        self.name = name
        self.split = split
        self.datasets_dir = datasets_dir
        self.spec = f"precomputed:{name}" + (f"?split={split}" if split else "")
        self._table = reference_table(name, datasets_dir, split)
        from ..data.load import fingerprint

        self._dataset_fingerprint = fingerprint(DATASET, datasets_dir)

    def fingerprint(self) -> str:
        key = f"precomputed:{self.name}:{self.split or '*'}:{self._dataset_fingerprint}"
        return hashlib.sha256(key.encode()).hexdigest()

    def describe(self) -> dict:
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
        if missing:
            raise missing_error(self.name, missing, len(sentences))
        return np.array([self._table[s] for s in sentences], dtype=np.float64)


OPTION_KEYS = {"split"}
"""Options of a ``precomputed:`` spec (checked by the registry before building the scorer)."""


def from_spec(name: str, options: dict | None = None, **kwargs) -> PrecomputedScorer:
    """Build the scorer of ``precomputed:NAME`` (registry entry point).

    ``options`` are the spec's query options (only ``split``); ``kwargs`` may pass
    ``datasets_dir`` and ``progress`` (others, e.g. ``cache``/``device``, do not apply to a
    lookup and are ignored).
    """
    options = dict(options or {})
    unknown = set(options) - OPTION_KEYS
    if unknown:
        raise ValueError(
            f"precomputed:{name}: unknown option(s) {sorted(unknown)}; known: {sorted(OPTION_KEYS)}"
        )
    return PrecomputedScorer(
        name,
        split=options.get("split"),
        datasets_dir=kwargs.get("datasets_dir"),
        progress=bool(kwargs.get("progress", False)),
    )
