"""What every figure of the report layer shares: matplotlib without a screen, and saving."""
from __future__ import annotations

import os
from collections.abc import Sequence
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
