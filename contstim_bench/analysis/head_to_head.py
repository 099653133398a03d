"""Two models compared on the same trials: head-to-head and agreement (Golan et al. 2023, Fig. S3, S4).

**Head-to-head** (Fig. S4, generalised to any two models A and B and any condition):

1. the trials: those of the condition that target *both* models (the pairs selected or
   synthesised to contrast A with B, as in Fig. S4; selection ``"targeted_both"``), or every
   trial of the condition when no trial targets both (a new model, or an untargeted condition;
   selection ``"all"``);
2. of these, the trials on which the two models prefer different sentences (a model tie, a
   log-ratio of exactly 0, prefers neither sentence: such trials are left out);
3. per unit (participant group or participant), the share of those participant x trial rows on
   which the participant chose A's sentence; their mean over units is ``share``;
4. a two-sided Wilcoxon signed-rank test of the per-unit shares against 0.5 across units
   (``zero_method="zsplit"``, as every test of the package; the differences from 0.5 are
   rounded to 12 decimals so that the test of A vs B and of B vs A is the same test).

Both models are judged on exactly the same trials, so the comparison is like for like, whatever
trials each model is evaluated on alone.  When the models never disagree there is nothing to
compare: ``n_trials`` is 0 and ``share`` and ``p`` are None ("not separable on this data").

**Agreement** (Fig. S3): over the distinct sentence pairs of a selection, the share on which the
two models rank the two sentences the same way (both prefer the same sentence, or both tie).

All log-ratios here are ``log p(sentence2|m) - log p(sentence1|m)`` (natural log) in the shared
pair orientation of :func:`contstim_bench.analysis.trials.prepare_trials`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .codes import TrialCodes, group_means, n_distinct
from .inference import wilcoxon_p
from .selection import Condition, TrialMasks, as_masks

CHANCE = 0.5
"""The per-unit share expected when the human choices favour neither model."""


@dataclass(frozen=True)
class HeadToHead:
    """Model A against model B on the trials where they disagree.

    ``share_by_unit``: per unit, the share of disagreement rows (participant x trial) on which the
    participant chose A's sentence (units without such rows are absent); ``share`` its mean;
    ``p`` the two-sided Wilcoxon test of the shares against 0.5 (None without disagreement);
    ``n_pairs_selected`` the distinct pairs of the selection, ``n_pairs`` those of them (and
    ``n_trials`` the participant x trial rows) on which the models disagree.
    """

    selection: str
    n_pairs_selected: int  # distinct pairs in the selection, before keeping the disagreements
    n_trials: int
    n_pairs: int
    share_by_unit: pd.Series
    p: float | None
    share_pooled: float | None = None  # over all disagreement rows at once (the authors' Fig. S4)

    @property
    def share(self) -> float | None:
        return float(self.share_by_unit.mean()) if len(self.share_by_unit) else None

    @property
    def separable(self) -> bool:
        """Whether the two models prefer different sentences on at least one trial."""
        return self.n_trials > 0


def pair_selection(frame: pd.DataFrame | TrialMasks, a: str, b: str, cond: Condition) -> tuple[np.ndarray, str]:
    """(row mask, selection name) of the trials of ``cond`` on which ``a`` meets ``b``
    (``frame``: the trials frame, or its :class:`~.selection.TrialMasks` to reuse the masks).

    A targeted condition uses its trials that target both models in any role when there are
    some (``"targeted_both"``), otherwise every trial of the condition (``"all"``).
    """
    masks = as_masks(frame)
    base = masks.condition(cond)
    if cond.targeting is not None:
        both = base & masks.targets(a, "any") & masks.targets(b, "any")
        if both.any():
            return both, "targeted_both"
    return base, "all"


def head_to_head(
    trials: TrialCodes,
    log_ratio_a: np.ndarray,
    log_ratio_b: np.ndarray,
    mask: np.ndarray,
    selection: str,
) -> HeadToHead:
    """Model A vs model B on the rows of ``mask`` (see the module docstring).

    ``trials`` are the codes of a prepared trials frame (:func:`.codes.trial_codes`: choices,
    pairs and units per row), and the two log-ratios are aligned with its rows.
    """
    lr_a = np.asarray(log_ratio_a, dtype=np.float64)
    lr_b = np.asarray(log_ratio_b, dtype=np.float64)
    disagree = mask & (np.sign(lr_a) * np.sign(lr_b) < 0)
    n_selected = n_distinct(trials.pair, mask)
    if not disagree.any():
        return HeadToHead(selection, n_selected, 0, 0, pd.Series(dtype=np.float64), None)
    chose_a = trials.chose_second[disagree] == (lr_a[disagree] > 0)
    shares = group_means(chose_a.astype(np.float64), trials.unit, disagree)
    # rounded so that A vs B and B vs A (shares x and 1 - x) give exactly opposite differences,
    # hence the same ranks, ties and p-value
    above_chance = np.round(shares.to_numpy() - CHANCE, 12)
    p = wilcoxon_p(above_chance, np.zeros(len(shares)))
    return HeadToHead(
        selection=selection,
        n_pairs_selected=n_selected,
        n_trials=int(disagree.sum()),
        n_pairs=n_distinct(trials.pair, disagree),
        share_by_unit=shares,
        p=p,
        share_pooled=float(chose_a.mean()),
    )


def agreement(frame: pd.DataFrame, log_ratio_a: np.ndarray, log_ratio_b: np.ndarray, mask: np.ndarray) -> tuple[float, int]:
    """(share of the distinct pairs of ``mask`` that both models rank the same way, number of pairs).

    Fig. S3 of the paper.  ValueError when ``mask`` selects no trial.
    """
    if not mask.any():
        raise ValueError("agreement needs at least one trial")
    same = np.sign(np.asarray(log_ratio_a, dtype=np.float64)) == np.sign(np.asarray(log_ratio_b, dtype=np.float64))
    per_pair = pd.Series(same[mask], index=frame["pair_id"].to_numpy()[mask])
    per_pair = per_pair[~per_pair.index.duplicated()]
    return float(per_pair.mean()), int(len(per_pair))


def model_order(block: dict) -> list[str]:
    """The models of a head-to-head matrix (``block["head_to_head"]``: model -> other -> cell with
    ``share``) by their mean share against the others, most human-consistent first; models that
    never disagree with anyone last, ties by name: the order of Fig. S4's rows and columns."""
    def mean_share(a: str) -> float:
        shares = [c["share"] for c in block["head_to_head"][a].values() if c["share"] is not None]
        return float(np.mean(shares)) if shares else -1.0

    return sorted(block["head_to_head"], key=lambda a: (-mean_share(a), a))
