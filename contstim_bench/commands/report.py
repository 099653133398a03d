"""``contstim report``: self-contained HTML pages of results, or the paper's figures.

- ``contstim report RESULT [RESULT...] --out DIR``: one page per result file (any benchmark:
  contstim, plausibility, BLiMP) with every figure and table that applies to it and its
  provenance, and an index comparing them (:func:`contstim_bench.benchmarks.model_report.model_report`,
  :func:`contstim_bench.report.pages.write_pages`);
- ``contstim report --experiment main|pll --out DIR``: the figures and tables of Golan et al.
  (2023) that the experiment's human data supports, for the paper's reference models
  (:func:`contstim_bench.benchmarks.contstim_report.paper_report`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._common import DATASETS_HELP, add_run_args, existing_folder, run_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="HTML pages of result files (figures, tables, provenance), or the paper's remaining figures",
        description=(
            "With result files: one self-contained HTML page per result (figures embedded; open it from disk, "
            "no server or network) and index.html comparing them. A contstim result (contstim evaluate) gets "
            "Figs. 1/3/4 (accuracy and SRCS with noise ceilings and significance), the percentile scatter "
            "against each reference model, the head-to-head matrix (Fig. S4), its most severe failures "
            "(Tables 1-3) and its scores; a plausibility result (contstim plausibility) the figures and tables "
            "of Kauf et al. 2024; a BLiMP result (contstim blimp) accuracy per phenomenon and paradigm beside "
            "the human validation and Kauf & Ivanova's Table 3; every page ends with the result's provenance. "
            "An item that does not apply says why. "
            "The paper mode, `contstim report --experiment main|pll --out DIR`, draws from the built contstim "
            "dataset and the reference models' published "
            "log-probabilities: main experiment: Fig. S3 (agreement), S4a/b (head-to-head), S5 (accept x reject), "
            "S6, S7a/b (GloVe correlation and word frequency, paired t-tests, BH), S8a (when the results file "
            "carries PLL read-outs), Tables 1-3 (each model's most severe failure); pll experiment: its "
            "head-to-head matrix, Fig. S8b and Table S1. Every other item of the main experiment needs its results "
            "file (contstim data build --main-results FILE); without it, Table S2 is made and every other item is "
            "named with its reason."
        ),
    )
    p.add_argument("results", nargs="*", metavar="RESULT",
                   help="result files (JSON) of contstim evaluate, contstim plausibility or contstim blimp")
    p.add_argument("--experiment", choices=["main", "pll"],
                   help="instead of result files: the paper's figures for this experiment's reference models")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="folder for index.html and the pages (with --experiment: report.json, figures and tables), "
                        "written beside and renamed into place; an existing one is replaced only if it is a report "
                        "this command wrote and holds nothing else")
    p.add_argument("--seed", type=int, default=0, help="seed for ties among the most severe failures (default 0)")
    p.add_argument("--datasets", type=existing_folder, help=DATASETS_HELP)
    p.add_argument("--source", metavar="DIR", help="with --experiment main: raw-data folder for the sentence "
                   "features of Fig. S7 (default: $CONTSTIM_RAW_DATA, ../shared/data, the user cache, then download)")
    add_run_args(p, device="with result files: where the model loads to count its tokens (Table S2)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    if bool(args.results) == bool(args.experiment):
        raise ValueError("give result files (contstim report RESULT [RESULT...] --out DIR) or --experiment main|pll, "
                         "not both and not neither")
    if args.results:
        return _run_results(args)
    from ..benchmarks.contstim_report import paper_report
    from ..report.paper import PAPER_KIND, write_report
    from ..staging import check_inputs_kept, check_replaceable

    check_inputs_kept([("--out", args.out)], [("--datasets", args.datasets), ("--source", args.source)],
                      folders=("--datasets", "--source"))
    check_replaceable(args.out, kind=PAPER_KIND)  # before any work
    report = paper_report(args.experiment, args.datasets, seed=args.seed, source=args.source)
    paths = write_report(report, args.out)
    made = ", ".join(i["id"] for i in report["items"]) or "no item (see below)"
    print(f"wrote {len(paths)} files to {args.out} (open {args.out}/index.html): {made}")
    reasons: dict[str, list[str]] = {}
    for key, why in report["skipped"].items():  # one line per reason, with every item it holds back
        reasons.setdefault(why, []).append(key)
    for why, keys in reasons.items():
        print(f"not produced: {', '.join(keys)}: {why}", file=sys.stderr)
    return 0


def _run_results(args) -> int:
    from functools import partial

    from ..benchmarks.model_report import model_reports
    from ..driver import load_model
    from ..report.pages import write_pages
    from ..results import read_result
    from ..staging import check_inputs_kept

    if args.source:
        raise ValueError("--source is for --experiment main (the sentence features of Fig. S7), not for result files")
    from ..report.pages import PAGES_KIND
    from ..staging import check_replaceable

    reads = [("RESULT", path) for path in args.results] + [("--datasets", args.datasets)]
    check_inputs_kept([("--out", args.out)], reads, folders=("--datasets",))  # before any work: the folder is replaced
    check_replaceable(args.out, kind=PAGES_KIND)
    results = [read_result(path) for path in args.results]
    loader = partial(load_model, options=run_options(args, progress=False), datasets_dir=args.datasets)
    reports = model_reports(results, [Path(path).name for path in args.results], args.datasets, seed=args.seed,
                            load_model=loader)
    paths = write_pages(reports, args.out, reads)
    for report, path in zip(reports, paths):
        missing = [i["id"] for i in report["items"] if i.get("unavailable")]
        print(f"{path}: {report['title']}: {len(report['items']) - len(missing)} items"
              + (f"; not available: {', '.join(missing)}" if missing else ""))
    print(f"open {paths[-1]}")
    return 0
