"""Figures and tables of Kauf & Ivanova (2023) from the items of
:func:`contstim_bench.benchmarks.pll_properties_report.kauf_ivanova_items`, and the terminal summary
of a ``pll-properties`` result.

:data:`FIGURES` maps an item's ``kind`` to the function drawing it (a matplotlib figure, saved with
:func:`.figures.save_figure`); :func:`oov_table` gives Table 2 as columns and rows.  The panels
follow the paper's: a scatter with its least-squares line, the panel titled with the model, the
metric and ``R=... ***``; every mark is named in the figure's legend.  Computes nothing: the
fitted line and the sentence scores come with the items.
"""
from __future__ import annotations

import numpy as np

from .figures import pyplot
from .items import figure_kind, table_kind

DOT = "#6f4e7c"
LINE = "#2e1a47"


def _fit(ax, fit: dict | None) -> None:
    """The least-squares line a panel carries (:func:`~contstim_bench.analysis.pll_properties.least_squares_line`)."""
    if fit is not None:
        xs = np.array([fit["x0"], fit["x1"]])
        ax.plot(xs, fit["intercept"] + fit["slope"] * xs, color=LINE, lw=1.6, label="least-squares fit")


def _r(corr: dict | None) -> str:
    if corr is None or corr.get("r") is None:
        return "R undefined"
    return f"R={corr['r']:.2f} {corr['stars']}"


def _grid(n_rows: int, n_cols: int, width: float = 3.3, height: float = 3.1):
    plt = pyplot()
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width * n_cols, height * n_rows + 0.6), squeeze=False)
    return fig, axes


def _legend(fig, axes) -> None:
    handles, labels = {}, []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    fig.legend([handles[k] for k in labels], labels, loc="lower center", ncol=min(len(labels), 8), frameon=False,
               fontsize=8, bbox_to_anchor=(0.5, 0.0))


def _finish(fig, axes, title: str, key_height: float):
    """Title the figure, put one key for every panel's marks under them (``key_height``: the
    share of the figure's height kept for it) and lay the panels out above it."""
    fig.suptitle(title, fontsize=10)
    _legend(fig, axes)
    fig.tight_layout(rect=(0, key_height, 1, 1))
    return fig


def length_figure(item: dict):
    """Fig. 3A: per metric, sentence length (tokens; words in a second row) against the negative score."""
    panels = item["data"]["panels"]
    rows = [("n_tokens", "tokens", "Sentence length (no. of tokens)")] if any(p["n_tokens"] for p in panels) else []
    rows.append(("n_words", "words", "Sentence length (no. of words)"))
    fig, axes = _grid(len(rows), len(panels))
    for i, (key, corr_key, xlabel) in enumerate(rows):
        for j, p in enumerate(panels):
            ax = axes[i, j]
            if p[key] is None:
                ax.set_axis_off()
                ax.text(0.5, 0.5, f"{p['model']}: no tokenizer", ha="center", va="center", fontsize=8)
                continue
            x = np.asarray(p[key], dtype=np.float64)
            jitter = (np.arange(len(x)) % 7 - 3) * 0.04  # separates the dots of one integer length
            ax.scatter(x + jitter, p["negative_score"], s=6, alpha=0.45, color=DOT, edgecolors="none",
                       label="sentence (x jittered by < 0.15)")
            _fit(ax, p["fits"][key])
            ax.set_title(f"{p['model']} | {p['label']}\n{_r(p[corr_key])}", fontsize=8.5)
            ax.set_xlabel(xlabel, fontsize=8)
            ax.set_ylabel(f"Negative {'LL' if p['label'] == 'LL' else 'PLL'} score", fontsize=8)
            ax.tick_params(labelsize=7)
    return _finish(fig, axes, item["title"], 0.06)


def frequency_figure(item: dict):
    """Fig. 3B: per metric, the word's log frequency against its score, coloured by its tokens."""
    plt = pyplot()
    panels = item["data"]["panels"]
    counts = sorted({int(k) for p in panels for k in (p["n_tokens"] or [])})
    cmap = plt.get_cmap("viridis", max(len(counts), 2))
    colour = {k: cmap(i) for i, k in enumerate(counts)}
    fig, axes = _grid(1, len(panels))
    for ax, p in zip(axes[0], panels):
        if p["n_tokens"] is None:
            ax.scatter(p["log_frequency"], p["score"], s=8, alpha=0.6, color=DOT, edgecolors="none", label="word")
        else:
            nt = np.asarray(p["n_tokens"])
            for k in counts:
                sel = nt == k
                if sel.any():
                    ax.scatter(np.asarray(p["log_frequency"])[sel], np.asarray(p["score"])[sel], s=8, alpha=0.7,
                               color=colour[k], edgecolors="none", label=f"word of {k} token{'s' if k > 1 else ''}")
        _fit(ax, p["fit"])
        other = "" if p["template"] == item["data"]["template"] else f"\ncontext: {p['template']}"
        ax.set_title(f"{p['model']} | {p['label']}\n{_r(p['correlation'])}{other}", fontsize=8.5)
        ax.set_xlabel(item["data"]["frequency_label"], fontsize=8)
        ax.set_ylabel(f"Word {'LL' if p['label'] == 'LL' else 'PLL'} score", fontsize=8)
        ax.tick_params(labelsize=7)
    return _finish(fig, axes, f"{item['title']}\ncontext: {item['data']['template']}", 0.13)


def causal_figure(item: dict):
    """Fig. 4: per PLL metric, the masked model's score against the causal model's log-probability."""
    panels = item["data"]["panels"]
    fig, axes = _grid(1, len(panels))
    for ax, p in zip(axes[0], panels):
        ax.scatter(p["causal"], p["score"], s=6, alpha=0.45, color=DOT, edgecolors="none", label="sentence")
        _fit(ax, p["fit"])
        rho = p["spearman"]["r"]
        ax.set_title(f"{p['label']}\n{_r(p['pearson'])}" + ("" if rho is None else f" (rho={rho:.2f})"),
                     fontsize=8.5)
        ax.set_xlabel(f"{item['data']['causal_model']} LL score", fontsize=8)
        ax.set_ylabel("PLL score", fontsize=8)
        ax.tick_params(labelsize=7)
    return _finish(fig, axes, item["title"], 0.06)


def oov_table(item: dict) -> dict:
    """Table 2 as ``{"columns", "rows"}``: the results' tokenizers, then the paper's rows."""
    columns = ["model", "dataset", "word occurrences", "split into 2+ tokens", "OOV ratio (%)", "source"]
    rows = [[r["model"], r["dataset"], r["n_words"], r["n_split"], round(r["percent"], 2), "this report"]
            for r in item["data"]["rows"]]
    rows += [[p["model"], p["dataset"], None, None, p["percent"], "Kauf & Ivanova 2023, Table 2"]
             for p in item["data"]["paper"]]
    return {"columns": columns, "rows": rows}


METRIC_COLOURS = {"pll": "#c51b7d", "pll-word-l2r": "#1b7837", "pll-whole-word": "#2166ac",
                  "pll-sentence-l2r": "#e08214"}
"""One colour per PLL metric in the inflation figures."""


def inflation_sentence_figure(item: dict):
    """Figs. 2, 5, 6 (and 17): one panel per PLL metric, each token's log-probability (line with
    markers), the example word's tokens shaded, the mean token score dashed; the sentence score
    in the legend, as the paper's."""
    d = item["data"]
    metrics = list(d["values"])
    n = len(d["pieces"])
    cols = 2 if len(metrics) == 4 else len(metrics)
    fig, axes = _grid(-(-len(metrics) // cols), cols, width=min(max(3.3, 0.3 * n + 1.2), 6.5), height=3.0)
    low = min(min(v) for v in d["values"].values())
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    for ax, m in zip(axes.flat, metrics):
        values = d["values"][m]
        ax.axvspan(min(d["word_tokens"]) - 0.4, max(d["word_tokens"]) + 0.4, color="#fde0ef", zorder=0,
                   label=f"tokens of \u201c{d['word']}\u201d")
        ax.plot(range(n), values, marker="o", ms=4, color=METRIC_COLOURS.get(m, DOT), zorder=2,
                label="token PLL score")
        mean = d["mean_token_scores"][m]
        ax.axhline(mean, color="0.35", lw=1, ls="--", zorder=1, label="mean token PLL score")
        ax.set_title(f"{d['labels'][m]}\nsentence PLL score {d['sentence_scores'][m]:.2f}, mean {mean:.2f}",
                     fontsize=8.5)
        ax.set_xticks(range(n), d["pieces"], rotation=60, ha="right")
        ax.set_ylim(min(low * 1.08, low - 0.5), 0.0)
        ax.set_ylabel("token log p (natural log)", fontsize=8)
        ax.tick_params(labelsize=7)
    return _finish(fig, axes, item["title"], 0.05)


def inflation_positions_figure(item: dict):
    """The inflation over every word: per word length, mean log-probability by token position."""
    rows = item["data"]["rows"]
    lengths = sorted({r["n_tokens"] for r in rows})
    fig, axes = _grid(1, len(lengths), width=2.8)
    for ax, length in zip(axes[0], lengths):
        mine = [r for r in rows if r["n_tokens"] == length]
        for m in dict.fromkeys(r["metric"] for r in mine):
            pts = [r for r in mine if r["metric"] == m]
            ax.plot([r["position"] for r in pts], [r["mean"] for r in pts], marker="o", ms=4,
                    color=METRIC_COLOURS.get(m, DOT), label=item["data"]["labels"][m])
        ax.set_xticks(range(1, length + 1))
        ax.set_title(f"words of {length} token{'s' if length > 1 else ''} ({mine[0]['n_words']})", fontsize=8.5)
        ax.set_xlabel("token position in the word", fontsize=8)
        ax.set_ylabel("mean log p(token)", fontsize=8)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.tick_params(labelsize=7)
    return _finish(fig, axes, item["title"], 0.08)


FIGURES = {"pll_length": length_figure, "pll_frequency": frequency_figure, "pll_causal": causal_figure,
           "pll_inflation_sentence": inflation_sentence_figure, "pll_inflation_positions": inflation_positions_figure}
"""Item kind -> figure function (``oov_table`` is a table: :func:`oov_table`)."""
for _kind, _draw in FIGURES.items():
    figure_kind(_kind)(_draw)  # shown on the pages of ``contstim report`` (report/items.py)


@table_kind("oov_table", digits=2)
def oov_table_rows(item: dict) -> list[dict]:
    """Table 2 as the pages' table rows (column -> value), from :func:`oov_table`."""
    table = oov_table(item)
    return [dict(zip(table["columns"], row)) for row in table["rows"]]


def summary_table(result: dict) -> str:
    """Terminal summary of a ``pll-properties`` result: correlations per metric and the OOV ratio."""
    from ..benchmarks.pll_properties_report import model_label, summary_lines

    bench = result["benchmark"]
    n = len(result["sentences"]["rows"])
    lines = [f"Kauf & Ivanova (2023) analyses: {model_label(result)} on EventsAdapt ({n} sentences"
             f"{', subset' if bench.get('limit') else ''}); words in {bench['template']!r}, frequency: "
             f"{bench['frequency_source']} ({result['words']['n_with_frequency']} of {len(result['words']['rows'])} "
             "words)", "Pearson R (*** p < .001, ** p < .01, * p < .05); length: against the negative score", ""]
    lines += summary_lines(result)
    oov = result.get("oov")
    if oov is not None:
        lines += ["", f"out-of-vocabulary ratio (Table 2): {100 * oov['ratio']:.2f}% of {oov['n_words']} word "
                      f"occurrences split into 2+ tokens (paper, EventsAdapt: BERT 19.6%, RoBERTa/GPT 40.3%)"]
    return "\n".join(lines)
