"""HTML pieces shared by the report's pages: number formatting, tables, embedded images, the page
frame.  Everything is escaped here; a page built from these needs no other file, no script and no
network (its images are ``data:`` URIs)."""
from __future__ import annotations

import base64
import html
import math

from .items import table_columns

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1500px;margin:2em auto;padding:0 1em;color:#222;"
    "line-height:1.4}img{max-width:100%;height:auto;border:1px solid #ddd}"
    "table{border-collapse:collapse;font-size:0.9em;margin:0.5em 0}"
    "td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}.files{font-size:0.85em}"
    "section{margin:2.2em 0;border-top:1px solid #eee}p.caption{color:#444;font-size:0.92em}"
    "p.na{color:#8a4b00;background:#fff6e5;padding:0.4em 0.7em;border-left:3px solid #e0a040}"
    "td.num,td.short{white-space:nowrap}.wide{overflow-x:auto;max-width:100%}"
    "nav{font-size:0.9em;background:#f7f7f7;padding:0.6em 1em}nav p{margin:0.3em 0}"
    "nav a{margin-right:0.3em}nav .na{color:#8a4b00}"
)


def fmt(value, digits: int = 3) -> str:
    """A cell's text: ``None`` empty, floats with ``digits`` decimals (``nan`` as ``n/a``; p-values
    under 0.001 in scientific notation are the caller's to pre-format), anything else as ``str``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.{digits}f}"
    return str(value)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def table_html(rows: list[dict], digits: int = 3, css_class: str = "") -> str:
    """An HTML table of ``rows`` (columns: :func:`contstim_bench.report.items.table_columns`;
    a row's ``_bold`` dict sets cells in bold, its ``_href`` dict links cells)."""
    columns = table_columns(rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows:
        cells = []
        for c in columns:
            plain = fmt(r.get(c), digits)
            text = html.escape(plain)
            href = r.get("_href", {}).get(c)
            if href:
                text = f'<a href="{html.escape(href)}">{text}</a>'
            if r.get("_bold", {}).get(c):
                text = f"<b>{text}</b>"
            cls = ' class="num"' if _is_number(r.get(c)) else ' class="short"' if 0 < len(plain) <= 24 else ""
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cls = f' class="{css_class}"' if css_class else ""
    return f'<div class="wide"><table{cls}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def table_markdown(rows: list[dict], digits: int = 3) -> str:
    """The same table as Markdown (bold cells as ``**x**``)."""
    columns = table_columns(rows)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        cells = [f"**{fmt(r.get(c), digits)}**" if r.get("_bold", {}).get(c) else fmt(r.get(c), digits).replace("|", "\\|")
                 for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def png_data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` of PNG bytes."""
    if not png.startswith(b"\x89PNG"):
        raise ValueError("not PNG bytes")
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def not_available(why: str) -> str:
    """The line a page shows where an item does not apply to the result."""
    return f'<p class="na"><b>Not available:</b> {html.escape(why)}</p>'


def page(title: str, body: str, head: str | None = None) -> str:
    """A complete HTML document, the one page frame of every page the package writes (the report
    pages, the paper's report index, the leaderboard site): UTF-8, the viewport, the escaped
    ``title``, then ``head`` (default: the inline :data:`STYLE`, so the page needs no script and
    no external resource) and ``body`` (HTML)."""
    head = f"<style>{STYLE}</style>" if head is None else head
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n{head}\n</head>\n<body>\n{body}\n</body>\n</html>\n")
