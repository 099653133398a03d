"""What the page of one result shows (``contstim report RESULT``): :func:`model_report`.

A model report is a dict::

    {"title", "model": model.name, "spec", "format", "benchmark": identifier, "source": file name,
     "headline": {column: value},            # the index's row for this result
     "items": [item, ...]}                   # in page order

Each item is a report item (``id``, ``kind``, ``title``, ``caption``, ``data``; shown by the kind
registered in :mod:`contstim_bench.report.items`) with a ``section`` heading; an item that does
not apply to this result has ``kind`` ``None`` and ``unavailable``: the reason, shown on the page
in its place.  Which items a result gets:

- a contstim result (:mod:`.model_report_contstim`, Table S2 by :mod:`.model_report_tokens`): per
  experiment the accuracy and SRCS panels
  with noise ceilings and significance (Figs. 1, 3, 4), the scores and head-to-head tables, the
  percentile scatter against each reference model, the head-to-head matrix of every model with
  this one (Fig. S4) and this model's most severe failures (Tables 1-3);
- a plausibility or BLiMP result (:mod:`.model_report_kauf`): the figures and tables of Kauf et
  al. (2024) and Kauf & Ivanova (2023) for one model;
- a ``pll-properties`` result (:func:`.pll_properties_report.page_items`): Kauf & Ivanova (2023)
  Figs. 3A/3B and Table 2 for its model;
- every result: its provenance (model, benchmark, dataset fingerprint, package and library
  versions, dates), whatever the file records.

Scores come from the result and, where an item needs the human trials or the reference models'
published log-probabilities, from the built dataset the result was computed on (its fingerprint
must match; otherwise the item says why it is not shown).
"""
from __future__ import annotations

import os
from collections.abc import Callable

from ..results.schema import FORMATS
from .report_items import provenance_item

EXTRA_ITEMS: dict[str, list[Callable]] = {}
"""Result format -> functions adding items to its pages (:func:`items_for`)."""


def items_for(fmt: str):
    """Register ``fn(result, datasets_dir=None, seed=0) -> list of items`` (made with
    :func:`.report_items.report_item` or :func:`.report_items.unavailable`): its items go on
    every page of a result of format ``fmt``, after the built-in ones and before the provenance.
    How an item's kind is drawn: :mod:`contstim_bench.report.items`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown result format {fmt!r}; known: {', '.join(FORMATS)}")

    def wrap(fn):
        EXTRA_ITEMS.setdefault(fmt, []).append(fn)
        return fn

    return wrap


def model_report(result: dict, datasets_dir: str | os.PathLike | None = None, seed: int = 0,
                 source: str | None = None, load_model=None) -> dict:
    """The page of ``result`` (a validated result dict of any format; module docstring).

    ``seed`` breaks ties among the most severe failures; ``source``: the file it was read from
    (shown on the page); ``load_model``: spec -> scorer, the door's loader, for the model's
    tokenizer (Table S2).  ValueError for a format no page is made for."""
    from . import model_report_contstim, model_report_kauf, model_report_tokens, pll_properties_report

    fmt = result.get("format")
    builders = {
        "contstim-bench-result": model_report_contstim.contstim_items,
        "contstim-bench-plausibility": model_report_kauf.plausibility_items,
        "contstim-bench-blimp": model_report_kauf.blimp_items,
        "contstim-bench-pll-properties": pll_properties_report.page_items,
    }
    if fmt not in builders:
        raise ValueError(f"no report page for result format {fmt!r}; `contstim report RESULT` takes the result files "
                         f"of `contstim evaluate` (contstim, pll-properties), `contstim plausibility` and `contstim blimp` "
                         f"({', '.join(f for f in FORMATS if f in builders)})")
    headline, items = builders[fmt](result, datasets_dir=datasets_dir, seed=seed)
    if fmt == "contstim-bench-result":
        items += model_report_tokens.token_count_items(result, datasets_dir=datasets_dir, seed=seed,
                                                       load_model=load_model)
    for extra in EXTRA_ITEMS.get(fmt, []):
        items += extra(result, datasets_dir=datasets_dir, seed=seed)
    model = result["model"]
    name = model.get("name") or model.get("spec_typed") or model["spec"]
    benchmark = result["benchmark"].get("identifier") or FORMATS[fmt]["dataset"]
    if fmt == "contstim-bench-plausibility":
        benchmark += f" ({result['method']})"
    return {
        "title": f"{name}: {benchmark}",
        "model": name,
        "spec": model["spec"],
        "format": fmt,
        "benchmark": benchmark,
        "source": source,
        "headline": headline,
        "items": items + [provenance_item(result)],
    }


def model_reports(results: list[dict], sources: list[str | None], datasets_dir: str | os.PathLike | None = None,
                  seed: int = 0, load_model=None) -> list[dict]:
    """The page of each result (:func:`model_report`, in order; ``sources`` the files they were read
    from) followed by the pages across them (:func:`across_results`): what ``contstim report
    RESULT...`` shows.  ``load_model`` (spec -> scorer) may load a model for each result, so this
    loop lives here and not in the command (ARCHITECTURE.md: a command calls one function)."""
    if len(sources) != len(results):
        raise ValueError(f"{len(results)} results but {len(sources)} sources")
    pages = [model_report(result, datasets_dir, seed=seed, source=source, load_model=load_model)
             for result, source in zip(results, sources)]
    return pages + across_results(results, datasets_dir)


def across_results(results: list[dict], datasets_dir: str | os.PathLike | None = None) -> list[dict]:
    """Pages that compare results: for the plausibility results among ``results`` (any number), the
    Kauf et al. (2024) figures and tables across them (:func:`.plausibility_report.plausibility_report`:
    each method and model side by side, Table 3's accuracies and standard errors, each model against
    the humans with Bonferroni's correction), with the reason for each one they do not support."""
    from .plausibility_report import plausibility_report
    from .report_items import unavailable

    plaus = [r for r in results if r.get("format") == "contstim-bench-plausibility"]
    if not plaus:
        return []
    made = plausibility_report(plaus, datasets_dir=datasets_dir)
    section = f"Kauf et al. (2024) across {len(plaus)} plausibility result{'s' if len(plaus) != 1 else ''}"
    items = [{**item, "section": section} for item in made["items"]]
    items += [unavailable(id_, id_, why, section) for id_, why in made["skipped"].items()]
    names = ", ".join(dict.fromkeys(r["model"].get("name") or r["model"]["spec"] for r in plaus))
    return [{"title": f"Kauf et al. (2024): {names}", "model": f"all {len(plaus)} plausibility results",
             "spec": names, "format": "contstim-bench-plausibility", "benchmark": "kauf2024 statistics",
             "source": None, "headline": {}, "items": items}]

