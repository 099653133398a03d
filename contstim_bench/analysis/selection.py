"""Which trials evaluate which model (Methods, "Selecting trials for model evaluation").

Conditions (keys of the result file, in the paper's figure order):

=============================  =======================  ===========  ==================
key                            trial type               targeting    paper
=============================  =======================  ===========  ==================
randomly_sampled_natural       randomly_sampled_natural  none         Fig. 1a
natural_controversial          natural_controversial     any role     Fig. 1b
synthetic_vs_synthetic         synthetic_vs_synthetic    any role     Fig. 3a, Fig. S8b
natural_vs_synthetic           natural_vs_synthetic      accept       Fig. 3b
natural_vs_synthetic_reject    natural_vs_synthetic      reject       Fig. S6
natural_vs_shuffled            natural_vs_shuffled       none         (catch trials)
all                            every trial               none         Fig. 4
=============================  =======================  ===========  ==================

A targeted condition evaluates a model only on the trials that target it (any of the four
``sentence*_{accept,reject}_model`` columns for "any role"; the accept or reject columns for
the two natural-vs-synthetic selections).  A model that no trial of the condition targets
in that role (e.g. a new model, or GPT-2 in the pll experiment) is evaluated on every trial of
the condition.  The selection used is reported by name:

- ``"targeted"``: trials targeting the model in any role;
- ``"targeted_accept"`` / ``"targeted_reject"``: natural-vs-synthetic trials whose synthetic
  sentence was optimised to be accepted / rejected by the model;
- ``"all"``: every trial of the condition.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .trials import TARGET_COLUMNS


@dataclass(frozen=True)
class Condition:
    key: str
    trial_type: str | None  # None: every trial
    targeting: str | None  # None, "any", "accept" or "reject"


CONDITIONS = (
    Condition("randomly_sampled_natural", "randomly_sampled_natural", None),
    Condition("natural_controversial", "natural_controversial", "any"),
    Condition("synthetic_vs_synthetic", "synthetic_vs_synthetic", "any"),
    Condition("natural_vs_synthetic", "natural_vs_synthetic", "accept"),
    Condition("natural_vs_synthetic_reject", "natural_vs_synthetic", "reject"),
    Condition("natural_vs_shuffled", "natural_vs_shuffled", None),
    Condition("all", None, None),
)
CONDITION_KEYS = tuple(c.key for c in CONDITIONS)

_SELECTION_NAMES = {"any": "targeted", "accept": "targeted_accept", "reject": "targeted_reject"}
_ROLE_COLUMNS = {
    "any": TARGET_COLUMNS,
    "accept": ("sentence1_accept_model", "sentence2_accept_model"),
    "reject": ("sentence1_reject_model", "sentence2_reject_model"),
}


def condition(key: str) -> Condition:
    """The condition named ``key``; ValueError lists the known keys."""
    for c in CONDITIONS:
        if c.key == key:
            return c
    raise ValueError(f"unknown condition {key!r}; known: {', '.join(CONDITION_KEYS)}")


def condition_mask(frame: pd.DataFrame, cond: Condition) -> np.ndarray:
    """Rows of the condition's trial type (every row for ``all``)."""
    if cond.trial_type is None:
        return np.ones(len(frame), dtype=bool)
    return (frame["trial_type"] == cond.trial_type).to_numpy()


def conditions_present(frame: pd.DataFrame) -> list[str]:
    """The keys of :data:`CONDITIONS` whose trial type has rows in ``frame``, in their order: the
    conditions an evaluation of a model that no trial targets reports."""
    return [c.key for c in CONDITIONS if condition_mask(frame, c).any()]


def targets(frame: pd.DataFrame, model: str, role: str) -> np.ndarray:
    """Rows whose targeting columns for ``role`` ("any", "accept", "reject") name ``model``."""
    hit = np.zeros(len(frame), dtype=bool)
    for col in _ROLE_COLUMNS[role]:
        hit |= (frame[col] == model).to_numpy()
    return hit


class TrialMasks:
    """The condition and targeting masks of one trials frame, each computed once.

    A panel selects trials for every model and every pair of models of a condition; the masks
    are read-only arrays shared between the selections."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame
        self._cache: dict[tuple, np.ndarray] = {}

    def _get(self, key: tuple, compute) -> np.ndarray:
        if key not in self._cache:
            mask = compute()
            mask.flags.writeable = False
            self._cache[key] = mask
        return self._cache[key]

    def condition(self, cond: Condition) -> np.ndarray:
        return self._get(("condition", cond.trial_type), lambda: condition_mask(self.frame, cond))

    def targets(self, model: str, role: str) -> np.ndarray:
        return self._get(("targets", model, role), lambda: targets(self.frame, model, role))


def as_masks(frame: pd.DataFrame | TrialMasks) -> TrialMasks:
    """``frame``'s :class:`TrialMasks` (a new one for a DataFrame)."""
    return frame if isinstance(frame, TrialMasks) else TrialMasks(frame)


def select(frame: pd.DataFrame | TrialMasks, model: str, cond: Condition) -> tuple[np.ndarray, str]:
    """(row mask, selection name) of the trials that evaluate ``model`` in ``cond``
    (``frame``: the trials frame, or its :class:`TrialMasks` to reuse the masks).

    The mask is empty only when the condition has no trials at all.
    """
    masks = as_masks(frame)
    base = masks.condition(cond)
    if cond.targeting is None:
        return base, "all"
    targeted = base & masks.targets(model, cond.targeting)
    if targeted.any():
        return targeted, _SELECTION_NAMES[cond.targeting]
    return base, "all"
