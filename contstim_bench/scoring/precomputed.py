"""``precomputed:NAME``: the reference models' log-probabilities shipped with the dataset.

NAME is a reference model as named in the source files (:data:`contstim_bench.schema.ALL_REFERENCE_MODELS`:
gpt2, roberta, electra, bert, xlm, lstm, rnn, trigram, bigram and the three ``*_has_a_mouth``
PLL read-outs).  Values come from the ``sentences`` config of the built ``contstim`` dataset
(splits ``main`` and ``pll``, one float64 natural-log probability per sentence and model, null
where the model did not score the sentence); no model is run.  Asking for a sentence the
dataset has no value for raises ValueError naming the sentence and NAME; so does a stored value
that is NaN or above 0 (the dataset itself is verified when loaded), and scoring a sentence
whose published value is ``-inf`` (:meth:`Scorer.score` accepts finite values only).

Spec options (``precomputed:NAME?split=pll``): ``split`` restricts the lookup to one split of
the ``sentences`` config (default: every split; a sentence scored differently in two splits
is an error).
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
    if not table:
        raise ValueError(f"precomputed:{name}: the dataset holds no log-probabilities for {name!r}")
    return table


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

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        out = np.empty(len(sentences), dtype=np.float64)
        for i, s in enumerate(sentences):
            try:
                out[i] = self._table[s]
            except KeyError:
                raise ValueError(
                    f"precomputed:{self.name}: sentence {s!r} is not in the dataset's reference "
                    f"log-probabilities for {self.name!r}"
                ) from None
        return out


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
