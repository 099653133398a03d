"""A small real study design (the pll catch trials and a few real synthetic pairs per group) and
the request helpers the experiment-server tests share: a test helper on ``sys.path``."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd

from contstim_bench.data.build_contstim import load_trials
from contstim_bench.data.design_file import design_from_trials, validate_design

N_GROUPS, N_CATCH, N_OTHER = 2, 12, 3
N_TRIALS = N_CATCH + N_OTHER


def small_design(n_groups: int = N_GROUPS, n_other: int = N_OTHER) -> pd.DataFrame:
    """``n_groups`` groups of the 12 real pll catch trials plus ``n_other`` distinct real
    synthetic-vs-synthetic pll pairs each, trial numbers renumbered 1..n."""
    pll = design_from_trials(load_trials("pll"))
    catch = pll[pll["trial_type"] == "natural_vs_shuffled"]
    other = pll[pll["trial_type"] != "natural_vs_shuffled"]
    parts = []
    for g in range(1, n_groups + 1):
        rows = pd.concat([catch, other.iloc[(g - 1) * n_other : g * n_other]]).copy()
        rows["group"] = g
        rows["trial"] = range(1, len(rows) + 1)
        parts.append(rows)
    return validate_design(pd.concat(parts, ignore_index=True))


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def db_dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()
