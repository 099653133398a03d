"""Fixtures of the experiment tests (export, serve, ingest): the real pll trials and a small
real design exported once per module (tests/small_study.py)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest


@pytest.fixture(scope="module")
def pll() -> pd.DataFrame:
    """The pll experiment's trials (the real ratings), as the dataset builder reads them."""
    from contstim_bench.data.build_contstim import load_trials

    return load_trials("pll")


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    """The small real design (small_study.small_design) exported for ``contstim experiment serve``."""
    from contstim_bench.experiment.export import export_experiment
    from small_study import small_design

    return export_experiment(small_design(), tmp_path_factory.mktemp("export") / "exp")
