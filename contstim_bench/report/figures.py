"""What every figure of the report layer shares: matplotlib without a screen, saving, and the key
(legend) that explains each mark a figure draws (:class:`Mark`, :func:`add_key`)."""
from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FORMATS = ("png", "svg")


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, out_dir: str | os.PathLike, stem: str, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write ``fig`` as ``<stem>.<fmt>`` for each format (SVG text stays text, no timestamp, so
    the same figure gives the same bytes), then close it."""
    import matplotlib

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    try:
        for fmt in formats:
            path = out / f"{stem}.{fmt}"
            with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "contstim"}):
                fig.savefig(path, dpi=150 if fmt == "png" else None, bbox_inches="tight",
                            metadata={"Date": None} if fmt == "svg" else None)
            paths.append(path)
    finally:
        pyplot().close(fig)
    return paths


def png_bytes(fig, dpi: int = 110) -> bytes:
    """``fig`` as PNG bytes (tight bounding box, no timestamp), then closed: what a self-contained
    HTML page embeds as a ``data:`` URI."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    finally:
        pyplot().close(fig)
    return buf.getvalue()


@dataclass(frozen=True)
class Mark:
    """One entry of a figure's key: how the mark looks and what it means.

    ``kind``: ``"patch"`` (a filled area: bar, band, cell; ``color`` fill, ``edge`` outline),
    ``"line"`` (``color``, ``linestyle``), ``"marker"`` (a point: ``marker``, ``color`` fill,
    ``edge`` outline) or ``"symbol"`` (a text mark such as ``*`` or ``=``, given as ``marker``).
    """

    label: str
    kind: str
    color: str = "black"
    edge: str | None = None
    marker: str | None = None
    linestyle: str = "-"
    linewidth: float = 1.0


def _handle(mark: Mark):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if mark.kind == "patch":
        return Patch(facecolor=mark.color, edgecolor=mark.edge or "none", linewidth=mark.linewidth)
    if mark.kind == "line":
        return Line2D([], [], color=mark.color, linestyle=mark.linestyle, linewidth=mark.linewidth)
    if mark.kind == "marker":
        return Line2D([], [], linestyle="", marker=mark.marker or "o", markerfacecolor=mark.color,
                      markeredgecolor=mark.edge or mark.color, markersize=6)
    if mark.kind == "symbol":
        symbol = (mark.marker or "*").replace("$", r"\$")
        return Line2D([], [], linestyle="", marker=f"${symbol}$", color=mark.color, markersize=7)
    raise ValueError(f"unknown key mark kind {mark.kind!r}; known: patch, line, marker, symbol")


def add_key(fig, marks: Sequence[Mark], note: str | None = None, ncol: int = 2, fontsize: float = 7.5):
    """Put the key of ``marks`` under the figure's axes (a figure legend) and ``note`` (the test
    and correction behind the marks, in words) under the key.  Call after ``tight_layout``: the
    key is placed below the lowest axes drawn, so nothing overlaps; ``bbox_inches="tight"``
    keeps it in the saved image.  Returns the legend."""
    renderer = fig.canvas.get_renderer()
    height = fig.bbox.height
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes if ax.get_visible()]
    bottom = min((b.y0 for b in boxes if b is not None), default=0.0) / height
    legend = fig.legend([_handle(m) for m in marks], [m.label for m in marks], loc="upper center",
                        bbox_to_anchor=(0.5, bottom - 0.01), ncol=max(1, min(ncol, len(marks))),
                        fontsize=fontsize, frameon=False, handlelength=1.6, columnspacing=1.4)
    if note:
        below = legend.get_window_extent(renderer).y0 / height
        fig.text(0.5, below - 0.005, note, ha="center", va="top", fontsize=fontsize - 0.5, color="0.25")
    return legend


def key_labels(fig) -> list[str]:
    """Every label of ``fig``'s keys: figure legends, axes legends and colour-bar labels (what a
    reader can look a mark up in)."""
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            labels += [t.get_text() for t in legend.get_texts()]
        if ax.get_label() == "<colorbar>":
            labels.append(ax.get_ylabel() or ax.get_xlabel())
    return labels
