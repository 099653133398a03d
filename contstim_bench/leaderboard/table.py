"""Leaderboard tables from validated result files: ranking rows and the pairwise significance matrix.

For every experiment and condition (a *panel*) each model contributes one row:

- ``accuracy`` (mean over units of the binarised accuracy, units = participants in pll, groups in
  main), its noise ceiling (``accuracy_ceiling_lower`` .. ``_upper``) and
  ``accuracy_normalised`` = accuracy / lower noise ceiling (1.0 = as good as the other
  participants predict each participant);
- ``srcs`` (signed-rank cosine similarity) and its ceiling;
- ``p_accuracy_vs_ceiling`` / ``p_srcs_vs_ceiling``: the result's own BH-adjusted two-sided
  Wilcoxon p-value against the lower ceiling;
- ``p_accuracy_vs_leader`` / ``p_srcs_vs_leader``: two-sided Wilcoxon signed-rank test of the
  model's per-unit values against the leader's (the model with the highest mean of that measure
  in the panel; ties broken by the other measure), Benjamini-Hochberg adjusted across the models
  of the panel (``None`` for the leader itself, and for a model that does not compare like for
  like with the leader: one evaluated on all trials of a controversial condition against a
  leader evaluated on the trials that target it, :func:`comparable`).

Each model is scored on its own selection of trials (``selection``: a reference model on the
trials that target it in controversial conditions), as in the paper's figures; the pairwise
tests pair units (participants) shared by both selections.

:func:`pairwise_matrix` gives, per panel and measure, the BH-adjusted p-value of every pair of
models (one BH family per panel and measure).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
from scipy.stats import rankdata

from ..analysis.inference import ALPHA, bh_adjust, paired, wilcoxon_p
from ..schema import TRIAL_TYPES
from ..spreadsheet import safe_cell
from .identity import display_name, identity
from .validate import model_key

MEASURES = ("accuracy", "srcs")
CONDITION_ORDER = TRIAL_TYPES + ("all",)
SHOWN_DIGITS = 3
"""Decimals the leaderboard shows; accuracies equal at this precision share a rank."""

COLUMNS = {
    "rank": f"rank by accuracy within the panel (1 = best); accuracies equal to {SHOWN_DIGITS} decimals share "
            "the best of their ranks",
    "tied": "True when the rank is shared (shown as =N); tied models are listed by name",
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
    "accuracy_ceiling_lower": "lower noise ceiling of the accuracy",
    "accuracy_ceiling_upper": "upper noise ceiling of the accuracy",
    "accuracy_normalised": "accuracy / lower noise ceiling",
    "srcs": "signed-rank cosine similarity, mean over units",
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


def shown(value: float) -> float:
    """``value`` as the leaderboard shows it (:data:`SHOWN_DIGITS` decimals)."""
    return float(f"{value:.{SHOWN_DIGITS}f}")


def shared_ranks(values: list[float]) -> tuple[list[int], list[bool]]:
    """(rank, tied) of each value, highest first, comparing values as shown: equal shown values
    share the best of their ranks (1, =2, =2, 4)."""
    rounded = [shown(v) for v in values]
    rank = rankdata([-v for v in rounded], method="min")
    counts = {v: rounded.count(v) for v in rounded}
    return [int(r) for r in rank], [counts[v] > 1 for v in rounded]


def comparable(a: dict, b: dict) -> bool:
    """Whether two models' entries of one condition compare like for like: both evaluated on every
    trial of the condition (the same trials), or both on the trials that target each of them (the
    paper's own selections).  A model on all trials against one on its own targeted trials is not
    (different trial sets): the result files' ``head_to_head`` compares such models instead."""
    return (a.get("selection") == "all") == (b.get("selection") == "all")


def _vs_leader(entries: list[tuple[dict, dict]], measure: str) -> tuple[str, list[float | None]]:
    other = "srcs" if measure == "accuracy" else "accuracy"
    best = max(range(len(entries)), key=lambda i: (entries[i][1][measure], entries[i][1][other], -i))
    leader = entries[best][1]
    raw, idx = [], []
    for i, (r, e) in enumerate(entries):
        if i == best or not comparable(e, leader):
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
    ``identity``, the model's :func:`.identity.identity`), ranked by accuracy as shown: models
    equal to :data:`SHOWN_DIGITS` decimals share a rank (``tied``) and are listed by name."""
    rows = []
    for exp, cond in panels(results):
        entries = _entries(results, exp, cond)
        leaders = {m: _vs_leader(entries, m) for m in MEASURES}
        rank, tied = shared_ranks([e["accuracy"] for _, e in entries])
        for i, (r, e) in enumerate(entries):
            acc_lower = e["accuracy_noise_ceiling"]["lower"]
            rows.append(
                {
                    "rank": rank[i],
                    "tied": tied[i],
                    "model": _label(r),
                    "identity": identity(r),
                    "revision": model_key(r)[1][:12],
                    "spec": r["model"].get("spec", ""),
                    "method": r["model"].get("method", ""),
                    "experiment": exp,
                    "condition": cond,
                    "selection": e.get("selection", ""),
                    "n_units": e.get("n_units"),
                    "n_trials": e.get("n_trials"),
                    "accuracy": e["accuracy"],
                    "accuracy_ceiling_lower": acc_lower,
                    "accuracy_ceiling_upper": e["accuracy_noise_ceiling"]["upper"],
                    "accuracy_normalised": e["accuracy"] / acc_lower if acc_lower > 0 else math.nan,
                    "srcs": e["srcs"],
                    "srcs_ceiling_lower": e["srcs_noise_ceiling"]["lower"],
                    "srcs_ceiling_upper": e["srcs_noise_ceiling"]["upper"],
                    "p_accuracy_vs_ceiling": e["p_vs_lower_ceiling"]["accuracy"],
                    "p_srcs_vs_ceiling": e["p_vs_lower_ceiling"]["srcs"],
                    "accuracy_leader": leaders["accuracy"][0],
                    "p_accuracy_vs_leader": leaders["accuracy"][1][i],
                    "srcs_leader": leaders["srcs"][0],
                    "p_srcs_vs_leader": leaders["srcs"][1][i],
                }
            )
    rows.sort(key=lambda row: (row["experiment"], _condition_sort_key(row["condition"]), row["rank"],
                               row["model"].casefold(), row["model"]))
    return rows


def pairwise_matrix(results: Sequence[dict], experiment: str, condition: str, measure: str) -> dict:
    """``{"models": [...], "scores": [...], "p": [[...]], "delta": [[...]]}`` for one panel.

    Models are ordered by decreasing mean ``measure``; ``p[i][j]`` is the BH-adjusted two-sided
    Wilcoxon p-value of model i vs model j over shared units (one family: every pair of the
    panel that compares like for like, :func:`comparable`; ``None`` on the diagonal and for the
    pairs that do not); ``delta[i][j]`` = mean over shared units of i minus j.
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")
    entries = _entries(results, experiment, condition)
    if not entries:
        raise ValueError(f"no result has experiment {experiment!r} condition {condition!r}")
    entries.sort(key=lambda re: -re[1][measure])
    n = len(entries)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    pairs = [(i, j) for i, j in pairs if comparable(entries[i][1], entries[j][1])]
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
OVERVIEW_MEASURES = ("accuracy", "accuracy_normalised", "srcs", "n_trials")


def overview_rows(rows: Sequence[dict]) -> tuple[list[str], list[dict]]:
    """(experiments and rounds, one row per model): for every experiment or round, a column group
    with the model's accuracy, normalised accuracy, SRCS and trials on all of its trials
    (condition ``all``; absent values where the model was not evaluated there).  Models are
    ordered by their best normalised accuracy.  ``rows``: :func:`ranking_rows`."""
    from ..schema import EXPERIMENTS

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
