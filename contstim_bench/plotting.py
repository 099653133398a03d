"""Every figure of a result file (``contstim evaluate --plots``, ``evaluate_model(plots=...)``,
the leaderboard's model pages): :func:`plot_result`.  It sits above both halves of a figure: the
numbers come from the result and from :mod:`contstim_bench.benchmarks` (the scatter's points,
from the dataset's trials), and :mod:`contstim_bench.report.plots` draws them.

Per experiment of the result: ``<exp>_accuracy``, ``<exp>_srcs`` and
``<exp>_scatter_<reference>`` (not for a round of the benchmark, whose references may score some
of its sentences only), each in every format of ``formats``.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .benchmarks.model_report_contstim import scatter_data
from .names import slug
from .report.figures import FORMATS, save_figure
from .report.plots import draw_scatter, load_result, plot_bars
from .study import is_paper_experiment


def scatter_figure(result, experiment: str, reference: str | None = None, datasets_dir=None):
    """``(figure, reference)``: the percentile scatter of the result's model against ``reference``
    (default: the best reference model, :func:`~.benchmarks.model_report_contstim.best_reference`)."""
    data = scatter_data(load_result(result), experiment, reference, datasets_dir)
    return draw_scatter(data["model"], data["reference"], experiment, data["points"]), data["reference"]


def plot_scatter(result, experiment: str, out_dir: str | os.PathLike, reference: str | None = None,
                 datasets_dir=None, formats: Sequence[str] = FORMATS) -> list[Path]:
    """:func:`scatter_figure` saved as ``<experiment>_scatter_<reference>.<fmt>``."""
    fig, reference = scatter_figure(result, experiment, reference, datasets_dir)
    return save_figure(fig, out_dir, f"{experiment}_scatter_{slug(reference)}", formats)


def plot_result(result, out_dir: str | os.PathLike, *, scatter_reference: str | None = None,
                datasets_dir=None, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Every figure of a result (a dict or the path of a result file) into ``out_dir`` (module
    docstring); returns the written paths.  ValueError for an unsupported format, before any
    figure is drawn."""
    result = load_result(result)
    for fmt in formats:
        if fmt not in ("png", "svg", "pdf"):
            raise ValueError(f"unsupported figure format {fmt!r}; use png, svg or pdf")
    paths: list[Path] = []
    for exp in result["experiments"]:
        for measure in ("accuracy", "srcs"):
            paths += plot_bars(result, exp, measure, out_dir, formats)
        has_refs = any(e["comparisons"] for e in result["experiments"][exp].values())
        if has_refs and is_paper_experiment(exp):  # a round's references may not score every sentence: no scatter
            paths += plot_scatter(result, exp, out_dir, scatter_reference, datasets_dir, formats)
    return paths
