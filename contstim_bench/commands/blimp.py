"""``contstim blimp --model SPEC``: BLiMP accuracy per paradigm, field, phenomenon and overall
(the ``blimp`` benchmark of ``contstim evaluate --benchmark``, with its options as flags)."""
from __future__ import annotations

import argparse
import sys

from ._common import PARALLEL_NOTE, add_model_args, run_benchmark, run_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "blimp",
        help="BLiMP minimal-pair accuracy (Warstadt et al. 2020; Kauf & Ivanova 2023)",
        description=(
            "Score both sentences of every selected BLiMP pair; a pair is a hit when the acceptable "
            "sentence scores strictly higher. Prints accuracy overall, per field, per phenomenon and per "
            "paradigm (mean of paradigm accuracies, human validation beside) and writes a JSON. " + PARALLEL_NOTE
        ),
    )
    add_model_args(
        p,
        model="model spec, e.g. smollm2-135m, hf-causal:PATH, hf-masked:PATH",
        limit="first N pairs (by pair id) of each paradigm",
        output="result JSON file to write (ending in .json); with several --method, a folder receiving "
               "blimp.<method>.json each",
        device="torch device (default: cuda when available, else cpu)",
        batch_size="sentences (causal) or masked copies (masked) per forward pass",
        quiet="no summary table, no progress bars",
    )
    p.add_argument("--method", action="append", default=None,
                   help="masked-LM read-out set as ?method= of an hf-masked: spec: pll, pll-word-l2r, "
                        "pll-whole-word, pll-sentence-l2r, approx-ll, approx-ll-sampled (error for causal models). "
                        "Repeat it to compare read-outs side by side with Kauf & Ivanova (2023) Table 3: one result "
                        "per method, written into the OUTPUT folder as blimp.<method>.json")
    p.add_argument("--paradigms", help="comma-separated paradigm names (default: all 67)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    paradigms = args.paradigms.split(",") if args.paradigms is not None else None
    methods = list(dict.fromkeys(args.method or [None]))
    if len(methods) == 1:
        return run_benchmark("blimp", args, method=methods[0], paradigms=paradigms)
    from ..driver import check_outputs, evaluate_variants, model_inputs, write_outputs
    from ..report.blimp import methods_table
    from ..scoring.parallel import is_main_process

    # several results: a folder, before any model runs
    check_outputs(args.output, len(methods), identifiers=[f"blimp.{m}" for m in methods],
                  reads=model_inputs(args.model), datasets_dir=args.datasets)
    limit = {"limit": args.limit} if args.limit is not None else {}
    results = evaluate_variants(args.model, "blimp", {m: {"method": m, "paradigms": paradigms, **limit} for m in methods},
                                options=run_options(args), datasets_dir=args.datasets,
                                log=(lambda m: None) if args.quiet else None)
    if not is_main_process():
        return 0
    for path in write_outputs({f"blimp.{m}": r for m, r in results.items()}, args.output):
        print(f"wrote {path}", file=sys.stderr)
    print(methods_table(results))
    return 0
