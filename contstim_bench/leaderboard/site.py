"""Render the static leaderboard site from a folder of result files.

Layout of ``SITE`` (every page is plain HTML; ``app.js`` adds sorting, the panel selector and
the downloads; the data is inlined as ``data.js``, so nothing is fetched and the site works from
``file://`` as from any static host; no CDN, no external font or script)::

    index.html              overview (one column group per experiment and round of the benchmark),
                            then a ranking table per experiment or round and condition (sortable):
                            the verified models, then the unverified ones in their own labelled
                            table (:mod:`.policy`: never ranked together)
    matrix.html             pairwise significance matrix per panel and measure (within each group)
    models/<slug>.html      one page per model (all its result files: the paper's experiments and
                            each round): metadata, scores, head-to-heads, comparisons, plots
    models/<slug>/*.png     its figures (:func:`contstim_bench.plotting.plot_result`, PNG and SVG)
    data.js                 window.CONTSTIM_LEADERBOARD = {columns, rows, matrices}
    export/leaderboard.json, export/leaderboard.csv, results/<file>.json
    style.css, app.js

Every string from a result file is HTML-escaped; nothing from a result is executed.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from .._version import __version__
from ..report.page_html import page
from .identity import display_name, identity
from ..analysis.inference import p_text
from .board_html import E, num, p_td, panel_id, panel_tables, se_html, slug, td
from .policy import grouped_matrices, grouped_rows, load_entries
from ..analysis.ranking import SHOWN_DIGITS
from .table import COLUMNS, overview_rows, panels, rows_to_csv
from .validate import RESCORE_TOLERANCE, ValidationError, load_file, result_paths, validate_files

SITE_KIND = "leaderboard site"
"""The marker kind of a site (:func:`contstim_bench.staging.replace_folder`).  A site written before
the marker existed is not replaced: which of its files a user added cannot be told, so the command
asks for a new folder (or for the old one to be removed by hand)."""

STATIC = Path(__file__).with_name("static")
TITLE = "contstim-bench leaderboard"
PLOT_FORMATS = ("png", "svg")


def load_results(results_dir: str | os.PathLike, validate: bool = True, datasets_dir=None) -> list[tuple[Path, dict]]:
    """Every ``*.json`` of ``results_dir`` as (path, result), sorted by file name.

    With ``validate`` (the default) every file is checked by :mod:`.validate` first and an
    invalid one raises :class:`~.validate.ValidationError` naming the file and the problems.
    """
    folder = Path(results_dir)
    paths = result_paths(folder)
    if validate:
        checked = validate_files(paths, datasets_dir=datasets_dir)
        bad = [c for c in checked if not c.ok]
        if bad:
            raise ValidationError(bad[0].source, bad[0].problems + [f"({len(bad)} invalid file(s) in {folder})"])
        return [(Path(c.source), c.result) for c in checked]
    return [(p, load_file(p)) for p in paths]


def _page(title: str, body: str, root: str = "") -> str:
    """A page of the site in the one page frame (:func:`contstim_bench.report.page_html.page`):
    the site's stylesheet and scripts, its header and navigation."""
    head = (f'<link rel="stylesheet" href="{root}style.css">\n'
            f'<script src="{root}data.js"></script>\n<script src="{root}app.js"></script>')
    return page(title, (
        f'<header><h1>{E(TITLE)}</h1><p>How well do a language model\'s sentence probabilities predict '
        "which of two sentences people judge more likely? Controversial sentence pairs, Golan et al. 2023.</p></header>\n"
        f'<nav><a href="{root}index.html">Leaderboard</a><a href="{root}matrix.html">Pairwise significance</a>'
        f'<a href="{root}export/leaderboard.csv" data-export="csv" id="export-csv">Download CSV</a>'
        f'<a href="{root}export/leaderboard.json" data-export="json" id="export-json">Download JSON</a></nav>\n'
        f"<main>\n{body}\n</main>"
    ), head)


# --------------------------------------------------------------------------- pages
def _overview_table(rows: list[dict], pages: dict[str, str]) -> str:
    """One row per model, one column group per experiment and round (condition ``all``)."""
    groups, models = overview_rows(rows)
    top = "".join(f'<th colspan="4" scope="colgroup" class="group">{E(_experiment_label(g))}</th>' for g in groups)
    sub = "".join('<th scope="col">Accuracy</th><th scope="col">Normalised</th><th scope="col">SRCS</th>'
                  '<th scope="col">Trials</th>' for _ in groups)
    body = []
    for m in models:
        page = pages[m["identity"]]
        tag = "" if m.get("verified", True) else ' <span class="unverified">(unverified)</span>'
        cells = [f'<th scope="row" class="text"><a href="models/{E(page)}.html">{E(m["model"])}</a>{tag}</th>']
        for g in groups:
            v = m["groups"].get(g)
            if v is None:
                cells.append('<td colspan="4" class="absent">not evaluated</td>')
                continue
            cells += [td(v["accuracy"], num(v["accuracy"]) + se_html(v["accuracy_stderr"])),
                      td(v["accuracy_normalised"], num(v["accuracy_normalised"])),
                      td(v["srcs"], num(v["srcs"]) + se_html(v["srcs_stderr"])), td(v["n_trials"])]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<section id="overview"><h2>Every model on every experiment and round</h2>\n'
        '<p class="note">All trials of each experiment of Golan et al. (2023) and of each later round of the benchmark '
        "(fresh controversial pairs judged by people, added with <code>contstim experiment ingest</code>). "
        "Normalised = accuracy / lower noise ceiling; &plusmn;: standard error across units.</p>\n"
        f'<div class="table-wrap"><table class="overview"><thead><tr><th></th>{top}</tr><tr><th scope="col" class="text">'
        f'Model</th>{sub}</tr></thead>\n<tbody>\n' + "\n".join(body) + "\n</tbody></table></div></section>"
    )


def _experiment_label(exp: str) -> str:
    from ..study import is_paper_experiment

    return f"{exp} (Golan et al. 2023)" if is_paper_experiment(exp) else f"round contstim.{exp}"


def index_page(results: list[dict], rows: list[dict], pages: dict) -> str:
    """The ranking page: per panel, the verified models' table, then the unverified models' own
    labelled table (rows carry ``verified``; rows without it count as verified)."""
    options, sections = [], []
    for exp, cond in panels(results):
        pid = panel_id(exp, cond)
        sel = " selected" if (exp, cond) == _default_panel(results) else ""
        options.append(f'<option value="{pid}"{sel}>{E(exp)} / {E(cond)}</option>')
        sections.append(panel_tables(rows, exp, cond, pages))
    body = (
        _overview_table(rows, pages) + "\n"
        '<div class="controls"><label for="panel-select">Experiment / condition:</label>'
        f'<select id="panel-select">{"".join(options)}<option value="*">all panels</option></select></div>\n'
        f'<p class="note">Click a column header to sort. Ranks by accuracy, like for like only: models evaluated on '
        "every trial of a condition among themselves, and models evaluated on the trials that target them (the paper's "
        "reference models) among themselves; a model with degenerate predictions (every pair a tie, or one presented "
        f"sentence always preferred) is listed but not ranked (&ndash;). Models equal to {SHOWN_DIGITS} decimals "
        "share a rank (=N) and are listed by name. Accuracy: binarised agreement with each participant's "
        "choice, mean over participants; normalised = accuracy / lower noise ceiling; SRCS: signed-rank cosine "
        "similarity. p: two-sided Wilcoxon signed-rank test across participants, Benjamini-Hochberg adjusted "
        "(vs ceiling: within the model's own panel; vs leader: across the models of the panel); * = q &lt; .05. "
        "Reference models are evaluated on the trials that target them (selection &ldquo;targeted&rdquo;).</p>\n"
        + "\n".join(sections)
    )
    return _page(TITLE, body)


def _default_panel(results: list[dict]) -> tuple[str, str]:
    all_panels = panels(results)
    for p in all_panels:
        if p[1] == "all":
            return p
    return all_panels[0]


def matrix_page(matrices: list[dict]) -> str:
    parts = [
        "<h2>Pairwise significance</h2>",
        '<p class="note">Cell (row, column): Benjamini-Hochberg adjusted two-sided Wilcoxon p-value of the row '
        "model vs the column model across shared participants (one family per panel and measure); the sign shows "
        "which is higher (+ = row higher). Shaded: q &lt; .05. Models ordered by their mean score. Verified and "
        "unverified models are compared only within their own group. n/c: not comparable like for like (one "
        "model evaluated on every trial of the condition, the other on the trials that target it); the result "
        "files' head-to-head compares such models on the trials where they disagree.</p>",
    ]
    for m in matrices:
        names = m["models"]
        head = "".join(f'<th scope="col">{E(n)}</th>' for n in names)
        rows = []
        for i, name in enumerate(names):
            cells = []
            for j in range(len(names)):
                if i == j:
                    cells.append('<td class="diag">&mdash;</td>')
                    continue
                p, d = m["p"][i][j], m["delta"][i][j]
                if p is None:  # not comparable like for like (different trial selections)
                    cells.append('<td class="diag" title="evaluated on different trials: see the head-to-head '
                                 'of the result files">n/c</td>')
                    continue
                cls = "sigcell" if p < m["alpha"] else ""
                sign = "+" if d > 0 else "&minus;" if d < 0 else "="
                cells.append(f'<td class="{cls}" title="delta {d:+.4f}">{sign} {p_text(p)}</td>')
            rows.append(f'<tr><th scope="row" class="text">{E(name)} ({num(m["scores"][i])})</th>{"".join(cells)}</tr>')
        group = "" if m.get("verified", True) else ' &middot; <span class="unverified">unverified models only</span>'
        parts.append(
            f'<h3>{E(m["experiment"])} / {E(m["condition"])} &middot; {E(m["measure"])}{group}</h3>'
            f'<table class="matrix"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        )
    return _page(f"{TITLE}: pairwise significance", "\n".join(parts))


def _meta(result: dict, file_name: str) -> str:
    model, bench, prov = result["model"], result["benchmark"], result.get("provenance", {})
    items = [
        (k, model[k])
        for k in model
        if isinstance(model[k], (str, int, float)) and model[k] != "" and k not in ("dataset_fingerprint", "folder")
    ]  # "folder": where the files were on the machine that evaluated it, a local path
    items += [("benchmark dataset", bench.get("dataset")), ("dataset fingerprint", bench.get("dataset_fingerprint"))]
    for key in ("package_version", "git_commit", "created"):
        if prov.get(key):
            items.append((key.replace("_", " "), prov[key]))
    libs = prov.get("libraries")
    if isinstance(libs, dict):
        items.append(("libraries", ", ".join(f"{k} {v}" for k, v in libs.items() if v)))
    items.append(("result file", f"results/{file_name}"))
    dl = "".join(f"<dt>{E(str(k))}</dt><dd>{E(str(v))}</dd>" for k, v in items)
    return f'<dl class="meta">{dl}</dl><p><a href="../results/{E(file_name)}" download>Download the result file</a></p>'


def _scores_table(conds: dict) -> str:
    head = "<tr><th class='text'>Condition</th><th class='text'>Selection</th><th>Units</th><th>Trials</th><th>Accuracy</th><th>Ceiling</th><th>p vs ceiling</th><th>SRCS</th><th>SRCS ceiling</th><th>p vs ceiling</th></tr>"
    body = []
    for cond, e in conds.items():
        a, s = e["accuracy_noise_ceiling"], e["srcs_noise_ceiling"]
        body.append(
            f"<tr><td class='text'>{E(cond)}</td><td class='text'>{E(str(e.get('selection', '')))}</td>"
            f"<td>{e.get('n_units', '')}</td><td>{e.get('n_trials', '')}</td><td>{num(e['accuracy'])}</td>"
            f"<td>{num(a['lower'])}&ndash;{num(a['upper'])}</td>{p_td(e['p_vs_lower_ceiling']['accuracy'])}"
            f"<td>{num(e['srcs'])}</td><td>{num(s['lower'])}&ndash;{num(s['upper'])}</td>"
            f"{p_td(e['p_vs_lower_ceiling']['srcs'])}</tr>"
        )
    return f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"


def _head_to_head_table(cond: str, e: dict) -> str:
    """The model against every reference model on the same trials (where the two disagree)."""
    matches = e.get("head_to_head") or {}
    if not matches:
        return ""
    rows = []
    for ref, h in matches.items():
        pairs = f"{h['n_pairs']} of {h['n_pairs_selected']}"
        if h["share"] is None:
            verdict = "no disagreement: not separable on this data"
            rows.append(f"<tr><td class='text'>{E(ref)}</td><td class='text'>{E(h['selection'])}</td><td>{pairs}</td>"
                        f"<td></td><td></td><td class='text'>{verdict}</td></tr>")
            continue
        rows.append(f"<tr><td class='text'>{E(ref)}</td><td class='text'>{E(h['selection'])}</td><td>{pairs}</td>"
                    f"<td>{num(h['share'])}</td>{p_td(h['p_bh'])}<td class='text'>{E(str(h['better']))}</td></tr>")
    return (
        f"<h3>{E(cond)}: head-to-head with the reference models</h3><p class='note'>On the same trials, those "
        "where the two models prefer different sentences: the share of participants' choices that went to this "
        "model's sentence (mean over units; 0.5 = no difference), BH-adjusted two-sided Wilcoxon vs 0.5.</p>"
        "<table><thead><tr><th class='text'>Reference</th><th class='text'>Trials</th><th>Pairs disagreeing</th>"
        "<th>Share</th><th>q</th><th class='text'>Better</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _comparisons_table(cond: str, e: dict) -> str:
    comps = e.get("comparisons") or {}
    if not comps:
        return ""
    rows = []
    for ref, c in comps.items():
        rows.append(
            f"<tr><td class='text'>{E(ref)}</td><td class='text'>{E(str(c.get('selection', '')))}</td>"
            f"<td>{num(c.get('accuracy'))}</td><td>{c.get('accuracy_delta', 0):+.3f}</td>{p_td(c.get('accuracy_p_bh'))}"
            f"<td>{num(c.get('srcs'))}</td><td>{c.get('srcs_delta', 0):+.3f}</td>{p_td(c.get('srcs_p_bh'))}</tr>"
        )
    return (
        f"<h3>{E(cond)}: per-unit scores vs reference models (like for like)</h3><table><thead><tr><th class='text'>Reference</th><th class='text'>Selection</th>"
        "<th>Accuracy</th><th>&Delta; acc.</th><th>q</th><th>SRCS</th><th>&Delta; SRCS</th><th>q</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def model_page(result: dict, file_name: str, plots: list[str], verification: str | None = None,
               verified: bool = True, more: list[tuple[dict, str, list[str], str | None, bool]] = ()) -> str:
    """A model's page: ``result`` (from ``file_name``, with its ``plots``) and the model's other
    result files ``more`` (other benchmarks: each round has its own file), each with its
    ``verification`` (when given, shown above it, as a warning when the file is unverified)."""
    name = display_name(result)
    parts = [f"<h2>{E(name)}</h2>"]
    for r, f, pl, note, ok in [(result, file_name, plots, verification, verified), *more]:
        parts += _result_sections(r, f, pl, note, ok)
    return _page(f"{name}: {TITLE}", "\n".join(parts), root="../")


def _result_sections(result: dict, file_name: str, plots: list[str], verification: str | None = None,
                     verified: bool = True) -> list[str]:
    parts = []
    if verification is not None:
        cls = "verified" if verified else "unverified"
        parts.append(f'<p class="status {cls}">{E(verification[:1].upper() + verification[1:])}</p>')
    parts.append(_meta(result, file_name))
    for exp, conds in result["experiments"].items():
        parts.append(f"<h2>{E(_experiment_label(exp))}</h2>")
        parts.append(_scores_table(conds))
        parts += [_head_to_head_table(cond, e) + _comparisons_table(cond, e) for cond, e in conds.items()]
    if plots:
        parts.append('<h2>Plots</h2><div class="plots">')
        parts += [f'<img src="{E(p)}" alt="{E(Path(p).stem)}">' for p in plots if p.endswith(".png")]
        others = [p for p in plots if not p.endswith(".png")]
        if others:
            parts.append("<p>" + " ".join(f'<a href="{E(p)}">{E(Path(p).name)}</a>' for p in others) + "</p>")
        parts.append("</div>")
    return parts


# --------------------------------------------------------------------------- plots


def plot_function() -> Callable:
    """The figures of a model page: :func:`contstim_bench.plotting.plot_result`.
    ``build_site(plot=...)`` takes another function with its signature
    (``plot(result_path, out_dir, *, datasets_dir, formats) -> [paths]``)."""
    from ..plotting import plot_result

    return plot_result


def _make_plots(result_path: Path, out_dir: Path, plot, datasets_dir=None) -> list[str]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = plot(str(result_path), str(out_dir), datasets_dir=datasets_dir, formats=PLOT_FORMATS)
    rel = []
    for p in paths or []:
        p = Path(p)
        if not p.is_file():
            raise RuntimeError(f"plotting {result_path} reported {p}, which does not exist")
        if out_dir.resolve() not in p.resolve().parents:
            target = out_dir / p.name
            shutil.copyfile(p, target)
            p = target
        rel.append(f"{out_dir.name}/{p.resolve().relative_to(out_dir.resolve()).as_posix()}")
    if not any(r.endswith(".png") for r in rel):
        raise RuntimeError(f"plotting {result_path} produced no PNG file in {out_dir}")
    return sorted(rel)


# --------------------------------------------------------------------------- build


def build_site(
    results_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    validate: bool = True,
    datasets_dir=None,
    plot: Callable | None = None,
    log=None,
    rescore: bool = True,
    tolerance: float = RESCORE_TOLERANCE,
    options=None,
    models_folder=None,
) -> Path:
    """Render the site of ``results_dir`` into ``out_dir``; returns ``out_dir``.

    Entries come from :func:`.policy.load_entries`: validated and, with ``rescore`` (the
    default), re-scored from their model specs; a refused file is named through ``log`` with its
    problems and left out (ValidationError when no file is valid); unverified entries get their
    own tables.  ``out_dir`` is written beside and renamed into place
    (:func:`contstim_bench.staging.replace_folder`): an existing folder there is replaced only if it
    is a site this function wrote and holds nothing else; anything else raises ValueError before
    any work (a typo, a GitHub Pages ``docs/`` with an ``index.html``, never loses a file).
    """
    from ..staging import check_replaceable, replace_folder

    log = log or (lambda msg: print(msg, file=sys.stderr))
    final = Path(out_dir)
    check_replaceable(final, kind=SITE_KIND)
    entries = load_entries(results_dir, validate=validate, datasets_dir=datasets_dir, rescore=rescore,
                           tolerance=tolerance, options=options, log=log, models_folder=models_folder)
    with replace_folder(final, kind=SITE_KIND) as out:
        _write_site(out, entries, datasets_dir, plot, log)
    log(f"leaderboard: {len(entries)} result files -> {final / 'index.html'}")
    return final


def _write_site(out: Path, entries, datasets_dir, plot, log) -> None:
    loaded = [(Path(c.source), c.result) for c in entries]
    status = {c.source: c for c in entries}
    results = [r for _, r in loaded]
    (out / "models").mkdir(parents=True)
    (out / "export").mkdir()
    (out / "results").mkdir()
    for name in ("style.css", "app.js"):
        shutil.copyfile(STATIC / name, out / name)

    rows = grouped_rows(entries)
    matrices = grouped_matrices(entries)

    pages: dict[str, str] = {}  # model identity -> page name
    files: dict[str, list[tuple[Path, dict]]] = {}  # one model, one page: all its result files
    used: set[str] = set()
    for path, r in loaded:
        key = identity(r)
        files.setdefault(key, []).append((path, r))
        if key in pages:
            continue
        s = slug(display_name(r))
        if s in used:
            s = f"{s}-{key[:8]}"
        used.add(s)
        pages[key] = s

    plot = plot or plot_function()
    for key, model_files in files.items():
        page = pages[key]
        sections = []
        for path, r in model_files:
            shutil.copyfile(path, out / "results" / path.name)
            log(f"leaderboard: plots for {display_name(r)} ({path.name}) ...")
            folder = page if len(model_files) == 1 else f"{page}/{slug(path.stem)}"
            plots = [f"{page}/{p}" if len(model_files) > 1 else p
                     for p in _make_plots(path, out / "models" / folder, plot, datasets_dir)]
            c = status[str(path)]
            sections.append((r, path.name, plots, c.verification, c.verified))
        (out / "models" / f"{page}.html").write_text(model_page(*sections[0], more=sections[1:]), encoding="utf-8")

    data = {
        "generated_by": f"contstim-bench {__version__}",
        "columns": list(COLUMNS),
        "column_descriptions": COLUMNS,
        "rows": [{k: row.get(k) for k in COLUMNS} for row in rows],
        "matrices": matrices,
        "models": {f"{display_name(r)}@{identity(r)[:12]}": f"models/{pages[identity(r)]}.html" for r in results},
    }
    text = json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)
    (out / "data.js").write_text(f"window.CONTSTIM_LEADERBOARD = {text};\n", encoding="utf-8")
    (out / "export" / "leaderboard.json").write_text(text + "\n", encoding="utf-8")
    (out / "export" / "leaderboard.csv").write_text(rows_to_csv(rows), encoding="utf-8")
    (out / "index.html").write_text(index_page(results, rows, pages), encoding="utf-8")
    (out / "matrix.html").write_text(matrix_page(matrices), encoding="utf-8")
    n_verified = sum(c.verified for c in entries)
    log(f"leaderboard: {len(results)} models ({n_verified} verified, {len(results) - n_verified} unverified), "
        f"{len(panels(results))} panels")
