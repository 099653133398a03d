"""How the Golan et al. (2023) items that the benchmarks compute for any model are shown: Fig. 2
(``synthesis``: a synthetic pair's search from its natural start sentence) and Table S2
(``token_counts``: the token-count control).  Registered in :mod:`.items`; the numbers come from
the layers above (``generate/illustration.py``, ``benchmarks/contstim_golan.py``)."""
from __future__ import annotations

import numpy as np

from ..analysis.inference import p_text
from .figures import Mark, add_key, pyplot
from .items import figure_kind, table_kind


def _synthesis_axes(ax, data: dict, key: str) -> None:
    """One panel of Fig. 2 in ``key`` coordinates ("percentile" or "logprob")."""
    m1, m2 = data["models"]
    t = data["triplet"]
    nat = np.array(data["natural"][key])
    ax.scatter(nat[:, 0], nat[:, 1], s=14, facecolors="none", edgecolors="0.45", linewidths=0.7,
               label="natural sentences (start sentences of the run)")
    colors = {"S1": "#1f77b4", "S2": "#d62728"}
    for which, what in (("S1", f"S1: keeps {m1}, lowers {m2}"), ("S2", f"S2: keeps {m2}, lowers {m1}")):
        path = np.array(t[f"path_{which}"][key])
        ax.plot(path[:, 0], path[:, 1], "-", color=colors[which], lw=1.0, marker="o", ms=3, alpha=0.8,
                label=f"search path to {which} (one dot per word replacement)")
        ax.scatter(path[-1, 0], path[-1, 1], s=70, color=colors[which], edgecolors="black", zorder=5, label=what)
    ax.scatter(*t["path_S1"][key][0], s=110, facecolors="white", edgecolors="black", linewidths=1.4, zorder=6,
               label="start sentence N")
    unit = "p(sentence) percentile" if key == "percentile" else "log p(sentence), nats"
    ax.set_xlabel(f"{m1}: {unit}", fontsize=8)
    ax.set_ylabel(f"{m2}: {unit}", fontsize=8)
    ax.tick_params(labelsize=7)
    if key == "percentile":
        ax.set_xlim(-2, 102)
        ax.set_ylim(-2, 102)
        ax.set_aspect("equal")


@figure_kind("synthesis")
def synthesis_figure(item: dict):
    """Fig. 2: natural sentences (small open dots), the start sentence (big open dot), the two
    synthetic sentences (closed dots) and the search's path to each (lines, small dots), in
    percentiles (left, as in the paper) and in log-probabilities (right); a key for every mark and
    the three sentences below."""
    plt = pyplot()
    data = item["data"]
    t = data["triplet"]
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 5.2))
    for ax, key in zip(axes, ("percentile", "logprob")):
        _synthesis_axes(ax, data, key)
    axes[1].legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    fig.suptitle(item["title"], fontsize=10)
    fig.text(0.02, 0.01, f"N: {t['N']}\nS1: {t['S1']}\nS2: {t['S2']}", fontsize=8, va="bottom")
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    return fig


@table_kind("token_counts")
def token_count_rows(item: dict) -> list[dict]:
    """Table S2: one row per model (counts of the tested synthetic pairs by which sentence has more
    of the model's tokens, the model's ties, the binomial p and its BH q; a star and bold on q < .05)."""
    return [{"model": r["model"] + ("" if r["selection"] == "targeted" else " (every synthetic pair)"),
             "pairs": r["n_pairs"], "accepted has more tokens": r["accepted_more"], "equal token counts": r["equal"],
             "rejected has more tokens": r["rejected_more"], "model ties": r["model_ties"], "p": p_text(r["p"]),
             "q (BH)": p_text(r["p_bh"]) + (" *" if r["significant"] else ""),
             "_bold": {"q (BH)": r["significant"]}} for r in item["data"]["rows"]]


DOMINANCE_MARKS = (
    Mark("row model significantly better than the column model (q < .05)", "marker", "black", marker="o"),
    Mark("compared, no significant difference", "marker", "white", "0.45", marker="o"),
)
DOMINANCE_NOTE = ("Two-sided Wilcoxon signed-rank test of the per-unit scores, Benjamini-Hochberg over the tested "
                  "pairs of the condition; models scored on other trials (their own targeted pairs) are not compared.")


@figure_kind("dominance")
def dominance_figure(item: dict):
    """Figs. 1/3/4, dominance circles: per condition a grid of the models (rows better than
    columns); a filled circle where the row model's per-unit score is significantly above the
    column model's, an open one where the two were compared without a significant difference,
    nothing where they were scored on different trials; a key for each mark."""
    plt = pyplot()
    data = item["data"]
    conds = list(data["conditions"])
    n = max(len(data["conditions"][c]["models"]) for c in conds)
    fig, axes = plt.subplots(1, len(conds), figsize=(max(4.5, 0.45 * n + 2.2) * len(conds), 0.45 * n + 2.6),
                             squeeze=False)
    for ax, cond in zip(axes[0], conds):
        block = data["conditions"][cond]
        models = block["models"]
        pos = {m: i for i, m in enumerate(models)}
        filled, open_ = [], []
        for pair in block["pairs"]:
            if pair["dominates"]:
                worse = pair["b"] if pair["better"] == pair["a"] else pair["a"]
                filled.append((pos[worse], pos[pair["better"]]))
            else:
                open_ += [(pos[pair["b"]], pos[pair["a"]]), (pos[pair["a"]], pos[pair["b"]])]
        for points, style in ((filled, dict(color="black", s=70)),
                              (open_, dict(facecolors="white", edgecolors="0.45", s=40))):
            if points:
                xs, ys = zip(*points)
                ax.scatter(xs, ys, marker="o", zorder=3, **style)
        ax.set_xticks(range(len(models)), models, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(models)), models, fontsize=7)
        ax.set_xlim(-0.6, len(models) - 0.4)
        ax.set_ylim(len(models) - 0.4, -0.6)
        ax.set_aspect("equal")
        ax.grid(color="0.92", lw=0.6)
        if not block["pairs"]:
            ax.text((len(models) - 1) / 2, (len(models) - 1) / 2, "no two models scored\non the same trials",
                    ha="center", va="center", fontsize=8, color="0.4")
        ax.set_title(cond.replace("_", " "), fontsize=9)
        ax.set_xlabel("column model", fontsize=8)
        ax.set_ylabel("row model", fontsize=8)
    fig.suptitle(item["title"], fontsize=10)
    fig.tight_layout()
    add_key(fig, DOMINANCE_MARKS, DOMINANCE_NOTE, ncol=1)
    return fig
