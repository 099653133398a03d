"""Fig. 2 of Golan et al. (2023) from a synthesis run (``contstim generate synthetic --output
DIR``): :func:`synthesis_item`, a report item (kind ``synthesis``) that
:func:`contstim_bench.report.paper.write_report` draws.

The job records of the run hold what the figure needs: each triplet's start sentence N, its
synthetic sentences S1 and S2, both models' log-probabilities of all three, and every accepted
word replacement with both models' log-probabilities after it (the path from N to S1 and S2).
What a run does not record is a separate sample of natural sentences scored by both models (the
paper's 500 background sentences and the 231,725-sentence pool its percentiles are taken
among): the panel uses the run's own start sentences of the model pair instead, and says so
(:mod:`contstim_bench.analysis.synthesis_paths`).
"""
from __future__ import annotations

import os
from pathlib import Path

from ..analysis.synthesis_paths import synthesis_panel
from ..results.io import MAX_BYTES, ValidationError, parse_json
from ..staging import read_bounded
from .synthetic_run import JOBS_DIR, record_checksum


def run_rows(output: str | os.PathLike) -> list[dict]:
    """The triplet rows of a synthesis run's finished jobs (``OUTPUT/jobs/*.json``, in file-name
    order: job order), each checked against its checksum; ValueError names a damaged file and a
    folder without job records."""
    jobs = Path(output) / JOBS_DIR
    paths = sorted(jobs.glob("*.json")) if jobs.is_dir() else []
    if not paths:
        raise ValueError(f"{output} holds no finished synthesis job ({jobs}/*.json): give the folder that "
                         f"`contstim generate synthetic --output` wrote")
    rows = []
    for path in paths:
        try:
            record = parse_json(read_bounded(path, MAX_BYTES, "job file"), str(path))
        except ValidationError as exc:
            raise ValueError(f"job file {path} is unreadable ({'; '.join(exc.problems)})") from None
        if not isinstance(record, dict) or record.get("sha256") != record_checksum(record) \
                or not isinstance(record.get("row"), dict):
            raise ValueError(f"job file {path} fails its checksum: it was edited or damaged after it was written")
        rows.append(record["row"])
    return rows


def synthesis_item(output: str | os.PathLike, pair: tuple[str, str] | None = None,
                   start_index: int | None = None) -> dict:
    """Fig. 2 for one model pair of the run in ``output``: ``pair`` (m1, m2) as the run names its
    models (default: the first pair in job order); ``start_index`` the pool line of the start
    sentence to draw (default: the pair's most controversial triplet)."""
    rows = run_rows(output)
    pairs = list(dict.fromkeys((r["m1"], r["m2"]) for r in rows))
    if pair is None:
        pair = pairs[0]
    mine = [r for r in rows if (r["m1"], r["m2"]) == tuple(pair)]
    if not mine:
        raise ValueError(f"the run has no triplet of model pair {tuple(pair)}; its pairs: {pairs}")
    illustrated = None
    if start_index is not None:
        found = [i for i, r in enumerate(mine) if int(r.get("N_idx", -1)) == start_index]
        if not found:
            raise ValueError(f"no triplet of {tuple(pair)} starts from pool line {start_index}; its start lines: "
                             f"{[int(r.get('N_idx', -1)) for r in mine]}")
        illustrated = found[0]
    panel = synthesis_panel(mine, illustrated)
    m1, m2 = panel["models"]
    t = panel["triplet"]
    return {
        "id": "F2", "kind": "synthesis",
        "title": f"Figure 2: synthesising a controversial pair ({m1} vs {m2})",
        "caption": f"Small open dots: {panel['reference']}, at their percentile of log p under {m1} (x) and {m2} (y), "
                   f"percentiles taken among the same sentences. Big open dot: the start sentence \u201c{t['N']}\u201d. "
                   f"Closed dots: the synthetic sentences \u201c{t['S1']}\u201d (made to keep {m1}'s probability and "
                   f"lower {m2}'s) and \u201c{t['S2']}\u201d (the reverse); the lines follow each accepted word "
                   "replacement of the search (small dots). The paper draws 500 random natural sentences with "
                   "percentiles among its 231,725-sentence pool, which a run does not score.",
        "data": {**panel, "run": str(output)},
    }
