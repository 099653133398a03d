"""Report layer: terminal summaries, tables and figures of results (it reads results and
computes no score).

- :func:`summary` -- the terminal summary of any result, chosen by its format;
- :mod:`.contstim`, :mod:`.blimp`, :mod:`.plausibility`, :mod:`.kauf_ivanova` -- one summary
  module per benchmark (the last also draws the Kauf & Ivanova 2023 figures);
- :mod:`.plots` -- the figures of a contstim result (Golan et al. 2023 style);
- :mod:`.items` -- the registry of report item kinds (a figure or a table function each);
- :mod:`.pages` -- a self-contained HTML page per result and an index (``contstim report RESULT``);
- :mod:`.paper` -- the paper's figures for its reference models (``contstim report --experiment``).
"""
from __future__ import annotations


def summary(result: dict) -> str:
    """The terminal summary table of a result of any benchmark (by its ``format``)."""
    from . import blimp, contstim, kauf_ivanova, plausibility

    by_format = {
        "contstim-bench-result": contstim.summary_table,
        "contstim-bench-blimp": blimp.summary_table,
        "contstim-bench-plausibility": plausibility.summary_table,
        "contstim-bench-pll-properties": kauf_ivanova.summary_table,
    }
    fmt = result.get("format")
    if fmt not in by_format:
        raise ValueError(f"no summary for result format {fmt!r}; known: {', '.join(by_format)}")
    return by_format[fmt](result)
