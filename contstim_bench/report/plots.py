"""Figures of a result file, in the style of Golan et al. (2023), Figures 1, 3, 4 and S8, drawn
from numbers the result or :mod:`contstim_bench.analysis` gives
(:func:`contstim_bench.plotting.plot_result` assembles them and writes, for every experiment of a
result, PNG and SVG, matplotlib Agg):

1. ``<experiment>_accuracy``: one panel per condition; a horizontal bar per model (the evaluated
   model highlighted among the reference models, each on its own trial selection) at its mean
   binarised accuracy over units, a dot per unit (participant group in main, participant in pll),
   the grey noise-ceiling band (lower..upper bound) and ``*`` where the model is significantly
   below its lower ceiling (two-sided Wilcoxon across units, Benjamini-Hochberg across the models
   of the panel, q < .05; the paper's "nine comparisons").  A triangle on the right of a reference
   model marks a significant difference between it and the evaluated model: for accuracy the
   ``head_to_head`` of the result (the two models on the trials where they disagree), for SRCS
   the like-for-like ``comparisons``; filled up = the evaluated model is better, open down = the
   reference is better.
2. ``<experiment>_srcs``: the same for the signed-rank cosine similarity (Figure 4).
3. ``<experiment>_scatter_<reference>``: percentile-transformed sentence log-probabilities of the
   evaluated model (x) against a reference model (y), relative to all sentences of the experiment,
   one panel per trial type, each sentence pair two dots joined by a line (Figures 1a, 1b, 3a);
   the sentence chosen by most participants is the filled dot (open: the other one; grey: a tie).

The bars need only the result (its ``panels`` section); the scatter's points
(:func:`contstim_bench.benchmarks.model_report_contstim.scatter_data`) also come from the trials
and the reference log-probabilities of the dataset (whose fingerprint must match the result's).
Nothing here loads data or computes a statistic.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..analysis.inference import ALPHA
from .figures import FORMATS, Mark, add_key, pyplot as _pyplot, save_figure as _save

MODEL_COLOR = "#d95f02"
REFERENCE_COLOR = "#7f9fbf"
CEILING_COLOR = "0.80"
CONDITION_TITLES = {
    "randomly_sampled_natural": "randomly sampled natural pairs",
    "natural_controversial": "controversial natural pairs",
    "synthetic_vs_synthetic": "synthetic vs synthetic",
    "natural_vs_synthetic": "natural vs synthetic (model accepts synthetic)",
    "natural_vs_synthetic_reject": "natural vs synthetic (model rejects synthetic)",
    "natural_vs_shuffled": "natural vs shuffled (catch trials)",
    "all": "all trials",
}
MEASURE_LABELS = {"accuracy": "prediction accuracy", "srcs": "signed-rank cosine similarity"}


def load_result(result) -> dict:
    from ..results import read_result, validate_result

    if isinstance(result, (str, os.PathLike)):
        return read_result(result)
    if not isinstance(result, dict):
        raise TypeError(f"result must be a dict or the path of a result file, got {type(result).__name__}")
    validate_result(result)
    return result


def _panels(result: dict) -> dict:
    """The result's ``panels`` (every model of each condition): the figures read them and compute
    no score; a result without them (an optional section of the file) cannot be drawn."""
    if "panels" not in result:
        raise ValueError("the result has no 'panels' section (every model of each condition), which the figures "
                         "draw; evaluate the model again with `contstim evaluate` (its scores come from the cache)")
    return result["panels"]


# ------------------------------------------------------------------------------------ bars


def panel_min(panel: dict, measure: str) -> float:
    """Left end of the x axis: 0 for accuracy, below the lowest per-unit SRCS otherwise."""
    if measure == "accuracy":
        return 0.0
    low = min(min(b[f"{measure}_by_unit"].values(), default=0.0) for b in panel["models"].values())
    return min(-0.25, np.floor((low - 0.05) * 4) / 4)


def bar_panel(ax, panel: dict, entry: dict, model_name: str, measure: str, xmin: float) -> None:
    """One condition: a horizontal bar per model (best on top), dots, ceilings, markers.

    ``panel``: ``{"models": {name: block}, "condition": key}``; ``entry``: the evaluated model's
    entry (its ``head_to_head``/``comparisons`` give the triangles; empty dicts: none);
    ``model_name``: the highlighted model ("" highlights none)."""
    models = panel["models"]
    order = sorted(models, key=lambda m: (models[m][measure], m == model_name))
    y = np.arange(len(order))
    rng = np.random.default_rng(0)
    lowers = [models[m][f"{measure}_noise_ceiling"]["lower"] for m in order]
    uppers = [models[m][f"{measure}_noise_ceiling"]["upper"] for m in order]
    shared = np.allclose(lowers, lowers[0], atol=1e-12) and np.allclose(uppers, uppers[0], atol=1e-12)
    min_width = 0.006 if measure == "accuracy" else 0.012
    if shared:  # one band across the panel, as in Figure 1a
        lo, hi = lowers[0], uppers[0]
        ax.axvspan(lo, max(hi, lo + min_width), color=CEILING_COLOR, zorder=0, lw=0)
    chance = 0.5 if measure == "accuracy" else 0.0
    ax.axvline(chance, color="0.35", lw=0.8, ls="--" if measure == "accuracy" else "-", zorder=1)
    right = []
    for i, m in enumerate(order):
        b = models[m]
        if not shared:
            lo, hi = lowers[i], uppers[i]
            ax.add_patch(_rect(lo, i - 0.45, max(hi - lo, min_width), 0.9))
        mine = m == model_name
        ax.barh(i, b[measure], height=0.62, zorder=2,
                color=MODEL_COLOR if mine else REFERENCE_COLOR, edgecolor="black" if mine else "none", lw=0.8)
        units = np.array(list(b[f"{measure}_by_unit"].values()), dtype=float)
        jitter = rng.uniform(-0.24, 0.24, size=units.size)
        ax.scatter(units, i + jitter, s=7, color="black", alpha=0.5, lw=0, zorder=3)
        right.append(max(units.max(initial=b[measure]), uppers[i]))
    xmax = 1.0
    span = xmax - xmin
    star_x = xmax + 0.04 * span
    comp_x = xmax + 0.11 * span
    for i, m in enumerate(order):
        b = models[m]
        below = b["p_vs_lower_ceiling"][measure] < ALPHA and b[measure] < lowers[i]
        if below:
            ax.text(star_x, i, "*", ha="center", va="center", fontsize=13, fontweight="bold")
        verdict = _verdict(entry, m, measure)
        if verdict is not None:
            better = verdict == model_name
            ax.scatter([comp_x], [i], marker="^" if better else "v", s=30, zorder=3,
                       facecolor=MODEL_COLOR if better else "white", edgecolor=MODEL_COLOR, lw=1.0,
                       clip_on=False)
    ax.set_yticks(y, order)
    for label, m in zip(ax.get_yticklabels(), order):
        if m == model_name:
            label.set_fontweight("bold")
            label.set_color(MODEL_COLOR)
    ax.set_xlim(xmin, comp_x + 0.05 * span)
    step = 0.25 if span <= 1.25 else 0.5
    ticks = [t for t in np.arange(-1.0, 1.01, step) if xmin - 1e-9 <= t <= xmax + 1e-9]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_xlabel(MEASURE_LABELS[measure])
    title = CONDITION_TITLES.get(panel.get("condition", ""), panel.get("condition", ""))
    own = models.get(model_name)
    if own is not None:
        title += f"\n{model_name}: {own['n_trials']} trials ({own['selection']})"
    ax.set_title(title, fontsize=9)


def _verdict(entry: dict, other: str, measure: str) -> str | None:
    """The significantly better of the evaluated model and ``other`` (None: no significant
    difference, or no like-for-like comparison).  Accuracy: the head-to-head on the trials where
    the two disagree; SRCS (graded predictions): the per-unit comparison, made only like for like."""
    if measure == "accuracy":
        h = (entry.get("head_to_head") or {}).get(other)
        return h["better"] if h is not None and h["significant"] else None
    comp = entry["comparisons"].get(other)
    return comp[f"{measure}_better"] if comp is not None and comp[f"{measure}_significant"] else None


def _rect(x, y, w, h):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, color=CEILING_COLOR, lw=0, zorder=0)


def plot_bars(result: dict, experiment: str, measure: str, out_dir: str | os.PathLike,
              formats: Sequence[str] = FORMATS) -> list[Path]:
    """Figure kind 1 (``measure="accuracy"``) or 2 (``"srcs"``) of one experiment, saved as
    ``<experiment>_<measure>.<fmt>`` in ``out_dir``."""
    fig = bars_figure(result, experiment, measure)
    return _save(fig, out_dir, f"{experiment}_{measure}", formats)


def bars_figure(result: dict, experiment: str, measure: str):
    """The matplotlib figure of :func:`plot_bars` (one axes per condition, in result order)."""
    if measure not in MEASURE_LABELS:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURE_LABELS)}")
    result = load_result(result)
    if experiment not in result["experiments"]:
        raise ValueError(f"experiment {experiment!r} is not in the result (has: {', '.join(result['experiments'])})")
    return draw_bars(_panels(result)[experiment], result["experiments"][experiment],
                     result["model"]["name"], experiment, measure)


def bar_marks(measure: str, unit: str, n_units: int, model_name: str = "", n_models: int = 1,
              triangles: bool = False, family: str | None = None) -> tuple[list[Mark], str]:
    """The key of a bar panel (:func:`bar_panel`): one :class:`Mark` per mark it draws, and the
    note on the tests behind ``*`` and the triangles (``family``: the BH family in words, default
    the ``n_models`` models of a panel)."""
    chance = "chance (0.5)" if measure == "accuracy" else "zero (no relation)"
    marks = []
    if model_name:
        marks.append(Mark(f"{model_name}: mean over {n_units} {unit}s", "patch", MODEL_COLOR, "black"))
    marks += [Mark(f"{'reference ' if model_name else ''}model: mean over {n_units} {unit}s", "patch", REFERENCE_COLOR),
              Mark(f"a single {unit}", "marker", "#555555", marker="o"),
              Mark("noise ceiling (lower..upper bound)", "patch", CEILING_COLOR),
              Mark(chance, "line", "0.35", linestyle="--" if measure == "accuracy" else "-"),
              Mark("below the lower noise ceiling (q < .05)", "symbol", marker="*")]
    if family is None:
        family = f"BH over the {n_models} models of a panel, " if n_models > 1 else ""
    note = f"*: two-sided Wilcoxon across {unit}s against the lower noise ceiling, {family}q < .05."
    if triangles:
        marks += [Mark(f"{model_name} significantly better than that model", "marker", MODEL_COLOR, marker="^"),
                  Mark(f"{model_name} significantly worse than that model", "marker", "white", MODEL_COLOR, marker="v")]
        how = ("head-to-head on the trials where the two disagree, Wilcoxon of the per-unit shares vs 0.5, "
               "BH over the model pairs" if measure == "accuracy" else
               "per-unit scores on the same trials or each on its own targeted trials, Wilcoxon, BH over the "
               "comparable model pairs")
        note += f"\nTriangles: {how}, q < .05."
    return marks, note


def draw_bars(panels: dict, entries: dict, name: str, experiment: str, measure: str):
    """One axes per condition of ``entries`` (a result's ``experiments[experiment]``), the bars of
    ``panels`` (its ``panels[experiment]``), ``name`` highlighted; with the key under them."""
    if measure not in MEASURE_LABELS:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURE_LABELS)}")
    plt = _pyplot()
    conds = list(entries)
    n_models = len(next(iter(panels.values()))["models"])
    ncols = min(len(conds), 3 if len(conds) <= 6 else 4)
    nrows = -(-len(conds) // ncols)
    label_width = max(len(m) for m in next(iter(panels.values()))["models"])
    fig, axes = plt.subplots(nrows, ncols, squeeze=False,
                             figsize=(ncols * (3.2 + 0.065 * label_width), nrows * (0.35 * n_models + 1.6) + 0.9))
    xmin = min(panel_min(panels[c], measure) for c in conds)
    for ax, cond in zip(axes.flat, conds):
        bar_panel(ax, {**panels[cond], "condition": cond}, entries[cond], name, measure, xmin)
    for ax in list(axes.flat)[len(conds):]:
        ax.set_visible(False)
    first = entries[conds[0]]
    fig.suptitle(f"{name}: {MEASURE_LABELS[measure]}, {experiment} experiment", fontsize=11, fontweight="bold")
    fig.tight_layout()
    triangles = any(_verdict(entries[c], m, measure) is not None for c in conds for m in panels[c]["models"])
    marks, note = bar_marks(measure, first["unit"], first["n_units"], name, n_models, triangles)
    add_key(fig, marks, note, ncol=4)
    return fig


# --------------------------------------------------------------------------------- scatter


SCATTER_MARKS = (
    Mark("sentence most participants chose", "marker", "black", marker="o"),
    Mark("the other sentence of the pair", "marker", "white", "black", marker="o"),
    Mark("participants split evenly", "marker", "0.6", "black", marker="o"),
    Mark("pair the two models order the same way", "line", "#1b7837"),
    Mark("pair the two models order differently", "line", "#c51b7d"),
)
"""The key of the percentile scatter (a line joins the two sentences of a pair)."""


def draw_scatter(name: str, reference: str, experiment: str, points: dict):
    """The percentile scatter (Figs. 1a, 1b, 3a) of ``points``
    (:func:`contstim_bench.analysis.percentile_scatter.scatter_points`: each pair's two sentences
    at their percentiles under ``name`` (x) and ``reference`` (y), whether the models agree on
    it, the sentence most participants chose), one axes per trial type."""
    types = list(points["types"])
    plt = _pyplot()
    ncols = min(len(types), 3)
    nrows = -(-len(types) // ncols)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, figsize=(4.1 * ncols, 4.3 * nrows + 0.6))
    for ax, tt in zip(axes.flat, types):
        block = points["types"][tt]
        dots: dict[str, list] = {"black": [], "white": [], "0.6": []}
        for pair in block["pairs"]:
            (xa, ya), (xb, yb) = pair["a"], pair["b"]
            ax.plot([xa, xb], [ya, yb], color="#1b7837" if pair["congruent"] else "#c51b7d", lw=0.7, alpha=0.55,
                    zorder=1)
            for side in ("a", "b"):
                face = "0.6" if pair["chosen"] is None else "black" if pair["chosen"] == side else "white"
                dots[face].append(tuple(pair[side]))
        for face, xy in dots.items():  # one collection per kind of dot (drawing each alone is slow)
            if xy:
                ax.scatter(*zip(*xy), s=12, facecolor=face, edgecolor="black", lw=0.5, zorder=2)
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        ax.set_aspect("equal")
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_yticks([0, 25, 50, 75, 100])
        ax.set_xlabel(f"{name}\nsentence log-probability percentile", fontsize=8.5)
        ax.set_ylabel(f"{reference}\nsentence log-probability percentile", fontsize=8.5)
        n = len(block["pairs"])
        ax.set_title(f"{CONDITION_TITLES.get(tt, tt)}\n{n} pairs; the models agree on {block['n_agree']}/{n}",
                     fontsize=9)
    for ax in list(axes.flat)[len(types):]:
        ax.set_visible(False)
    fig.suptitle(f"{name} vs {reference}: {experiment} experiment", fontsize=11, fontweight="bold")
    fig.tight_layout()
    add_key(fig, SCATTER_MARKS, f"Percentiles relative to all {points['n_sentences']} sentences of the experiment.",
            ncol=3)
    return fig
