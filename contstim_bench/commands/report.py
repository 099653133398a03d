"""``contstim report --experiment main|pll --out DIR``: the figures and tables of Golan et al. (2023)
that the experiment's human data supports, in one folder with an index page (see
:func:`contstim_bench.benchmarks.contstim_report.paper_report`)."""
from __future__ import annotations

import argparse
import sys

from ._common import DATASETS_HELP, existing_folder


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="the paper's remaining figures and tables (S3-S8, Tables 1-3, S1) with an index page",
        description=(
            "From the built contstim dataset and the reference models' published log-probabilities: main "
            "experiment: Fig. S3 (agreement), S4a/b (head-to-head), S5 (accept x reject), S6, S7a/b (GloVe "
            "correlation and word frequency, paired t-tests, BH), S8a (when the results file carries PLL "
            "read-outs), Tables 1-3 (each model's most severe failure); pll experiment: its head-to-head "
            "matrix, Fig. S8b and Table S1. The main experiment needs its results file: contstim data build "
            "--main-results FILE."
        ),
    )
    p.add_argument("--experiment", choices=["main", "pll"], required=True, help="experiment to report")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for index.html, report.json, figures and tables")
    p.add_argument("--seed", type=int, default=0, help="seed for ties among the most severe failures (default 0)")
    p.add_argument("--datasets", type=existing_folder, help=DATASETS_HELP)
    p.add_argument("--source", metavar="DIR", help="raw-data folder for the sentence features of Fig. S7 "
                   "(default: $CONTSTIM_RAW_DATA, ../shared/data, the user cache, then download)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..benchmarks.contstim_report import paper_report
    from ..report.paper import write_report

    report = paper_report(args.experiment, args.datasets, seed=args.seed, source=args.source)
    paths = write_report(report, args.out)
    print(f"wrote {len(paths)} files to {args.out} (open {args.out}/index.html): "
          + ", ".join(i["id"] for i in report["items"]))
    for key, why in report["skipped"].items():
        print(f"not produced: {key}: {why}", file=sys.stderr)
    return 0
