"""The one ranking of models within a condition, used by every door that ranks (the terminal
summary of ``contstim evaluate``, the leaderboard's table, site, CSV/JSON and Gradio app).

Models are ranked only like for like (:func:`comparison_group`):

- a model evaluated on *every* trial of the condition is ranked among the other models evaluated
  on every trial (the same trials);
- a model evaluated on the trials that *target* it is ranked among the other targeted models,
  each on its own selection, as the paper's Figures 1b and 3a rank them;
- results that score a model tie differently (``analysis.ties``: ``half``, ``miss``, ``hit``) are
  never ranked together: the convention changes the accuracy;
- a model whose predictions are degenerate (:func:`degenerate_reason`: every pair a tie, or the
  same presented sentence preferred on every trial) is listed but never ranked.

Values are compared as they are shown (:data:`SHOWN_DIGITS` decimals): models equal at that
precision share the best of their ranks, written ``=N`` (:func:`rank_text`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .accuracy import DEFAULT_TIES

SHOWN_DIGITS = 3
"""Decimals every door shows; values equal at this precision share a rank."""

ALL_TRIALS = "every trial of the condition"
OWN_TRIALS = "the trials that target each model"


def degenerate_reason(log_ratios: np.ndarray) -> str | None:
    """Why a model's predictions say nothing, or None.

    ``log_ratios``: per-trial ``log p(sentence2) - log p(sentence1)`` (natural log) as the
    sentences were shown, over every trial of an experiment.  Degenerate: every trial a tie
    (equal log-probabilities), or the same presented position preferred on every trial that is
    not a tie (at least two such trials): a model like that is not predicting which sentence
    people prefer, whatever its accuracy under a ties convention."""
    lr = np.asarray(log_ratios, dtype=np.float64)
    if lr.size == 0:
        return None
    decided = lr[lr != 0]
    if decided.size == 0:
        return f"every one of the {lr.size} trials is a tie (equal log-probabilities)"
    if decided.size >= 2 and (np.all(decided > 0) or np.all(decided < 0)):
        side = "second" if decided[0] > 0 else "first"
        return (f"the sentence shown {side} is preferred on every one of the {decided.size} trials that are not "
                f"ties")
    return None


def shown(value: float) -> float:
    """``value`` as the doors show it (:data:`SHOWN_DIGITS` decimals)."""
    return float(f"{value:.{SHOWN_DIGITS}f}")


def comparison_group(selection: str, ties: str = DEFAULT_TIES) -> str:
    """The like-for-like group of a model's entry: which trials it is scored on (all trials, or
    the trials that target it) and, when not the default, its ties convention."""
    group = ALL_TRIALS if selection == "all" else OWN_TRIALS
    return group if ties == DEFAULT_TIES else f"{group}; a tie counts as a {ties}"


@dataclass(frozen=True)
class Ranked:
    """One model's place in a condition: ``rank`` (1 = best; None: not ranked, ``reason`` says
    why), ``among`` (how many models it is ranked among), ``tied`` (the rank is shared) and
    ``group`` (its like-for-like group, :func:`comparison_group`)."""

    rank: int | None
    among: int
    tied: bool
    group: str
    reason: str | None = None


def rank_models(entries: Sequence[dict], measure: str = "accuracy",
                ties: Sequence[str] | None = None) -> list[Ranked]:
    """The rank of every entry of one condition by ``measure`` (highest first), like for like.

    ``entries``: blocks of a condition (a result's ``experiments`` entry or ``panels`` model:
    ``selection``, ``accuracy``, ``srcs`` and ``degenerate``); ``ties``: each entry's ties
    convention (default: every entry ``half``).  A model is ranked among the non-degenerate
    entries of its :func:`comparison_group`; alone there, or degenerate, it is not ranked."""
    ties = list(ties) if ties is not None else [DEFAULT_TIES] * len(entries)
    if len(ties) != len(entries):
        raise ValueError(f"{len(ties)} ties conventions for {len(entries)} entries")
    groups = [comparison_group(e["selection"], t) for e, t in zip(entries, ties)]
    out: list[Ranked | None] = [None] * len(entries)
    for group in dict.fromkeys(groups):
        members = [i for i, g in enumerate(groups) if g == group]
        ranked = [i for i in members if not entries[i].get("degenerate")]
        for i in members:
            if entries[i].get("degenerate"):
                out[i] = Ranked(None, len(ranked), False, group, f"degenerate predictions: {entries[i]['degenerate']}")
        if len(ranked) < 2:
            for i in ranked:
                out[i] = Ranked(None, 1, False, group, f"no other model evaluated like for like ({group})")
            continue
        from scipy.stats import rankdata  # imported when used: see analysis/inference.py

        values = [shown(entries[i][measure]) for i in ranked]
        rank = rankdata([-v for v in values], method="min")
        for i, r, v in zip(ranked, rank, values):
            out[i] = Ranked(int(r), len(ranked), values.count(v) > 1, group)
    return out  # type: ignore[return-value]


def rank_in_panel(blocks: Mapping[str, dict], name: str, measures: Sequence[str], ties: str = DEFAULT_TIES
                  ) -> dict[str, dict]:
    """``{measure: Ranked as a dict}``: the place of model ``name`` among every model of a
    condition's panel (``blocks``: name -> panel block; one ties convention, the result's), by
    each of ``measures``, with :func:`rank_models`.  What a result's entry records as ``rank``,
    so that no door ranks a result itself."""
    names = list(blocks)
    if name not in blocks:
        raise ValueError(f"model {name!r} is not in the panel ({', '.join(map(repr, names))})")
    entries = [blocks[n] for n in names]
    return {m: asdict(rank_models(entries, m, [ties] * len(names))[names.index(name)]) for m in measures}


def ranked_from(record: Mapping) -> Ranked:
    """The :class:`Ranked` a result's ``rank`` record holds (:func:`rank_in_panel`)."""
    return Ranked(**record)


def rank_text(r: Ranked, with_count: bool = True) -> str:
    """``=2/7`` (shared), ``3/7``, or ``-`` when not ranked (``with_count=False``: ``=2``, ``3``)."""
    if r.rank is None:
        return "-"
    return ("=" if r.tied else "") + str(r.rank) + (f"/{r.among}" if with_count else "")
