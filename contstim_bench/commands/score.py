"""``contstim score``: natural-log probability of each sentence of a text file, as CSV."""
from __future__ import annotations

import argparse
import sys

from ._common import PARALLEL_NOTE, add_model_args, run_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score sentences with a model (natural-log probability per sentence)",
        description=(
            "Write one natural-log probability per input line (input order) to a CSV with columns "
            "sentence,logprob (a prompt: spec writes its judgments: sentence,judgment), or, for an --output "
            "ending in .npy, one float64 per input line (the upstream pool layout; "
            "precomputed:FILE.npy?sentences=INPUT reads it back).  Repeated sentences are scored once; scores are "
            "cached on disk ($CONTSTIM_SCORE_CACHE), so a second run does no model work.  " + PARALLEL_NOTE
        ),
    )
    add_model_args(
        p,
        model={"metavar": "SPEC", "help": "model spec, e.g. smollm2-135m, hf-causal:gpt2, "
                                          "hf-masked:bert-base-cased?method=pll-word-l2r, kenlm:FILE"},
        output={"metavar": "FILE", "help": "CSV to write (.npy: one float64 per input line)"},
        datasets="folder of built datasets, for precomputed:NAME (default: $CONTSTIM_DATASETS)",
        device="cpu, cuda, cuda:1 ... (default: cuda if available)",
        dtype="float32 (default), bfloat16, float16",
        batch_size={"metavar": "N"},
        quiet="no progress bar",
    )
    p.add_argument("--input", required=True, metavar="FILE",
                   help="UTF-8 text file, one sentence per line")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..scorefile import score_file

    summary = score_file(args.model, args.input, args.output, datasets_dir=args.datasets, options=run_options(args))
    if summary is not None:
        print(summary, file=sys.stderr)
    return 0
