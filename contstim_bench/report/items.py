"""Report items and the one registry of how each kind is shown.

A report (``contstim report``, a page per result or the paper's index) is a list of *items*, each
a plain dict::

    {"id": "pll_T2", "kind": "failures", "title": "Table 2: ...", "caption": "...", "data": {...}}

``data`` holds the numbers the item shows (computed below the report layer: the benchmarks
assemble items, the report layer only draws and formats them).  Each ``kind`` is registered once,
as either

- a **figure**: ``fn(item) -> matplotlib.figure.Figure`` (draw ``item["data"]``; give every mark a
  key with :func:`contstim_bench.report.figures.add_key` or a colour bar), or
- a **table**: ``fn(item) -> list[dict]``, one dict per row, column name -> value (numbers stay
  numbers: the page formats them); an optional ``"_bold": {column: True}`` marks cells to set in
  bold.  The first row's keys, in order, are the columns.

Adding a kind is one decorator on the function that shows it, in any module of the report layer
that :data:`BUILTIN_MODULES` lists (or imported before the page is written)::

    from contstim_bench.report.items import table_kind

    @table_kind("token_count")
    def token_count_rows(item: dict) -> list[dict]:
        return [{"model": m, "n": r["n"], "p (binomial)": r["p"], "q (BH)": r["q"]}
                for m, r in item["data"]["models"].items()]

then any benchmark can hand an item of that kind to the pages (``{"id": "TS2", "kind":
"token_count", "title": ..., "caption": ..., "data": {...}}``); the page shows its title, caption,
the figure (embedded PNG) or the table, and nothing else needs to change.  The numbers of an item
are computed in the benchmarks layer: add them to a result's page with
``items_for`` of ``benchmarks/model_report.py`` (one registration too), or in the
``model_report_*`` module of the benchmark.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

BUILTIN_MODULES = ("contstim_bench.report.paper", "contstim_bench.report.result_figures",
                   "contstim_bench.report.kauf_figures", "contstim_bench.report.golan_items",
                   "contstim_bench.report.kauf_ivanova", "contstim_bench.report.plausibility_figures")
"""Report-layer modules whose kinds are registered on first lookup."""

ITEM_FIELDS = ("id", "kind", "title", "caption", "data")


@dataclass(frozen=True)
class ItemKind:
    """How a kind of item is shown: ``shape`` ``"figure"`` or ``"table"``, and its function."""

    name: str
    shape: str
    show: Callable[[dict], object]
    digits: int = 3  # decimals of a table's floats


_KINDS: dict[str, ItemKind] = {}


def _register(name: str, shape: str, digits: int = 3):
    def wrap(fn):
        known = _KINDS.get(name)
        if known is not None and known.show is not fn:
            raise ValueError(f"report item kind {name!r} is already registered (by {known.show.__module__}."
                             f"{known.show.__qualname__})")
        _KINDS[name] = ItemKind(name, shape, fn, digits)
        return fn

    return wrap


def figure_kind(name: str):
    """Register ``fn(item) -> Figure`` as the way items of kind ``name`` are shown."""
    return _register(name, "figure")


def table_kind(name: str, digits: int = 3):
    """Register ``fn(item) -> list[dict]`` (table rows) as the way items of kind ``name`` are shown;
    ``digits``: decimals of its floats."""
    return _register(name, "table", digits)


def kinds() -> dict[str, ItemKind]:
    """Every registered kind (the built-in modules imported first)."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    return dict(_KINDS)


def kind_of(item: dict) -> ItemKind:
    """The registered kind of ``item``; ValueError names a malformed item or an unknown kind."""
    missing = [f for f in ITEM_FIELDS if f not in item]
    if missing:
        raise ValueError(f"report item {item.get('id', '?')!r} lacks {', '.join(missing)} "
                         f"(an item has {', '.join(ITEM_FIELDS)})")
    known = kinds()
    if item["kind"] not in known:
        raise ValueError(f"report item {item['id']!r} has kind {item['kind']!r}, which nothing shows; known kinds: "
                         f"{', '.join(sorted(known))} (register one with report.items.figure_kind/table_kind)")
    return known[item["kind"]]


def table_columns(rows: list[dict]) -> list[str]:
    """The columns of table rows: the first row's keys, without the ``_``-prefixed extras."""
    return [c for c in rows[0] if not c.startswith("_")] if rows else []


@table_kind("rows")
def rows_table(item: dict) -> list[dict]:
    """The generic table: ``data["rows"]`` as they are (the benchmark formed them)."""
    return item["data"]["rows"]
