"""The catch-trial exclusion rule of Golan et al. (2023, Methods), in one place.

Every participant sees catch trials (``natural_vs_shuffled``: a natural sentence against the same
words shuffled); a participant who chose the natural sentence in fewer than ``min_correct`` of them
is excluded, with all their trials.  The paper's rule is at least 11 of 12 (:data:`MIN_CATCH_CORRECT`).

``contstim experiment ingest`` applies it to a round's participants, and a planned round's
simulated participants (:mod:`.power`) are excluded by the same function, so a plan's power counts
the participants the ingested round will really keep.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.design_file import CATCH_TRIAL_TYPE, NATURAL_CATCH_CODE

CATCH_TRIALS = 12
"""Catch trials per participant in the paper's experiments."""
MIN_CATCH_CORRECT = 11
"""Catch trials a participant must answer for the natural sentence to be kept (the paper's 11 of 12)."""


def catch_correct(frame: pd.DataFrame) -> np.ndarray:
    """Per row of a trials frame as shown (``sentence1`` on the left): True where a catch trial was
    answered for its natural (C1) sentence (ratings 1-3 choose the left sentence)."""
    is_catch = (frame["trial_type"] == CATCH_TRIAL_TYPE).to_numpy()
    answered = frame["rating"].notna().to_numpy()
    rating = frame["rating"].fillna(0).to_numpy(dtype=np.int64)
    left_natural = (frame["sentence1_type"] == NATURAL_CATCH_CODE).to_numpy()
    return is_catch & answered & ((rating <= 3) == left_natural)


def excluded_by_catch(n_correct, min_correct: int = MIN_CATCH_CORRECT) -> np.ndarray:
    """Whether each participant (``n_correct``: their catch trials answered for the natural
    sentence, any shape) is excluded: fewer than ``min_correct`` correct."""
    return np.asarray(n_correct) < min_correct


def rule_text(min_correct: int = MIN_CATCH_CORRECT, n_catch: int | None = None) -> str:
    """The rule in words, as a round card and a plan state it."""
    of = f" of {n_catch}" if n_catch is not None else ""
    return (f"a participant is excluded, with all their trials, who chose the natural sentence over its shuffled "
            f"version in fewer than {min_correct}{of} catch trials")
