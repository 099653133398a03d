"""The figures and tables of Kauf et al. (2024) for one or more plausibility results:
:func:`plausibility_report`.

It returns report items (``id``, ``kind``, ``title``, ``caption``, ``data``, as
:mod:`.contstim_report`) and ``skipped`` with the reason for each one the results do not support.
Figures (drawn by :mod:`contstim_bench.report.plausibility_figures`, one function per ``kind``;
item ids carry the prefix ``kauf2024-``):

- ``F1`` LogProbs vs prompting with Sentence Choice I per dataset (Figure 1);
- ``F2`` accuracy on active and passive EventsAdapt AA pairs, base vs instruct (Figure 2);
- ``F3`` / ``F9`` target-word / target-sentence log-probabilities per SocialN400 condition with
  and without the context, beside the human sense rates (Figures 3 and 9);
- ``F4`` the share of Yes answers to the Appendix F prompts per condition (Figure 4);
- ``F5`` every prompting method per dataset (Figure 5); ``F6`` DTFit with Word Comparison
  (Figure 6); ``F7`` free vs constrained generation (Figure 7); ``F8`` Sentence Choice I by query
  type (Figure 8).

Tables (``kind`` ``table``: ``data`` holds ``columns``, display ``rows`` and raw ``records``):
``T3`` accuracy and standard error per method (Table 3), ``T4`` LogProbs accuracy with the
base-vs-instruct dependent t-tests (Table 4), ``human`` each model vs the humans (paired t-tests,
Bonferroni over the models: Result 2), ``T6`` the Experiment 2 metrics (Table 6), ``T8`` the
Appendix E similarity to the human pattern (Tables 8-11).  Statistics:
:mod:`contstim_bench.plausibility.statistics`.

Each result is one model read out one way (``contstim plausibility`` output).  Results of one
model (``model.model`` of the result, or the ``names`` given) with different methods fill the
method figures; ``base_instruct`` pairs the results of a base and an instruction-tuned model.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._version import __version__
from ..data.plausibility_human import pair_hits
from ..plausibility.metrics import CHANCE, CONDITIONS, EXPERIMENT1_SUBSETS, METRIC_TITLES, METRICS, SUBSET_TITLES
from ..plausibility.statistics import base_vs_instruct, se_from_counts, summarize, versus_human
from ..scoring.prompt_templates import DEFAULT_QUERY, TEMPLATES
from .plausibility import DATASET, FORMAT, HUMAN_CONTEXT, HUMAN_NO_CONTEXT
from .plausibility_glmm import result_pair_hits

TABLE2 = ("logprobs", "prompt:sentence-choice-1", "prompt:sentence-choice-2", "prompt:likert",
          "prompt:sentence-judgment")
"""The methods of Figure 5 and Table 3, in the paper's order."""
PERSPECTIVES = ("no_context", "context")
ID_PREFIX = "kauf2024-"
"""Item ids are ``kauf2024-F1`` ... ``kauf2024-T8``: unique beside the other papers' items."""


def method_title(method: str, query: str | None = None) -> str:
    """"LogProbs", a prompt's title as in the paper ("Sentence Choice I"), with a query type that
    is not the default in brackets."""
    if method == "logprobs":
        return "LogProbs"
    title = TEMPLATES[method.partition(":")[2]].title
    return title + (f" ['{query}']" if query not in (None, DEFAULT_QUERY) else "")


def unit_hits(result: dict, pairs: pd.DataFrame, source: str = "result") -> pd.DataFrame:
    """One row per unit of ``result``'s Experiment 1 (:mod:`contstim_bench.plausibility.statistics`):
    ``pair_id``, ``presentation`` (``pair``, or ``plausible_first`` / ``plausible_second`` for the
    two orders of Sentence Choice I and Word Comparison), ``subset``, ``voice``, ``hit`` and the
    humans' ``human_hit`` on the same pair.  ``pairs``: every Experiment 1 pair."""
    scores = result.get("scores", {}).get("experiment1", {})
    if "pair_log_odds" in scores:
        rows = [(o["pair_id"], order, (o[order] > 0) if order == "plausible_first" else (o[order] < 0))
                for o in scores["pair_log_odds"] for order in ("plausible_first", "plausible_second")]
    else:
        rows = [(pid, "pair", hit) for pid, hit in result_pair_hits(result, pairs, source).items()]
    units = pd.DataFrame(rows, columns=["pair_id", "presentation", "hit"])
    info = pairs.set_index("pair_id")
    missing = sorted(set(units.pair_id) - set(info.index))
    if missing:
        raise ValueError(f"{source}: pair ids {missing[:3]} are not Experiment 1 pairs of this dataset")
    human = pd.Series(pair_hits(info.human_mean_plausible, info.human_mean_implausible, "human mean ratings"),
                      index=info.index)
    units["subset"] = units.pair_id.map(info.subset)
    units["voice"] = units.pair_id.map(info.voice)
    units["human_hit"] = units.pair_id.map(human).astype(bool)
    units["hit"] = units.hit.astype(bool)
    return units


def _entries(results, names, datasets_dir) -> tuple[list[dict], str]:
    from ..data.load import fingerprint
    from ..results.io import read_result

    fp = fingerprint(DATASET, datasets_dir)
    out = []
    for i, r in enumerate(results):
        source = str(r) if isinstance(r, (str, os.PathLike)) else f"results[{i}]"
        r = read_result(r) if isinstance(r, (str, os.PathLike)) else r
        if r.get("format") != FORMAT:
            raise ValueError(f"{source}: not a plausibility result (format {r.get('format')!r})")
        if r.get("benchmark", {}).get("dataset_fingerprint") != fp:
            raise ValueError(f"{source}: dataset fingerprint {r.get('benchmark', {}).get('dataset_fingerprint')} "
                             f"differs from this plausibility dataset's {fp}")
        query = (r.get("prompt") or {}).get("query")
        model = r["model"].get("model") or r["model"]["spec"]
        out.append({"source": source, "result": r, "name": names[i] if names else str(model),
                    "method": r["method"], "query": query, "title": method_title(r["method"], query)})
    return out, fp


def _item(id_: str, kind: str, title: str, caption: str, data) -> dict:
    return {"id": f"{ID_PREFIX}{id_}", "kind": kind, "title": title, "caption": caption, "data": data}


def _cell(s: dict | None) -> str:
    if s is None or s["accuracy"] is None:
        return ""
    return f"{s['accuracy']:.2f}" + (f" ({s['se']:.2f})".replace("0.", ".") if s["se"] is not None else "")


def _sel(units, subset, voice=None):
    m = units.subset == subset
    return units[m if voice is None else m & (units.voice == voice)]


def _human(units_all: pd.DataFrame, subset: str, voice: str | None = None) -> dict:
    """Human accuracy and SE over the pairs of ``subset`` (one unit per pair)."""
    sel = _sel(units_all, subset, voice).drop_duplicates("pair_id")
    return summarize(sel.human_hit.to_numpy())


def _summary(e: dict, subset: str, voice: str | None = None) -> dict | None:
    sel = _sel(e["units"], subset, voice)
    return summarize(sel.hit.to_numpy()) if len(sel) else None


def _chance(e: dict) -> float:
    return CHANCE["judgment"] if e["method"] == "prompt:sentence-judgment" else CHANCE["higher"]


def _bar_panels(entries, human_units, subsets, groups_of) -> list[dict]:
    """Bar-figure panels, one per subset with any bar: a bar group per ``groups_of(entry, subset)``
    label (its chance level beside it), a series per model name, the human accuracy of the subset."""
    out = []
    for subset in subsets:
        groups: list[str] = []
        chance: dict[str, float] = {}
        series: dict[str, dict] = {}
        for e in entries:
            for group, s in groups_of(e, subset):
                if group not in chance:
                    groups.append(group)
                    chance[group] = _chance(e)
                series.setdefault(e["name"], {})[group] = s
        if groups:
            out.append({"title": SUBSET_TITLES[subset], "groups": groups, "chance": [chance[g] for g in groups],
                        "human": _human(human_units, subset),
                        "series": [{"label": name, "values": [v[g]["accuracy"] if g in v else None for g in groups],
                                    "se": [v[g]["se"] if g in v else None for g in groups],
                                    "notes": [v[g].get("note") if g in v else None for g in groups]}
                                   for name, v in series.items()]})
    return out


def _methods(allowed: Sequence[str], any_query: bool = False):
    """``groups_of`` for the bar figures: the result's own accuracy, titled by its method, when
    its method is ``allowed`` (and its query the default, unless ``any_query``)."""
    def groups_of(e: dict, subset: str) -> list[tuple[str, dict]]:
        if e["method"] not in allowed or (not any_query and e["query"] not in (None, DEFAULT_QUERY)):
            return []
        s = _summary(e, subset)
        return [(e["query"] if any_query else e["title"], s)] if s else []
    return groups_of


def _free(e: dict, subset: str) -> list[tuple[str, dict]]:
    """Constrained next to free accuracy (valid answers only) of one result, from its counts."""
    free = e["result"].get("experiment1_free", {}).get(subset, {}).get("both")
    con = _summary(e, subset)
    if free is None or con is None:
        return []
    n = free["n_valid"]
    return [(f"{e['title']} [constrained]", con),
            (f"{e['title']} [free]", {"accuracy": free["accuracy"], "se": se_from_counts(free["hits"], n) if n else None,
                                      "note": None if n else "no valid answer"})]


def _table(columns: list[str], rows: list[list], records: list[dict], **more) -> dict:
    return {"columns": columns, "rows": rows, "records": records, **more}


def _accuracy_table(entries, human_units) -> dict:
    """Table 3, every dataset: accuracy (standard error) per method and model, humans beside."""
    names = list(dict.fromkeys(e["name"] for e in entries))
    rows, records = [], []
    for subset in EXPERIMENT1_SUBSETS:
        for method in dict.fromkeys(e["title"] for e in entries if _summary(e, subset)):
            cells = {}
            for e in entries:
                s = _summary(e, subset) if e["title"] == method else None
                if s:
                    cells[e["name"]] = s
                    records.append({"dataset": subset, "method": method, "model": e["name"], **s})
            rows.append([SUBSET_TITLES[subset], method, *(_cell(cells.get(n)) for n in names),
                         _cell(_human(human_units, subset))])
    human = {subset: _human(human_units, subset) for subset in EXPERIMENT1_SUBSETS}
    return _table(["dataset", "method", *names, "human"], rows, records, human=human)


def _base_instruct_tests(entries, base_instruct) -> list[dict]:
    tests = []
    for b, i in base_instruct:
        eb, ei = entries[b], entries[i]
        for subset in EXPERIMENT1_SUBSETS:
            ub, ui = _sel(eb["units"], subset), _sel(ei["units"], subset)
            if not (len(ub) and len(ui)):
                continue
            merged = ub.merge(ui, on=["pair_id", "presentation"], suffixes=("_b", "_i"))
            if len(merged) != len(ub) or len(merged) != len(ui):
                raise ValueError(f"{eb['source']} and {ei['source']} score different {subset} units: the dependent "
                                 "t-test needs the same pairs (the same `contstim plausibility --limit`) and the same method")
            t = base_vs_instruct(merged.hit_b.to_numpy(), merged.hit_i.to_numpy())
            tests.append({"dataset": subset, "base": b, "instruct": i, "base_name": eb["name"],
                          "instruct_name": ei["name"], "method": eb["title"], **t})
    return tests


def _logprob_table(entries, human_units, tests) -> dict:
    """Table 4: LogProbs accuracy per dataset and model; the more accurate version of a base /
    instruct pair carries the marks of their dependent t-test."""
    lp = [k for k, e in enumerate(entries) if e["method"] == "logprobs"]
    rows, records = [], []
    for subset in EXPERIMENT1_SUBSETS:
        cells = []
        for k in lp:
            s = _summary(entries[k], subset)
            mark = "".join(t["marks"] for t in tests if t["dataset"] == subset and t["better"]
                           and t[t["better"]] == k)
            cells.append(f"{s['accuracy']:.2f}{mark}" if s else "")
            if s:
                records.append({"dataset": subset, "model": entries[k]["name"], **s})
        if any(cells):
            rows.append([SUBSET_TITLES[subset], *cells, f"{_human(human_units, subset)['accuracy']:.2f}"])
    return _table(["dataset", *[entries[k]["name"] for k in lp], "human"], rows, records,
                  tests=[t for t in tests if t["method"] == "LogProbs"])


def _fmt(value, spec: str) -> str:
    return "" if value is None else format(value, spec)


def _human_table(entries) -> dict:
    """Result 2: each model against the humans, paired over the units of each dataset,
    Bonferroni over the models of the dataset."""
    rows, records = [], []
    for subset in EXPERIMENT1_SUBSETS:
        here = [e for e in entries if _summary(e, subset)]
        sels = [_sel(e["units"], subset) for e in here]
        for e, t in zip(here, versus_human([s.hit.to_numpy() for s in sels], [s.human_hit.to_numpy() for s in sels])):
            records.append({"dataset": subset, "model": e["name"], "method": e["title"], **t})
            verdict = t["marks"] or ("n.s." if t["p"] is not None else t["undefined_because"])
            rows.append([SUBSET_TITLES[subset], e["name"], e["title"], t["n"], _fmt(t["mean_a"], ".3f"),
                         _fmt(t["mean_b"], ".3f"), _fmt(t["t"], ".2f"), _fmt(t["p"], ".3g"),
                         _fmt(t["p_bonferroni"], ".3g"), verdict])
    columns = ["dataset", "model", "method", "units", "model accuracy", "human accuracy", "t", "p",
               "p (Bonferroni)", "significance"]
    return _table(columns, rows, records)


def _context_table(entries) -> dict | None:
    """Table 6: the three Experiment 2 metrics at word and sentence level, humans below."""
    e2 = [e for e in entries if "experiment2" in e["result"]]
    if not e2:
        return None
    columns = ["model", *[f"{METRIC_TITLES[m]} ({lvl})" for m in METRICS for lvl in ("word", "sentence")]]
    rows, records = [], []
    for e in e2:
        ex = e["result"]["experiment2"]
        rows.append([e["name"], *[f"{ex[lvl]['metrics'][m]['accuracy']:.2f}" for m in METRICS
                                  for lvl in ("word", "sentence")]])
        records += [{"model": e["name"], "metric": m, "level": lvl, **ex[lvl]["metrics"][m]}
                    for m in METRICS for lvl in ("word", "sentence")]
    human = e2[0]["result"]["experiment2"]["human"]["metrics"]
    rows.append(["Human", *[f"{human[m]['accuracy']:.2f}" for m in METRICS for _ in range(2)]])
    return _table(columns, rows, records, human=human)


def _similarity_table(entries) -> dict | None:
    """Tables 8-11: the Appendix E similarity of each model's pattern to the human one."""
    rows, records = [], []
    for e in entries:
        found = {f"{lvl} log-probability": e["result"][k][lvl]["similarity"]
                 for k in ("experiment2",) if k in e["result"] for lvl in ("word", "sentence")}
        if "experiment2_prompting" in e["result"]:
            found["Yes answers (Appendix F)"] = e["result"]["experiment2_prompting"]["similarity"]
        for response, sim in found.items():
            records.append({"model": e["name"], "response": response, **sim})
            rows.append([e["name"], response, _fmt(sim.get("matched"), ".2f"), _fmt(sim.get("unmatched"), ".2f"),
                         _fmt(sim.get("t_statistic"), ".2f"), _fmt(sim.get("p_value"), ".2g"), sim["n_items"]])
    if not rows:
        return None
    return _table(["model", "response", "matched", "unmatched", "t", "p", "items"], rows, records)


def _voice_data(entries, human_units, base_instruct) -> dict | None:
    """Figure 2: LogProbs accuracy on active and passive EventsAdapt AA pairs; a line from each
    base model to its instruction-tuned version (``base_instruct``), else one point per model."""
    subset, voices = "eventsadapt_aa", ("active", "passive")
    lp = {k for k, e in enumerate(entries) if e["method"] == "logprobs" and _summary(e, subset)}
    pairs = [(b, i) for b, i in base_instruct if b in lp and i in lp]
    if pairs:
        lines = [{"label": f"{entries[b]['name']} / {entries[i]['name']}",
                  "points": {"base": {v: _summary(entries[b], subset, v) for v in voices},
                             "instruct": {v: _summary(entries[i], subset, v) for v in voices}}} for b, i in pairs]
        x = ["base", "instruct"]
    elif lp:
        lines = [{"label": entries[k]["name"], "points": {entries[k]["name"]: {v: _summary(entries[k], subset, v)
                                                                               for v in voices}}} for k in sorted(lp)]
        x = [entries[k]["name"] for k in sorted(lp)]
    else:
        return None
    return {"subset": subset, "voices": list(voices), "x": x, "lines": lines,
            "human": {v: _human(human_units, subset, v) for v in voices}}


def _condition_panels(entries, stimuli, level: str) -> list[dict]:
    """Figures 3/9: the Human panel (sense rates) then each LogProbs result's ``level`` values."""
    def panel(title, frame, columns, ylabel):
        points = {p: {c: frame.loc[frame.condition == c, col].astype(float).tolist() for c in CONDITIONS}
                  for p, col in zip(PERSPECTIVES, columns)}
        means = {p: {c: float(np.mean(v)) for c, v in points[p].items()} for p in PERSPECTIVES}
        return {"title": title, "ylabel": ylabel, "means": means, "points": points}

    out = [panel("Human", stimuli, (HUMAN_NO_CONTEXT, HUMAN_CONTEXT), "share of 'makes sense' judgments")]
    what = "target-word" if level == "word" else "target-sentence"
    for e in entries:
        values = e["result"].get("scores", {}).get("experiment2", {}).get("values")
        if e["method"] == "logprobs" and values:
            out.append(panel(e["name"], pd.DataFrame(values), (f"{level}_no_context", f"{level}_context"),
                             f"{what} log-probability (nats)"))
    return out


def _prompting_panels(entries, stimuli) -> list[dict]:
    """Figure 4: the share of Yes answers per condition and perspective, the humans' first."""
    human = {p: {c: float(stimuli.loc[stimuli.condition == c, col].mean()) for c in CONDITIONS}
             for p, col in zip(PERSPECTIVES, (HUMAN_NO_CONTEXT, HUMAN_CONTEXT))}
    out = [{"title": "Human", "means": human}]
    for e in entries:
        ep = e["result"].get("experiment2_prompting")
        if ep:
            out.append({"title": e["name"], "means": {p: dict(ep["condition_means"][p]) for p in PERSPECTIVES}})
    return out


SE_NOTE = ("Error bars: standard error of the mean over units (pairs; both presentation orders for Sentence "
           "Choice I and Word Comparison).")


def plausibility_report(results: Sequence[dict | str | os.PathLike], *, names: Sequence[str] | None = None,
                        base_instruct: Sequence[tuple[int, int]] = (),
                        datasets_dir: str | os.PathLike | None = None) -> dict:
    """Every Kauf et al. (2024) figure and table that ``results`` support (module docstring).

    ``results``: plausibility results (dicts or files) of this dataset.  ``names``: one model name
    per result (default: each result's ``model.model``, else its spec); results of one name and
    different methods are one model read out several ways.  ``base_instruct``: ``(base index,
    instruct index)`` pairs of results (same method, same pairs) for Table 4's dependent t-tests
    and Figure 2's lines.  Returns ``{"items", "skipped", "results", "dataset_fingerprint",
    "package_version"}``.
    """
    from ..data.load import load_config
    from ..plausibility.metrics import experiment1_pairs

    results = list(results)
    if not results:
        raise ValueError("plausibility_report needs at least one plausibility result")
    if names is not None and len(names) != len(results):
        raise ValueError(f"{len(names)} names for {len(results)} results")
    for b, i in base_instruct:
        if not (0 <= b < len(results) and 0 <= i < len(results)) or b == i:
            raise ValueError(f"base_instruct pair ({b}, {i}) must name two different results of the {len(results)}")
    entries, fp = _entries(results, names, datasets_dir)
    ea = load_config(DATASET, "eventsadapt", split="test", datasets_dir=datasets_dir).to_pandas()
    dt = load_config(DATASET, "dtfit", split="test", datasets_dir=datasets_dir).to_pandas()
    pairs = experiment1_pairs(ea, dt)
    for e in entries:
        e["units"] = unit_hits(e["result"], pairs, e["source"])
    human_units = pairs[["pair_id", "subset", "voice"]].assign(
        human_hit=pair_hits(pairs.human_mean_plausible, pairs.human_mean_implausible, "human mean ratings"))
    tests = _base_instruct_tests(entries, base_instruct)
    items: list[dict] = []
    skipped: dict[str, str] = {}

    def add(id_: str, kind: str, title: str, caption: str, data, why: str) -> None:
        if data:
            items.append(_item(id_, kind, title, caption, data))
        else:
            skipped[f"{ID_PREFIX}{id_}"] = why

    subsets = EXPERIMENT1_SUBSETS
    human_note = "Line and band: human accuracy and its standard error; dotted: chance."
    add("F1", "kauf2024_bars", "Figure 1: sentence plausibility, LogProbs vs prompting (Sentence Choice I)",
        f"Binary accuracy per dataset: LogProbs (the plausible sentence has the higher log-probability) and "
        f"Sentence Choice I prompting (both presentation orders). {SE_NOTE} {human_note}",
        _bar_panels(entries, human_units, subsets, _methods(("logprobs", "prompt:sentence-choice-1"))),
        "needs a LogProbs or a prompt:sentence-choice-1 result")
    add("F2", "kauf2024_voice", "Figure 2: base vs instruct models on active and passive sentence pairs",
        "LogProbs accuracy on EventsAdapt AA (unlikely) pairs by voice"
        + (", each line a base model and its instruction-tuned version. " if any(
            entries[b]["method"] == "logprobs" for b, _ in base_instruct) else ". ")
        + "Error bars: standard error over pairs; grey line: human accuracy.",
        _voice_data(entries, human_units, base_instruct), "needs a LogProbs result with EventsAdapt AA pairs")
    stimuli = None
    if any("experiment2" in e["result"] or "experiment2_prompting" in e["result"] for e in entries):
        stimuli = load_config(DATASET, "socialn400", split="test", datasets_dir=datasets_dir).to_pandas()
    for id_, level, fig in (("F3", "word", "Figure 3"), ("F9", "sentence", "Figure 9")):
        what = "target word" if level == "word" else "target sentence"
        has = any(e["method"] == "logprobs" and "experiment2" in e["result"] for e in entries)
        add(id_, "kauf2024_conditions", f"{fig}: {what} log-probabilities per SocialN400 condition",
            f"Bars: mean over items of the human 'makes sense' rate (Human) and of each model's {what} "
            f"log-probability (natural log), without and with the context sentence; dots: single items.",
            _condition_panels(entries, stimuli, level) if has else None,
            "needs a LogProbs result with Experiment 2 (SocialN400)")
    add("F4", "kauf2024_yes_shares", "Figure 4: the sensibility-judgment task by prompting (Appendix F)",
        "Share of Yes answers (log p(Yes) > log p(No)) to the Appendix F prompts per condition, without and with "
        "the context, beside the humans' share of 'makes sense' judgments.",
        _prompting_panels(entries, stimuli) if any("experiment2_prompting" in e["result"] for e in entries) else None,
        "needs a prompt:sentence-judgment result (its Experiment 2 is the Appendix F prompting)")
    add("F5", "kauf2024_bars", "Figure 5: every evaluation method per dataset",
        f"Binary accuracy of LogProbs and the Table 2 prompts (Sentence Judgment: plausible Yes and implausible "
        f"No, chance 25%). {SE_NOTE} {human_note}",
        _bar_panels(entries, human_units, subsets, _methods(TABLE2)), "needs a LogProbs or Table 2 prompt result")
    add("F6", "kauf2024_bars", "Figure 6: DTFit prompting results with Word Comparison (Hu and Levy's best prompt)",
        f"DTFit binary accuracy of every method, Word Comparison included. {SE_NOTE} {human_note}",
        _bar_panels(entries, human_units, ("dtfit",), _methods((*TABLE2, "prompt:word-comparison"))),
        "needs a result with DTFit pairs")
    add("F7", "kauf2024_bars", "Figure 7: free vs constrained generation prompting",
        "Accuracy of constrained answers (the most probable allowed answer) and of free greedy generation (over "
        f"the valid answers only). {SE_NOTE} {human_note}",
        _bar_panels(entries, human_units, subsets, _free), "needs a prompt result of `contstim plausibility --free-generation`")
    sc1_queries = {e["query"] for e in entries if e["method"] == "prompt:sentence-choice-1"}
    add("F8", "kauf2024_bars", "Figure 8: query types of Sentence Choice I",
        f"Sentence Choice I accuracy framed by each query type (Appendix C.2). {SE_NOTE} {human_note}",
        _bar_panels(entries, human_units, subsets, _methods(("prompt:sentence-choice-1",), any_query=True))
        if len(sc1_queries) > 1 else None,
        "needs prompt:sentence-choice-1 results with at least two query types (`contstim plausibility --query`)")
    add("T3", "table", "Table 3: accuracy (standard error) of every method",
        "Mean binary accuracy and, in brackets, its standard error over units, per dataset, method and model; "
        "human: over every pair of the dataset.",
        _accuracy_table(entries, human_units), "needs a result")
    has_lp = any(e["method"] == "logprobs" for e in entries)
    add("T4", "table", "Table 4: LogProbs results across models and datasets",
        "LogProbs accuracy; a base/instruct pair's more accurate version is marked when their dependent t-test "
        "(paired over pairs, uncorrected) gives p < .05 (*) or p < .01 (**)"
        + ("." if tests else " (no base/instruct pairs given: no tests)."),
        _logprob_table(entries, human_units, tests) if has_lp else None, "needs a LogProbs result")
    add("human", "table", "Models vs humans (Result 2): paired t-tests, Bonferroni-corrected",
        "Each model's hits against the human hits (mean rating of the plausible sentence above the implausible "
        "one) on the same units: scipy ttest_rel, Bonferroni over the models of each dataset; *** p < .001, "
        "** p < .01, * p < .05 after correction.", _human_table(entries), "needs a result")
    add("T6", "table", "Table 6: LogProbs results for Experiment 2",
        "Share of SocialN400 items on which the model meets each metric, at the target word and the target "
        "sentence; Human: the same comparisons on the 'makes sense' rates.", _context_table(entries),
        "needs a LogProbs result with Experiment 2")
    add("T8", "table", "Tables 8-11: similarity of the model's pattern to the human one (Appendix E)",
        "Mean per-item similarity 1 - d / sqrt(3) of min-max scaled condition vectors, matched vs unmatched "
        "perspectives, paired t-test.", _similarity_table(entries),
        "needs a result with Experiment 2 (LogProbs or prompt:sentence-judgment)")
    return {"items": items, "skipped": skipped, "dataset_fingerprint": fp, "package_version": __version__,
            "results": [{"source": e["source"], "name": e["name"], "method": e["method"], "query": e["query"],
                         "spec": e["result"]["model"]["spec"]} for e in entries],
            "base_instruct": [list(p) for p in base_instruct]}
