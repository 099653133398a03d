"""``contstim blimp --model SPEC``: BLiMP accuracy per paradigm, field, phenomenon and overall."""
from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "blimp",
        help="BLiMP minimal-pair accuracy (Warstadt et al. 2020; Kauf & Ivanova 2023)",
        description=(
            "Score both sentences of every selected BLiMP pair; a pair is a hit when the acceptable "
            "sentence scores strictly higher. Prints accuracy overall, per field, per phenomenon and per "
            "paradigm (mean of paradigm accuracies, human validation beside) and writes a JSON."
        ),
    )
    p.add_argument("--model", required=True, help="model spec, e.g. smollm2-135m, hf-causal:PATH, hf-masked:PATH")
    p.add_argument("--method", default=None,
                   help="masked-LM read-out set as ?method= of an hf-masked: spec: pll, pll-word-l2r, "
                        "pll-whole-word, approx-ll, approx-ll-sampled (error for causal models)")
    p.add_argument("--paradigms", help="comma-separated paradigm names (default: all 67)")
    p.add_argument("--limit", type=int, help="first N pairs (by pair id) of each paradigm")
    p.add_argument("--output", required=True, help="result JSON file to write")
    p.add_argument("--datasets", help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    p.add_argument("--device", help="torch device (default: cuda when available, else cpu)")
    p.add_argument("--batch-size", type=int, help="sentences (causal) or masked copies (masked) per forward pass")
    p.add_argument("--quiet", action="store_true", help="no summary table, no progress bars")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..benchmarks.blimp import run_blimp, scorer_spec
    from ..report.blimp import summary_table
    from ..results import write_result

    scorer_spec(args.model, args.method)  # reject a bad --method before loading the model
    paradigms = args.paradigms.split(",") if args.paradigms is not None else None
    result = run_blimp(args.model, args.method, paradigms=paradigms, limit=args.limit, datasets_dir=args.datasets,
                       device=args.device, batch_size=args.batch_size, progress=not args.quiet,
                       log=(lambda m: None) if args.quiet else None)
    path = write_result(result, args.output)
    if not args.quiet:
        print(summary_table(result))
    print(f"wrote {path}", file=sys.stderr)
    return 0
