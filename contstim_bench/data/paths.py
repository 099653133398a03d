"""Where built datasets live: ``$CONTSTIM_DATASETS`` or ``~/.cache/contstim_bench/datasets``.

The bottom of the data layer's import graph (no package imports), so that
``load -> builders -> writer`` runs one way and both :mod:`.load` and :mod:`.builders` can name
the default folder without importing each other.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV_DATASETS = "CONTSTIM_DATASETS"


def default_datasets_dir() -> Path:
    """``$CONTSTIM_DATASETS``, else ``~/.cache/contstim_bench/datasets``."""
    return Path(os.environ.get(ENV_DATASETS, Path.home() / ".cache" / "contstim_bench" / "datasets"))
