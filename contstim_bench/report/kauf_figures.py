"""Figures of plausibility (Kauf et al. 2024) and BLiMP (Kauf & Ivanova 2023) results, as report
item kinds (the numbers come in the item's ``data``; nothing is computed here):

- ``accuracy_bars``: binary accuracy of one model, bars in groups (datasets, voices, BLiMP
  phenomena or paradigms) with the human accuracy of the same items and chance marked (Kauf et
  al. 2024 Figs. 1, 2, 7; Kauf & Ivanova 2023 Tables 1, 3 as a figure);
- ``condition_bars``: SocialN400 condition means without and with context, dots the single items,
  beside the human ones (Kauf et al. 2024 Figs. 3, 4, 9).
"""
from __future__ import annotations

import numpy as np

from .figures import Mark, add_key, pyplot
from .items import figure_kind

BAR_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")
HUMAN_MARK = Mark("human accuracy on the same items", "marker", "black", marker="D")


def _chance_mark(chance: float) -> Mark:
    return Mark(f"chance ({chance:g})", "line", "0.35", linestyle="--")


@figure_kind("accuracy_bars")
def accuracy_bars(item: dict):
    """``data``: ``groups`` [{``label``, ``bars`` [{``label``, ``value`` (accuracy or None),
    ``human`` (or None), ``n`` (items)}]}], ``chance``, ``model``, ``horizontal`` (default False),
    ``value_label`` (default "binary accuracy"), ``bar_key`` (the key's text of a bar label,
    default ``"{model}: {label}"``), ``note``.  Bars of the same label share a colour and carry
    their value; the human accuracy is a black diamond on its bar; a missing value is "n/a"."""
    d = item["data"]
    groups = d["groups"]
    horizontal = d.get("horizontal", False)
    labels = list(dict.fromkeys(b["label"] for g in groups for b in g["bars"]))
    palette = BAR_COLORS if len(labels) <= len(BAR_COLORS) else [pyplot().get_cmap("tab20")((2 * i) % 20 + (2 * i) // 20 % 2)
                                                                 for i in range(len(labels))]  # dark hues first
    colors = {lab: palette[i] for i, lab in enumerate(labels)}
    width = 0.8 / max(len(g["bars"]) for g in groups)
    positions, ticks = [], []
    pos = 0.0
    for g in groups:
        k = len(g["bars"])
        positions.append([pos + (i - (k - 1) / 2) * width for i in range(k)])
        ticks.append(pos)
        pos += 1.0
    n_bars = sum(len(g["bars"]) for g in groups)
    plt = pyplot()
    if horizontal:
        fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.21 * n_bars + 0.1 * len(groups)))
    else:
        fig, ax = plt.subplots(figsize=(max(4.5, 1.1 + 0.55 * n_bars + 0.3 * len(groups)), 4.2))
    bar = ax.barh if horizontal else ax.bar
    for g, xs in zip(groups, positions):
        for b, x in zip(g["bars"], xs):
            if b["value"] is None:
                ax.text(*((0.02, x) if horizontal else (x, 0.02)), "n/a", fontsize=7, color="0.4",
                        ha="left" if horizontal else "center", va="center" if horizontal else "bottom")
                continue
            bar(x, b["value"], width * 0.9, color=colors[b["label"]], zorder=2)
            text = f"{b['value']:.2f}"
            if horizontal:
                ax.text(b["value"] + 0.01, x, text, fontsize=6, va="center", ha="left", color="0.2")
            else:
                ax.text(x, b["value"] + 0.01, text, fontsize=7, va="bottom", ha="center", color="0.2")
            if b.get("human") is not None:
                point = (b["human"], x) if horizontal else (x, b["human"])
                ax.scatter(*point, marker="D", s=16, color="black", zorder=3)
    chance = d["chance"]
    (ax.axvline if horizontal else ax.axhline)(chance, color="0.35", ls="--", lw=0.9, zorder=1)
    value_label = d.get("value_label", "binary accuracy")
    if horizontal:
        ax.set_yticks(ticks, [g["label"] for g in groups], fontsize=7 if len(groups) > 20 else 8.5)
        ax.set_ylim(pos - 0.5, -0.5)
        ax.set_xlim(0, 1.08)  # room for the values written after the bars
        ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        ax.set_xlabel(value_label)
    else:
        ax.set_xticks(ticks, [g["label"] for g in groups], rotation=20 if len(groups) > 3 else 0,
                      ha="right" if len(groups) > 3 else "center", fontsize=8.5)
        ax.set_ylim(0, 1.08)
        ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        ax.set_ylabel(value_label)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(item["title"], fontsize=9.5)
    fig.tight_layout()
    model = d.get("model", "model")
    key = d.get("bar_key") or ("{model}: {label}" if len(labels) > 1 else "{model}")
    marks = [Mark(key.format(model=model, label=lab), "patch", colors[lab]) for lab in labels]
    has_human = any(b.get("human") is not None for g in groups for b in g["bars"])
    add_key(fig, marks + ([HUMAN_MARK] if has_human else []) + [_chance_mark(chance)], d.get("note"),
            ncol=3 if horizontal else 2)
    return fig


@figure_kind("condition_bars")
def condition_bars(item: dict):
    """``data``: ``panels`` [{``title``, ``ylabel``, ``means`` {perspective: {condition: v}},
    ``values`` (optional) {perspective: {condition: [per item]}}}], ``conditions``,
    ``perspectives`` [(key, label)].  One axes per panel; per condition a bar per perspective
    (no context / context) at the mean, dots the single items."""
    d = item["data"]
    panels, conds, persp = d["panels"], d["conditions"], [tuple(p) for p in d["perspectives"]]
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.8), squeeze=False)
    rng = np.random.default_rng(0)
    width = 0.8 / len(persp)
    any_dots = False
    for ax, panel in zip(axes.flat, panels):
        for j, (key, _) in enumerate(persp):
            xs = np.arange(len(conds)) + (j - (len(persp) - 1) / 2) * width
            means = [panel["means"][key][c] for c in conds]
            ax.bar(xs, means, width * 0.9, color=BAR_COLORS[j], zorder=2, alpha=0.85)
            for x, c in zip(xs, conds):
                vals = (panel.get("values") or {}).get(key, {}).get(c)
                if vals:
                    any_dots = True
                    ax.scatter(x + rng.uniform(-width * 0.3, width * 0.3, len(vals)), vals, s=9, color="black",
                               alpha=0.6, lw=0, zorder=3)
        ax.axhline(0, color="0.3", lw=0.6)
        ax.set_xticks(range(len(conds)), conds)
        ax.set_ylabel(panel["ylabel"], fontsize=8.5)
        ax.set_title(panel["title"], fontsize=9)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(item["title"], fontsize=10)
    fig.tight_layout()
    marks = [Mark(f"mean, {label}", "patch", BAR_COLORS[j]) for j, (_, label) in enumerate(persp)]
    if any_dots:
        marks.append(Mark("a single item", "marker", "#555555", marker="o"))
    add_key(fig, marks, d.get("note"), ncol=3)
    return fig
