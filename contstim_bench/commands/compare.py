"""``contstim compare --models A,B,...``: every model against every other on the same trials
(Golan et al. 2023, Fig. S3 and S4; see :func:`contstim_bench.api.compare_models`)."""
from __future__ import annotations

import argparse

from ._common import add_model_args, run_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="head-to-head and agreement matrices of several models on the same human trials",
        description=(
            "Score the sentences of an experiment with every given model (or read their log-probabilities "
            "from result files) and compare every pair on the same trials: on the pairs where the two models "
            "prefer different sentences, how often participants chose each model's sentence (Fig. S4; "
            "two-sided Wilcoxon of the per-unit shares vs 0.5, Benjamini-Hochberg over the model pairs), and "
            "the share of pairs the two rank the same way (Fig. S3). Prints the matrices and writes JSON, "
            "CSV, a text table and PNG/SVG figures per condition."
        ),
    )
    p.add_argument("--models", metavar="SPEC,SPEC[,...]",
                   help="models to compare, comma-separated; NAME=SPEC names a model (default name: the spec, "
                        "NAME for precomputed:NAME)")
    add_model_args(
        p,
        model=None,
        output={"required": False, "metavar": "DIR|FILE.json", "default": "results/compare",
                "help": "folder for comparison.json, the CSVs, tables.txt and the figures (default: %(default)s); "
                        "a path ending in .json writes the comparison JSON alone, as one file"},
        device="device for model families that run a network (e.g. cpu, cuda)",
        dtype="weights dtype for model families that run a network (e.g. float32, bfloat16)",
        batch_size="batch size for model families that batch",
        quiet="print no matrices",
    )
    p.add_argument("--results", nargs="+", default=[], metavar="RESULT.json",
                   help="result files of `contstim evaluate` to compare (their log-probabilities, named by "
                        "their model name)")
    p.add_argument("--references", action="store_true",
                   help="add the experiment's reference models (their published log-probabilities; for a round, "
                        "its targeted models that scored every sentence)")
    p.add_argument("--experiment", default="pll", metavar="{main,pll,ROUND}",
                   help="experiment whose human trials decide: main, pll, or a round of the benchmark found in "
                        "--datasets, e.g. web2026 (default: %(default)s)")
    p.add_argument("--condition", action="append", metavar="KEY",
                   help="condition to compare on (repeatable; default: every condition with trials)")
    p.add_argument("--ties", choices=["half", "miss", "hit"], default="half",
                   help="what a model tie scores in accuracies (recorded; head-to-heads leave ties out)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..api import compare_models
    from ..report.matrices import head_to_head_table

    if not args.models and not args.results and not args.references:
        raise ValueError("nothing to compare: give --models, --results and/or --references")
    comparison = compare_models(
        args.models, results=args.results, experiment=args.experiment, with_references=args.references,
        conditions=args.condition, output=args.output, datasets_dir=args.datasets, ties=args.ties,
        options=run_options(args),
    )
    if not args.quiet:
        print("\n\n".join(head_to_head_table(comparison, c) for c in comparison["conditions"]))
    return 0
