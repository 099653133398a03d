"""``contstim evaluate [--model SPEC]``: score a model on the benchmark, print a summary, write
the result file and its figures (see :func:`contstim_bench.api.evaluate_model`)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..scoring.spec import DEFAULT_MODEL
from ._common import PARALLEL_NOTE, add_model_args, run_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="evaluate a model's sentence probabilities against the human judgments",
        description=(
            "Score every sentence of the chosen experiments with the model (scores are cached), "
            "compute accuracy, noise ceilings, signed-rank cosine similarity and significance "
            "against the ceiling and the reference models, print a summary, write a result JSON "
            f"and its figures. Without --model it evaluates the embedded {DEFAULT_MODEL} "
            "(SmolLM2-135M-Instruct). " + PARALLEL_NOTE
        ),
    )
    add_model_args(
        p,
        model={"default": DEFAULT_MODEL, "required": False,
               "help": f"model spec, e.g. hf-causal:gpt2, precomputed:roberta (default: {DEFAULT_MODEL})"},
        output={"required": False,
                "help": "where the results go, as on every command: a path ending in .json is one result file, "
                        "anything else a folder receiving <identifier>.json per benchmark (default: "
                        "results/<model>.json; with several benchmarks results/<model>/)"},
        device="device for model families that run a network (e.g. cpu, cuda)",
        dtype="weights dtype for model families that run a network (e.g. float32, bfloat16)",
        batch_size="batch size for model families that batch",
        quiet="do not print the summary table",
    )
    p.add_argument(
        "--experiment",
        action="append",
        metavar="{main,pll,all,ROUND}",
        help="experiment to evaluate (repeatable; default: every experiment of the paper whose human data is "
             "available); a round (its name, e.g. web2026, as written by `contstim experiment ingest`) is "
             "evaluated as `contstim evaluate --benchmark contstim.ROUND`",
    )
    p.add_argument("--benchmark", action="append", metavar="ID",
                   help="benchmark to evaluate instead of the contstim experiments (repeatable): "
                        "contstim.main, contstim.pll, blimp, plausibility, pll-properties (Kauf & Ivanova 2023 "
                        "sentence-length, word-frequency and OOV analyses) and the rounds contstim.ROUND found in "
                        "--datasets (see `contstim benchmarks`); writes <output folder>/<ID>.json each")
    p.add_argument("--plots", help="folder for the figures (default: <output stem>_plots next to the result file)")
    p.add_argument("--no-plots", action="store_true", help="write no figures")
    p.add_argument("--scatter-reference", metavar="NAME",
                   help="reference model of the percentile scatter (default: the most accurate one)")
    p.add_argument("--name", help="model name in the result (default: the reference name for "
                   "precomputed:NAME, else the spec)")
    p.add_argument("--ties", choices=["half", "miss", "hit"], default="half",
                   help="what a model tie (equal log-probabilities of the two sentences) scores in the accuracy: "
                        "half (0.5, the expected value of a coin flip; default), miss (0) or hit (1); "
                        "recorded in the result")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..api import evaluate_model
    from ..driver import asked_benchmarks
    from ..report import summary
    from ..report.contstim import summary_table
    from ..results import default_output
    from ..scoring.parallel import is_main_process

    experiments, benchmarks, rounds = asked_benchmarks(args.experiment, args.benchmark, args.datasets)
    if rounds:
        print(f"note: --experiment {' '.join(rounds)}: evaluated as --benchmark {' '.join(benchmarks)}",
              file=sys.stderr)
    if benchmarks:
        output = Path(args.output) if args.output else default_output(args.model).with_suffix("")
        results = evaluate_model(args.model, output=output, benchmarks=benchmarks, name=args.name,
                                 datasets_dir=args.datasets, ties=args.ties, options=run_options(args, progress=True))
        if not args.quiet and is_main_process():
            print("\n\n".join(f"== {bid} ==\n{summary(r)}" for bid, r in results.items()))
        return 0

    output = Path(args.output) if args.output else default_output(args.model)
    plots = None if args.no_plots else Path(args.plots) if args.plots else True
    result = evaluate_model(args.model, experiments, output, plots, name=args.name, datasets_dir=args.datasets,
                            scatter_reference=args.scatter_reference, ties=args.ties,
                            options=run_options(args, progress=True))
    if not is_main_process():  # under accelerate launch only process 0 writes and prints
        return 0
    if not args.quiet:
        print(summary_table(result))  # its header says how many sentences were scored
    else:
        s = result["scoring"]
        print(f"scored {s['n_sentences']} sentences ({s['n_from_cache']} from cache)", file=sys.stderr)
    return 0
