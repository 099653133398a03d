"""Fixtures of the metric tests: the package's HF ``evaluate`` metric, loaded from its path."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def metric(tmp_path_factory):
    """``evaluate.load(contstim_bench.metric_path())`` with an evaluate cache of the module's own."""
    import evaluate

    import contstim_bench

    return evaluate.load(contstim_bench.metric_path(), cache_dir=str(tmp_path_factory.mktemp("evaluate")))
