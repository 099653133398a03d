"""``contstim plausibility-glmm RESULT RESULT ...``: the Appendix D GLMM of Kauf et al. (2024) over
several ``contstim plausibility`` results (see :func:`contstim_bench.benchmarks.plausibility_glmm.run_glmm`)."""
from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plausibility-glmm",
        help="binomial GLMM of Experiment 1 accuracy over several plausibility results (Kauf et al. 2024, App. D)",
        description=(
            "Fit hit ~ factors * voice + (1 | item) (logit link; sum-coded model factors, voice dummy-coded "
            "with active as reference; Laplace maximum likelihood as lme4::glmer) to the per-pair hits of "
            "the given plausibility results, print the coefficients and write a JSON."
        ),
    )
    p.add_argument("results", nargs="+", metavar="RESULT", help="plausibility result JSON files (two or more)")
    p.add_argument("--factor", action="append", metavar="NAME=L1,L2,...",
                   help="a fixed-effect model factor with one level per result, in the order given "
                        "(repeatable), e.g. --factor class=Mistral,Mistral,Falcon,Falcon "
                        "--factor version=base,instruct,base,instruct (default: one factor 'model', the specs)")
    p.add_argument("--subsets", default="eventsadapt_ai,eventsadapt_aa",
                   help="comma-separated Experiment 1 subsets (default: eventsadapt_ai,eventsadapt_aa)")
    p.add_argument("--no-voice", action="store_true", help="leave voice and its interactions out of the model")
    p.add_argument("--datasets", help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    p.add_argument("--output", required=True, help="JSON file to write")
    p.set_defaults(func=_run)


def _factors(specs: list[str] | None) -> dict[str, list[str]] | None:
    if not specs:
        return None
    out = {}
    for spec in specs:
        name, sep, levels = spec.partition("=")
        if not sep or not name.strip() or not levels.strip():
            raise ValueError(f"--factor {spec!r}: expected NAME=LEVEL1,LEVEL2,...")
        if name.strip() in out:
            raise ValueError(f"--factor {name.strip()!r} given twice")
        out[name.strip()] = [x.strip() for x in levels.split(",")]
    return out


def _run(args) -> int:
    from ..benchmarks.plausibility_glmm import run_glmm, write_glmm
    from ..report.plausibility import glmm_table
    from ..staging import check_inputs_kept

    check_inputs_kept([("--output", args.output)], [("RESULT", r) for r in args.results])  # before the fit
    report = run_glmm(args.results, _factors(args.factor), subsets=[s.strip() for s in args.subsets.split(",")],
                      voice=not args.no_voice, datasets_dir=args.datasets)
    print(glmm_table(report))
    print(f"wrote {write_glmm(report, args.output)}", file=sys.stderr)
    return 0
