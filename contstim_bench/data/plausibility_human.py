"""Minimal pairs and human accuracy of Kauf et al. (2024) Experiment 1 (EventsAdapt, DTFit).

Binary accuracy (Kauf et al. 2024, §3.3): for each minimal pair, a hit when the plausible
sentence gets the *higher* score than its implausible version (a tie is a miss); accuracy is the
fraction of pairs that are hits. For humans the score of a sentence is the mean of its ratings
across participants (§3.2), so the human accuracy is the fraction of pairs whose plausible
sentence has the higher mean rating.

The paper's human figures (1.0 on EventsAdapt AI, 0.95 on AA, 0.99 on DTFit) are reproduced by
the *active-voice* pairs of EventsAdapt (the main analysis of Kauf et al. 2023, from which the
human data comes: AI 128/128 = 1.0, AAN 122/129 = 0.946) and by all DTFit pairs (391/395 =
0.990). Over both voices EventsAdapt gives AI 254/256 = 0.992 and AAN 247/258 = 0.957.

Inputs are the ``eventsadapt`` / ``dtfit`` configs of the ``plausibility`` dataset as a pandas
DataFrame, a :class:`datasets.Dataset` or a :class:`pyarrow.Table`; ``None`` loads them from
the built dataset (building it on first use).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

EXPERIMENT1_TRIAL_TYPES = ("AI", "AAN")
"""EventsAdapt trial types of Experiment 1 (``AAR`` are control items the paper excludes)."""

VOICES = ("active", "passive")

_SENTENCE_COLUMNS = ("item", "trial_type", "voice", "plausibility", "sentence", "human_mean")
_DTFIT_COLUMNS = ("item", "sentence_plausible", "sentence_implausible",
                  "human_mean_plausible", "human_mean_implausible")


def _as_frame(data: Any, config: str) -> pd.DataFrame:
    """A pandas copy of ``data``; ``None`` loads config ``config`` of the built dataset."""
    if data is None:
        from .load import load_config

        data = load_config("plausibility", config, split="test")
    if isinstance(data, pd.DataFrame):
        return data.copy()
    if hasattr(data, "to_pandas"):
        return data.to_pandas()
    raise TypeError(f"expected a pandas DataFrame, datasets.Dataset or pyarrow.Table, got {type(data).__name__}")


def _require(df: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: missing columns {missing}")


def eventsadapt_pairs(
    sentences: Any = None,
    trial_types: tuple[str, ...] = EXPERIMENT1_TRIAL_TYPES,
    voice: str | None = None,
) -> pd.DataFrame:
    """EventsAdapt minimal pairs: one row per (item, voice), plausible vs implausible sentence.

    Columns: ``pair_id``, ``item``, ``trial_type``, ``voice``, ``sentence_plausible``,
    ``sentence_implausible``, ``human_mean_plausible``, ``human_mean_implausible`` (mean ratings
    on the 1-7 scale), sorted by item then voice. ``voice`` (``"active"``/``"passive"``) keeps
    one voice; ``None`` keeps both. Raises ValueError naming the item when a pair is incomplete.
    """
    df = _as_frame(sentences, "eventsadapt")
    _require(df, _SENTENCE_COLUMNS, "EventsAdapt sentences")
    unknown = sorted(set(trial_types) - {"AI", "AAN", "AAR"})
    if unknown:
        raise ValueError(f"unknown EventsAdapt trial types {unknown}; known: AI, AAN, AAR")
    if voice is not None and voice not in VOICES:
        raise ValueError(f"voice must be 'active', 'passive' or None, not {voice!r}")
    df = df[df.trial_type.isin(trial_types)]
    if voice is not None:
        df = df[df.voice == voice]
    if df.empty:
        raise ValueError(f"no EventsAdapt sentences of trial types {list(trial_types)} and voice {voice!r}")
    groups: dict[tuple, list[dict]] = {}  # plain records: per-group pandas indexing is ~100x slower
    for rec in df[["item", "voice", "plausibility", "trial_type", "sentence", "human_mean"]].to_dict("records"):
        groups.setdefault((rec["item"], rec["voice"]), []).append(rec)
    rows = []
    for (item, v) in sorted(groups):
        grp = groups[(item, v)]
        labels = sorted(r["plausibility"] for r in grp)
        if labels != ["implausible", "plausible"]:
            raise ValueError(f"EventsAdapt item {item} ({v}): expected one plausible and one implausible "
                             f"sentence, found {labels}")
        types = sorted({r["trial_type"] for r in grp})
        if len(types) != 1:
            raise ValueError(f"EventsAdapt item {item} ({v}): mixed trial types {types}")
        good, bad = (next(r for r in grp if r["plausibility"] == p) for p in ("plausible", "implausible"))
        rows.append((f"EA{int(item):03d}-{v}", int(item), good["trial_type"], v, good["sentence"], bad["sentence"],
                     float(good["human_mean"]), float(bad["human_mean"])))
    return pd.DataFrame(rows, columns=["pair_id", "item", "trial_type", "voice", "sentence_plausible",
                                       "sentence_implausible", "human_mean_plausible", "human_mean_implausible"])


def pair_hits(score_plausible: Any, score_implausible: Any, what: str = "pairs") -> np.ndarray:
    """Boolean hits: the plausible sentence's score strictly above the implausible one's.

    Scores are any comparable numbers (mean ratings, natural-log probabilities); NaN raises
    ValueError naming the first pair.
    """
    good = np.asarray(score_plausible, dtype=np.float64)
    bad = np.asarray(score_implausible, dtype=np.float64)
    if good.shape != bad.shape:
        raise ValueError(f"{what}: {good.shape[0]} plausible vs {bad.shape[0]} implausible scores")
    nan = np.isnan(good) | np.isnan(bad)
    if nan.any():
        raise ValueError(f"{what}: missing score for pair {int(nan.argmax())}")
    return good > bad


def human_accuracy_eventsadapt(
    sentences: Any = None,
    voice: str | None = None,
    trial_types: tuple[str, ...] = EXPERIMENT1_TRIAL_TYPES,
) -> dict[str, float]:
    """Human binary accuracy on EventsAdapt per trial type: the fraction of (item, voice) pairs
    whose plausible sentence has the higher mean human rating.

    ``voice="active"`` gives the paper's figures (AI 1.0, AAN 0.946 ~ "0.95"); ``None`` (default)
    pools both voices (AI 0.992, AAN 0.957).
    """
    pairs = eventsadapt_pairs(sentences, trial_types=trial_types, voice=voice)
    pairs["hit"] = pair_hits(pairs.human_mean_plausible, pairs.human_mean_implausible, "EventsAdapt human means")
    acc = pairs.groupby("trial_type").hit.mean()
    return {tt: float(acc[tt]) for tt in trial_types if tt in acc.index}


def human_accuracy_dtfit(pairs: Any = None) -> float:
    """Human binary accuracy on DTFit: fraction of items whose plausible sentence has the higher
    mean typicality rating (391/395 = 0.990; item 333 is a tie, 3.5 vs 3.5, and counts as a miss)."""
    df = _as_frame(pairs, "dtfit")
    _require(df, _DTFIT_COLUMNS, "DTFit pairs")
    if df.empty:
        raise ValueError("DTFit pairs: no rows")
    hits = pair_hits(df.human_mean_plausible, df.human_mean_implausible, "DTFit human means")
    return float(hits.mean())
