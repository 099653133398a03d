"""``contstim plausibility --model SPEC``: Kauf et al. (2024) plausibility benchmarks (the
``plausibility`` benchmark of ``contstim evaluate --benchmark``, with its options as flags)."""
from __future__ import annotations

import argparse
import os
import sys

from ._common import PARALLEL_NOTE, add_model_args, run_benchmark


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plausibility",
        help="semantic plausibility benchmarks of Kauf et al. 2024 (EventsAdapt, DTFit, SocialN400)",
        description=(
            "Experiment 1: binary accuracy on EventsAdapt AI and AA (active, passive, both) and DTFit, "
            "with the human accuracy beside it. Experiment 2 (logprobs): General Plausibility, "
            "Context-Dependent Plausibility and Context Sensitivity on SocialN400 at the target-word "
            "and sentence level, and the Appendix E similarity to the human pattern; with "
            "--method prompt:sentence-judgment, the Appendix F prompting of the same items. Prints a "
            "summary and writes a JSON with every score and provenance. " + PARALLEL_NOTE
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
                        "sentence-choice-2, likert, sentence-judgment (Table 2) or word-comparison (Table 7, DTFit "
                        "only) (causal models only; answers by constrained generation: the most probable allowed "
                        "answer; prompt:sentence-judgment also runs Experiment 2 with the Appendix F prompts)")
    p.add_argument("--query", default=None, metavar="QUERY",
                   help="prompting only: the query type a Table 2 prompt is framed by (Appendix C.2, Figure 8): "
                        "is-plausible (default), makes-sense or sounds-good")
    p.add_argument("--free-generation", action="store_true",
                   help="prompting only: also answer by free greedy generation (Appendix C), accuracy over the "
                        "valid answers beside the constrained one (not cached: runs the model every time)")
    p.add_argument("--plots", metavar="DIR",
                   help="also write the Kauf et al. 2024 figures and tables this result supports (Figures 1-9, "
                        "Tables 3, 4, 6, 8-11, models vs humans; PNG, SVG, Markdown, kauf2024-report.json) into DIR; "
                        "several results together: contstim_bench.benchmarks.plausibility_report")
    p.add_argument("--max-new-tokens", type=int, default=20,
                   help="tokens a free generation may produce (default 20, as the paper)")
    p.set_defaults(func=_run)


def _plots(result: dict, out_dir: str, datasets_dir) -> None:
    """The figures and tables of one result into ``out_dir``; says what it left out and why."""
    from ..benchmarks.plausibility_report import plausibility_report
    from ..report.plausibility_figures import write_plausibility_report

    report = plausibility_report([result], datasets_dir=datasets_dir)
    paths = write_plausibility_report(report, out_dir)
    print(f"wrote {len(paths)} files to {out_dir}: " + ", ".join(i["id"] for i in report["items"]), file=sys.stderr)
    for key, why in report["skipped"].items():
        print(f"not produced: {key}: {why}", file=sys.stderr)


def _run(args) -> int:
    from ..benchmarks.plausibility import with_query

    if args.plots and os.path.exists(args.plots) and not os.path.isdir(args.plots):
        raise ValueError(f"--plots {args.plots}: a file is there; give a folder for the figures")
    then = (lambda result: _plots(result, args.plots, args.datasets)) if args.plots else None
    return run_benchmark("plausibility", args, then=then, method=with_query(args.method, args.query),
                         free_generation=args.free_generation, max_new_tokens=args.max_new_tokens)
