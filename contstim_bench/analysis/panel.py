"""One condition, several models: per-unit scores, noise ceilings and the paper's test families.

A **panel** is one condition of one experiment with every model in it (the evaluated model and
the reference models, as in the paper's figures).  Each model is scored on its own trial
selection (:func:`contstim_bench.analysis.selection.select`).  The tests of a panel fall into
the three Benjamini-Hochberg families of the Methods, each adjusted separately, per measure:

- ``model_vs_lower_ceiling``: every model of the panel against its lower noise ceiling
  (the paper's "nine comparisons" for its nine models);
- ``model_vs_model``: every pair of models whose per-unit scores compare like for like (the
  paper's "36 model pairs"): both evaluated on the same trials (basis ``"same_trials"``), or both
  targeted by the condition and each evaluated on the trials that target it, as in the paper's
  Figures 1b and 3a (basis ``"own_selection"``).  A model evaluated on all trials is never
  compared this way with a model evaluated on its own targeted trials: those are different trial
  sets, and a head-to-head decides instead;
- ``head_to_head``: every pair of models on the trials where they disagree
  (:mod:`contstim_bench.analysis.head_to_head`, Fig. S4), for the pairs that disagree at all.

Beside the paper's three, the head-to-heads tested by item (sentence pairs as units, F2) form a
fourth family, ``head_to_head_by_item``, of the same pairs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from .accuracy import DEFAULT_TIES, trial_accuracy
from .codes import group_means, n_distinct, trial_codes
from .head_to_head import HeadToHead, head_to_head, pair_selection
from .inference import ALPHA, bh_adjust, paired, wilcoxon_p
from .noise_ceiling import accuracy_ceiling_per_trial
from .selection import Condition, TrialMasks, select
from .srcs import CENTRE, participant_codes, srcs_ceiling_by_participant, srcs_of_participants
from .trials import PreparedTrials

MEASURES = ("accuracy", "srcs")
FAMILY_CEILING = "model_vs_lower_ceiling"
FAMILY_MODELS = "model_vs_model"
FAMILY_HEAD_TO_HEAD = "head_to_head"
FAMILY_HEAD_TO_HEAD_ITEMS = "head_to_head_by_item"
FAMILIES = (FAMILY_CEILING, FAMILY_MODELS, FAMILY_HEAD_TO_HEAD, FAMILY_HEAD_TO_HEAD_ITEMS)
"""The Benjamini-Hochberg families of a panel (each adjusted on its own, per measure)."""


@dataclass
class SelectionScores:
    """One model (or the noise ceiling) on one selection, per unit."""

    selection: str
    mask: np.ndarray
    n_trials: int
    n_pairs: int
    accuracy: pd.Series
    srcs: pd.Series


@dataclass
class CeilingScores:
    accuracy_lower: pd.Series
    accuracy_upper: pd.Series
    srcs_lower: pd.Series
    srcs_upper: pd.Series

    def lower(self, measure: str) -> pd.Series:
        return self.accuracy_lower if measure == "accuracy" else self.srcs_lower


class Evaluator:
    """Per-unit scores and ceilings on one prepared trials frame (ceilings cached per selection).

    The ids, choices and ratings of the frame are read once into numpy arrays
    (:mod:`.codes`), and the selection masks once per condition and model
    (:class:`~.selection.TrialMasks`): the panels of every condition reuse them."""

    def __init__(self, prepared: PreparedTrials, ties: str = DEFAULT_TIES):
        self.prepared = prepared
        self.ties = ties
        frame = prepared.frame
        self.frame = frame
        self.masks = TrialMasks(frame)
        self.codes = trial_codes(prepared)
        first = frame.drop_duplicates("participant")
        self.participant_unit = pd.Series(
            first[prepared.unit].astype(str).to_numpy(), index=first["participant"].to_numpy()
        )
        self._participants, self._participant_names = participant_codes(frame)
        self._centred = frame["rating_oriented"].to_numpy(dtype=np.float64) - CENTRE
        self._acc_ceiling: tuple[np.ndarray, np.ndarray] | None = None
        self._ceilings: dict[bytes, CeilingScores] = {}

    def _srcs_units(self, per_participant: pd.Series) -> pd.Series:
        if self.prepared.unit == "participant":
            return per_participant.rename(index=str).sort_index()
        groups = self.participant_unit.loc[per_participant.index].to_numpy()
        return per_participant.groupby(groups, sort=True).mean()

    def scores(self, log_ratio: np.ndarray, mask: np.ndarray, selection: str) -> SelectionScores:
        lr = np.asarray(log_ratio, dtype=np.float64)[mask]
        correct = trial_accuracy(lr, self.codes.chose_second[mask], self.ties)
        return SelectionScores(
            selection=selection,
            mask=mask,
            n_trials=int(mask.sum()),
            n_pairs=n_distinct(self.codes.pair, mask),
            accuracy=group_means(correct, self.codes.unit, mask),
            srcs=self._srcs_units(srcs_of_participants(lr, self._centred[mask], self._participants[mask],
                                                       self._participant_names)),
        )

    def ceiling(self, mask: np.ndarray) -> CeilingScores:
        key = np.packbits(mask).tobytes()
        if key not in self._ceilings:
            if self._acc_ceiling is None:
                self._acc_ceiling = accuracy_ceiling_per_trial(self.frame)
            lower, upper = self._acc_ceiling
            s_lower, s_upper = srcs_ceiling_by_participant(self.frame[mask])
            self._ceilings[key] = CeilingScores(
                accuracy_lower=group_means(lower[mask], self.codes.unit, mask),
                accuracy_upper=group_means(upper[mask], self.codes.unit, mask),
                srcs_lower=self._srcs_units(s_lower),
                srcs_upper=self._srcs_units(s_upper),
            )
        return self._ceilings[key]


def comparison_basis(a: SelectionScores, b: SelectionScores) -> str | None:
    """``"same_trials"``, ``"own_selection"`` (both targeted, each on its own trials) or None
    (one model on its targeted trials, the other on all trials: not comparable like for like)."""
    if np.array_equal(a.mask, b.mask):
        return "same_trials"
    if a.selection != "all" and b.selection != "all":
        return "own_selection"
    return None


@dataclass
class Comparison:
    """Model A vs model B on their per-unit scores (the ``model_vs_model`` family)."""

    basis: str
    n_units: int
    delta: dict[str, float] = field(default_factory=dict)  # measure -> mean over shared units of A - B
    p: dict[str, float] = field(default_factory=dict)
    p_bh: dict[str, float] = field(default_factory=dict)


@dataclass
class ConditionPanel:
    """Every model of one condition, with the tests of the three families (see the module docstring)."""

    condition: Condition
    unit: str
    names: list[str]
    scores: dict[str, SelectionScores]
    ceilings: dict[str, CeilingScores]
    ceiling_p: dict[str, dict[str, float]]  # model -> measure -> raw p vs its lower ceiling
    ceiling_p_bh: dict[str, dict[str, float]]
    comparisons: dict[tuple[str, str], Comparison]  # like-for-like pairs only, (a, b) in names order
    head_to_head: dict[tuple[str, str], HeadToHead]  # every pair, (a, b) in names order
    head_to_head_p_bh: dict[tuple[str, str], float | None]
    head_to_head_items_p_bh: dict[tuple[str, str], float | None] = field(default_factory=dict)

    def family_sizes(self) -> dict[str, int]:
        """Number of tests in each family (per measure for the first two)."""
        return {
            FAMILY_CEILING: len(self.names),
            FAMILY_MODELS: len(self.comparisons),
            FAMILY_HEAD_TO_HEAD: sum(h.p is not None for h in self.head_to_head.values()),
            FAMILY_HEAD_TO_HEAD_ITEMS: sum(h.p_items is not None for h in self.head_to_head.values()),
        }

    def comparison(self, a: str, b: str) -> tuple[Comparison, bool] | None:
        """(the comparison of ``a`` and ``b``, whether it is stored as (b, a)), or None."""
        if (a, b) in self.comparisons:
            return self.comparisons[(a, b)], False
        if (b, a) in self.comparisons:
            return self.comparisons[(b, a)], True
        return None

    def match(self, a: str, b: str) -> tuple[HeadToHead, float | None, bool]:
        """(head-to-head of the stored pair, its BH-adjusted p, whether it is stored as (b, a))."""
        if (a, b) in self.head_to_head:
            return self.head_to_head[(a, b)], self.head_to_head_p_bh[(a, b)], False
        return self.head_to_head[(b, a)], self.head_to_head_p_bh[(b, a)], True

    def items_q(self, a: str, b: str) -> float | None:
        """The BH-adjusted p of the by-item test of ``a`` and ``b`` (``head_to_head_by_item`` family)."""
        return self.head_to_head_items_p_bh.get((a, b), self.head_to_head_items_p_bh.get((b, a)))


def condition_panel(ev: Evaluator, cond: Condition, log_ratios: dict[str, np.ndarray], *,
                    per_unit_tests: bool = True) -> ConditionPanel | None:
    """The panel of ``cond`` for the models of ``log_ratios`` (oriented per-trial log-ratios,
    in the order given); None when the condition has no trials.  ``per_unit_tests=False`` leaves
    out the tests against the ceiling and between per-unit scores (their dicts stay empty), for
    callers that need only the head-to-heads (``scores`` and ``ceilings`` stay empty too)."""
    names = list(log_ratios)
    scores: dict[str, SelectionScores] = {}
    ceilings: dict[str, CeilingScores] = {}
    for name in names:
        mask, sel = select(ev.masks, name, cond)
        if not mask.any():
            return None
        if per_unit_tests:
            scores[name] = ev.scores(log_ratios[name], mask, sel)
            ceilings[name] = ev.ceiling(mask)

    ceiling_p: dict[str, dict[str, float]] = {n: {} for n in names}
    ceiling_p_bh: dict[str, dict[str, float]] = {n: {} for n in names}
    for measure in (MEASURES if per_unit_tests else ()):
        raw = []
        for name in names:
            x, y = paired(getattr(scores[name], measure), ceilings[name].lower(measure), f"{name} vs lower ceiling")
            raw.append(wilcoxon_p(x, y))
        for name, p, q in zip(names, raw, bh_adjust(raw)):
            ceiling_p[name][measure] = float(p)
            ceiling_p_bh[name][measure] = float(q)

    comparisons: dict[tuple[str, str], Comparison] = {}
    for a, b in (combinations(names, 2) if per_unit_tests else ()):
        basis = comparison_basis(scores[a], scores[b])
        if basis is None or scores[a].accuracy.index.intersection(scores[b].accuracy.index).empty:
            continue  # not like for like, or no unit has scores of both (nothing to pair)
        comp = Comparison(basis=basis, n_units=0)
        for measure in MEASURES:
            x, y = paired(getattr(scores[a], measure), getattr(scores[b], measure), f"{a} vs {b}")
            comp.n_units = int(len(x))
            comp.delta[measure] = float(np.mean(x - y))
            comp.p[measure] = wilcoxon_p(x, y)
        comparisons[(a, b)] = comp
    for measure in MEASURES:
        adjusted = bh_adjust([c.p[measure] for c in comparisons.values()])
        for comp, q in zip(comparisons.values(), adjusted):
            comp.p_bh[measure] = float(q)

    matches: dict[tuple[str, str], HeadToHead] = {}
    for a, b in combinations(names, 2):
        mask, sel = pair_selection(ev.masks, a, b, cond)
        matches[(a, b)] = head_to_head(ev.codes, log_ratios[a], log_ratios[b], mask, sel)
    tested = [k for k, h in matches.items() if h.p is not None]
    adjusted = dict(zip(tested, (float(q) for q in bh_adjust([matches[k].p for k in tested]))))
    by_item = [k for k, h in matches.items() if h.p_items is not None]
    adjusted_items = dict(zip(by_item, (float(q) for q in bh_adjust([matches[k].p_items for k in by_item]))))
    return ConditionPanel(
        condition=cond,
        unit=ev.prepared.unit,
        names=names,
        scores=scores,
        ceilings=ceilings,
        ceiling_p=ceiling_p,
        ceiling_p_bh=ceiling_p_bh,
        comparisons=comparisons,
        head_to_head=matches,
        head_to_head_p_bh={k: adjusted.get(k) for k in matches},
        head_to_head_items_p_bh={k: adjusted_items.get(k) for k in matches},
    )


def better(delta: float, name: str, other: str) -> str:
    """The name with the higher score (``delta`` = name minus other), or ``"tie"``."""
    return name if delta > 0 else other if delta < 0 else "tie"


def is_significant(p_bh: float | None) -> bool:
    return p_bh is not None and p_bh < ALPHA
