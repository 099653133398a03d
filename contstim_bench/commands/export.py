"""``contstim export RESULT --trials FILE.csv|FILE.parquet``: one row per trial and model, the result
joined with the human trials (see :mod:`contstim_bench.benchmarks.contstim_export`)."""
from __future__ import annotations

import argparse
import sys

from ._common import DATASETS_HELP, existing_folder


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="a result's trials in long format (one row per participant x trial) for mixed-effects models",
        description=(
            "Join a contstim result (contstim evaluate) with the human trials it was evaluated on: one row per "
            "participant x trial of each experiment of the result, with the participant's rating and choice, "
            "confidence and reaction time, the targeted models, the model's natural-log probability of each "
            "sentence, its log-ratio log p(sentence2) - log p(sentence1), its choice and whether it matched the "
            "participant's (hit; a tie scores what the result's ties convention says). The mean hit per unit, "
            "averaged over units, is the result's accuracy. CSV (one header row, no index column) or Parquet, "
            "by the suffix."
        ),
    )
    p.add_argument("result", metavar="RESULT", help="result JSON file of `contstim evaluate` (contstim benchmark)")
    p.add_argument("--trials", required=True, metavar="FILE.csv|FILE.parquet", help="table to write")
    p.add_argument("--datasets", type=existing_folder, help=DATASETS_HELP)
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..benchmarks.contstim_export import export_trials

    frame, path = export_trials(args.result, args.trials, args.datasets)
    units = frame.groupby("experiment")["unit"].nunique()
    print(f"wrote {len(frame):,} trials of {frame['model'].iloc[0]} ("
          + ", ".join(f"{exp}: {n} {frame.loc[frame.experiment == exp, 'unit_type'].iloc[0]}s"
                      for exp, n in units.items()) + f") to {path}", file=sys.stderr)
    return 0
