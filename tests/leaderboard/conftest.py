"""Fixtures of the leaderboard tests: the shipped result files, and a datasets folder whose score
cache is the module's own for the modules that re-score submissions (what they score is then
theirs to count)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"
"""The reference results shipped with the leaderboard (leaderboard/results/)."""


@pytest.fixture(scope="module")
def rescoring_datasets(datasets, tmp_path_factory):
    """conftest's datasets folder, with a score cache of this module's own and no maintainer's
    models folder ($CONTSTIM_LEADERBOARD_MODELS unset)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTSTIM_SCORE_CACHE", str(tmp_path_factory.mktemp("cache") / "scores.sqlite"))
        mp.delenv("CONTSTIM_LEADERBOARD_MODELS", raising=False)
        yield datasets


@pytest.fixture(scope="module")
def bert() -> dict:
    """The shipped result of the paper's BERT (precomputed:bert)."""
    return json.loads((SHIPPED / "bert.json").read_text(encoding="utf-8"))
