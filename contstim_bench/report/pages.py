"""Self-contained HTML pages of results (``contstim report RESULT [RESULT...] --out DIR``).

:func:`write_pages` writes one page per model report
(:func:`contstim_bench.benchmarks.model_report.model_report`) and ``index.html`` across them.
A page holds every item of its report in order, under its section headings: the figure as an
embedded PNG (a ``data:`` URI), the table as HTML, or, for an item that does not apply to the
result, a "Not available" line with the reason.  Pages need no other file, no script, no server
and no network: open them from disk and share them as they are.  The index links every page and
compares the results briefly: one table per result format with the headline numbers each result
carries.  Nothing is computed here: figures and tables draw the items' numbers (how each kind is
shown: :mod:`.items`).
"""
from __future__ import annotations

import html
import os
from pathlib import Path

from ..names import slug
from .figures import png_bytes
from .items import kind_of
from .page_html import not_available, page, png_data_uri, table_html

FORMAT_TITLES = {"contstim-bench-result": "Controversial sentence pairs (Golan et al. 2023)",
                 "contstim-bench-plausibility": "Plausibility (Kauf et al. 2024)",
                 "contstim-bench-blimp": "BLiMP (Warstadt et al. 2020; Kauf & Ivanova 2023)"}


INDEX_NOTES = {
    "contstim-bench-result": "Per experiment, on all its trials: prediction accuracy and signed-rank cosine similarity "
                             "(SRCS), mean over units, and the lower bound of each one's noise ceiling.",
    "contstim-bench-plausibility": "Experiment 1: binary accuracy per dataset (both voices), the human accuracy on the "
                                   "same pairs beside; Experiment 2: the three context metrics on target-word "
                                   "log-probabilities. limit: the items per set a quick run used (empty: all).",
    "contstim-bench-blimp": "Forced-choice accuracy, mean of the paradigm accuracies; human: the validation of the same "
                            "paradigms. limit: the pairs per paradigm a quick run used (empty: all).",
}


def render_item(item: dict) -> str:
    """The HTML of one item: heading, caption and its figure, table or "not available" line."""
    head = f'<section id="{html.escape(item["id"])}"><h3>{html.escape(item["title"])}</h3>'
    if item.get("unavailable"):
        return head + not_available(item["unavailable"]) + "</section>"
    kind = kind_of(item)
    caption = f'<p class="caption">{html.escape(item["caption"])}</p>' if item["caption"] else ""
    if kind.shape == "table":
        rows = kind.show(item)
        body = table_html(rows, item["data"].get("digits", kind.digits)) if rows else not_available("the table is empty")
    else:
        uri = png_data_uri(png_bytes(kind.show(item)))
        body = f'<figure><img src="{uri}" alt="{html.escape(item["title"])}"></figure>'
    return head + caption + body + "</section>"


def _toc(items: list[dict]) -> str:
    """One line per section: its items' links (the unavailable ones marked)."""
    sections: dict[str, list[str]] = {}
    for item in items:
        cls = ' class="na"' if item.get("unavailable") else ""
        mark = " (not available)" if item.get("unavailable") else ""
        sections.setdefault(item["section"], []).append(
            f'<a href="#{html.escape(item["id"])}"{cls}>{html.escape(item["title"])}{mark}</a>')
    return "<nav>" + "".join(f"<p><b>{html.escape(s)}</b>: {' · '.join(links)}</p>"
                             for s, links in sections.items()) + "</nav>"


def result_page(report: dict, index: str = "index.html") -> str:
    """The page of one model report (see the module docstring)."""
    body = [f'<p><a href="{html.escape(index)}">All results</a></p>',
            f"<h1>{html.escape(report['title'])}</h1>",
            f"<p>{html.escape(FORMAT_TITLES.get(report['format'], report['format']))}. Model spec: "
            f"<code>{html.escape(report['spec'])}</code>"
            + (f"; result file: <code>{html.escape(report['source'])}</code>" if report.get("source") else "")
            + ". Log-probabilities are natural logs; every score is the result file's own (provenance at the end)."
            "</p>", _toc(report["items"])]
    section = None
    for item in report["items"]:
        if item["section"] != section:
            section = item["section"]
            body.append(f"<h2>{html.escape(section)}</h2>")
        body.append(render_item(item))
    return page(report["title"], "".join(body))


def _file_names(reports: list[dict]) -> list[str]:
    names, seen = [], set()
    for r in reports:
        stem = f"{slug(r['model'], 80)}.{slug(r['benchmark'], 40)}"
        name, k = f"{stem}.html", 2
        while name in seen or name == "index.html":
            name, k = f"{stem}-{k}.html", k + 1
        seen.add(name)
        names.append(name)
    return names


def index_page(reports: list[dict], files: list[str]) -> str:
    """The index: per result format, a table of the results' headline numbers, each linking its page."""
    body = ["<h1>contstim-bench report</h1>",
            f"<p>{len(reports)} result{'s' if len(reports) != 1 else ''}; each page holds the figures and tables "
            "that apply to its result, and its provenance.</p>"]
    for fmt in dict.fromkeys(r["format"] for r in reports):
        group = [(r, f) for r, f in zip(reports, files) if r["format"] == fmt]
        columns = list(dict.fromkeys(c for r, _ in group for c in r["headline"]))
        rows = [{"model": r["model"], "benchmark": r["benchmark"], **{c: r["headline"].get(c) for c in columns},
                 "_href": {"model": f}} for r, f in group]
        body.append(f"<h2>{html.escape(FORMAT_TITLES.get(fmt, fmt))}</h2><p class=\"caption\">"
                    f"{html.escape(INDEX_NOTES.get(fmt, ''))}</p>{table_html(rows, 3, 'index')}")
    return page("contstim-bench report", "".join(body))


PAGES_KIND = "report"
"""The marker kind of a folder of report pages (:func:`contstim_bench.staging.replace_folder`)."""


def write_pages(reports: list[dict], out_dir: str | os.PathLike, reads=()) -> list[Path]:
    """Write a page per report and ``index.html`` into ``out_dir``; returns the paths (index last).
    ValueError, before anything is written, when one of them is one of the inputs ``reads``
    (``(flag, path)`` pairs: :func:`~contstim_bench.staging.check_inputs_kept`)."""
    from ..staging import check_inputs_kept, replace_folder

    if not reports:
        raise ValueError("no result to report")
    final = Path(out_dir)
    files = _file_names(reports)
    check_inputs_kept([("--out", final)], reads)
    with replace_folder(final, kind=PAGES_KIND) as out:
        for report, name in zip(reports, files):
            (out / name).write_text(result_page(report), encoding="utf-8")
        (out / "index.html").write_text(index_page(reports, files), encoding="utf-8")
    return [final / name for name in files] + [final / "index.html"]
