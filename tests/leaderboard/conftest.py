"""Fixtures of the leaderboard tests: the shipped result files, and a datasets folder whose score
cache is the module's own for the modules that re-score submissions (what they score is then
theirs to count)."""
from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
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
def rescoring_datasets_with_smollm2(rescoring_datasets, pll_logprobs, run_score_cache):
    """:func:`rescoring_datasets`, its module's score cache starting as a copy of the run's, which
    holds SmolLM2-135M's log-probabilities of the 264 sentences of its shipped result (the pll
    sentences, scored once per run by ``pll_logprobs``, tests/conftest.py; the leaderboard's
    re-scoring finds them within the tolerance of the shipped ones): for a module that re-scores
    SmolLM2 and does not count what re-scoring sends to the model (a cached score is what the
    model gave here)."""
    with closing(sqlite3.connect(run_score_cache)) as seed, \
            closing(sqlite3.connect(os.environ["CONTSTIM_SCORE_CACHE"])) as mine:
        seed.backup(mine)  # SQLite's own copy: whole, WAL included
    return rescoring_datasets


@pytest.fixture(scope="module")
def bert() -> dict:
    """The shipped result of the paper's BERT (precomputed:bert)."""
    return json.loads((SHIPPED / "bert.json").read_text(encoding="utf-8"))
