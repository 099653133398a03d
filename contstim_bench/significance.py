"""How significance is decided and shown, once for the whole package: :data:`ALPHA`, :func:`p_text`
and :func:`stars`.

A bottom-layer module (it imports nothing from the package), so that the analysis, the
plausibility statistics (a layer below the analysis), the results' validator and the reports all
call the same rule and the same formatter.
"""
from __future__ import annotations

from collections.abc import Sequence

ALPHA = 0.05
"""False-discovery rate (or level) at which a comparison is called significant (q < .05)."""

STARS: tuple[tuple[float, str], ...] = ((0.001, "***"), (0.01, "**"), (ALPHA, "*"))
"""The marks of a p-value or q, smallest threshold first: ``***`` < .001, ``**`` < .01, ``*`` <
:data:`ALPHA` (also the marks of Kauf et al.'s notebooks, ``assign_significance_labels``)."""


def _missing(p) -> bool:
    return p is None or (isinstance(p, float) and p != p)


def p_text(p: float | None) -> str:
    """A p-value or BH q as every table, page and terminal summary prints it: ``4.0e-04`` below
    .001, else three decimals (``0.012``); empty for None or NaN (no test).  The one p formatter."""
    if _missing(p):
        return ""
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def stars(p: float | None, not_significant: str = "",
          levels: Sequence[tuple[float, str]] = STARS) -> str:
    """The significance mark of a p-value or BH q: the mark of the first threshold of ``levels``
    (smallest first; default :data:`STARS`) that ``p`` is below, else ``not_significant`` (Kauf &
    Ivanova's figures: ``n.s.``); empty for None or NaN (no test).  The one star formatter."""
    if _missing(p):
        return ""
    for threshold, mark in levels:
        if p < threshold:
            return mark
    return not_significant
