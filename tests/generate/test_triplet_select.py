"""Triplet selection: one natural sentence per decile of each model, by ILP.  Checked against
brute force on small random tables, against an independent assignment-problem solver, and
against the published selection of Golan et al. (``..._best10.csv``)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linear_sum_assignment

from contstim_bench.data import sources
from contstim_bench.generate.triplet_select import (
    TRIPLET_COLUMNS,
    contrast_holds,
    controversiality,
    decile_bins,
    select_triplets,
)

FOLDER = "contstimlang/synthesized_sentences/20210224_controverisal_sentence_pairs_heuristic_natural_init_allow_rep/"
CANDIDATES = FOLDER + "8_word_9_models_100_sentences_per_pair.csv"
BEST10 = FOLDER + "8_word_9_models_100_sentences_per_pair_best10.csv"
DERIVED = ["loss_rank1", "loss_rank2", "worst_rank_of_two", "p_N_given_m1_decile", "p_N_given_m2_decile",
           "selected_for_human_testing"]


@pytest.fixture(scope="module")
def published():
    cand = pd.read_csv(sources.resolve(CANDIDATES))
    best = pd.read_csv(sources.resolve(BEST10))
    return cand, best


def assignment_optimum(weights, bins1, bins2, eligible, maximize):
    """Independent exact solver for K = n_bins = 10 (one per bin): a perfect matching between
    m1-bins and m2-bins where each cell offers its best eligible triplet.  Returns (optimum,
    rows chosen, whether the optimum is unique)."""
    sign = -1.0 if maximize else 1.0
    cost = np.full((10, 10), 1e9)
    arg = np.full((10, 10), -1)
    for i in np.flatnonzero(eligible):
        c = sign * weights[i]
        if c < cost[bins1[i], bins2[i]]:
            cost[bins1[i], bins2[i]], arg[bins1[i], bins2[i]] = c, i
    rows, cols = linear_sum_assignment(cost)
    best = cost[rows, cols].sum()
    # the optimum is unique iff forbidding any one of its cells makes it worse (and no cell ties)
    unique = True
    for r, c in zip(rows, cols):
        tied = [i for i in np.flatnonzero(eligible)
                if bins1[i] == r and bins2[i] == c and sign * weights[i] == cost[r, c]]
        if len(tied) > 1:
            unique = False
        alt = cost.copy()
        alt[r, c] = 1e9
        rr, cc = linear_sum_assignment(alt)
        if abs(alt[rr, cc].sum() - best) < 1e-9:
            unique = False
    return sign * best, set(arg[rows, cols].tolist()), unique


def test_published_selection_is_reproduced_with_the_upstream_criterion(published):
    """The authors' criterion is upstream's worst-rank utility, not Eq. 4: with it, for all 36
    model pairs the published choice is an optimum of our ILP, and it is our choice wherever the
    optimum is unique (33 pairs).  In roberta-bert, lstm-electra and lstm-trigram several
    choices reach the same optimum, and which one a solver returns is arbitrary (CPLEX chose
    theirs; CBC returns 351 of the 360 published triplets, HiGHS 357)."""
    cand, best = published
    assert len(cand) == 3600 and len(best) == 360
    assert cand["selected_for_human_testing"].sum() == 360
    res = select_triplets(cand.drop(columns=DERIVED), 10, criterion="worst_rank", solver="cbc")
    out = res.triplets
    # the decile bins (pandas.qcut per pair) and loss ranks are recomputed exactly
    for col in DERIVED[:-1]:
        np.testing.assert_array_equal(out[col].to_numpy(), cand[col].to_numpy(), err_msg=col)
    assert len(res.selected) == 360 and set(r.status for r in res.reports.values()) == {"optimal"}
    non_unique = set()
    same_choice = 0
    for (m1, m2), g in out.groupby(["m1", "m2"], sort=False):
        pub = cand.loc[g.index, "selected_for_human_testing"].to_numpy()
        ours = g["selected_for_human_testing"].to_numpy()
        rank = g["worst_rank_of_two"].rank(method="first").to_numpy()
        eligible = contrast_holds(g)
        assert eligible[pub].all()
        optimum, _, unique = assignment_optimum(rank, g.p_N_given_m1_decile.to_numpy(),
                                                g.p_N_given_m2_decile.to_numpy(), eligible, maximize=False)
        assert res.objective[(m1, m2)] == pytest.approx(optimum)
        assert rank[pub].sum() == pytest.approx(optimum), f"published choice for {m1}-{m2} is not optimal"
        if unique:
            assert (pub == ours).all(), f"{m1}-{m2}"
            same_choice += 1
        else:
            non_unique.add((m1, m2))
    assert non_unique == {("roberta", "bert"), ("lstm", "electra"), ("lstm", "trigram")}
    assert same_choice == 33
    # the selected rows are the published best10 file's rows
    key = ["m1", "m2", "N", "S1", "S2"]
    ours = res.selected.set_index(key).index
    theirs = best.set_index(key).index
    assert len(ours.intersection(theirs)) >= 340


def test_eq4_controversiality_selection_is_optimal_and_differs_from_published(published):
    cand, _ = published
    res = select_triplets(cand.drop(columns=DERIVED), 10, criterion="controversiality", solver="highs")
    out = res.triplets
    c = controversiality(cand)
    np.testing.assert_allclose(out["controversiality"], c)
    np.testing.assert_allclose(c, -(cand["loss_S1_vs_N"] + cand["loss_S2_vs_N"]), atol=2e-4)  # float32 files
    ours_total = pub_total = 0.0
    for (m1, m2), g in out.groupby(["m1", "m2"], sort=False):
        chosen = g["selected_for_human_testing"].to_numpy()
        assert sorted(g.p_N_given_m1_decile[chosen]) == list(range(10))
        assert sorted(g.p_N_given_m2_decile[chosen]) == list(range(10))
        assert g["eligible"][chosen].all()
        optimum, rows, _ = assignment_optimum(g["controversiality"].to_numpy(), g.p_N_given_m1_decile.to_numpy(),
                                              g.p_N_given_m2_decile.to_numpy(), contrast_holds(g), maximize=True)
        assert res.objective[(m1, m2)] == pytest.approx(optimum, abs=1e-6)
        ours_total += res.objective[(m1, m2)]
        pub_total += g["controversiality"][cand.loc[g.index, "selected_for_human_testing"].to_numpy()].sum()
    assert ours_total > pub_total
    overlap = (out["selected_for_human_testing"] & cand["selected_for_human_testing"]).sum()
    assert 100 < overlap < 150  # Eq. 4 picks another 2/3 of the triplets


def random_table(seed: int, n: int = 16):
    rng = np.random.default_rng(seed)
    lp_n1, lp_n2 = rng.normal(-60, 8, n), rng.normal(-60, 8, n)
    drop1, drop2 = rng.exponential(10, n), rng.exponential(10, n)
    t = pd.DataFrame({
        "m1": "a", "m2": "b", "N": [f"n{i}" for i in range(n)], "S1": [f"x{i}" for i in range(n)],
        "S2": [f"y{i}" for i in range(n)],
        "lp_N_given_m1": lp_n1, "lp_S1_given_m1": lp_n1 + rng.exponential(1, n),
        "lp_N_given_m2": lp_n2, "lp_S1_given_m2": lp_n2 - drop1,
        "lp_S2_given_m1": lp_n1 - drop2, "lp_S2_given_m2": lp_n2 + rng.exponential(1, n),
    })
    broken = rng.choice(n, size=2, replace=False)  # two failed syntheses: no contrast
    t.loc[broken, "lp_S1_given_m2"] = t.loc[broken, "lp_N_given_m2"]
    return t


@pytest.mark.parametrize("criterion", ["controversiality", "worst_rank"])
@pytest.mark.parametrize("per_pair,n_bins", [(2, 2), (4, 2), (3, 3)])
def test_matches_brute_force_on_small_tables(criterion, per_pair, n_bins):
    for seed in range(4):
        t = random_table(seed)
        res = select_triplets(t, per_pair, n_bins=n_bins, criterion=criterion, solver="cbc")
        b1 = pd.qcut(t.lp_N_given_m1, n_bins, labels=False).to_numpy()
        b2 = pd.qcut(t.lp_N_given_m2, n_bins, labels=False).to_numpy()
        ok = ((t.lp_S1_given_m2 < t.lp_N_given_m2) & (t.lp_S2_given_m1 < t.lp_N_given_m1)).to_numpy()
        if criterion == "controversiality":
            w = ((t.lp_N_given_m2 - t.lp_S1_given_m2) + (t.lp_N_given_m1 - t.lp_S2_given_m1)).to_numpy()
        else:
            l1 = (t.lp_S1_given_m2 - t.lp_N_given_m2).rank().to_numpy()
            l2 = (t.lp_S2_given_m1 - t.lp_N_given_m1).rank().to_numpy()
            w = -pd.Series(np.maximum(l1, l2)).rank(method="first").to_numpy()
        best = -np.inf
        for combo in itertools.combinations(np.flatnonzero(ok), per_pair):
            c = list(combo)
            if (np.bincount(b1[c], minlength=n_bins) == per_pair // n_bins).all() and \
                    (np.bincount(b2[c], minlength=n_bins) == per_pair // n_bins).all():
                best = max(best, w[c].sum())
        chosen = res.triplets["selected_for_human_testing"].to_numpy()
        assert chosen.sum() == per_pair and ok[chosen].all()
        assert w[chosen].sum() == pytest.approx(best, abs=1e-9), f"seed {seed}"


def test_bins_from_a_natural_sentence_distribution():
    rng = np.random.default_rng(5)
    pool = rng.normal(-55, 10, 5000)
    values = np.array([-200.0, -80, -55, -54.9, -30, 10])
    edges = np.quantile(pool, np.arange(1, 10) / 10)
    expected = [sum(v >= e for e in edges) for v in values]
    np.testing.assert_array_equal(decile_bins(values, 10, pool), expected)
    assert decile_bins(values, 10, pool)[0] == 0 and decile_bins(values, 10, pool)[-1] == 9
    # a table binned against the pool: every decile must be represented among eligible rows
    t = random_table(1, n=60)
    dist = {"a": rng.normal(-60, 8, 4000), "b": rng.normal(-60, 8, 4000)}
    res = select_triplets(t, 10, natural_log_probs=dist, solver="highs")
    sel = res.selected
    assert sorted(sel.p_N_given_m1_decile) == list(range(10))
    np.testing.assert_array_equal(res.triplets.p_N_given_m2_decile, decile_bins(t.lp_N_given_m2, 10, dist["b"]))
    with pytest.raises(ValueError, match="no distribution for model 'b'"):
        select_triplets(t, 10, natural_log_probs={"a": dist["a"]})


def test_given_decile_columns_are_used(published):
    cand, _ = published
    t = cand[(cand.m1 == "roberta") & (cand.m2 == "gpt2")].drop(columns=["selected_for_human_testing"])
    t = t.copy()
    t["p_N_given_m1_decile"] = 9 - t["p_N_given_m1_decile"]  # relabelled bins: same partition
    res = select_triplets(t, 10, criterion="worst_rank")
    np.testing.assert_array_equal(res.triplets.p_N_given_m1_decile, t.p_N_given_m1_decile)
    assert sorted(res.selected.p_N_given_m1_decile) == list(range(10))


def test_bad_input_is_rejected_with_a_clear_message(published):
    cand, _ = published
    t = cand[list(TRIPLET_COLUMNS)].head(100).copy()  # one model pair
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['S2'\]"):
        select_triplets(t.drop(columns=["S2"]))
    bad = t.copy()
    bad.loc[bad.index[3], "lp_S1_given_m2"] = np.nan
    with pytest.raises(ValueError, match="column 'lp_S1_given_m2': row 3 is not a number"):
        select_triplets(bad)
    with pytest.raises(ValueError, match="multiple of n_bins"):
        select_triplets(t, 15)
    with pytest.raises(ValueError, match="fewer than the 10"):
        select_triplets(t.head(9))
    with pytest.raises(ValueError, match="no triplets"):
        select_triplets(t.iloc[:0])
    with pytest.raises(ValueError, match="unknown criterion"):
        select_triplets(t, criterion="eq5")
    flipped = t.head(20).rename(columns={"m1": "m2", "m2": "m1"})
    with pytest.raises(ValueError, match="both orientations"):
        select_triplets(pd.concat([t, flipped], ignore_index=True))
    few = t.copy()
    lowest = cand.loc[few.index, "p_N_given_m1_decile"].eq(0)
    few.loc[lowest, "lp_S1_given_m2"] = 0.0  # every triplet of m1's lowest decile loses its contrast
    with pytest.raises(ValueError, match="bin 0 of m1's natural-sentence log-probabilities has 0 eligible"):
        select_triplets(few)


# --------------------------------------------------------------------------- thin data


def _unmoved(t: pd.DataFrame, rows) -> pd.DataFrame:
    """Triplets whose S2 the search never moved (S2 = N, same log-probabilities)."""
    t = t.copy()
    t.loc[rows, "S2"] = t.loc[rows, "N"]
    t.loc[rows, "lp_S2_given_m1"] = t.loc[rows, "lp_N_given_m1"]
    t.loc[rows, "lp_S2_given_m2"] = t.loc[rows, "lp_N_given_m2"]
    return t


def _brute_largest(b1, b2, ok, n_bins):
    best = 0
    idx = np.flatnonzero(ok)
    for k in range(1, len(idx) // n_bins + 1):
        if any((np.bincount(b1[list(c)], minlength=n_bins) == k).all() and
               (np.bincount(b2[list(c)], minlength=n_bins) == k).all()
               for c in itertools.combinations(idx, k * n_bins)):
            best = k
    return best


@pytest.mark.parametrize("seed", range(6))
def test_largest_per_bin_matches_brute_force(seed):
    from contstim_bench.generate.triplet_select import largest_per_bin

    rng = np.random.default_rng(seed)
    n, n_bins = 12, 3
    b1, b2 = rng.integers(0, n_bins, n), rng.integers(0, n_bins, n)
    ok = rng.random(n) < 0.8
    assert largest_per_bin(b1, b2, ok, n_bins) == _brute_largest(b1, b2, ok, n_bins)


def test_thin_data_is_explained_before_solving():
    t = random_table(3, n=40)
    low = t["lp_N_given_m1"] <= t["lp_N_given_m1"].quantile(0.1)  # m1's bin 0 under 10 bins
    t = _unmoved(t, t.index[low])
    logged = []
    with pytest.raises(ValueError) as err:
        select_triplets(t, 10, log=logged.append)
    msg = str(err.value)
    assert "bin 0 of m1's natural-sentence log-probabilities has 0 eligible triplets, 1 needed" in msg
    assert f"of the bin's {int(low.sum())} triplets, {int(low.sum())} have S = N" in msg
    assert "no per_pair works for every model pair" in msg and "`contstim generate select --fill`" in msg
    [table] = logged  # printed before the solver ran
    first = table.splitlines()[0]
    assert first.startswith("a vs b: 40 triplets, ") and f"{int(low.sum())} with S = N" in first
    assert "at most 0 per bin possible" in first
    m1_rows = [line for line in table.splitlines() if line.strip().startswith(("m1 = a", "S = N"))]
    assert m1_rows[0].split()[-10:][0] == "0"  # no eligible triplet in m1's bin 0


def test_error_names_the_largest_feasible_per_pair():
    t = random_table(4, n=40)
    ok = contrast_holds(t)
    b1 = decile_bins(t["lp_N_given_m1"].to_numpy(), 2)
    b2 = decile_bins(t["lp_N_given_m2"].to_numpy(), 2)
    from contstim_bench.generate.triplet_select import largest_per_bin

    k = largest_per_bin(b1, b2, ok, 2)
    assert 2 <= k < 20
    with pytest.raises(ValueError, match=rf"The largest per_pair every model pair allows with 2 bins is {2 * k} "
                                         rf"\(`contstim generate select --per-pair {2 * k}`\)"):
        select_triplets(t, 2 * (k + 1), n_bins=2)
    res = select_triplets(t, 2 * k, n_bins=2)  # the advice works
    assert len(res.selected) == 2 * k and res.short == {}


@pytest.mark.parametrize("criterion", ["controversiality", "worst_rank"])
def test_fill_takes_what_each_bin_holds(criterion):
    t = random_table(5, n=14)
    low = t["lp_N_given_m1"] <= t["lp_N_given_m1"].quantile(1 / 3)
    unmoved = t.index[low][:-1]  # m1's lowest bin keeps a single movable triplet
    t = _unmoved(t, unmoved)
    n_bins, per_pair = 3, 6
    res = select_triplets(t, per_pair, n_bins=n_bins, criterion=criterion, fill=True)
    chosen = res.triplets["selected_for_human_testing"].to_numpy()
    b1, b2 = res.triplets["p_N_given_m1_decile"].to_numpy(), res.triplets["p_N_given_m2_decile"].to_numpy()
    ok = res.triplets["eligible"].to_numpy()
    assert ok[chosen].all()
    assert (np.bincount(b1[chosen], minlength=n_bins) <= 2).all() and (np.bincount(b2[chosen], minlength=n_bins) <= 2).all()
    # brute force: the most triplets the bins admit, and the best of those by the criterion
    w = res.triplets["controversiality"].to_numpy() if criterion == "controversiality" else \
        -pd.Series(res.triplets["worst_rank_of_two"].to_numpy()).rank(method="first").to_numpy()
    best_n, best_w = 0, -np.inf
    for size in range(per_pair, 0, -1):
        for c in itertools.combinations(np.flatnonzero(ok), size):
            c = list(c)
            if (np.bincount(b1[c], minlength=n_bins) <= 2).all() and (np.bincount(b2[c], minlength=n_bins) <= 2).all():
                best_n, best_w = size, max(best_w, w[c].sum())
        if best_n:
            break
    assert chosen.sum() == best_n < per_pair and w[chosen].sum() == pytest.approx(best_w, abs=1e-9)
    assert res.short == {("a", "b"): best_n}
    table = res.bins
    assert table.groupby("side")["selected"].sum().eq(best_n).all() and (table["needed"] == 2).all()
    assert table["unchanged"].sum() == 2 * len(unmoved)  # the unmoved triplets, counted on both sides


def test_cli_select_fill_records_unbalanced_bins(tmp_path, capsys):
    from contstim_bench.cli import main as cli_main
    from contstim_bench.generate.triplet_table import read_triplets

    t = random_table(3, n=40)
    t = _unmoved(t, t.index[t["lp_N_given_m1"] <= t["lp_N_given_m1"].quantile(0.1)])
    t.to_parquet(tmp_path / "t.parquet")
    args = ["generate", "select", "--triplets", str(tmp_path / "t.parquet"), "--per-pair", "10"]
    assert cli_main(args + ["--output", str(tmp_path / "strict")]) == 1
    err = capsys.readouterr().err
    assert err.index("a vs b: 40 triplets") < err.index("contstim: error: ValueError: model pair a vs b: bin 0")
    assert not (tmp_path / "strict").exists()
    assert cli_main(args + ["--fill", "--output", str(tmp_path / "filled")]) == 0
    out = capsys.readouterr().out
    picked = read_triplets(tmp_path / "filled")
    assert 0 < len(picked) < 10 and f"a vs b: {len(picked)} triplets (bins unbalanced: {len(picked)} of 10)" in out
    card = (tmp_path / "filled" / "triplets" / "README.md").read_text(encoding="utf-8")
    assert "Unbalanced bins" in card and f"a vs b: {len(picked)} of 10" in card
    bins = pd.read_parquet(tmp_path / "filled" / "triplets" / "selection_bins" / "train.parquet")
    assert bins["selected"].groupby(bins["side"]).sum().eq(len(picked)).all()
    assert bins.loc[(bins["side"] == "m1") & (bins["bin"] == 0), "eligible"].item() == 0
