"""Figures and tables of Kauf et al. (2024) from the items of
:func:`contstim_bench.benchmarks.plausibility_report.plausibility_report` (draws, computes nothing).

:data:`FIGURES` maps an item's ``kind`` to the function that draws it (matplotlib, Agg), in the
style of :mod:`.plots`: ``kauf2024_bars`` (Figures 1, 5, 6, 7, 8), ``kauf2024_voice`` (Figure 2),
``kauf2024_conditions`` (Figures 3 and 9), ``kauf2024_yes_shares`` (Figure 4).  Every mark a
figure draws has a key in its legend.  Items of kind ``table`` are written by :func:`table_markdown`.
:func:`write_plausibility_report` writes every item of a report into a folder (``contstim
plausibility --plots DIR``).
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .figures import FORMATS, pyplot, save_figure
from .items import figure_kind, table_kind

HUMAN_COLOR = "0.35"
HUMAN_BAND = "0.85"
CONDITION_COLORS = {"no_context": "#9ecae1", "context": "#3182bd"}
PERSPECTIVE_LABELS = {"no_context": "no context", "context": "with context"}


def tick_label(label: str, width: int = 14) -> str:
    """``label`` on lines of at most ``width`` characters for an x tick, broken after a space, a
    hyphen, or a ``/`` or ``:`` of a model named by its file (``kenlm:/path/to/lm.arpa``); inside
    a word only where a part between two such breaks is longer than ``width``."""
    lines: list[str] = []
    line = ""
    for piece in re.split(r"(?<=[\s/:-])", label):
        if line and len((line + piece).rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece
        while len(line.rstrip()) > width:
            lines.append(line[:width])
            line = line[width:]
    return "\n".join([*lines, line.rstrip()])


def _palette(n: int) -> list:
    cmap = pyplot().get_cmap("tab10")
    return [cmap(i % 10) for i in range(n)]


def _legend_handles(extra: Sequence[tuple[str, dict]]) -> list:
    """Proxy artists for the legend: (label, dict(kind=..., ...))."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = []
    for label, spec in extra:
        kind = spec.pop("kind")
        if kind == "patch":
            handles.append(Patch(label=label, **spec))
        elif kind == "line":
            handles.append(Line2D([], [], label=label, **spec))
        elif kind == "errorbar":  # a vertical error-bar glyph
            handles.append(Line2D([], [], color="black", marker="|", markersize=11, lw=0, label=label))
    return handles


def bars_figure(item: dict):
    """Grouped bars (Figures 1, 5, 6, 7, 8): one axes per dataset, a bar group per method (or query,
    or read-out), a bar per model with its standard-error bar, the human accuracy as a line with a
    band of one standard error, and the chance level of each group dotted."""
    plt = pyplot()
    panels = item["data"]
    names = list(dict.fromkeys(s["label"] for p in panels for s in p["series"]))
    colors = dict(zip(names, _palette(len(names))))
    width_per = max(len(p["groups"]) * (len(p["series"]) * 0.32 + 0.35) for p in panels)
    fig, axes = plt.subplots(1, len(panels), squeeze=False, figsize=(max(3.4, 1.2 + width_per) * len(panels), 4.4),
                             sharey=True)
    for ax, panel in zip(axes[0], panels):
        groups, series = panel["groups"], panel["series"]
        x = np.arange(len(groups))
        present = [[s for s in series if s["values"][g] is not None or s.get("notes", [None] * len(groups))[g]]
                   for g in range(len(groups))]
        w = 0.8 / max(1, max(len(p) for p in present))
        for g, here in enumerate(present):  # the bars of a group side by side, centred on it
            for j, s in enumerate(here):
                pos = g + w * (j - (len(here) - 1) / 2)
                if s["values"][g] is None:  # e.g. free generation without one valid answer
                    ax.text(pos, 0.02, s["notes"][g], rotation=90, ha="center", va="bottom", fontsize=7,
                            color=colors[s["label"]])
                    continue
                ax.bar(pos, s["values"][g], width=w * 0.92, color=colors[s["label"]], edgecolor="black", lw=0.6,
                       zorder=2)
                if s["se"][g] is not None:
                    ax.errorbar(pos, s["values"][g], yerr=s["se"][g], fmt="none", ecolor="black", elinewidth=1.0,
                                capsize=2.5, zorder=3)
        for g, c in enumerate(panel["chance"]):
            ax.plot([g - 0.45, g + 0.45], [c, c], ls=":", color="0.3", lw=1.4, zorder=4)
        h = panel["human"]
        if h and h["accuracy"] is not None:
            ax.axhline(h["accuracy"], color=HUMAN_COLOR, lw=1.6, zorder=1)
            if h["se"]:
                ax.axhspan(h["accuracy"] - h["se"], h["accuracy"] + h["se"], color=HUMAN_BAND, lw=0, zorder=0)
        ax.set_xticks(x, [tick_label(g) for g in groups], fontsize=8)
        ax.set_ylim(0, 1.02)
        ax.set_title(panel["title"], fontsize=10)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0][0].set_ylabel("binary accuracy")
    handles = _legend_handles([(n, {"kind": "patch", "facecolor": colors[n], "edgecolor": "black"}) for n in names]
                              + [("human accuracy (band: ± 1 SE)", {"kind": "line", "color": HUMAN_COLOR, "lw": 1.6}),
                                 ("chance", {"kind": "line", "color": "0.3", "ls": ":", "lw": 1.4}),
                                 ("± 1 standard error", {"kind": "errorbar"})])
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(4, len(handles)),
               fontsize=8, frameon=False)
    fig.suptitle(item["title"], fontsize=11, fontweight="bold")
    fig.tight_layout()
    return fig


def voice_figure(item: dict):
    """Figure 2: one axes per voice; each line a model (base -> instruct) with standard-error
    bars; the human accuracy of the voice as a grey line."""
    plt = pyplot()
    data = item["data"]
    xs = data["x"]
    colors = _palette(len(data["lines"]))
    fig, axes = plt.subplots(1, len(data["voices"]), squeeze=False, sharey=True,
                             figsize=(2.2 + 1.3 * len(xs) * len(data["voices"]), 3.8))
    for ax, voice in zip(axes[0], data["voices"]):
        for color, line in zip(colors, data["lines"]):
            pts = [(xs.index(x), p[voice]) for x, p in line["points"].items() if p[voice] is not None]
            ax.errorbar([i for i, _ in pts], [s["accuracy"] for _, s in pts],
                        yerr=[s["se"] or 0.0 for _, s in pts], color=color, marker="o", lw=2, capsize=3)
        h = data["human"][voice]
        ax.axhline(h["accuracy"], color=HUMAN_COLOR, lw=1.4)
        ax.set_xticks(range(len(xs)), [tick_label(x) for x in xs], fontsize=8)
        ax.set_xlim(-0.5, len(xs) - 0.5)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{voice} voice", fontsize=10)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0][0].set_ylabel("LogProbs accuracy (EventsAdapt AA)")
    handles = _legend_handles([(line["label"], {"kind": "line", "color": c, "marker": "o", "lw": 2})
                               for c, line in zip(colors, data["lines"])]
                              + [("human accuracy", {"kind": "line", "color": HUMAN_COLOR, "lw": 1.4}),
                                 ("± 1 standard error", {"kind": "errorbar"})])
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(3, len(handles)),
               fontsize=8, frameon=False)
    fig.suptitle(item["title"], fontsize=10, fontweight="bold")
    fig.tight_layout()
    return fig


def _condition_axes(ax, panel: dict, dots: bool) -> None:
    conditions = list(next(iter(panel["means"].values())))
    x = np.arange(len(conditions))
    rng = np.random.default_rng(0)
    for j, p in enumerate(("no_context", "context")):
        pos = x + (j - 0.5) * 0.38
        ax.bar(pos, [panel["means"][p][c] for c in conditions], width=0.36, color=CONDITION_COLORS[p],
               edgecolor="black", lw=0.6, zorder=1)
        if dots:
            for i, c in enumerate(conditions):
                v = np.asarray(panel["points"][p][c], dtype=float)
                ax.scatter(pos[i] + rng.uniform(-0.12, 0.12, v.size), v, s=5, color="black", alpha=0.45, lw=0,
                           zorder=2)
    ax.set_xticks(x, conditions, fontsize=8)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_title(panel["title"], fontsize=9)
    if panel.get("ylabel"):
        ax.set_ylabel(panel["ylabel"], fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)


def _panels_figure(item: dict, dots: bool, ylabel: str | None = None):
    plt = pyplot()
    panels = item["data"]
    fig, axes = plt.subplots(1, len(panels), squeeze=False, figsize=(2.6 * len(panels) + 0.6, 3.8))
    for ax, panel in zip(axes[0], panels):
        _condition_axes(ax, panel, dots)
        if ylabel:
            ax.set_ylim(0, 1.02)
    if ylabel:
        axes[0][0].set_ylabel(ylabel, fontsize=8)
    keys = [(PERSPECTIVE_LABELS[p], {"kind": "patch", "facecolor": c, "edgecolor": "black"})
            for p, c in CONDITION_COLORS.items()]
    if dots:
        keys.append(("one item", {"kind": "line", "color": "black", "marker": "o", "markersize": 3, "lw": 0,
                                  "alpha": 0.5}))
    fig.legend(handles=_legend_handles(keys), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(keys),
               fontsize=8, frameon=False)
    fig.suptitle(item["title"], fontsize=10, fontweight="bold")
    fig.tight_layout()
    return fig


def conditions_figure(item: dict):
    """Figures 3 and 9: per panel (Human, then each model) the mean per condition without and with
    the context as bars, each item a dot; models on their own log-probability scale."""
    return _panels_figure(item, dots=True)


def yes_shares_figure(item: dict):
    """Figure 4: the share of Yes answers per condition without and with the context."""
    return _panels_figure(item, dots=False, ylabel="share of Yes / 'makes sense'")


FIGURES = {
    "kauf2024_bars": bars_figure,
    "kauf2024_voice": voice_figure,
    "kauf2024_conditions": conditions_figure,
    "kauf2024_yes_shares": yes_shares_figure,
}
"""Item ``kind`` -> the function that draws it."""
for _kind, _draw in FIGURES.items():
    figure_kind(_kind)(_draw)  # shown on the pages of ``contstim report`` (report/items.py)


@table_kind("table")
def table_rows(item: dict) -> list[dict]:
    """A ``table`` item (``data``: ``columns`` and display ``rows``) as the pages' table rows."""
    data = item["data"]
    return [dict(zip(data["columns"], row)) for row in data["rows"]]


def table_markdown(item: dict) -> str:
    """A ``table`` item as a Markdown table (its display ``rows``)."""
    data = item["data"]
    cell = (lambda v: "" if v is None else str(v).replace("|", "\\|"))
    lines = ["| " + " | ".join(map(cell, data["columns"])) + " |", "|" + "---|" * len(data["columns"])]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in data["rows"]]
    return "\n".join(lines) + "\n"


def write_plausibility_report(report: dict, out_dir: str | os.PathLike, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Every item of ``report`` into ``out_dir``: ``<id>.<fmt>`` figures (``kauf2024-F1.png``, ...),
    ``<id>.md`` tables and ``kauf2024-report.json`` (every number); returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for item in report["items"]:
        stem = item["id"]
        if item["kind"] == "table":
            path = out / f"{stem}.md"
            path.write_text(f"## {item['title']}\n\n{item['caption']}\n\n{table_markdown(item)}", encoding="utf-8")
            paths.append(path)
        else:
            paths += save_figure(FIGURES[item["kind"]](item), out, stem, formats)
    path = out / "kauf2024-report.json"
    path.write_text(json.dumps(report, indent=1, allow_nan=False, default=_plain) + "\n", encoding="utf-8")
    return paths + [path]


def _plain(obj):
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")
