"""The panels' vectorized paths give the per-group definitions bit for bit: signed ranks and SRCS of
every group at once (srcs.grouped_*), per-unit means over integer codes (codes.group_means), the
selection masks shared by a TrialMasks, and wilcoxon_p's remembered p-values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from contstim_bench.analysis.accuracy import unit_means
from contstim_bench.analysis.codes import group_means, labels
from contstim_bench.analysis.inference import wilcoxon_p
from contstim_bench.analysis.selection import CONDITIONS, TrialMasks, select
from contstim_bench.analysis.srcs import grouped_signed_ranks, grouped_srcs, signed_ranks, srcs


def _groups(rng: np.random.Generator, n: int, n_groups: int) -> np.ndarray:
    return rng.integers(0, n_groups, n)


def test_grouped_signed_ranks_by_hand():
    # group 0: (-3, 0, 1, 1) -> (-3, 0, 1.5, 1.5); group 1: (2, -2, 5) -> (1.5, -1.5, 3)
    x = np.array([-3.0, 2.0, 0.0, 1.0, -2.0, 1.0, 5.0])
    codes = np.array([0, 1, 0, 0, 1, 0, 1])
    assert grouped_signed_ranks(x, codes).tolist() == [-3.0, 1.5, 0.0, 1.5, -1.5, 1.5, 3.0]


@pytest.mark.parametrize("seed", range(5))
def test_grouped_srcs_equals_srcs_per_group_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n, n_groups = 400, 7
    codes = _groups(rng, n, n_groups)
    ratings = rng.integers(1, 7, n) - 3.5  # ties, as real ratings
    model = np.round(rng.normal(size=n), 1)  # ties and exact zeros
    model[codes == 3] = 0.0  # a group where the model has no preference: srcs 0.0
    ranks = grouped_signed_ranks(model, codes)
    got = grouped_srcs(model, ratings, codes, n_groups)
    for g in range(n_groups):
        rows = codes == g
        assert np.array_equal(ranks[rows], signed_ranks(model[rows]))
        assert got[g] == srcs(model[rows], ratings[rows])
    assert got[3] == 0.0


def test_group_means_equals_unit_means_bit_for_bit():
    rng = np.random.default_rng(1)
    ids = pd.Series(rng.choice(["p10", "p2", "p1", "q"], 300))
    lab = labels(ids)
    mask = rng.random(300) < 0.7
    for values in (rng.integers(0, 3, mask.sum()) / 2.0, rng.normal(size=mask.sum())):  # exact sums, and not
        got, want = group_means(values, lab, mask), unit_means(values, ids[mask])
        pd.testing.assert_series_equal(got, want, check_exact=True)
        assert list(got.index) == ["p1", "p10", "p2", "q"]


def test_trial_masks_are_shared_and_read_only():
    frame = pd.DataFrame({
        "trial_type": ["natural_controversial"] * 3 + ["randomly_sampled_natural"],
        **{c: [None, "m1", None, None] for c in ("sentence1_accept_model", "sentence2_accept_model",
                                                "sentence1_reject_model")},
        "sentence2_reject_model": ["m1", None, None, None],
    })
    masks = TrialMasks(frame)
    cond = next(c for c in CONDITIONS if c.key == "natural_controversial")
    mask, sel = select(masks, "m1", cond)
    assert (mask.tolist(), sel) == ([True, True, False, False], "targeted")
    assert select(frame, "m1", cond)[0].tolist() == mask.tolist()
    base, sel = select(masks, "m2", cond)  # not targeted: every trial of the condition
    assert (base.tolist(), sel) == ([True, True, True, False], "all")
    assert base is masks.condition(cond)
    with pytest.raises(ValueError, match="read-only"):
        base[0] = False


def test_wilcoxon_p_remembered_value_is_the_computed_one():
    x, y = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9]), np.array([0.3, 0.1, 0.2, 0.5, 0.25, 0.6])
    first = wilcoxon_p(x, y)
    assert wilcoxon_p(x.copy(), y.copy()) == first == wilcoxon_p(list(x), list(y))
    assert wilcoxon_p(y, x) == first  # two-sided
    with pytest.raises(ValueError, match="NaN"):
        wilcoxon_p(np.r_[x[:-1], np.nan], y)
