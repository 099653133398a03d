"""``contstim blimp --model SPEC``: BLiMP accuracy per paradigm, field, phenomenon and overall
(the ``blimp`` benchmark of ``contstim evaluate --benchmark``, with its options as flags)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._common import PARALLEL_NOTE, add_model_args, run_benchmark


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
        output="result JSON file to write",
        device="torch device (default: cuda when available, else cpu)",
        batch_size="sentences (causal) or masked copies (masked) per forward pass",
        quiet="no summary table, no progress bars",
    )
    p.add_argument("--method", action="append", default=None,
                   help="masked-LM read-out set as ?method= of an hf-masked: spec: pll, pll-word-l2r, "
                        "pll-whole-word, approx-ll, approx-ll-sampled (error for causal models). Repeat it "
                        "to compare read-outs side by side with Kauf & Ivanova (2023) Table 3: one result "
                        "per method, written as OUTPUT with the method before the suffix (b.pll.json, ...)")
    p.add_argument("--paradigms", help="comma-separated paradigm names (default: all 67)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    paradigms = args.paradigms.split(",") if args.paradigms is not None else None
    methods = args.method or [None]
    if len(set(methods)) == 1:
        return run_benchmark("blimp", args, method=methods[0], paradigms=paradigms)
    from ..api import set_threads
    from ..benchmarks.blimp import run_blimp_methods
    from ..report.blimp import methods_table
    from ..results import write_result

    set_threads(args.threads)
    results = run_blimp_methods(args.model, methods, paradigms=paradigms, limit=args.limit,
                                datasets_dir=args.datasets, device=args.device, dtype=args.dtype,
                                batch_size=args.batch_size, progress=not args.quiet,
                                log=(lambda m: None) if args.quiet else None)
    out = Path(args.output)
    for method, result in results.items():
        print(f"wrote {write_result(result, out.with_name(f'{out.stem}.{method}{out.suffix}'))}", file=sys.stderr)
    print(methods_table(results))
    return 0
