"""Write the paper's figures and tables (:func:`contstim_bench.benchmarks.contstim_report.paper_report`)
into one folder with an index page: ``contstim report``.

For every item: a PNG and an SVG figure (matrices, bar panels, feature scatters) or a table
(HTML in the index, CSV and Markdown files), and the numbers in ``report.json``.  Computes
nothing: it draws and formats the report dict.
"""
from __future__ import annotations

import csv
import html
import json
import math
import os
from pathlib import Path

import numpy as np

from ..spreadsheet import safe_cell
from .figures import FORMATS, Mark, add_key, pyplot, save_figure
from .items import figure_kind, kind_of, table_columns, table_kind
from ..analysis.inference import ALPHA, stars
from .matrices import agreement_figure, head_to_head_figure
from .page_html import page, table_html, table_markdown
from .plots import bar_marks, bar_panel, panel_min


# ------------------------------------------------------------------------------ figures
@figure_kind("head_to_head")
def head_to_head_item(item: dict):
    """Fig. S4: ``data``: ``comparison`` (:func:`~contstim_bench.benchmarks.contstim_compare.compare_logprobs`),
    ``condition`` and optionally ``highlight`` (a model whose labels are set in bold)."""
    data = item["data"]
    return head_to_head_figure(data["comparison"], data["condition"], value="share_pooled", title=item["title"],
                               highlight=data.get("highlight"))


@figure_kind("agreement")
def agreement_item(item: dict):
    """Fig. S3: ``data``: ``comparison`` and ``condition``."""
    return agreement_figure(item["data"]["comparison"], item["data"]["condition"], title=item["title"])


@figure_kind("accept_reject")
def accept_reject_figure(item: dict):
    """Fig. S5: rows = accepting model, columns = rejecting model, cell = share aligned with the
    accepting model (grey: no such trials)."""
    plt = pyplot()
    data = item["data"]
    models = data["models"]
    n = len(models)
    values = np.full((n, n), np.nan)
    for i, a in enumerate(models):
        for j, r in enumerate(models):
            if a != r and data["matrix"][a][r]["share"] is not None:
                values[i, j] = data["matrix"][a][r]["share"]
    size = 1.2 + 0.62 * n
    fig, ax = plt.subplots(figsize=(size + 1.6, size))
    cmap = plt.get_cmap("PiYG").with_extremes(bad="0.9")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0.0, vmax=1.0)
    for i, a in enumerate(models):
        for j, r in enumerate(models):
            cell = None if a == r else data["matrix"][a][r]
            if cell is not None and cell["share"] is not None:
                dark = abs(cell["share"] - 0.5) > 0.3
                ax.text(j, i, f"{cell['share']:.2f}\n({cell['n_trials']})", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black", linespacing=0.9)
    ax.set_xticks(range(n), models, rotation=45, ha="right")
    ax.set_yticks(range(n), models)
    ax.set_xlabel("m_reject (synthetic sentence made to be rejected)")
    ax.set_ylabel("m_accept (made to be accepted)")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04).set_label("human choices aligned with m_accept")
    ax.set_title(item["title"], fontsize=10)
    fig.tight_layout()
    add_key(fig, [Mark("cell: share aligned with m_accept (number of trials), colour scale at right", "patch",
                       "#b8e186"),
                  Mark("no trials of this accept/reject pair", "patch", "0.9", "0.6")], ncol=2)
    return fig


@figure_kind("panel")
def panel_figure(item: dict):
    """Bars of every model of one condition (Fig. S6, S8): mean, units, noise ceiling, stars;
    the like-for-like contrasts (approximate LL vs PLL) listed under the key."""
    plt = pyplot()
    data = item["data"]
    panel = {"models": data["panel"]["models"], "condition": data["condition"]}
    n = len(panel["models"])
    fig, ax = plt.subplots(figsize=(5.5, 0.38 * n + 1.6))
    measure = data["measure"]
    bar_panel(ax, panel, {"comparisons": {}, "head_to_head": {}}, "", measure, panel_min(panel, measure))
    ax.set_title(item["title"], fontsize=9)
    fig.tight_layout()
    first = next(iter(panel["models"].values()))
    contrasts = data["panel"].get("contrasts", [])
    marks, note = bar_marks(measure, first["unit"], first["n_units"], n_models=n,
                            family=f"BH over the {len(contrasts) + n} comparisons, " if contrasts else None)
    lines = [f"{c['model1']} vs {c['model2']}: delta {c[f'{measure}_delta']:+.3f}, q = {c[f'{measure}_p_bh']:.2g}"
             f"{' ' + stars(c[f'{measure}_p_bh']) if c[f'{measure}_significant'] else ''}"
             for c in contrasts]
    if lines:
        note += "\nContrasts (two-sided Wilcoxon, BH; *** q < .001):\n" + "\n".join(lines)
    add_key(fig, marks, note, ncol=2)
    return fig


@figure_kind("features")
def features_figure(item: dict):
    """Fig. S7: per model, the feature of the preferred (x) vs rejected (y) sentence, the model's
    choices in black and the participants' in red; the panel outlined when they differ (q < .05)."""
    plt = pyplot()
    tests = item["data"]["tests"]
    models = list(tests)
    cols = 3
    rows = max(1, math.ceil(len(models) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 3.0 * rows), squeeze=False)
    everything = [v for t in tests.values() for k, vs in t["values"].items() if k != "pair_id" for v in vs]
    lo, hi = (min(everything), max(everything)) if everything else (0.0, 1.0)
    pad = 0.05 * (hi - lo or 1.0)
    lims = (lo - pad, hi + pad)
    for ax, m in zip(axes.flat, models):
        t = tests[m]
        v = t["values"]
        ax.plot(lims, lims, color="0.7", lw=0.6)
        ax.scatter(v["human_preferred"], v["human_rejected"], s=9, color="#d62728", label="people", zorder=2)
        ax.scatter(v["model_preferred"], v["model_rejected"], s=4, color="black", label="model", zorder=3)
        ax.set_xlim(*lims)
        ax.set_ylim(*lims)
        ax.set_aspect("equal")
        significant = t["p_bh"] is not None and t["p_bh"] < ALPHA
        for spine in ax.spines.values():
            spine.set_edgecolor("black" if significant else "0.75")
            spine.set_linewidth(1.6 if significant else 0.8)
        q = "n/a" if t["p_bh"] is None else f"{t['p_bh']:.2g}"
        ax.set_title(f"{m} ({t['n_pairs']} pairs)\nq = {q}{' ' + stars(t['p_bh']) if significant else ''}", fontsize=8)
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(models):]:
        ax.set_visible(False)
    first = axes.flat[0]
    first.set_xlabel(f"{item['data']['label']}, preferred sentence", fontsize=7)
    first.set_ylabel("rejected sentence", fontsize=7)
    fig.suptitle(item["title"], fontsize=10)
    fig.tight_layout()
    add_key(fig, FEATURE_MARKS, "Outline: paired t-test of the model's vs people's preferred-minus-rejected "
            "feature, BH over the models.", ncol=2)
    return fig


FEATURE_MARKS = (
    Mark("pair: the sentence people chose (x) vs the other (y)", "marker", "#d62728", marker="o"),
    Mark("pair: the sentence the model prefers (x) vs the other (y)", "marker", "black", marker="o"),
    Mark("equal feature (diagonal)", "line", "0.7"),
    Mark("panel outlined: the model's preference differs from people's (q < .05)", "patch", "white", "black", 1.6),
)
"""The key of Fig. S7."""


# ------------------------------------------------------------------------------- tables
@table_kind("failures", digits=2)
def failure_rows(item: dict) -> list[dict]:
    """Two rows per failure (its two sentences), in the layout of the paper's tables (model, other,
    accuracy, sentence, both models' log-probabilities, human choices; the higher log-probability
    and the majority choice bold); numbers stay numbers.  ``data``: ``condition`` and ``rows`` (:class:`~contstim_bench.analysis.failures.Failure` dicts)."""
    out = []
    for f in item["data"]["rows"]:
        labels = _labels(item["data"]["condition"], f)
        for k in (0, 1):
            other = f["logprob_other"]
            out.append({
                "model": f["model"] if k == 0 else "",
                "other": (f["other"] or "") if k == 0 else "",
                "accuracy": f["accuracy"] if k == 0 else None,
                "sentence": f"{labels[k]}: {(f['sentence1'], f['sentence2'])[k]}",
                "log p (model 1)": f["logprob_model"][k],
                "log p (model 2)": None if other is None else other[k],
                "human choices": f["human_choices"][k],
                "_bold": {"log p (model 1)": f["logprob_model"][k] > f["logprob_model"][1 - k],
                          "log p (model 2)": other is not None and other[k] > other[1 - k],
                          "human choices": f["human_choices"][k] > f["human_choices"][1 - k]},
            })
    return out


def _labels(condition: str, failure: dict) -> tuple[str, str]:
    if condition == "natural_controversial":
        return "n1", "n2"
    if condition == "natural_vs_synthetic":
        natural = [t is not None and t.upper().startswith("N") for t in (failure["type1"], failure["type2"])]
        return ("n", "s") if natural[0] or not natural[1] else ("s", "n")
    return "s1", "s2"


def _write_table(rows: list[dict], out: Path, stem: str, digits: int) -> list[Path]:
    csv_path, md_path = out / f"{stem}.csv", out / f"{stem}.md"
    columns = table_columns(rows)
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: safe_cell(v) for k, v in row.items() if k in columns} for row in rows)
    md_path.write_text(table_markdown(rows, digits), encoding="utf-8")
    return [csv_path, md_path]


# -------------------------------------------------------------------------------- index
def _json_ready(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_ready(v) for v in obj]
    return obj


def write_report(report: dict, out_dir: str | os.PathLike, formats=FORMATS) -> list[Path]:
    """Write every item of ``report`` and ``index.html`` into ``out_dir`` (written beside it and
    renamed into place: :func:`contstim_bench.staging.replace_folder`); returns the paths."""
    from ..staging import replace_folder

    final = Path(out_dir)
    with replace_folder(final, kind=PAPER_KIND) as out:
        written = _write_report(report, out, formats)
    return [final / p.relative_to(out) for p in written]


PAPER_KIND = "paper report"
"""The marker kind of a `contstim report --experiment` folder."""


def _write_report(report: dict, out: Path, formats) -> list[Path]:
    exp = report["experiment"]
    paths: list[Path] = []
    sections = []
    for item in report["items"]:
        stem = f"{exp}_{item['id']}"
        kind = kind_of(item)
        if kind.shape == "table":
            rows = kind.show(item)
            paths += _write_table(rows, out, stem, kind.digits)
            body = table_html(rows, kind.digits) + (f'<p class="files"><a href="{stem}.csv">CSV</a> · '
                                                    f'<a href="{stem}.md">Markdown</a></p>')
        else:
            paths += save_figure(kind.show(item), out, stem, formats)
            body = (f'<a href="{stem}.svg"><img src="{stem}.png" alt="{html.escape(item["title"])}"></a>'
                    f'<p class="files"><a href="{stem}.svg">SVG</a> · <a href="{stem}.png">PNG</a></p>')
        sections.append(f'<section id="{item["id"]}"><h2>{html.escape(item["title"])}</h2>'
                        f'<p>{html.escape(item["caption"])}</p>{body}</section>')
    skipped = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in report["skipped"].items())
    models = ", ".join(f"{html.escape(m)} ({html.escape(d)})" for m, d in report["models"].items())
    toc = "".join(f'<li><a href="#{i["id"]}">{html.escape(i["title"])}</a></li>' for i in report["items"])
    index = out / "index.html"
    index.write_text(page(
        f"contstim-bench report: {exp} experiment",
        f"<h1>Golan et al. (2023): figures and tables of the {html.escape(exp)} experiment</h1>"
        f"<p>Computed by contstim-bench from {'the human trials and ' if report['unit'] else ''}the reference "
        f"models' published log-probabilities (natural log). Models: {models}. "
        + (f"Units: {html.escape(report['unit'])}s. " if report["unit"] else "No human trials: only the items that "
           "need none. ") +
        f"Seed for ties among the most severe failures: {report['seed']}. All numbers: "
        f'<a href="report.json">report.json</a>.</p><ul>{toc}</ul>'
        + "".join(sections)
        + (f"<h2>Not produced</h2><ul>{skipped}</ul>" if skipped else "")),
        encoding="utf-8",
    )
    data = out / "report.json"
    data.write_text(json.dumps(_json_ready(report), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return paths + [index, data]
