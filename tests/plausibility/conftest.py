"""Fixtures of the plausibility tests: the real ``plausibility`` configs and their Experiment 1 pairs."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def tables():
    """The real ``plausibility`` configs (built into the session's temporary dataset folder)."""
    from contstim_bench.data.load import load_config

    return {c: load_config("plausibility", c, split="test").to_pandas()
            for c in ("eventsadapt", "dtfit", "socialn400", "socialn400_judgments")}


@pytest.fixture(scope="module")
def pairs(tables):
    """The Experiment 1 pairs of EventsAdapt and DTFit (metrics.experiment1_pairs)."""
    from contstim_bench.plausibility import metrics

    return metrics.experiment1_pairs(tables["eventsadapt"], tables["dtfit"])
