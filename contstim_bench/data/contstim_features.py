"""Linguistic features of the main experiment's sentences (Golan et al. 2023, Fig. S7).

``contstim_sents_gcorrs.npy`` (mean pairwise correlation of the sentence's GloVe word vectors,
"semantic coherence") and ``contstim_sents_freqs.npy`` (average log-transformed word frequency)
hold one float64 per sentence, in the order of the sentences of the ``trigram`` entry of
``contstim_stim_probs_dict.pkl`` (as the authors' ``linguistic_feature_analysis_S7_figure.py``
reads them).  Both raw files are verified by their git blob SHA-1 when resolved.
"""
from __future__ import annotations

import os

import numpy as np

from . import safe_pickle, sources
from .build_contstim import ROOT, STIM_PROBS

GLOVE = ROOT + "resources/contstim_sents_gcorrs.npy"
FREQUENCY = ROOT + "resources/contstim_sents_freqs.npy"
FEATURES = {"glove_correlation": GLOVE, "log_word_frequency": FREQUENCY}
"""Feature name -> raw file."""


def sentence_features(source: str | os.PathLike | None = None) -> dict[str, dict[str, float]]:
    """``{feature: {sentence: value}}`` for the 2,240 main-experiment sentences.

    ValueError when an array's length differs from the number of sentences or holds a NaN.
    """
    probs = safe_pickle.load(sources.resolve(STIM_PROBS, source))
    order = [str(s) for s in probs["trigram"]]
    out: dict[str, dict[str, float]] = {}
    for name, rel in FEATURES.items():
        values = np.load(sources.resolve(rel, source), allow_pickle=False)
        if values.shape != (len(order),):
            raise ValueError(f"{rel}: {values.shape[0] if values.ndim else 0} values for {len(order)} sentences")
        if np.isnan(values).any():
            raise ValueError(f"{rel}: NaN at sentence {int(np.flatnonzero(np.isnan(values))[0])}")
        out[name] = dict(zip(order, (float(v) for v in values)))
    return out
