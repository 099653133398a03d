"""Leaderboard tables from validated result files: ranking rows and the pairwise significance matrix.

For every experiment and condition (a *panel*) each model contributes one row:

- ``accuracy`` (mean over units of the binarised accuracy, units = participants in pll, groups in
  main), its noise ceiling (``accuracy_ceiling_lower`` .. ``_upper``) and
  ``accuracy_normalised`` = accuracy / lower noise ceiling (1.0 = as good as the other
  participants predict each participant);
- ``srcs`` (signed-rank cosine similarity) and its ceiling;
- ``accuracy_stderr`` / ``srcs_stderr``: the result's standard errors across units
  (:func:`contstim_bench.uncertainty.standard_error`);
- ``p_accuracy_vs_ceiling`` / ``p_srcs_vs_ceiling``: the result's own BH-adjusted two-sided
  Wilcoxon p-value against the lower ceiling;
- ``p_accuracy_vs_leader`` / ``p_srcs_vs_leader``: two-sided Wilcoxon signed-rank test of the
  model's per-unit values against the leader's (the model with the highest mean of that measure
  in the panel; ties broken by the other measure), Benjamini-Hochberg adjusted across the models
  of the panel (``None`` for the leader itself, and for a model that does not compare like for
  like with the leader: one evaluated on all trials of a controversial condition against a
  leader evaluated on the trials that target it, :func:`comparable`).

Each model is scored on its own selection of trials (``selection``: a reference model on the
trials that target it in controversial conditions), as in the paper's figures, and ranked only
like for like, by :func:`contstim_bench.analysis.ranking.rank_models` (the ranking of ``contstim
evaluate``'s summary): a panel's rows fall into ``comparison`` groups (models on every trial of
the condition; models each on the trials that target it; another ties convention), each ranked
on its own, and a model with degenerate predictions or alone in its group is listed with
``rank`` None and the reason in ``not_ranked``.  The pairwise tests pair units (participants)
shared by both selections, within a group.

:func:`pairwise_matrix` gives, per panel and measure, the BH-adjusted p-value of every pair of
models (one BH family per panel and measure).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
from ..analysis.accuracy import DEFAULT_TIES
from ..analysis.inference import ALPHA, bh_adjust, paired, wilcoxon_p
from ..analysis.noise_ceiling import normalised_accuracy
from ..analysis.ranking import SHOWN_DIGITS, comparison_group, rank_models, rank_text
from ..study import TRIAL_TYPES
from ..spreadsheet import safe_cell
from .identity import display_name, identity
from .validate import model_key

MEASURES = ("accuracy", "srcs")
CONDITION_ORDER = TRIAL_TYPES + ("all",)

COLUMNS = {
    "rank": f"rank by accuracy within the panel's comparison group (1 = best); accuracies equal to {SHOWN_DIGITS} "
            "decimals share the best of their ranks; empty when not ranked (see not_ranked)",
    "tied": "True when the rank is shared (shown as =N); tied models are listed by name",
    "rank_text": "the rank as every door shows it: N, =N (shared) or - (not ranked)",
    "comparison": "the like-for-like group the model is ranked in: all trials of the condition, or each model on "
                  "the trials that target it (and the ties convention when not half)",
    "not_ranked": "why the model is not ranked: degenerate predictions, or no other model in its comparison group",
    "ties": "what a model tie scores in the accuracy: half, miss or hit",
    "model": "model name (the spec's target for a model named by its spec: a folder by its last component)",
    "revision": "model revision (scorer fingerprint), first 12 characters",
    "spec": "model spec the result was computed with",
    "method": "scoring method",
    "experiment": "experiment (pll: Nov 2022, 30 participants)",
    "condition": "trial type, or all trials",
    "selection": "trials the model is evaluated on (targeted: the trials that target it)",
    "n_units": "number of units (participants in pll, groups in main)",
    "n_trials": "participant x trial rows evaluated",
    "accuracy": "binarised accuracy, mean over units",
    "accuracy_stderr": "standard error of the accuracy across units (sample SD / sqrt(n_units); empty for one unit)",
    "accuracy_ceiling_lower": "lower noise ceiling of the accuracy",
    "accuracy_ceiling_upper": "upper noise ceiling of the accuracy",
    "accuracy_normalised": "accuracy / lower noise ceiling",
    "srcs": "signed-rank cosine similarity, mean over units",
    "srcs_stderr": "standard error of the SRCS across units (sample SD / sqrt(n_units); empty for one unit)",
    "srcs_ceiling_lower": "lower noise ceiling of the SRCS",
    "srcs_ceiling_upper": "upper noise ceiling of the SRCS",
    "p_accuracy_vs_ceiling": "BH-adjusted Wilcoxon p, accuracy vs lower ceiling",
    "p_srcs_vs_ceiling": "BH-adjusted Wilcoxon p, SRCS vs lower ceiling",
    "accuracy_leader": "model with the highest accuracy in the panel",
    "p_accuracy_vs_leader": "BH-adjusted Wilcoxon p, accuracy vs the leader's",
    "srcs_leader": "model with the highest SRCS in the panel",
    "p_srcs_vs_leader": "BH-adjusted Wilcoxon p, SRCS vs the leader's",
    "verified": "re-scored from its model spec here and matched (false: unverified, ranked only among the unverified)",
    "verification": "what verification found, or why the result is unverified",
}


def _condition_sort_key(cond: str) -> tuple[int, str]:
    return (CONDITION_ORDER.index(cond) if cond in CONDITION_ORDER else len(CONDITION_ORDER), cond)


def panels(results: Sequence[dict]) -> list[tuple[str, str]]:
    """Every (experiment, condition) that at least one result has, in the paper's order."""
    found = {(exp, cond) for r in results for exp, conds in r["experiments"].items() for cond in conds}
    return sorted(found, key=lambda p: (p[0], _condition_sort_key(p[1])))


def _series(entry: dict, measure: str) -> pd.Series:
    return pd.Series(entry[f"{measure}_by_unit"], dtype="float64")


def _entries(results: Sequence[dict], exp: str, cond: str) -> list[tuple[dict, dict]]:
    return [(r, r["experiments"][exp][cond]) for r in results if cond in r["experiments"].get(exp, {})]


def _label(result: dict) -> str:
    return display_name(result)


def ties_of(result: dict) -> str:
    """The result's ties convention (``analysis.ties``; ``half`` when absent)."""
    return result.get("analysis", {}).get("ties", DEFAULT_TIES)


def group_of(result: dict, entry: dict) -> str:
    """The like-for-like group of one model's entry (:func:`.ranking.comparison_group`)."""
    return comparison_group(entry.get("selection", ""), ties_of(result))


def _vs_leader(entries: list[tuple[dict, dict]], measure: str) -> tuple[str | None, list[float | None]]:
    """(the leader of the entries by ``measure``, the BH-adjusted p of every other entry against
    it); ``entries`` are one comparison group's ranked models (None leader when there are none)."""
    if not entries:
        return None, []
    other = "srcs" if measure == "accuracy" else "accuracy"
    best = max(range(len(entries)), key=lambda i: (entries[i][1][measure], entries[i][1][other], -i))
    leader = entries[best][1]
    raw, idx = [], []
    for i, (r, e) in enumerate(entries):
        if i == best:
            continue
        x, y = paired(_series(e, measure), _series(leader, measure), f"{_label(r)} vs leader")
        raw.append(wilcoxon_p(x, y))
        idx.append(i)
    adjusted = bh_adjust(raw)
    out: list[float | None] = [None] * len(entries)
    for i, p in zip(idx, adjusted):
        out[i] = float(p)
    return _label(entries[best][0]), out


def ranking_rows(results: Sequence[dict]) -> list[dict]:
    """One row per (experiment, condition, model) with the columns of :data:`COLUMNS` (and
    ``identity``, the model's :func:`.identity.identity`), ranked by accuracy as shown within its
    comparison group (:func:`contstim_bench.analysis.ranking.rank_models`): models equal to
    :data:`SHOWN_DIGITS` decimals share a rank (``tied``) and are listed by name; the p-values
    against the leader are computed within the group."""
    rows = []
    for exp, cond in panels(results):
        entries = _entries(results, exp, cond)
        ranks = rank_models([e for _, e in entries], "accuracy", [ties_of(r) for r, _ in entries])
        leaders: dict[tuple[str, str], tuple[str | None, dict[int, float | None]]] = {}
        for group in dict.fromkeys(rk.group for rk in ranks):
            members = [i for i, rk in enumerate(ranks) if rk.group == group and rk.rank is not None]
            for m in MEASURES:
                leader, ps = _vs_leader([entries[i] for i in members], m)
                leaders[(group, m)] = (leader, dict(zip(members, ps)))
        for i, (r, e) in enumerate(entries):
            acc_lower = e["accuracy_noise_ceiling"]["lower"]
            rk = ranks[i]
            acc_leader, acc_p = leaders[(rk.group, "accuracy")]
            srcs_leader, srcs_p = leaders[(rk.group, "srcs")]
            rows.append(
                {
                    "rank": rk.rank,
                    "tied": rk.tied,
                    "rank_text": rank_text(rk, with_count=False),
                    "comparison": rk.group,
                    "not_ranked": rk.reason,
                    "model": _label(r),
                    "identity": identity(r),
                    "revision": model_key(r)[1][:12],
                    "spec": r["model"].get("spec", ""),
                    "method": r["model"].get("method", ""),
                    "experiment": exp,
                    "condition": cond,
                    "selection": e.get("selection", ""),
                    "ties": ties_of(r),
                    "n_units": e.get("n_units"),
                    "n_trials": e.get("n_trials"),
                    "accuracy": e["accuracy"],
                    "accuracy_stderr": e["accuracy_stderr"],
                    "accuracy_ceiling_lower": acc_lower,
                    "accuracy_ceiling_upper": e["accuracy_noise_ceiling"]["upper"],
                    "accuracy_normalised": normalised_accuracy(e["accuracy"], acc_lower),
                    "srcs": e["srcs"],
                    "srcs_stderr": e["srcs_stderr"],
                    "srcs_ceiling_lower": e["srcs_noise_ceiling"]["lower"],
                    "srcs_ceiling_upper": e["srcs_noise_ceiling"]["upper"],
                    "p_accuracy_vs_ceiling": e["p_vs_lower_ceiling"]["accuracy"],
                    "p_srcs_vs_ceiling": e["p_vs_lower_ceiling"]["srcs"],
                    "accuracy_leader": acc_leader if rk.rank is not None else None,
                    "p_accuracy_vs_leader": acc_p.get(i),
                    "srcs_leader": srcs_leader if rk.rank is not None else None,
                    "p_srcs_vs_leader": srcs_p.get(i),
                }
            )
    group_order = {g: k for k, g in enumerate(dict.fromkeys(row["comparison"] for row in rows))}
    rows.sort(key=lambda row: (row["experiment"], _condition_sort_key(row["condition"]), group_order[row["comparison"]],
                               row["rank"] is None, row["rank"] or 0, row["model"].casefold(), row["model"]))
    return rows


def pairwise_matrix(results: Sequence[dict], experiment: str, condition: str, measure: str) -> dict:
    """``{"models": [...], "scores": [...], "p": [[...]], "delta": [[...]]}`` for one panel.

    Models are ordered by decreasing mean ``measure``; ``p[i][j]`` is the BH-adjusted two-sided
    Wilcoxon p-value of model i vs model j over shared units (one family: every pair of the
    panel in the same comparison group, :func:`group_of`; ``None`` on the diagonal and for the
    pairs that are not); ``delta[i][j]`` = mean over shared units of i minus j.
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")
    entries = _entries(results, experiment, condition)
    if not entries:
        raise ValueError(f"no result has experiment {experiment!r} condition {condition!r}")
    entries.sort(key=lambda re: -re[1][measure])
    n = len(entries)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    groups = [group_of(r, e) for r, e in entries]
    pairs = [(i, j) for i, j in pairs if groups[i] == groups[j]]
    raw, deltas = [], []
    for i, j in pairs:
        x, y = paired(_series(entries[i][1], measure), _series(entries[j][1], measure), "pairwise")
        raw.append(wilcoxon_p(x, y))
        deltas.append(float((x - y).mean()))
    adjusted = bh_adjust(raw)
    p = [[None] * n for _ in range(n)]
    delta = [[None] * n for _ in range(n)]
    for (i, j), q, d in zip(pairs, adjusted, deltas):
        p[i][j] = p[j][i] = float(q)
        delta[i][j], delta[j][i] = d, -d
    return {
        "experiment": experiment,
        "condition": condition,
        "measure": measure,
        "alpha": ALPHA,
        "models": [_label(r) for r, _ in entries],
        "scores": [e[measure] for _, e in entries],
        "p": p,
        "delta": delta,
    }


OVERVIEW_CONDITION = "all"
OVERVIEW_MEASURES = ("accuracy", "accuracy_stderr", "accuracy_normalised", "srcs", "srcs_stderr", "n_trials")


def overview_rows(rows: Sequence[dict]) -> tuple[list[str], list[dict]]:
    """(experiments and rounds, one row per model): for every experiment or round, a column group
    with the model's accuracy, normalised accuracy, SRCS and trials on all of its trials
    (condition ``all``; absent values where the model was not evaluated there).  Models are
    ordered by their best normalised accuracy.  ``rows``: :func:`ranking_rows`."""
    from ..study import EXPERIMENTS

    found = {r["experiment"] for r in rows}
    groups = [e for e in EXPERIMENTS if e in found] + sorted(found - set(EXPERIMENTS))
    models: dict[str, dict] = {}
    for r in rows:
        if r["condition"] != OVERVIEW_CONDITION:
            continue
        entry = models.setdefault(r["identity"], {"model": r["model"], "revision": r["revision"],
                                                  "identity": r["identity"], "verified": r.get("verified", True),
                                                  "groups": {}})
        entry["groups"][r["experiment"]] = {m: r[m] for m in OVERVIEW_MEASURES}
    out = sorted(models.values(), key=lambda m: (-max((g["accuracy_normalised"] for g in m["groups"].values()
                                                        if not math.isnan(g["accuracy_normalised"])), default=0.0),
                                                 m["model"]))
    return groups, out


def rows_to_csv(rows: Sequence[dict]) -> str:
    """The ranking rows as CSV text (columns of :data:`COLUMNS`; empty cell for ``None``; a text
    cell a spreadsheet would read as a formula, e.g. a model named ``=HYPERLINK(...)``, gets a
    leading ``'``: :func:`contstim_bench.spreadsheet.safe_cell`)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else safe_cell(row.get(k)) for k in COLUMNS})
    return buf.getvalue()
