"""Tables and figures of a model comparison (``contstim compare``): Golan et al. 2023, Fig. S3 and S4.

Reads the dict of :func:`contstim_bench.benchmarks.contstim_compare.compare_logprobs` and
computes nothing:

- :func:`head_to_head_table` -- a terminal table per condition: each cell the share of human
  choices that went to the row model's sentence on the pairs where the row and column models
  disagree, with BH significance marks, and the number of such pairs;
- :func:`head_to_head_figure` -- the same as a matrix figure in the style of Fig. S4 (green: the
  row model is more human-consistent, purple: less; grey: the two models never disagree);
- :func:`agreement_figure` -- the share of pairs two models rank the same way (Fig. S3);
- :func:`write_comparison` -- all of it into a folder: JSON, long-form CSVs, PNG and SVG figures.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np

from ..analysis.head_to_head import model_order
from ..analysis.inference import stars
from ..spreadsheet import safe_cell
from .figures import FORMATS, Mark, add_key, pyplot, save_figure

CONDITION_TITLES = {
    "randomly_sampled_natural": "randomly sampled natural pairs",
    "natural_controversial": "controversial natural pairs",
    "synthetic_vs_synthetic": "synthetic vs synthetic pairs",
    "natural_vs_synthetic": "natural vs synthetic pairs",
    "natural_vs_synthetic_reject": "natural vs synthetic pairs",
    "natural_vs_shuffled": "natural vs shuffled (catch trials)",
    "all": "all trials",
}
NOT_SEPARABLE = "no disagreement: not separable on this data"


def head_to_head_table(comparison: dict, condition: str) -> str:
    """The head-to-head matrix of one condition as text (rows: model 1; see the module docstring),
    by unit (the paper's test) and then by item (sentence pairs as units)."""
    block = comparison["conditions"][condition]
    order = model_order(block)
    width = max(8, *(len(m) for m in order))
    cell = 14
    n_fam = block["bh_family_size"]
    lines = [
        f"{comparison['experiment']} / {condition} ({block['n_pairs']} pairs): share of the participants' choices "
        "that went to the row model's sentence,",
        f"  on the pairs where the row and column models disagree (number of such pairs in brackets; "
        f"'-': they never disagree, not separable on this data)",
        (f"  * q < .05, ** q < .01, *** q < .001: two-sided Wilcoxon of the per-{block['unit']} shares vs 0.5, "
         f"BH over the {n_fam} model pairs that disagree" if n_fam else
         "  no two models disagree on any pair of this condition"),
    ]
    lines += _share_matrix(block, order, width, cell, "share", "p_bh")
    if n_fam:
        lines += [f"  by item: the mean over those pairs of each pair's share, * from the Wilcoxon of the per-pair "
                  f"shares vs 0.5 (BH over {block['bh_family_size_items']})"]
        lines += _share_matrix(block, order, width, cell, "share_items", "p_items_bh")
    return "\n".join(lines)


def _share_matrix(block: dict, order: list[str], width: int, cell: int, share: str, q: str) -> list[str]:
    lines = [" " * (width + 1) + "".join(f"{m[:cell - 1]:>{cell}}" for m in order)]
    for a in order:
        cells = []
        for b in order:
            c = None if a == b else block["head_to_head"][a][b]
            if c is None:
                cells.append(" " * cell)
            elif c[share] is None:
                cells.append(f"{'-':>{cell}}")
            else:
                cells.append(f"{c[share]:.2f}{stars(c[q]):<3} ({c['n_pairs']})".rjust(cell))
        lines.append(f"{a:<{width}} " + "".join(cells))
    return lines


def _matrix(block: dict, order: list[str], key: str, value: str = "share") -> np.ndarray:
    n = len(order)
    values = np.full((n, n), np.nan)
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            if i != j:
                v = block[key][a][b][value]
                values[i, j] = np.nan if v is None else v
    return values


def head_to_head_figure(comparison: dict, condition: str, value: str = "share", title: str | None = None,
                        highlight: str | None = None):
    """Fig. S4-style matrix of one condition (a matplotlib figure).

    ``value``: ``"share"`` (mean over units of the per-unit shares, the benchmark's measure) or
    ``"share_pooled"`` (over all disagreement trials at once, as the paper's figure);
    ``highlight``: a model whose row and column labels are set in bold."""
    from matplotlib.colors import ListedColormap

    plt = pyplot()
    block = comparison["conditions"][condition]
    order = model_order(block)
    values = _matrix(block, order, "head_to_head", value)
    n = len(order)
    size = 1.2 + 0.62 * n
    fig, ax = plt.subplots(figsize=(size + 1.6, size))
    cmap = plt.get_cmap("PiYG").with_extremes(bad="0.85")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0.0, vmax=1.0)
    diagonal = np.where(np.eye(n, dtype=bool), 1.0, np.nan)
    ax.imshow(diagonal, cmap=ListedColormap(["white"]), vmin=0, vmax=1)
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            if i == j:
                continue
            c = block["head_to_head"][a][b]
            if c[value] is None:
                ax.text(j, i, "=", ha="center", va="center", fontsize=8, color="0.4")
                continue
            dark = abs(c[value] - 0.5) > 0.3
            ax.text(j, i, f"{c[value]:.2f}\n{stars(c['p_bh'])}", ha="center", va="center", fontsize=7.5,
                    color="white" if dark else "black", linespacing=0.9)
    ax.set_xticks(range(n), order, rotation=45, ha="right")
    ax.set_yticks(range(n), order)
    for label in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
        if label.get_text() == highlight:
            label.set_fontweight("bold")
    ax.set_xlabel("model 2")
    ax.set_ylabel("model 1")
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    bar.set_label("human choices aligned with model 1")
    ax.set_title(title or (f"{comparison['experiment']}: {CONDITION_TITLES.get(condition, condition)}\n"
                           f"head-to-head on the pairs where the two models disagree"), fontsize=10)
    how = f"mean over {block['unit']}s" if value == "share" else "pooled over trials"
    fig.tight_layout()
    add_key(fig, [Mark("* q < .05, ** q < .01, *** q < .001: model 1 differs from 0.5", "symbol", marker="*"),
                  Mark("= the two models never disagree (not separable on this data)", "patch", "0.85")],
            f"Cell: share of the participants' choices that agreed with model 1 ({how}) on the trials where\n"
            f"models 1 and 2 preferred different sentences. Stars: two-sided Wilcoxon of the per-{block['unit']} "
            f"shares vs 0.5,\nBH over the {block['bh_family_size']} model pairs.", ncol=1, fontsize=7)
    return fig


def agreement_figure(comparison: dict, condition: str, title: str | None = None):
    """Fig. S3-style matrix: the share of the condition's pairs two models rank the same way."""
    plt = pyplot()
    block = comparison["conditions"][condition]
    order = model_order(block)
    values = _matrix(block, order, "agreement")
    np.fill_diagonal(values, 1.0)
    n = len(order)
    size = 1.2 + 0.62 * n
    fig, ax = plt.subplots(figsize=(size + 1.6, size))
    image = ax.imshow(values, cmap="Blues", vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            if i != j:
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=7.5,
                        color="white" if values[i, j] > 0.6 else "black")
    ax.set_xticks(range(n), order, rotation=45, ha="right")
    ax.set_yticks(range(n), order)
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    bar.set_label("share of pairs ranked the same way")
    ax.set_title(title or (f"{comparison['experiment']}: {CONDITION_TITLES.get(condition, condition)}\n"
                           f"between-model agreement ({block['n_pairs']} sentence pairs)"), fontsize=10)
    fig.tight_layout()
    return fig


def _long_rows(comparison: dict, key: str) -> list[dict]:
    rows = []
    for cond, block in comparison["conditions"].items():
        for a, others in block[key].items():
            for b, c in others.items():
                row = {"condition": cond, "model": a, "other": b}
                row.update({k: v for k, v in c.items() if k not in ("share_by_unit", "share_by_item")})
                rows.append(row)
    return rows


def _write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: safe_cell(v) for k, v in row.items()} for row in rows)


def write_comparison_json(comparison: dict, path: str | os.PathLike) -> Path:
    """Write the comparison as one JSON file (``contstim compare --output X.json``)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"output {path} ends in .json but is a folder: remove it or give another file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(comparison, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return path


COMPARISON_FILES = ("comparison.json", "head_to_head.csv", "agreement.csv", "tables.txt")
"""The files :func:`write_comparison` writes into its folder besides the figures."""


def write_comparison(comparison: dict, out_dir: str | os.PathLike, formats=FORMATS) -> list[Path]:
    """Write :data:`COMPARISON_FILES` (``comparison.json``, ``head_to_head.csv``, ``agreement.csv``,
    ``tables.txt``) and, per condition, ``<experiment>_<condition>_head_to_head`` and
    ``..._agreement`` figures."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    exp = comparison["experiment"]
    paths = [write_comparison_json(comparison, out / COMPARISON_FILES[0]), *(out / f for f in COMPARISON_FILES[1:])]
    _write_csv(paths[1], _long_rows(comparison, "head_to_head"))
    _write_csv(paths[2], _long_rows(comparison, "agreement"))
    paths[3].write_text("\n\n".join(head_to_head_table(comparison, c) for c in comparison["conditions"]) + "\n",
                        encoding="utf-8")
    for cond in comparison["conditions"]:
        paths += save_figure(head_to_head_figure(comparison, cond), out, f"{exp}_{cond}_head_to_head", formats)
        paths += save_figure(agreement_figure(comparison, cond), out, f"{exp}_{cond}_agreement", formats)
    return paths
