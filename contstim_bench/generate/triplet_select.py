"""Choose the synthetic triplets shown to people (Golan et al. 2023, Methods "Selecting the best
sentence triplets from the optimization results").

A triplet ``(N, S1, S2)`` holds a natural sentence N and two synthetic sentences derived from it
for the model pair ``(m1, m2)``, in the layout of the published triplet files: **S1 is accepted
by m1 and rejected by m2** (``lp_S1_given_m1 >= lp_N_given_m1``, ``lp_S1_given_m2 <
lp_N_given_m2``) and S2 the reverse.  (The paper's Eq. 4 names the sentences the other way
round, after the model whose probability they reduce.)  All ``lp_*`` values are natural-log
probabilities.

For each model pair, choose ``K`` triplets (K = 10 in the paper) by integer programming such
that, for each of the two models, exactly ``K / n_bins`` chosen natural sentences fall in each
bin (decile for ``n_bins = 10``) of that model's natural-sentence log-probabilities, optimising
one of two criteria:

``"controversiality"`` (the paper's text): maximise the total Eq. 4 controversiality
    ``c = log p(N|m2)/p(S1|m2) + log p(N|m1)/p(S2|m1)``
    ``  = (lp_N_given_m2 - lp_S1_given_m2) + (lp_N_given_m1 - lp_S2_given_m1)``.
``"worst_rank"`` (what the upstream script that produced the published selection does):
    rank each synthetic sentence's loss across the pair's candidates (``loss_S1_vs_N =
    lp_S1_given_m2 - lp_N_given_m2`` and ``loss_S2_vs_N = lp_S2_given_m1 - lp_N_given_m1``,
    ascending, average ranks), take the worse of a triplet's two ranks, rank that again
    (ties broken by row order) and minimise the sum of these ranks.  This reproduces the
    published ``..._best10.csv``: the published choice is optimal for every one of the 36
    model pairs and identical to ours wherever the optimum is unique (33 pairs; in the other
    three several selections tie, and CBC returns 351 of the 360 published triplets, HiGHS
    357; see ``tests/generate/test_triplet_select.py``).  Eq. 4 selects only 127 of the same 360.

Bins ("deciles"): by default, as upstream, ``pandas.qcut`` of each model's ``lp_N`` over the
pair's candidate triplets; given the columns ``p_N_given_m1_decile``/``p_N_given_m2_decile``,
those; given ``natural_log_probs`` (each model's log-probabilities of a natural-sentence
pool), the quantile bins of that distribution.

Per model pair the problem is a bipartite b-matching between m1-bins and m2-bins (each triplet
an edge), so its constraint matrix is totally unimodular and the ILP solves at the root node.
Only triplets whose synthetic sentences keep the contrast (the four inequalities above) can be
chosen unless ``require_contrast=False``; failed syntheses (loss 0) cannot.

Thin data: before solving, :func:`bin_table` counts per model pair, model and bin the eligible
triplets and why the others are not (``S = N``: the search left S1 or S2 equal to N, i.e. a
model never moved its sentence; ``constraint failed``: a synthetic sentence changed but one of
the four inequalities does not hold).  :func:`largest_per_bin` is the most triplets per bin a
pair admits (a bipartite b-matching, checked by maximum flow).  When a pair cannot fill every
bin the error names the bin, the reasons and the largest ``per_pair`` every pair allows;
``fill=True`` instead takes up to ``per_pair / n_bins`` per bin, as many triplets as the bins
admit (then the best by the criterion), and reports the pairs left short.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pulp

from contstim_bench.generate.ilp_solvers import SolveReport, chosen, solve

TRIPLET_COLUMNS = (
    "m1", "m2", "N", "S1", "S2",
    "lp_N_given_m1", "lp_S1_given_m1", "lp_N_given_m2", "lp_S1_given_m2",
    "lp_S2_given_m1", "lp_S2_given_m2",
)
"""Required input columns (the published triplet files' names)."""

LP_COLUMNS = TRIPLET_COLUMNS[5:]
DECILE_COLUMNS = ("p_N_given_m1_decile", "p_N_given_m2_decile")
CRITERIA = ("controversiality", "worst_rank")
UNCHANGED = "S = N"
"""Why a triplet is not eligible: the search left S1 or S2 equal to the natural sentence N."""
CONSTRAINT_FAILED = "constraint failed"
"""Why a triplet is not eligible: S1 and S2 differ from N but the contrast (Eq. 2) does not hold."""
BIN_COLUMNS = ("m1", "m2", "side", "model", "bin", "triplets", "eligible", "unchanged", "constraint_failed",
               "needed", "selected")
"""Columns of :func:`bin_table` (``side``: ``m1`` or ``m2``, whose natural-sentence bins these are)."""


@dataclass(frozen=True)
class TripletSelection:
    """Result of :func:`select_triplets`.

    ``triplets``: every input row, in input order, with added columns ``controversiality``
    (Eq. 4, nats), ``loss_S1_vs_N``/``loss_S2_vs_N`` (nats, when absent from the input),
    ``loss_rank1``, ``loss_rank2``, ``worst_rank_of_two``, ``p_N_given_m1_decile``,
    ``p_N_given_m2_decile`` (bins, 0 = least probable), ``eligible`` and
    ``selected_for_human_testing``.
    ``selected``: the chosen rows (``K`` per model pair).
    ``reports``: the solver report per model pair ``(m1, m2)``.
    ``objective``: per model pair, the criterion's total over the chosen triplets (nats of
    controversiality, or the sum of worst-rank ranks).
    ``bins``: the :func:`bin_table` (eligible triplets per pair, model and bin, with the number
    needed and selected).  ``short``: with ``fill=True``, ``{pair: number selected}`` for every
    pair that got fewer than ``per_pair`` (its bins are unbalanced); empty otherwise.
    """

    triplets: pd.DataFrame
    selected: pd.DataFrame
    reports: dict[tuple[str, str], SolveReport]
    objective: dict[tuple[str, str], float]
    bins: pd.DataFrame | None = None
    short: dict[tuple[str, str], int] = field(default_factory=dict)


def controversiality(triplets: pd.DataFrame) -> np.ndarray:
    """Eq. 4 controversiality of each triplet, in nats:
    ``(lp_N_given_m2 - lp_S1_given_m2) + (lp_N_given_m1 - lp_S2_given_m1)``."""
    _check_columns(triplets, LP_COLUMNS)
    t = triplets
    return ((t["lp_N_given_m2"] - t["lp_S1_given_m2"]) + (t["lp_N_given_m1"] - t["lp_S2_given_m1"])).to_numpy(
        dtype=np.float64)


def contrast_holds(triplets: pd.DataFrame) -> np.ndarray:
    """True where S1 is accepted by m1 and rejected by m2 and S2 the reverse (Eq. 2 outcome)."""
    t = triplets
    return ((t["lp_S1_given_m1"] >= t["lp_N_given_m1"]) & (t["lp_S1_given_m2"] < t["lp_N_given_m2"])
            & (t["lp_S2_given_m2"] >= t["lp_N_given_m2"]) & (t["lp_S2_given_m1"] < t["lp_N_given_m1"])
            ).to_numpy()


def ineligibility(triplets: pd.DataFrame, require_contrast: bool = True) -> np.ndarray:
    """Why each triplet cannot be chosen: ``""`` (it can), :data:`UNCHANGED` (S1 or S2 equals N)
    or :data:`CONSTRAINT_FAILED` (the contrast of :func:`contrast_holds` does not hold)."""
    if not require_contrast:
        return np.full(len(triplets), "", dtype=object)
    unchanged = ((triplets["S1"].astype(str) == triplets["N"].astype(str))
                 | (triplets["S2"].astype(str) == triplets["N"].astype(str))).to_numpy()
    holds = contrast_holds(triplets)
    return np.where(unchanged, UNCHANGED, np.where(holds, "", CONSTRAINT_FAILED)).astype(object)


def _bin_flow(bins1: np.ndarray, bins2: np.ndarray, eligible: np.ndarray, n_bins: int, cap: int) -> int:
    """Maximum flow source -> m1-bins (capacity ``cap`` each) -> m2-bins (capacity: the number of
    eligible triplets between the two bins) -> sink (capacity ``cap`` each): the most eligible
    triplets that can be chosen with at most ``cap`` in every bin of both models."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    b1, b2 = bins1[eligible].astype(np.int64), bins2[eligible].astype(np.int64)
    between = np.zeros((n_bins, n_bins), dtype=np.int64)
    np.add.at(between, (b1, b2), 1)
    source, sink = 0, 2 * n_bins + 1
    i, j = np.nonzero(between)
    rows = [source] * n_bins + list(range(1 + n_bins, 1 + 2 * n_bins)) + (1 + i).tolist()
    cols = list(range(1, 1 + n_bins)) + [sink] * n_bins + (1 + n_bins + j).tolist()
    caps = [cap] * (2 * n_bins) + between[i, j].tolist()
    graph = csr_matrix((np.asarray(caps, dtype=np.int32), (rows, cols)), shape=(sink + 1, sink + 1))
    return int(maximum_flow(graph, source, sink).flow_value)


def largest_per_bin(bins1: np.ndarray, bins2: np.ndarray, eligible: np.ndarray, n_bins: int) -> int:
    """The largest k such that exactly k eligible triplets can be chosen in every bin of both
    models.  A triplet is an edge between its m1-bin and its m2-bin, so k per bin on both sides
    is a k-regular sub-multigraph: it exists iff :func:`_bin_flow` with capacity k is
    ``k * n_bins``, and if k works so does k - 1 (drop one of its perfect matchings)."""
    b1, b2 = bins1[eligible], bins2[eligible]
    if not len(b1):
        return 0
    upper = int(min(np.bincount(b1.astype(np.int64), minlength=n_bins).min(),
                    np.bincount(b2.astype(np.int64), minlength=n_bins).min()))
    for k in range(upper, 0, -1):
        if _bin_flow(bins1, bins2, eligible, n_bins, k) == k * n_bins:
            return k
    return 0


def _max_filled(bins1: np.ndarray, bins2: np.ndarray, eligible: np.ndarray, n_bins: int, per_bin: int) -> int:
    """The most eligible triplets choosable with at most ``per_bin`` in every bin (``fill``)."""
    return _bin_flow(bins1, bins2, eligible, n_bins, per_bin)


def bin_table(triplets: pd.DataFrame, n_bins: int, per_bin: int) -> pd.DataFrame:
    """Per model pair, side (``m1``/``m2``: whose natural-sentence bins) and bin: the triplets, the
    eligible ones, the ineligible ones by reason (``unchanged``: S = N; ``constraint_failed``),
    the number ``needed`` and ``selected``.  ``triplets``: :attr:`TripletSelection.triplets`
    (bins, ``eligible``, ``ineligible_reason`` and ``selected_for_human_testing`` filled in)."""
    rows = []
    for (m1, m2), g in triplets.groupby(["m1", "m2"], sort=False):
        for side, model, col in (("m1", m1, DECILE_COLUMNS[0]), ("m2", m2, DECILE_COLUMNS[1])):
            b = g[col].to_numpy()
            for d in range(n_bins):
                inside = b == d
                why = g["ineligible_reason"].to_numpy()[inside]
                rows.append({
                    "m1": m1, "m2": m2, "side": side, "model": model, "bin": d, "triplets": int(inside.sum()),
                    "eligible": int(g["eligible"].to_numpy()[inside].sum()),
                    "unchanged": int((why == UNCHANGED).sum()),
                    "constraint_failed": int((why == CONSTRAINT_FAILED).sum()),
                    "needed": per_bin,
                    "selected": int(g["selected_for_human_testing"].to_numpy()[inside].sum()),
                })
    return pd.DataFrame(rows, columns=list(BIN_COLUMNS))


def format_bin_table(table: pd.DataFrame, largest: Mapping[tuple[str, str], int] | None = None) -> str:
    """The :func:`bin_table` as text: per model pair, a line of totals, then per side the eligible
    triplets of each bin and, where some are not eligible, why (S = N, constraint failed)."""
    lines = []
    n_bins = int(table["bin"].max()) + 1 if len(table) else 0
    head = "  " + "bins of log p(N | model)".ljust(34) + "".join(f"{d:>5}" for d in range(n_bins))
    for (m1, m2), g in table.groupby(["m1", "m2"], sort=False):
        side = g[g["side"] == "m1"]
        total, eligible = int(side["triplets"].sum()), int(side["eligible"].sum())
        unchanged, failed = int(side["unchanged"].sum()), int(side["constraint_failed"].sum())
        needed = int(side["needed"].iloc[0])
        most = "" if largest is None else f"; at most {largest[(m1, m2)]} per bin possible"
        lines.append(f"{m1} vs {m2}: {total} triplets, {eligible} eligible, {unchanged} with S = N, "
                     f"{failed} constraint failed; {needed} per bin needed{most}")
        lines.append(head)
        for which in ("m1", "m2"):
            part = g[g["side"] == which].sort_values("bin")
            label = f"{which} = {part['model'].iloc[0]}"[:15]
            rows = [("eligible", part["eligible"])]
            if part["unchanged"].any():
                rows.append(("S = N", part["unchanged"]))
            if part["constraint_failed"].any():
                rows.append(("constraint failed", part["constraint_failed"]))
            for k, (what, values) in enumerate(rows):
                lines.append("  " + (label if k == 0 else "").ljust(16) + what.ljust(18)
                             + "".join(f"{int(v):>5}" for v in values))
    return "\n".join(lines)


def decile_bins(values: np.ndarray, n_bins: int = 10, reference: np.ndarray | None = None) -> np.ndarray:
    """Bin index (0 = least probable) of each natural-log probability in ``values``.

    ``reference`` None: equal-count bins of ``values`` themselves (``pandas.qcut``, as
    upstream).  Otherwise the bins are the quantiles of ``reference`` (the natural-sentence
    distribution); a value equal to an inner edge goes to the upper bin, and values outside
    the reference range go to the first or last bin.
    """
    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError(f"cannot bin NaN log-probabilities (first at position {int(np.flatnonzero(np.isnan(values))[0])})")
    if reference is None:
        try:
            return pd.qcut(values, q=n_bins, labels=False).astype(np.int64)
        except ValueError as err:
            raise ValueError(f"cannot cut {len(values)} log-probabilities into {n_bins} equal-count bins: {err}") from err
    reference = np.asarray(reference, dtype=np.float64)
    if reference.ndim != 1 or len(reference) < n_bins or np.isnan(reference).any():
        raise ValueError(f"reference distribution must be a 1-D array of at least {n_bins} numbers without NaN")
    edges = np.quantile(reference, np.arange(1, n_bins) / n_bins)
    return np.searchsorted(edges, values, side="right").astype(np.int64)


def worst_rank_utility(loss1: np.ndarray, loss2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Upstream's selection utility for one model pair: ``(loss_rank1, loss_rank2,
    worst_rank_of_two, rank)`` where the loss ranks are average ranks (ascending: most negative
    loss = rank 1), ``worst_rank_of_two`` their maximum and ``rank`` its ranking with ties
    broken by position (lower is better)."""
    r1 = pd.Series(loss1).rank(ascending=True).to_numpy()
    r2 = pd.Series(loss2).rank(ascending=True).to_numpy()
    worst = np.maximum(r1, r2)
    rank = pd.Series(worst).rank(ascending=True, method="first").to_numpy()
    return r1, r2, worst, rank


def select_triplets(
    triplets: pd.DataFrame,
    per_pair: int = 10,
    *,
    n_bins: int = 10,
    criterion: str = "controversiality",
    natural_log_probs: Mapping[str, np.ndarray] | None = None,
    require_contrast: bool = True,
    solver: str = "cbc",
    time_limit: float | None = None,
    fill: bool = False,
    log: Callable[[str], None] | None = None,
) -> TripletSelection:
    """Choose ``per_pair`` triplets per model pair, ``per_pair / n_bins`` per bin of each model's
    natural-sentence log-probabilities, maximising Eq. 4 controversiality (``criterion=
    "controversiality"``) or minimising upstream's worst-rank utility (``"worst_rank"``).

    ``triplets``: the columns of :data:`TRIPLET_COLUMNS` (more are kept); one model pair may
    not appear in both orientations.  Bins come from ``natural_log_probs`` (model name ->
    1-D array of natural-log probabilities of the natural-sentence pool) when given, else from
    the ``p_N_given_m*_decile`` columns when present, else from ``pandas.qcut`` over each
    pair's candidates.  ``solver``: ``"cbc"`` or ``"highs"``.

    Before solving, ``log`` (if given) receives the :func:`format_bin_table` of every pair.
    Raises ValueError for malformed input or when a model pair cannot fill every bin; that
    error names the bin, why its triplets are not eligible and the largest ``per_pair`` every
    pair allows.  ``fill=True``: take up to ``per_pair / n_bins`` per bin instead (as many as
    the bins admit), listing the pairs left short in :attr:`TripletSelection.short`.
    """
    _check_columns(triplets, TRIPLET_COLUMNS)
    if triplets.empty:
        raise ValueError("the triplet table has no triplets")
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; choose one of {', '.join(CRITERIA)}")
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if isinstance(per_pair, bool) or not isinstance(per_pair, (int, np.integer)) or per_pair < 1:
        raise ValueError(f"per_pair must be a positive integer, got {per_pair!r}")
    if per_pair % n_bins:
        raise ValueError(f"per_pair ({per_pair}) must be a multiple of n_bins ({n_bins}) so that "
                         f"every bin gets the same number of triplets")
    per_bin = per_pair // n_bins
    for col in LP_COLUMNS:
        values = pd.to_numeric(triplets[col], errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(values))
        if len(bad):
            raise ValueError(f"column {col!r}: row {triplets.index[bad[0]]!r} is not a number "
                             f"({triplets[col].iloc[bad[0]]!r}; {len(bad)} such rows)")

    out = triplets.copy()
    for col in LP_COLUMNS:
        out[col] = out[col].astype(np.float64)
    out["controversiality"] = controversiality(out)
    if "loss_S1_vs_N" not in out:
        out["loss_S1_vs_N"] = out["lp_S1_given_m2"] - out["lp_N_given_m2"]
    if "loss_S2_vs_N" not in out:
        out["loss_S2_vs_N"] = out["lp_S2_given_m1"] - out["lp_N_given_m1"]
    out["ineligible_reason"] = ineligibility(out, require_contrast)
    out["eligible"] = out["ineligible_reason"] == ""
    use_given_bins = natural_log_probs is None and all(c in out for c in DECILE_COLUMNS)
    for col in ("loss_rank1", "loss_rank2", "worst_rank_of_two"):
        out[col] = np.nan
    if not use_given_bins:
        for col in DECILE_COLUMNS:
            out[col] = -1
    out["selected_for_human_testing"] = False

    groups = _model_pair_groups(out)
    reports: dict[tuple[str, str], SolveReport] = {}
    objective: dict[tuple[str, str], float] = {}
    problems: dict[tuple[str, str], tuple] = {}
    for (m1, m2), rows in groups.items():
        g = out.loc[rows]
        if len(g) < per_pair and not fill:
            raise ValueError(f"model pair {m1} vs {m2}: {len(g)} triplets, fewer than the {per_pair} to select "
                             f"(`contstim generate select --fill` takes what there is)")
        bins = []
        for model, lp_col, bin_col in ((m1, "lp_N_given_m1", DECILE_COLUMNS[0]), (m2, "lp_N_given_m2", DECILE_COLUMNS[1])):
            if use_given_bins:
                b = pd.to_numeric(g[bin_col], errors="coerce").to_numpy()
                if np.isnan(b).any() or (b != np.round(b)).any() or b.min() < 0 or b.max() >= n_bins:
                    raise ValueError(f"model pair {m1} vs {m2}: column {bin_col!r} must hold bin numbers "
                                     f"0..{n_bins - 1}")
                b = b.astype(np.int64)
            else:
                ref = None
                if natural_log_probs is not None:
                    if model not in natural_log_probs:
                        raise ValueError(f"natural_log_probs has no distribution for model {model!r}")
                    ref = natural_log_probs[model]
                try:
                    b = decile_bins(g[lp_col].to_numpy(), n_bins, ref)
                except ValueError as err:
                    raise ValueError(f"model pair {m1} vs {m2}, {lp_col}: {err}") from err
                out.loc[rows, bin_col] = b
            bins.append(b)
        r1, r2, worst, rank = worst_rank_utility(g["loss_S1_vs_N"].to_numpy(np.float64),
                                                 g["loss_S2_vs_N"].to_numpy(np.float64))
        out.loc[rows, "loss_rank1"] = r1
        out.loc[rows, "loss_rank2"] = r2
        out.loc[rows, "worst_rank_of_two"] = worst
        if criterion == "controversiality":
            weights, sense = g["controversiality"].to_numpy(), pulp.LpMaximize
        else:
            weights, sense = rank, pulp.LpMinimize
        eligible = g["eligible"].to_numpy(dtype=bool)
        problems[(m1, m2)] = (rows, weights, sense, bins[0], bins[1], eligible)

    for col in DECILE_COLUMNS:
        out[col] = out[col].astype(np.int64)
    largest = {pair: largest_per_bin(b1, b2, ok, n_bins) for pair, (_, _, _, b1, b2, ok) in problems.items()}
    if log is not None:
        log(format_bin_table(bin_table(out, n_bins, per_bin), largest))
    thin = [pair for pair, k in largest.items() if k < per_bin]
    if thin and not fill:
        raise ValueError(_thin_message(out, problems, thin, largest, n_bins, per_bin))

    short: dict[tuple[str, str], int] = {}
    for (m1, m2), (rows, weights, sense, b1, b2, eligible) in problems.items():
        picked, report = _solve_pair(weights, sense, b1, b2, eligible, n_bins, per_bin, f"{m1} vs {m2}", solver,
                                     time_limit, fill=fill)
        out.loc[[rows[k] for k in picked], "selected_for_human_testing"] = True
        reports[(m1, m2)] = report
        objective[(m1, m2)] = float(np.sum(weights[picked]))
        if len(picked) < per_pair:
            short[(m1, m2)] = len(picked)

    selected = out[out["selected_for_human_testing"]]
    return TripletSelection(triplets=out, selected=selected, reports=reports, objective=objective,
                            bins=bin_table(out, n_bins, per_bin), short=short)


def _thin_message(out: pd.DataFrame, problems: dict, thin: list, largest: dict, n_bins: int, per_bin: int) -> str:
    """The error of a selection some model pair cannot make: the first short bin of each such
    pair with the reasons, then the largest ``per_pair`` that every pair allows."""
    parts = []
    for m1, m2 in thin:
        rows, _, _, b1, b2, eligible = problems[(m1, m2)]
        why = out.loc[rows, "ineligible_reason"].to_numpy()
        for which, name, b in (("m1", m1, b1), ("m2", m2, b2)):
            counts = np.bincount(b[eligible], minlength=n_bins)
            short = np.flatnonzero(counts < per_bin)
            if len(short):
                d = int(short[0])
                inside = b == d
                parts.append(
                    f"model pair {m1} vs {m2}: bin {d} of {which}'s natural-sentence log-probabilities has "
                    f"{int(counts[d])} eligible triplets, {per_bin} needed ({which} = {name}; of the bin's "
                    f"{int(inside.sum())} triplets, {int((why[inside] == UNCHANGED).sum())} have S = N, "
                    f"{int((why[inside] == CONSTRAINT_FAILED).sum())} failed the constraint)")
                break
        else:
            parts.append(f"model pair {m1} vs {m2}: every bin has {per_bin} eligible triplet(s), but no choice puts "
                         f"exactly {per_bin} in every bin of both models at once")
    k = min(largest.values())
    if k > 0:
        advice = (f"the largest per_pair every model pair allows with {n_bins} bins is {k * n_bins} "
                  f"(`contstim generate select --per-pair {k * n_bins}`); or take what each bin holds with `--fill`")
    else:
        advice = (f"with {n_bins} bins no per_pair works for every model pair; take what each bin holds "
                  f"(`contstim generate select --fill`) or use fewer bins (`--bins`)")
    more = f" (and {len(parts) - 3} more model pairs)" if len(parts) > 3 else ""
    return "; ".join(parts[:3]) + more + ". " + advice[0].upper() + advice[1:]


def _solve_pair(weights: np.ndarray, sense: int, bins1: np.ndarray, bins2: np.ndarray,
                eligible: np.ndarray, n_bins: int, per_bin: int, label: str, solver: str,
                time_limit: float | None, fill: bool = False) -> tuple[list[int], SolveReport]:
    """One model pair's ILP; returns the positions of the chosen rows and the solver report.

    ``fill``: at most ``per_bin`` per bin, and as many triplets in all as the bins admit (the
    maximum flow of :func:`_max_filled`), the best of them by ``weights``."""
    idx = np.flatnonzero(eligible)
    if fill:
        total = _max_filled(bins1, bins2, eligible, n_bins, per_bin)
        if total == 0:
            return [], SolveReport(status="optimal", objective=0.0, seconds=0.0, solver=solver)
    problem = pulp.LpProblem("triplets", sense)
    xs = [pulp.LpVariable(f"x_{k}", cat=pulp.LpBinary) for k in idx]
    problem += pulp.LpAffineExpression([(x, float(weights[k])) for x, k in zip(xs, idx)])
    for which, b in (("a", bins1), ("b", bins2)):
        for d in range(n_bins):
            members = pulp.LpAffineExpression([(x, 1.0) for x, k in zip(xs, idx) if b[k] == d])
            problem += (members <= per_bin if fill else members == per_bin), f"bin_{which}{d}"
    if fill:
        problem += pulp.LpAffineExpression([(x, 1.0) for x in xs]) == total, "filled"
    report = solve(problem, solver=solver, time_limit=time_limit)
    if report.status == "infeasible":
        raise ValueError(f"model pair {label}: no choice puts exactly {per_bin} triplet(s) in every bin of "
                         f"both models")
    if report.status not in ("optimal", "feasible"):
        raise RuntimeError(f"model pair {label}: ILP solver {solver!r} returned no solution ({report.status})")
    return [int(idx[k]) for k in chosen(xs)], report


def _model_pair_groups(df: pd.DataFrame) -> dict[tuple[str, str], list]:
    """Row labels per (m1, m2), in order of first appearance; a pair in both orientations is an
    error (S1/S2 would mean different things in its rows)."""
    if not df.index.is_unique:
        raise ValueError("the triplet table's index has duplicate labels; reset it first")
    groups: dict[tuple[str, str], list] = {}
    for label, m1, m2 in zip(df.index, df["m1"].astype(str), df["m2"].astype(str)):
        if m1 == m2:
            raise ValueError(f"row {label!r}: m1 and m2 are both {m1!r}")
        groups.setdefault((m1, m2), []).append(label)
    for m1, m2 in groups:
        if (m2, m1) in groups:
            raise ValueError(f"model pair {m1} vs {m2} appears in both orientations (m1={m1} and m1={m2}); "
                             f"swap one set's columns so each pair has one orientation")
    return groups


def _check_columns(df: pd.DataFrame, columns: Sequence[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame of triplets, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"triplet table lacks column(s) {missing}; required: {list(columns)}")
