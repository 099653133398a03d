"""The items of a contstim result's page (:func:`contstim_items`, for
:func:`contstim_bench.benchmarks.model_report.model_report`).

Per experiment of the result:

- ``<exp>_scores`` and ``<exp>_versus``: the result's numbers per condition (accuracy, SRCS,
  noise ceilings, q against the lower ceiling) and its head-to-head with every reference model;
- ``<exp>_accuracy`` / ``<exp>_srcs``: Figs. 1, 3 and 4 with this model among the references
  (the result's ``panels``);
- ``<exp>_scatter_<reference>``: the percentile scatter against each reference model;
- ``<exp>_S4_<condition>``: the head-to-head matrix of every reference model and this one on the
  condition's pairs (Fig. S4, recomputed here from the log-probabilities: the result holds only
  this model's row);
- ``<exp>_T1``..``<exp>_T3``: the pair of the condition on which this model failed most severely
  (:func:`contstim_bench.analysis.failures.worst_pair`, on the trial selection the result used:
  the trials that target the model when some do, every trial of the condition otherwise).

The scatter, matrices and tables read the human trials and the reference log-probabilities from
the dataset; when it is missing or not the one the result was computed on (fingerprint), or the
experiment is a round of the benchmark, they say so in their place.
"""
from __future__ import annotations

import os
from dataclasses import asdict

from ..analysis.dominance import dominance
from ..analysis.evaluation import log_ratios_from_logprobs
from ..analysis.failures import worst_pair
from ..analysis.inference import p_text
from ..analysis.percentile_scatter import scatter_points
from ..analysis.selection import condition
from ..analysis.trials import pair_votes, prepare_trials
from ..names import slug
from ..study import EXPERIMENTS, is_paper_experiment
from .contstim import DATASET, load_experiment
from .contstim_compare import compare_logprobs
from .report_items import report_item, unavailable

MATRIX_CONDITIONS = ("randomly_sampled_natural", "natural_controversial", "synthetic_vs_synthetic")
"""Conditions whose pairs were chosen to contrast models (or sampled at random): Figs. S3/S4."""

TABLES = {
    "T1": ("natural_controversial", "Table 1: the controversial natural pair on which {m} failed most severely"),
    "T2": ("synthetic_vs_synthetic", "Table 2: the controversial synthetic pair on which {m} failed most severely"),
    "T3": ("natural_vs_synthetic", "Table 3: the natural vs synthetic pair on which {m} failed most severely"),
}
CONDITION_WORDS = {"natural_controversial": "controversial natural", "synthetic_vs_synthetic": "synthetic vs synthetic",
                   "natural_vs_synthetic": "natural vs synthetic", "randomly_sampled_natural": "randomly sampled natural"}


def _headline(result: dict) -> dict:
    row: dict = {}
    for exp, conds in result["experiments"].items():
        e = conds.get("all") or next(iter(conds.values()))
        row[f"{exp} accuracy"] = e["accuracy"]
        row[f"{exp} accuracy SE"] = e["accuracy_stderr"]
        row[f"{exp} accuracy ceiling (lower)"] = e["accuracy_noise_ceiling"]["lower"]
        row[f"{exp} SRCS"] = e["srcs"]
        row[f"{exp} SRCS SE"] = e["srcs_stderr"]
        row[f"{exp} SRCS ceiling (lower)"] = e["srcs_noise_ceiling"]["lower"]
    return row


def score_rows(entries: dict) -> list[dict]:
    """One row per condition of an experiment: the result's scores, ceilings and q-values."""
    rows = []
    for cond, e in entries.items():
        rows.append({"condition": cond, "selection": e["selection"], "units": e["n_units"], "trials": e["n_trials"],
                     "accuracy": e["accuracy"], "accuracy SE": e["accuracy_stderr"], "accuracy ceiling": f"{e['accuracy_noise_ceiling']['lower']:.3f}-"
                     f"{e['accuracy_noise_ceiling']['upper']:.3f}", "q vs lower (accuracy)":
                     p_text(e["p_vs_lower_ceiling"]["accuracy"]), "SRCS": e["srcs"], "SRCS SE": e["srcs_stderr"], "SRCS ceiling":
                     f"{e['srcs_noise_ceiling']['lower']:.3f}-{e['srcs_noise_ceiling']['upper']:.3f}",
                     "q vs lower (SRCS)": p_text(e["p_vs_lower_ceiling"]["srcs"]),
                     "degenerate": e.get("degenerate") or ""})
    return rows


def versus_rows(entries: dict, name: str) -> list[dict]:
    """The result's head-to-head of this model with every other model, per condition."""
    rows = []
    for cond, e in entries.items():
        for other, h in (e.get("head_to_head") or {}).items():
            verdict = ("not separable (never disagree)" if h["n_trials"] == 0 else
                       "no significant difference" if not h["significant"] else
                       "this model better" if h["better"] == name else "other model better")
            rows.append({"condition": cond, "other model": other, "selection": h["selection"],
                         "pairs disagreeing": f"{h['n_pairs']} of {h['n_pairs_selected']}", "trials": h["n_trials"],
                         "share for this model": h["share"], "q (BH)": p_text(h["p_bh"]), "verdict": verdict,
                         "share by item": h["share_items"], "q by item (BH)": p_text(h["p_items_bh"])})
    return rows


def best_reference(result: dict, experiment: str) -> str:
    """The reference model with the highest accuracy on all trials of ``experiment`` (ties: the
    higher SRCS, then the first in the result's order): the default of the percentile scatter."""
    entry = result["experiments"][experiment]
    cond = "all" if "all" in entry else next(iter(entry))
    comps = entry[cond]["comparisons"]
    if not comps:
        raise ValueError(f"experiment {experiment!r} of the result has no reference model to compare with")
    return max(comps, key=lambda r: (comps[r]["accuracy"], comps[r]["srcs"]))


def scatter_data(result: dict, experiment: str, reference: str | None = None, datasets_dir=None) -> dict:
    """The percentile scatter of the result's model against ``reference`` (default:
    :func:`best_reference`) on ``experiment``: ``{"model", "reference", "experiment", "points"}``
    (:func:`contstim_bench.analysis.percentile_scatter.scatter_points`), from the trials and the
    reference log-probabilities of the dataset.  ValueError names an experiment the result lacks,
    a dataset other than the result's (fingerprint), an unknown reference and a sentence the
    result has no log-probability for."""
    if experiment not in result["experiments"]:
        raise ValueError(f"experiment {experiment!r} is not in the result (has: {', '.join(result['experiments'])})")
    problem = dataset_problem(result, experiment, datasets_dir)
    if problem is not None:
        raise ValueError(problem)
    trials, refs = load_experiment(experiment, datasets_dir)
    name = result["model"]["name"]
    refs.pop(name, None)
    reference = reference or best_reference(result, experiment)
    if reference not in refs:
        raise ValueError(f"unknown reference model {reference!r} for the {experiment} experiment; known: "
                         f"{', '.join(refs)}")
    sentences = list(dict.fromkeys(list(trials["sentence1"]) + list(trials["sentence2"])))
    missing = [s for s in sentences if s not in result["logprobs"]]
    if missing:
        raise ValueError(f"the result has no log-probability for sentence {missing[0]!r} ({len(missing)} missing)")
    lps = {s: result["logprobs"][s] for s in sentences}
    return {"model": name, "reference": reference, "experiment": experiment,
            "points": scatter_points(pair_votes(trials), lps, refs[reference])}


def dataset_problem(result: dict, experiment: str, datasets_dir) -> str | None:
    """Why the dataset cannot serve the items that need the human trials (None: it can)."""
    if not is_paper_experiment(experiment):
        return (f"{experiment} is a round of the benchmark; these items are made for the paper's experiments "
                f"({', '.join(EXPERIMENTS)}) only")
    from ..data.load import fingerprint

    try:
        local = fingerprint(DATASET, datasets_dir)
    except FileNotFoundError as exc:
        return f"the {DATASET} dataset cannot be built here ({exc})"
    wanted = result["benchmark"]["dataset_fingerprint"]
    if local != wanted:
        return (f"the local {DATASET} dataset (fingerprint {local[:12]}) is not the one the result was computed on "
                f"({wanted[:12]}); rebuild it, or pass its folder to `contstim report --datasets`")
    return None


def _bars(result: dict, exp: str, name: str, section: str) -> list[dict]:
    out = []
    for measure, fig, what in (("accuracy", "Figures 1 and 3", "prediction accuracy"),
                               ("srcs", "Figure 4", "signed-rank cosine similarity (SRCS)")):
        id_, title = f"{exp}_{measure}", f"{fig}: {what} of {name} and the reference models, {exp} experiment"
        if "panels" not in result or exp not in result["panels"]:
            out.append(unavailable(id_, title, "the result has no 'panels' section (every model of each condition); "
                                   "evaluate the model again with `contstim evaluate` (scores come from the cache)",
                                   section))
            continue
        out.append(report_item(id_, "result_bars", title,
                               f"One panel per condition: a bar per model at its mean {what} over units, dots the "
                               "single units, the grey band the noise ceiling, * a model significantly below its "
                               f"lower ceiling, triangles where {name} is significantly better or worse than that "
                               "model (the key and the notes under the figure say which tests).",
                               {"panels": result["panels"][exp], "entries": result["experiments"][exp], "model": name,
                                "experiment": exp, "measure": measure}, section))
        out.append(report_item(f"{exp}_{measure}_dominance", "dominance",
                               f"{fig}, dominance circles: which model's {what} is significantly above which "
                               f"({exp} experiment)",
                               "Per condition: a filled circle where the row model's per-unit score is significantly "
                               "above the column model's; models scored on every trial of the condition are "
                               "compared, those scored on the trials that target them are not.",
                               {"measure": measure, "conditions": {c: dominance(block["models"], measure)
                                                                   for c, block in result["panels"][exp].items()}},
                               section))
    return out


def _matrices(result, exp, name, lps, refs, datasets_dir, section) -> list[dict]:
    conds = [c for c in MATRIX_CONDITIONS if c in result["experiments"][exp]]
    if not conds:
        return [unavailable(f"{exp}_S4", f"Figure S4: head-to-head matrix, {exp} experiment",
                            f"the {exp} experiment has no randomly sampled, controversial natural or synthetic pairs",
                            section)]
    models = {**refs, name: lps}
    ties = result.get("analysis", {}).get("ties", "half")
    comparison = compare_logprobs(models, exp, datasets_dir, conditions=conds, ties=ties)
    return [report_item(f"{exp}_S4_{c}", "head_to_head",
                        f"Figure S4: every model against every other on the {CONDITION_WORDS[c]} pairs ({exp})",
                        "Each cell: on the pairs where the row and column models prefer different sentences, the share "
                        "of participants' choices that agreed with the row model (pooled over trials, as in the "
                        f"paper); {name} in bold. Stars: two-sided Wilcoxon of the per-unit shares vs 0.5, BH over "
                        "the model pairs.", {"comparison": comparison, "condition": c, "highlight": name}, section)
            for c in conds]


def _failure_tables(result, exp, name, trials, lps, refs, seed, section) -> list[dict]:
    entries = result["experiments"][exp]
    prepared = prepare_trials(trials)
    ratio = prepared.orient(log_ratios_from_logprobs(trials, lps))
    ties = result.get("analysis", {}).get("ties", "half")
    out = []
    for id_, (cond_key, title) in TABLES.items():
        title = title.format(m=name) + f" ({exp} experiment)"
        if cond_key not in entries:
            out.append(unavailable(f"{exp}_{id_}", title, f"the {exp} experiment has no "
                                   f"{CONDITION_WORDS[cond_key]} trials", section))
            continue
        targeted = entries[cond_key]["selection"] != "all"
        # no trial targets this model: every trial of the condition, as its scores (analysis/failures.py)
        failure = worst_pair(prepared.frame, ratio, name, condition(cond_key), {**refs, name: lps}, seed=seed,
                             ties=ties, untargeted=not targeted)
        if failure is None:
            out.append(unavailable(f"{exp}_{id_}", title, "no trial of the condition evaluates this model", section))
            continue
        which = ("the trials that target it" if targeted else
                 "every trial of the condition (no trial targets this model)")
        out.append(report_item(f"{exp}_{id_}", "failures", title,
                               f"Among {which}: the pair on which {name}'s accuracy (mean over the participants who saw "
                               "it) was lowest, ties broken at random with the report's seed; model 2: "
                               + ("the model the pair was made to contrast it with" if targeted else
                                  "the reference model that targeted the pair and prefers the sentence most "
                                  "participants chose")
                               + "; sentence 1 is the one most participants chose; log-probabilities in natural log, "
                               "the higher one bold.",
                               {"condition": cond_key, "rows": [asdict(failure)]}, section))
    return out


def contstim_items(result: dict, datasets_dir: str | os.PathLike | None = None, seed: int = 0) -> tuple[dict, list]:
    """(headline, items) of a contstim result (module docstring)."""
    name = result["model"]["name"]
    items: list[dict] = []
    for exp, entries in result["experiments"].items():
        section = f"{exp} experiment"
        items += [report_item(f"{exp}_scores", "rows", f"Scores of {name} per condition, {exp} experiment",
                              "As recorded in the result: mean over units, noise ceiling (lower-upper), BH-adjusted "
                              "two-sided Wilcoxon q against the lower ceiling.", {"rows": score_rows(entries)}, section)]
        items += _bars(result, exp, name, section)
        versus = versus_rows(entries, name)
        if versus:
            items.append(report_item(f"{exp}_versus", "rows", f"{name} head-to-head with every other model, {exp}",
                                     "On the pairs where the two models prefer different sentences: the share of "
                                     "participants' choices that went to this model's sentence (mean over units; 0.5 = "
                                     "no difference), BH-adjusted two-sided Wilcoxon q of the shares vs 0.5.",
                                     {"rows": versus}, section))
        problem = dataset_problem(result, exp, datasets_dir)
        needs = [(f"{exp}_scatter", f"Percentile scatter of {name} against each reference model ({exp})"),
                 (f"{exp}_S4", f"Figure S4: head-to-head matrices ({exp})"),
                 (f"{exp}_T", f"Tables 1-3: the pairs on which {name} failed most severely ({exp})")]
        if problem is not None:
            items += [unavailable(i, t, problem, section) for i, t in needs]
            continue
        trials, refs = load_experiment(exp, datasets_dir)
        refs.pop(name, None)
        sentences = {s for pair in zip(trials["sentence1"], trials["sentence2"]) for s in pair}
        lps = {s: result["logprobs"][s] for s in sentences}
        pairs = pair_votes(trials)
        for ref in refs:
            items.append(report_item(f"{exp}_scatter_{slug(ref)}", "scatter", f"{name} against {ref}: sentence "
                                     f"log-probability percentiles ({exp})",
                                     f"Each sentence pair of the experiment as two dots joined by a line, at the "
                                     f"percentile of each sentence's log-probability under {name} (x) and {ref} (y) "
                                     "among all sentences of the experiment (as Figs. 1a, 1b and 3a).",
                                     {"model": name, "reference": ref, "experiment": exp,
                                      "points": scatter_points(pairs, lps, refs[ref])}, section))
        items += _matrices(result, exp, name, lps, refs, datasets_dir, section)
        items += _failure_tables(result, exp, name, trials, lps, refs, seed, section)
    for exp, why in result.get("skipped_experiments", {}).items():
        items.append(unavailable(f"{exp}_skipped", f"{exp} experiment", f"not evaluated: {why}", f"{exp} experiment"))
    return _headline(result), items
