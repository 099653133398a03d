"""``contstim plausibility --model SPEC``: Kauf et al. (2024) plausibility benchmarks (the
``plausibility`` benchmark of ``contstim evaluate --benchmark``, with its options as flags)."""
from __future__ import annotations

import argparse

from ._common import PARALLEL_NOTE, add_model_args, run_benchmark


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plausibility",
        help="semantic plausibility benchmarks of Kauf et al. 2024 (EventsAdapt, DTFit, SocialN400)",
        description=(
            "Experiment 1: binary accuracy on EventsAdapt AI and AA (active, passive, both) and DTFit, "
            "with the human accuracy beside it. Experiment 2 (logprobs only): General Plausibility, "
            "Context-Dependent Plausibility and Context Sensitivity on SocialN400 at the target-word "
            "and sentence level. Prints a summary and writes a JSON with every score and provenance. " + PARALLEL_NOTE
        ),
    )
    add_model_args(
        p,
        model="model spec, e.g. smollm2-135m, gemma3-270m, hf-causal:PATH, hf-masked:PATH?method=pll",
        limit="only the first N pairs of each subset and voice and the first N SocialN400 items (quick runs)",
        output="result JSON file to write",
        device="torch device (default: cuda when available, else cpu)",
        batch_size="sentences per forward pass",
        quiet="no summary table, no progress bars",
    )
    p.add_argument("--method", default=None,
                   help="logprobs (default) or prompt:TEMPLATE with TEMPLATE one of sentence-choice-1, "
                        "sentence-choice-2, likert, sentence-judgment (causal models only)")
    p.set_defaults(func=lambda args: run_benchmark("plausibility", args, method=args.method))
