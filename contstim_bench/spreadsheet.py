"""Text cells of the CSV files the package writes, made safe to open in a spreadsheet.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a
formula by Excel, LibreOffice and Google Sheets (CSV injection: ``=HYPERLINK(...)``,
``=cmd|...``).  :func:`safe_cell` prefixes such a *text* cell with a single quote (the OWASP
recommendation), which spreadsheets show as text; numbers are written unchanged, so a negative
log-probability stays a number.  A bottom-layer module: it imports nothing from the package.
"""
from __future__ import annotations

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """``value`` with a ``'`` in front when it is a str starting with a formula prefix; any other
    value (numbers, None, other text) unchanged.  ``safe_cell("=1+1") == "'=1+1"``."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value
