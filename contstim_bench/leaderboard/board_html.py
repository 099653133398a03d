"""The leaderboard's ranking tables as HTML, shared by the static site (:mod:`.site`) and the
Gradio app (:mod:`.app`): the same rows (:func:`.table.ranking_rows`), the same columns, one
table per comparison group of a panel (models are ranked only like for like:
:func:`contstim_bench.analysis.ranking.rank_models`), with the reason a model is not ranked.
Every string from a result is HTML-escaped."""
from __future__ import annotations

import html
import math
import re

from .. import names
from ..analysis.inference import p_text
from .policy import UNVERIFIED_NOTE, UNVERIFIED_TITLE, VERIFIED_TITLE

SLUG_LENGTH = 80  # longest page name of a model


def slug(name: str) -> str:
    """The page name of a model name (``hf-causal:gpt2`` -> ``hf-causal_gpt2``):
    :func:`contstim_bench.names.slug` cut to :data:`SLUG_LENGTH` characters."""
    return names.slug(name, max_length=SLUG_LENGTH)


E = html.escape


def num(v, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:.{digits}f}"


def td(value, text: str | None = None, cls: str = "") -> str:
    data = "" if value is None or (isinstance(value, float) and math.isnan(value)) else value
    klass = f' class="{cls}"' if cls else ""
    shown = E(str(data)) if text is None else text
    return f'<td{klass} data-value="{E(str(data))}">{shown}</td>'


def se_html(stderr) -> str:
    """`` ±0.017``: a standard error across units after its mean (nothing when there is none)."""
    if stderr is None or (isinstance(stderr, float) and math.isnan(stderr)):
        return ""
    return f' <span class="se" title="standard error across units">&plusmn;{num(stderr)}</span>'


def p_td(p, alpha: float = 0.05) -> str:
    if p is None:
        return td(None, "&mdash;")
    return td(p, f'<span class="sig">{p_text(p)}*</span>' if p < alpha else p_text(p))



TABLE_HEAD = [
    # key, header, classes (text: left-aligned; a fold group: hidden when the group is folded)
    ("rank", "Rank", ""),
    ("model", "Model", "text"),
    ("selection", "Selection", "text fold-about"),
    ("n_units", "Units", "fold-about"),
    ("accuracy", "Accuracy", ""),
    ("accuracy_ceiling", "Ceiling (lower&ndash;upper)", "fold-acc"),
    ("accuracy_normalised", "Normalised", "fold-acc"),
    ("p_accuracy_vs_ceiling", "p vs ceiling", "fold-acc"),
    ("p_accuracy_vs_leader", "p vs leader", "fold-acc"),
    ("srcs", "SRCS", ""),
    ("srcs_ceiling", "Ceiling (lower&ndash;upper)", "fold-srcs"),
    ("p_srcs_vs_ceiling", "p vs ceiling", "fold-srcs"),
    ("p_srcs_vs_leader", "p vs leader", "fold-srcs"),
]
"""The ranking table's columns, in order."""

GROUPS = [
    # group header, fold class (None: never folds), number of columns
    ("", None, 2),
    ("About the run", "fold-about", 2),
    ("Accuracy", "fold-acc", 5),
    ("SRCS", "fold-srcs", 4),
]
"""The header row above the columns: groups whose detail columns fold (``app.js`` folds them,
SRCS first, while the table is wider than the page; a button unfolds a group)."""
FOLD_ORDER = ("fold-srcs", "fold-acc", "fold-about")


def panel_id(exp: str, cond: str) -> str:
    return f"panel-{slug(exp)}-{slug(cond)}"


def _group_row() -> str:
    """The header row of the column groups (``data-span``/``data-folded-span``: columns shown
    unfolded/folded; ``app.js`` sets ``colspan`` and hides a group left without columns)."""
    cells = []
    for label, fold, n in GROUPS:
        if fold is None:
            cells.append(f'<th colspan="{n}" class="group"></th>')
            continue
        detail = sum(1 for _, _, cls in TABLE_HEAD if fold in cls.split())
        cells.append(f'<th colspan="{n}" class="group" data-group="{fold}" data-span="{n}" '
                     f'data-folded-span="{n - detail}" scope="colgroup">{E(label)}</th>')
    return '<tr class="groups">' + "".join(cells) + "</tr>"


FOLD_LABELS = {"fold-acc": "accuracy details", "fold-srcs": "SRCS details", "fold-about": "selection and units"}


def _fold_buttons() -> str:
    """Buttons that show or hide each column group's detail columns (``app.js``)."""
    buttons = "".join(
        f'<button type="button" class="fold" data-fold="{fold}" aria-pressed="true">{E(FOLD_LABELS[fold])}</button>'
        for fold in reversed(FOLD_ORDER)
    )
    return f'<div class="folds">Columns: {buttons}</div>'


def breakable(name: str) -> str:
    """A model name as HTML that may wrap after ``_``, ``-``, ``.`` and ``/`` (``<wbr>``)."""
    return re.sub(r"([_./-])", r"\1<wbr>", E(name))


def _rank_text(row: dict) -> str:
    """The rank as every door shows it (``N``, ``=N``, or a dash when not ranked)."""
    return "&ndash;" if row.get("rank") is None else E(row["rank_text"])


def _ranking_table(rows: list[dict], pages: dict[str, str], kind: str = "verified") -> str:
    head = "".join(
        f'<th class="sortable {cls}" data-key="{key}" scope="col">{label}</th>' for key, label, cls in TABLE_HEAD
    )
    klass = {key: cls for key, _, cls in TABLE_HEAD}

    def cell(key: str, html_td: str) -> str:
        extra = " ".join(c for c in klass[key].split() if c.startswith("fold-"))
        if not extra:
            return html_td
        if html_td.startswith("<td class=\""):
            return html_td.replace('<td class="', f'<td class="{extra} ', 1)
        return html_td.replace("<td", f'<td class="{extra}"', 1)

    body = []
    for r in rows:
        page = pages.get(r["identity"]) if pages else None
        tied = ' title="tied: equal accuracy at the shown precision"' if r.get("tied") else ""
        why = f'<span class="not-ranked">not ranked: {E(r["not_ranked"])}</span>' if r.get("not_ranked") else ""
        rank_value = r["rank"] if r.get("rank") is not None else 10**6
        cells = [
            cell("rank", f'<td data-value="{rank_value}"{tied}>{_rank_text(r)}</td>'),
            cell("model", td(r["model"], (f'<a href="models/{E(page)}.html" title="{E(r["spec"])}">{breakable(r["model"])}</a>'
                                           if page else f'<span title="{E(r["spec"])}">{breakable(r["model"])}</span>')
                                          + why, "text model")),
            cell("selection", td(r["selection"], cls="text")),
            cell("n_units", td(r["n_units"])),
            cell("accuracy", td(r["accuracy"], num(r["accuracy"]) + se_html(r.get("accuracy_stderr")))),
            cell("accuracy_ceiling", td(r["accuracy_ceiling_lower"],
                                         f'{num(r["accuracy_ceiling_lower"])}&ndash;{num(r["accuracy_ceiling_upper"])}')),
            cell("accuracy_normalised", td(r["accuracy_normalised"], num(r["accuracy_normalised"]))),
            cell("p_accuracy_vs_ceiling", p_td(r["p_accuracy_vs_ceiling"])),
            cell("p_accuracy_vs_leader", p_td(r["p_accuracy_vs_leader"])),
            cell("srcs", td(r["srcs"], num(r["srcs"]) + se_html(r.get("srcs_stderr")))),
            cell("srcs_ceiling", td(r["srcs_ceiling_lower"],
                                     f'{num(r["srcs_ceiling_lower"])}&ndash;{num(r["srcs_ceiling_upper"])}')),
            cell("p_srcs_vs_ceiling", p_td(r["p_srcs_vs_ceiling"])),
            cell("p_srcs_vs_leader", p_td(r["p_srcs_vs_leader"])),
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="fold-scope">{_fold_buttons()}<div class="table-wrap"><table class="sortable-table ranking {kind}">'
        f'<thead>{_group_row()}<tr class="columns">{head}</tr></thead>\n<tbody>\n' + "\n".join(body)
        + "\n</tbody></table></div></div>"
    )


def group_tables(rows: list[dict], pages: dict[str, str], kind: str = "verified") -> str:
    """One ranking table per comparison group of a panel's rows (models are ranked only like for
    like: :func:`contstim_bench.analysis.ranking.rank_models`), each with its leaders."""
    groups = list(dict.fromkeys(r["comparison"] for r in rows))
    parts = []
    for group in groups:
        sub = [r for r in rows if r["comparison"] == group]
        head = f'<h4 class="comparison">Ranked among the models evaluated on {E(group)}</h4>' if len(groups) > 1 else ""
        parts.append(f'{head}<p class="note">{_leaders_note(sub)} {len(sub)} model{"s" if len(sub) != 1 else ""}.</p>\n' + _ranking_table(sub, pages, kind))
    return "\n".join(parts)


def _leaders_note(panel_rows: list[dict]) -> str:
    """Who leads by accuracy: every model of rank 1 (tied ones named together, by name), and the
    SRCS leader (the reference of the p vs leader tests); why no model is ranked otherwise."""
    first = [r for r in panel_rows if r["rank"] == 1]
    if not first:
        return f"Not ranked: {E(panel_rows[0]['not_ranked'] or '')}."
    acc = num(first[0]["accuracy"])
    if len(first) > 1:
        names = ", ".join(f"<b>{E(r['model'])}</b>" for r in first)
        lead = f"Tied first by accuracy ({acc}): {names} (p vs leader: against {E(first[0]['accuracy_leader'])})."
    else:
        lead = f"Leader by accuracy: <b>{E(first[0]['model'])}</b> ({acc})."
    return f"{lead} Leader by SRCS: <b>{E(panel_rows[0]['srcs_leader'])}</b>."


def panel_tables(rows: list[dict], exp: str, cond: str, pages: dict[str, str] | None = None) -> str:
    """One panel's ranking as HTML: the verified models' tables (one per comparison group), then
    the unverified models' own labelled tables (rows carry ``verified``; rows without it count as
    verified).  ``pages``: model identity -> page name for links (None: no links)."""
    panel_rows = [r for r in rows if r["experiment"] == exp and r["condition"] == cond]
    verified = [r for r in panel_rows if r.get("verified", True)]
    unverified = [r for r in panel_rows if not r.get("verified", True)]
    parts = [f'<section class="panel" id="{panel_id(exp, cond)}"><h2>Experiment {E(exp)} &middot; {E(cond)}</h2>']
    if verified:
        parts.append(f'<h3 class="verified">{E(VERIFIED_TITLE)}</h3>' + group_tables(verified, pages))
    else:
        parts.append('<p class="note">No verified model in this panel.</p>')
    if unverified:
        parts.append(
            f'<h3 class="unverified">{E(UNVERIFIED_TITLE)}</h3>'
            f'<p class="note unverified">{E(UNVERIFIED_NOTE)}</p>\n' + group_tables(unverified, pages, "unverified")
        )
    return "\n".join(parts) + "</section>"
