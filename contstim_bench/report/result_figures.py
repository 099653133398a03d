"""Figures of one contstim result as report items (``contstim report RESULT``): the accuracy and
SRCS panels and the percentile scatter of :mod:`.plots`, drawn from the numbers an item carries
(:func:`contstim_bench.benchmarks.model_report.model_report` assembles them; nothing is computed
here)."""
from __future__ import annotations

from .items import figure_kind
from .plots import draw_bars, draw_scatter


@figure_kind("result_bars")
def result_bars(item: dict):
    """Figures 1, 3 and 4 for the result's model among the reference models: ``data``:
    ``panels`` and ``entries`` (the result's ``panels``/``experiments`` of one experiment),
    ``model`` (highlighted), ``experiment``, ``measure`` (``accuracy`` or ``srcs``)."""
    d = item["data"]
    return draw_bars(d["panels"], d["entries"], d["model"], d["experiment"], d["measure"])


@figure_kind("scatter")
def result_scatter(item: dict):
    """Figures 1a/1b/3a: ``data``: ``model``, ``reference``, ``experiment`` and ``points``
    (:func:`contstim_bench.analysis.percentile_scatter.scatter_points`)."""
    d = item["data"]
    return draw_scatter(d["model"], d["reference"], d["experiment"], d["points"])
