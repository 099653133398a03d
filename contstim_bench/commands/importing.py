"""``contstim import lm-eval OUTPUT_DIR``: an lm-evaluation-harness run of the contstim task group
as a contstim result file (:mod:`contstim_bench.harness_tasks.samples`)."""
from __future__ import annotations

import argparse
import sys

from ._common import DATASETS_HELP, existing_folder


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="results computed elsewhere as contstim result files (contstim import lm-eval)",
                       description="Turn results computed elsewhere into contstim result files.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    e = kinds.add_parser(
        "lm-eval",
        help="an lm-evaluation-harness output folder (results JSON and --log_samples samples)",
        description=(
            "Read the newest lm-eval run in OUTPUT_DIR that holds contstim tasks (lm_eval --tasks contstim "
            "--output_path OUTPUT_DIR --log_samples --include_path TASKS, the folder `contstim lm-eval tasks` "
            "printed), take each "
            "sentence's log-likelihood from its samples and evaluate them as `contstim evaluate` does: the result "
            "file holds every score, the per-sentence log-probabilities and the run's provenance (lm-eval "
            "version, model arguments, task versions). `contstim leaderboard validate` checks it (unverified "
            "unless its model may be re-scored there) and `contstim report` renders it."
        ),
    )
    e.add_argument("folder", metavar="OUTPUT_DIR", help="lm-eval's --output_path folder")
    e.add_argument("--task", action="append", metavar="TASK",
                   help="import only this task of the run (repeatable; default: every contstim task of it)")
    e.add_argument("--name", help="model name in the result (default: the last component of the run's pretrained "
                                  "argument, e.g. the model's folder name)")
    e.add_argument("--output", metavar="FILE.json|DIR",
                   help="result file (one task) or folder of <benchmark>.json (default: results/<name>.json, or "
                        "results/<name>/ for several tasks); a file there is overwritten, never one inside OUTPUT_DIR")
    e.add_argument("--datasets", type=existing_folder, help=DATASETS_HELP)
    e.set_defaults(func=_lm_eval)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _lm_eval(args) -> int:
    from ..harness_tasks.samples import describe_run, evaluate_run, read_run, run_name
    from ..results.io import default_output
    from ..staging import check_inputs_kept

    reads = [("OUTPUT_DIR", args.folder), ("--datasets", args.datasets)]
    check_inputs_kept([("--output", args.output)], reads, folders=("OUTPUT_DIR",))  # never into the run it reads
    scorer, benchmarks, results_path = read_run(args.folder, args.task)  # read once
    output = args.output
    if output is None:
        stem = args.name or run_name(scorer)
        output = default_output(stem) if len(benchmarks) == 1 else default_output(stem).with_suffix("")
        check_inputs_kept([("--output", output)], reads, folders=("OUTPUT_DIR",))
    results = evaluate_run(scorer, benchmarks, results_path, name=args.name, datasets_dir=args.datasets,
                           output=output, log=lambda msg: print(msg, file=sys.stderr))
    for ident, result in results.items():
        (entries,) = result["experiments"].values()
        e = entries["all"]
        print(f"{ident}: {describe_run(result)}: accuracy {e['accuracy']:.4f} (SE {e['accuracy_stderr']:.4f}), "
              f"SRCS {e['srcs']:.4f} (SE {e['srcs_stderr']:.4f}) on all trials")
    return 0
