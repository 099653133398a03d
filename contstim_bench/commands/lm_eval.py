"""``contstim lm-eval tasks [--out DIR]``: write the lm-evaluation-harness task group and print
the folder to pass to ``lm_eval --include_path`` (:mod:`contstim_bench.harness_tasks.folder`)."""
from __future__ import annotations

import argparse
import sys

from ._common import DATASETS_HELP, existing_folder


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lm-eval",
        help="the benchmark as an lm-evaluation-harness task group (contstim lm-eval tasks)",
        description="The benchmark as a task group of lm-evaluation-harness 0.4.x (`lm_eval --tasks contstim "
                    "--include_path DIR`). Import an lm-eval run back with `contstim import lm-eval`.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    t = actions.add_parser(
        "tasks",
        help="write the task folder and print its path",
        description=(
            "Write the task group `contstim` (a task contstim_<experiment> per experiment whose human data is "
            "present, contstim_<round> per round of the datasets folder; each reports accuracy, SRCS, their "
            "standard errors and noise ceilings per condition, computed by the package's own analysis) and print "
            "the folder to pass to `lm_eval --include_path`. The tasks read the built datasets; the folder holds "
            "no data. Score with the model's start token as prefix, as lm_eval --model_args "
            "pretrained=DIR,prefix_token_id=ID,dtype=float32,softmax_dtype=float64 does (docs/lm-eval.md)."
        ),
    )
    t.add_argument("--out", metavar="DIR",
                   help="folder to write (default: ~/.cache/contstim_bench/lm_eval_tasks): written beside and renamed "
                        "into place; a folder this command wrote is replaced if it holds nothing else, any other "
                        "folder (or one holding --datasets) is refused")
    t.add_argument("--datasets", type=existing_folder, help=DATASETS_HELP)
    t.set_defaults(func=_tasks)
    m = actions.add_parser(
        "model-args",
        help="print lm-eval's --model_args that score a model as hf-causal does",
        description=(
            "Print the arguments of lm_eval --model_args for its `hf` backend under which it scores sentences as the package's hf-causal "
            "family does: the model's folder, its start token's id as the prefix token of an empty context, "
            "float32 weights and a float64 log-softmax (docs/lm-eval.md)."
        ),
    )
    m.add_argument("model", nargs="?", default=None, metavar="SPEC",
                   help="an hf-causal spec or a packaged model (default: the embedded default, smollm2-135m)")
    m.add_argument("--dtype", default=None, help="weights dtype (default: float32)")
    m.set_defaults(func=_model_args)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _model_args(args) -> int:
    from ..harness_tasks.model_args import hf_model_args

    print(hf_model_args(args.model, args.dtype))
    return 0


def _tasks(args) -> int:
    from ..harness_tasks.folder import GROUP, write_task_folder

    from ..harness_tasks.folder import default_task_folder
    from ..staging import check_inputs_kept

    # the task folder is replaced whole and its utils.py reads the datasets: never one inside the other
    check_inputs_kept([("--out", args.out if args.out is not None else default_task_folder())],
                      [("--datasets", args.datasets)], folders=("--datasets",))
    folder, names = write_task_folder(args.out, args.datasets, log=lambda msg: print(msg, file=sys.stderr))
    print(f"wrote the lm-eval task group {GROUP!r} ({', '.join(names)}) to {folder}", file=sys.stderr)
    print(folder)
    return 0
