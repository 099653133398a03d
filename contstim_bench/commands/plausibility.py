"""``contstim plausibility --model SPEC``: Kauf et al. (2024) plausibility benchmarks."""
from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plausibility",
        help="semantic plausibility benchmarks of Kauf et al. 2024 (EventsAdapt, DTFit, SocialN400)",
        description=(
            "Experiment 1: binary accuracy on EventsAdapt AI and AA (active, passive, both) and DTFit, "
            "with the human accuracy beside it. Experiment 2 (logprobs only): General Plausibility, "
            "Context-Dependent Plausibility and Context Sensitivity on SocialN400 at the target-word "
            "and sentence level. Prints a summary and writes a JSON with every score and provenance."
        ),
    )
    p.add_argument("--model", required=True,
                   help="model spec, e.g. smollm2-135m, gemma3-270m, hf-causal:PATH, hf-masked:PATH?method=pll")
    p.add_argument("--method", default=None,
                   help="logprobs (default) or prompt:TEMPLATE with TEMPLATE one of sentence-choice-1, "
                        "sentence-choice-2, likert, sentence-judgment (causal models only)")
    p.add_argument("--limit", type=int,
                   help="only the first N pairs of each subset and voice and the first N SocialN400 items (quick runs)")
    p.add_argument("--output", required=True, help="result JSON file to write")
    p.add_argument("--datasets", help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    p.add_argument("--device", help="torch device (default: cuda when available, else cpu)")
    p.add_argument("--batch-size", type=int, help="sentences per forward pass")
    p.add_argument("--quiet", action="store_true", help="no summary table, no progress bars")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..benchmarks.plausibility import check_limit, run_plausibility, scorer_spec
    from ..report.plausibility import summary_table
    from ..results import write_result

    scorer_spec(args.model, args.method)  # reject a bad method or template before loading the model
    check_limit(args.limit)
    result = run_plausibility(args.model, args.method, limit=args.limit, datasets_dir=args.datasets, device=args.device,
                              batch_size=args.batch_size, progress=not args.quiet,
                              log=(lambda m: None) if args.quiet else None)
    path = write_result(result, args.output)
    if not args.quiet:
        print(summary_table(result))
    print(f"wrote {path}", file=sys.stderr)
    return 0
