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
   rounded to 12 decimals so that the test of A vs B and of B vs A is the same test:
   :func:`share_p_values`).

**By participants and by items.** Step 3-4 above is the paper's test, by participant (or
participant group): psycholinguistics' F1.  The same disagreement rows are also tested **by item**
(F2): per sentence pair, the share of the participants who saw it that chose A's sentence, and the
same Wilcoxon test of the per-item shares against 0.5 across sentence pairs (``share_items``,
``p_items``; its own Benjamini-Hochberg family in a panel).  A round planned by
:mod:`.power` is sized for either test or both.

Both models are judged on exactly the same trials, so the comparison is like for like, whatever
trials each model is evaluated on alone.  When the models never disagree there is nothing to
compare: ``n_trials`` is 0 and ``share`` and ``p`` are None ("not separable on this data").

**Agreement** (Fig. S3): over the distinct sentence pairs of a selection, the share on which the
two models rank the two sentences the same way (both prefer the same sentence, or both tie).

All log-ratios here are ``log p(sentence2|m) - log p(sentence1|m)`` (natural log) in the shared
pair orientation of :func:`contstim_bench.analysis.trials.prepare_trials`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .codes import TrialCodes, group_means, n_distinct
from .inference import wilcoxon_p_rows
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
    share_by_item: pd.Series = field(default_factory=lambda: pd.Series(dtype=np.float64))  # per sentence pair
    p_items: float | None = None  # the by-item (F2) Wilcoxon of the per-pair shares against 0.5

    @property
    def share(self) -> float | None:
        return float(self.share_by_unit.mean()) if len(self.share_by_unit) else None

    @property
    def share_items(self) -> float | None:
        """Mean over the sentence pairs of disagreement of the per-pair share for A (None without any)."""
        return float(self.share_by_item.mean()) if len(self.share_by_item) else None

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


def share_p_values(shares) -> np.ndarray:
    """The head-to-head test of each row of per-unit shares (shape ``(rows, units)``; NaN marks a
    unit absent from that row, e.g. a simulated participant excluded by the catch trials):
    two-sided Wilcoxon of the shares against 0.5 across the units present
    (:func:`.inference.wilcoxon_p_rows`, the differences rounded to 12 decimals); NaN for a row
    with no unit.  The one test of a head-to-head, by participant and by item, on the real trials
    (:func:`head_to_head`) and on a planned round's simulated ones (:mod:`.power`)."""
    shares = np.atleast_2d(np.asarray(shares, dtype=np.float64))
    present = ~np.isnan(shares)
    counts = present.sum(axis=1)
    out = np.full(len(shares), np.nan)
    for n in np.unique(counts[counts > 0]):
        rows = np.flatnonzero(counts == n)
        # the present values of each row, in their order
        values = shares[rows][present[rows]].reshape(len(rows), n)
        out[rows] = wilcoxon_p_rows(np.round(values - CHANCE, 12))
    return out


def disagreement(trials: TrialCodes, log_ratio_a: np.ndarray, log_ratio_b: np.ndarray,
                 mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows of ``mask`` on which the two models prefer different sentences, and on those rows in
    order whether the participant chose A's sentence): the observations of a head-to-head, which
    :func:`head_to_head` tests and :func:`.participant_model.estimate` models."""
    lr_a = np.asarray(log_ratio_a, dtype=np.float64)
    lr_b = np.asarray(log_ratio_b, dtype=np.float64)
    rows = mask & (np.sign(lr_a) * np.sign(lr_b) < 0)
    return rows, trials.chose_second[rows] == (lr_a[rows] > 0)


def head_to_head(
    trials: TrialCodes,
    log_ratio_a: np.ndarray,
    log_ratio_b: np.ndarray,
    mask: np.ndarray,
    selection: str,
) -> HeadToHead:
    """Model A vs model B on the rows of ``mask`` (see the module docstring), by unit and by item.

    ``trials`` are the codes of a prepared trials frame (:func:`.codes.trial_codes`: choices,
    pairs and units per row), and the two log-ratios are aligned with its rows.
    """
    disagree, chose_a = disagreement(trials, log_ratio_a, log_ratio_b, mask)
    n_selected = n_distinct(trials.pair, mask)
    if not disagree.any():
        return HeadToHead(selection, n_selected, 0, 0, pd.Series(dtype=np.float64), None)
    chose = chose_a.astype(np.float64)
    shares = group_means(chose, trials.unit, disagree)
    by_item = group_means(chose, trials.pair_labels, disagree)
    p_unit, p_item = (float(share_p_values(s.to_numpy()[None, :])[0]) for s in (shares, by_item))
    return HeadToHead(
        selection=selection,
        n_pairs_selected=n_selected,
        n_trials=int(disagree.sum()),
        n_pairs=n_distinct(trials.pair, disagree),
        share_by_unit=shares,
        p=p_unit,
        share_pooled=float(chose_a.mean()),
        share_by_item=by_item,
        p_items=p_item,
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
