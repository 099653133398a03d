"""The items of a plausibility (Kauf et al. 2024) or BLiMP (Kauf & Ivanova 2023) result's page:
:func:`plausibility_items`, :func:`blimp_items` (for
:func:`contstim_bench.benchmarks.model_report.model_report`).

Plausibility: Experiment 1 accuracy per dataset (Fig. 1) and per voice (Fig. 2) with the human
accuracy of the same pairs and chance, its table, free vs constrained generation (Fig. 7) when the
result has it; Experiment 2 (SocialN400): condition means without and with context beside the human
sense rates (Figs. 3 and 9 for log-probabilities, Fig. 4 for the prompt's Yes answers), the three
context metrics (Table 6) and the Appendix E similarity.  BLiMP: accuracy per phenomenon and per
paradigm with the human validation and chance, and the layout of Kauf & Ivanova's Table 3 with the
paper's rows for the same method beside.  Every number is the result's; the human per-item sense
rates of SocialN400 (the dots of Figs. 3 and 9) come from the built dataset when its fingerprint is
the result's.
"""
from __future__ import annotations

import os

from ..plausibility.metrics import CONDITIONS, EXPERIMENT1_SUBSETS, METRIC_TITLES, METRICS, SUBSET_TITLES
from .blimp_reference import METHOD_NAMES, PHENOMENA, paper_model, reference_rows
from .report_items import report_item, unavailable
from .plausibility import DATASET, HUMAN_CONTEXT, HUMAN_NO_CONTEXT

PERSPECTIVES = [("no_context", "no context"), ("context", "in context")]
SHORT = {"eventsadapt_ai": "EventsAdapt AI", "eventsadapt_aa": "EventsAdapt AA", "dtfit": "DTFit"}


def _name(result: dict) -> str:
    return result["model"].get("name") or result["model"]["spec"]


def _limit_note(result: dict) -> str:
    limit = result["benchmark"].get("limit")
    return f" This run covers the first {limit} items of each set only (its limit)." if limit else ""


# ------------------------------------------------------------------------------ plausibility


def experiment1_rows(result: dict) -> list[dict]:
    """One row per subset and voice of Experiment 1, as the result records it."""
    rows = []
    for subset in EXPERIMENT1_SUBSETS:
        for voice, e in result["experiment1"].get(subset, {}).items():
            row = {"dataset": SUBSET_TITLES[subset], "voice": voice, "pairs": e["n_pairs"], "hits": e["hits"],
                   "accuracy": e["accuracy"], "human accuracy": e["human_accuracy"], "chance": e["chance"]}
            for k in ("accuracy_plausible_first", "accuracy_plausible_second", "accuracy_order_averaged"):
                if k in e:
                    row[k.replace("accuracy_", "accuracy, ").replace("_", " ")] = e[k]
            rows.append(row)
    return rows


def _exp1_items(result: dict, name: str, section: str) -> list[dict]:
    exp1 = result["experiment1"]
    subsets = [s for s in EXPERIMENT1_SUBSETS if s in exp1]
    chance = next(iter(exp1[subsets[0]].values()))["chance"]
    method = result["method"]

    def bar(e: dict, label: str) -> dict:
        return {"label": label, "value": e["accuracy"], "human": e["human_accuracy"], "n": e["n_pairs"]}

    items = [
        report_item("exp1_datasets", "accuracy_bars", f"Figure 1: {name} ({method}) on the three plausibility sets",
                    "Binary accuracy: the share of minimal pairs on which the plausible sentence gets the higher score "
                    "(both voices); black diamond: the human accuracy on the same pairs (mean ratings); dashed: chance."
                    + _limit_note(result),
                    {"groups": [{"label": SHORT[s], "bars": [bar(exp1[s]["both"], method)]} for s in subsets],
                     "chance": chance, "model": name}, section),
        report_item("exp1_voice", "accuracy_bars", f"Figure 2: {name} ({method}) on active and passive pairs",
                    "As Figure 1, per voice (DTFit has active sentences only).",
                    {"groups": [{"label": SHORT[s], "bars": [bar(e, v) for v, e in exp1[s].items() if v != "both"]}
                                for s in subsets], "chance": chance, "model": name}, section),
        report_item("exp1_table", "rows", "Experiment 1: accuracy per dataset and voice",
                    "As recorded in the result (Sentence Choice: plausible sentence shown first / second, and the "
                    "log-odds averaged over both orders).", {"rows": experiment1_rows(result)}, section),
    ]
    free = result.get("experiment1_free")
    title = "Figure 7: free vs constrained generation"
    if free is None:
        why = ("the result reads out log-probabilities; free generation answers a prompt"
               if method == "logprobs" else
               "the run did not generate freely (contstim plausibility --free-generation)")
        return items + [unavailable("exp1_free", title, why, section)]
    groups = [{"label": f"{SHORT[s]} {v}", "bars": [
        {"label": "free", "value": e["accuracy"], "human": None, "n": e["n_valid"]},
        {"label": "constrained", "value": exp1[s][v]["accuracy"], "human": None, "n": exp1[s][v]["n_pairs"]}]}
        for s in subsets for v, e in free[s].items()]
    return items + [report_item("exp1_free", "accuracy_bars", f"{title} ({name}, {method})",
                                "Free: greedy generation, accuracy over the valid answers; constrained: the most "
                                "probable allowed answer. n/a: no valid answer.", {"groups": groups, "chance": chance,
                                                                                   "model": name}, section)]


def _human_values(result: dict, datasets_dir, items_: set[int]) -> tuple[dict | None, str]:
    """Per-item human sense rates {perspective: {condition: [...]}} of the result's items, or None
    and why not."""
    from ..data.load import fingerprint, load_config

    try:
        local = fingerprint(DATASET, datasets_dir)
    except FileNotFoundError as exc:
        return None, f"the {DATASET} dataset cannot be built here ({exc})"
    if local != result["benchmark"]["dataset_fingerprint"]:
        return None, f"the local {DATASET} dataset is not the one the result was computed on (fingerprint)"
    stimuli = load_config(DATASET, "socialn400", split="test", datasets_dir=datasets_dir).to_pandas()
    stimuli = stimuli[stimuli["item"].isin(items_)]
    out = {p: {c: [float(v) for v in stimuli.loc[stimuli.condition == c, col]] for c in CONDITIONS}
           for p, col in (("no_context", HUMAN_NO_CONTEXT), ("context", HUMAN_CONTEXT))}
    return out, ""


def _per_item(values: list[dict], column: str, condition: str) -> list[float]:
    return [float(r[column]) for r in values if r["condition"] == condition]


def _similarity_rows(entries: dict) -> list[dict]:
    rows = []
    for label, sim in entries.items():
        if not sim["defined"]:
            rows.append({"response": label, "matched": None, "unmatched": None, "t": None, "p": None,
                         "items": sim.get("n_items"), "note": sim.get("undefined_because", "")})
            continue
        rows.append({"response": label, "matched": sim["matched"], "unmatched": sim["unmatched"],
                     "t": sim["t_statistic"], "p": sim["p_value"], "items": sim["n_items"], "note": ""})
    return rows


def _exp2_items(result: dict, name: str, datasets_dir, section: str) -> list[dict]:
    e2, prompting = result.get("experiment2"), result.get("experiment2_prompting")
    if e2 is None and prompting is None:
        why = result.get("skipped", {}).get("experiment2", "the result has no Experiment 2 section")
        return [unavailable("exp2", "Experiment 2 (SocialN400): Figures 3, 4, 9 and Table 6", why, section)]
    values = result["scores"]["experiment2" if e2 is not None else "experiment2_prompting"]["values"]
    human_values, why = _human_values(result, datasets_dir, {int(r["item"]) for r in values})
    human_note = "" if human_values else f" Human dots not shown: {why}."
    human = (e2 or prompting)["human"]
    human_panel = {"title": "human (Jouravlev et al. 2019)", "ylabel": "proportion judged to make sense",
                   "means": human["condition_means"], "values": human_values}
    data = {"conditions": list(CONDITIONS), "perspectives": PERSPECTIVES}
    items = []
    if e2 is not None:
        for fig, level, what in (("3", "word", "target-word"), ("9", "sentence", "target-sentence")):
            model_panel = {"title": name, "ylabel": f"{what} log-probability (nats)",
                           "means": e2[level]["condition_means"],
                           "values": {p: {c: _per_item(values, f"{level}_{p}", c) for c in CONDITIONS}
                                      for p, _ in PERSPECTIVES}}
            items.append(report_item(f"exp2_{level}", "condition_bars", f"Figure {fig}: {what} log-probabilities "
                                     "per SocialN400 condition, without and with context",
                                     "Bars: mean over items; dots: single items (human: the share of 'makes sense' "
                                     "judgments per item)." + human_note + _limit_note(result),
                                     {**data, "panels": [human_panel, model_panel]}, section))
        rows = [{"metric": METRIC_TITLES[m], "word": e2["word"]["metrics"][m]["accuracy"],
                 "sentence": e2["sentence"]["metrics"][m]["accuracy"], "human": human["metrics"][m]["accuracy"],
                 "items": e2["word"]["metrics"][m]["n_items"]} for m in METRICS]
        items.append(report_item("exp2_metrics", "rows", "Table 6: the three context metrics (accuracy over items)",
                                 "General Plausibility: control > critical target without context; Context-Dependent "
                                 "Plausibility: the critical target more probable in its context than without; "
                                 "Context Sensitivity: the critical target more probable in its licensing context than "
                                 "in the anomalous one. Human: the same comparisons on the sense rates.",
                                 {"rows": rows}, section))
        sims = {f"{lvl} log-prob": e2[lvl]["similarity"] for lvl in ("word", "sentence")}
    else:
        panel = {"title": name, "ylabel": "share of Yes answers", "means": prompting["condition_means"]}
        items.append(report_item("exp2_prompting", "condition_bars", "Figure 4: the sensibility-judgment prompt per "
                                 "SocialN400 condition, without and with context",
                                 "Bars: share of Yes answers (log p(Yes) > log p(No)); human: share of 'makes sense' "
                                 "judgments." + human_note, {**data, "panels": [human_panel, panel]}, section))
        sims = {"Yes answers": prompting["similarity"]}
    items.append(report_item("exp2_similarity", "rows", "Appendix E: similarity to the human pattern",
                             "Per item, 1 - Euclidean distance / sqrt(3) of the min-max scaled (Control, SemAnom, "
                             "Critical) responses; matched: the same perspective (context / no context) as people; "
                             "paired t-test matched vs unmatched.", {"rows": _similarity_rows(sims)}, section))
    return items


def plausibility_items(result: dict, datasets_dir: str | os.PathLike | None = None, seed: int = 0) -> tuple[dict, list]:
    """(headline, items) of a plausibility result (module docstring; ``seed`` unused)."""
    name = _name(result)
    headline: dict = {"method": result["method"]}
    for s in EXPERIMENT1_SUBSETS:
        if s in result["experiment1"]:
            headline[SHORT[s]] = result["experiment1"][s]["both"]["accuracy"]
            headline[f"{SHORT[s]} (human)"] = result["experiment1"][s]["both"]["human_accuracy"]
    if "experiment2" in result:
        for m in METRICS:
            headline[f"{METRIC_TITLES[m]} (word)"] = result["experiment2"]["word"]["metrics"][m]["accuracy"]
    headline["limit"] = result["benchmark"].get("limit")
    items = _exp1_items(result, name, "Experiment 1: single sentences (EventsAdapt, DTFit)")
    items += _exp2_items(result, name, datasets_dir, "Experiment 2: sentences in context (SocialN400)")
    return headline, items


# ------------------------------------------------------------------------------------- BLiMP


def blimp_table3_rows(result: dict) -> list[dict]:
    """Kauf & Ivanova (2023) Table 3 layout (percent): this run, the paper's rows for the same
    method (the paper's model when the spec names one) and the human row."""
    acc = result["accuracy"]
    method = result["model"].get("method", "")

    def row(label: str, overall: float, by: dict) -> dict:
        return {"": label, "overall": overall, **{p: by.get(p) for p in PHENOMENA}}

    rows = [row(f"{_name(result)} (this run)", 100 * acc["overall"]["accuracy"],
                {p: 100 * acc["phenomenon"][p]["accuracy"] for p in PHENOMENA if p in acc["phenomenon"]})]
    known = [method] if method in METHOD_NAMES else []
    for label, ref in reference_rows(known, paper_model(result["model"]["spec"])):
        rows.append(row(f"Kauf & Ivanova 2023: {label}", ref["overall"], ref))
    return rows


def blimp_items(result: dict, datasets_dir: str | os.PathLike | None = None, seed: int = 0) -> tuple[dict, list]:
    """(headline, items) of a BLiMP result (module docstring; ``datasets_dir`` and ``seed`` unused)."""
    name = _name(result)
    acc = result["accuracy"]
    overall = acc["overall"]
    limit = result["benchmark"].get("limit")
    note = (f" This run covers the first {limit} pairs of each paradigm ({overall['n_pairs']} pairs); the paper's "
            "numbers are over all 67,000." if limit else "")
    section = "BLiMP (Warstadt et al. 2020)"

    def bar(e: dict, label: str = "accuracy") -> dict:
        return {"label": label, "value": e["accuracy"], "human": e.get("human_accuracy"), "n": e["n_pairs"]}

    phen = [{"label": "overall", "bars": [bar(overall)]}] + [
        {"label": p.replace("_", " "), "bars": [bar(e)]} for p, e in acc["phenomenon"].items()]
    paradigms = sorted(acc["paradigm"].items(), key=lambda kv: (kv[1]["phenomenon"], kv[0]))
    items = [
        report_item("blimp_phenomena", "accuracy_bars", f"BLiMP accuracy of {name} per phenomenon",
                    "Forced-choice accuracy (the acceptable sentence scores higher), mean of the paradigm accuracies of "
                    "each phenomenon; black diamond: the human validation of the same paradigms (Warstadt et al. "
                    "2020); dashed: chance." + note,
                    {"groups": phen, "chance": 0.5, "model": name, "horizontal": True}, section),
        report_item("blimp_paradigms", "accuracy_bars", f"BLiMP accuracy of {name} per paradigm",
                    "As above, one bar per paradigm, coloured and ordered by phenomenon." + note,
                    {"groups": [{"label": k, "bars": [bar(e, e["phenomenon"].replace("_", " "))]} for k, e in paradigms],
                     "chance": 0.5, "model": name, "horizontal": True, "bar_key": "{label}"}, section),
        report_item("blimp_table3", "rows", "Kauf & Ivanova (2023), Table 3 layout: accuracy (%) per phenomenon",
                    "This run beside the paper's rows for the same scoring method (its model when the spec names one "
                    "of its four, else all four) and the human row." + note,
                    {"rows": blimp_table3_rows(result), "digits": 1}, section),
        report_item("blimp_fields", "rows", "BLiMP accuracy per field", "Mean of the paradigm accuracies of each "
                    "field, the human validation beside.",
                    {"rows": [{"field": k, "paradigms": e["n_paradigms"], "pairs": e["n_pairs"],
                               "accuracy": e["accuracy"], "human accuracy": e.get("human_accuracy")}
                              for k, e in acc["field"].items()]}, section),
    ]
    headline = {"overall accuracy": overall["accuracy"], "human": overall.get("human_accuracy"),
                "paradigms": overall["n_paradigms"], "pairs": overall["n_pairs"], "limit": limit}
    return headline, items
