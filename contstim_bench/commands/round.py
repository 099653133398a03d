"""``contstim round plan``: plan the round that separates the models the human data cannot
(which pairs, which sentences, how many people, the odds), before anyone is paid
(:mod:`contstim_bench.planning`)."""
from __future__ import annotations

import argparse
import sys

from ._common import DATASETS_HELP, add_run_args, existing_folder, positive_int, run_options

EFFECT_HELP = ("planned effect: the share of choices for the better model's sentences on its controversial pairs, "
               "in [0.5, 1); several values sweep; 'observed' uses each pair's share and spread in the human data "
               "(replicating a known effect; the pairs already separated are then planned too) (default: 0.6, a "
               "modest preference)")


def _effects(values: list[str] | None):
    from ..planning.settings import DEFAULT_EFFECT, OBSERVED, check_effect

    if not values:
        return (DEFAULT_EFFECT,)
    if OBSERVED in values:
        if len(values) > 1:
            raise ValueError("--effect observed stands alone (each pair's own effect); give numbers to sweep")
        return None
    out = []
    for v in values:
        try:
            number = float(v)
        except ValueError:
            raise ValueError(f"--effect {v!r} is neither a share in [0.5, 1) nor 'observed'") from None
        out.append(check_effect(number))
    return tuple(out)


def _specs(values: list[str] | None) -> tuple[str, ...]:
    """Specs given space- or comma-separated."""
    return tuple(item for v in (values or []) for item in v.split(",") if item.strip()) if values else ()


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("round", help="plan a round of the benchmark: pairs, sentences, participants, power")
    rsub = p.add_subparsers(dest="round_command", metavar="SUBCOMMAND")
    plan = rsub.add_parser(
        "plan", help="which model pairs need a new round, how many sentence pairs and participants, and the odds",
        description=(
            "From model specs, result files or a leaderboard: the model pairs the human data cannot separate (no "
            "disagreement, or a head-to-head that is not significant after Benjamini-Hochberg), how many "
            "controversial sentence pairs a round needs for them (checked against a pool with the package's ILP), "
            "and how many participants, by a power analysis that simulates the round and runs on it the tests that "
            "evaluating the ingested round runs (head-to-head Wilcoxon by participant and by item, BH over the "
            "round's model pairs, the catch-trial exclusion). Writes OUT/plan.json (the power table), OUT/plan.md (a "
            "preregistration), OUT/power.png/.svg and, with --generate, the natural pairs and the design that "
            "`contstim experiment export` takes. OUT is replaced only if it is a plan folder this command wrote."),
    )
    plan.add_argument("--models", nargs="+", metavar="SPEC", help="models to plan every pair of (NAME=SPEC names one)")
    plan.add_argument("--candidates", nargs="+", metavar="SPEC", help="candidate models, each against each --references")
    plan.add_argument("--references", nargs="+", metavar="SPEC", help="reference models")
    plan.add_argument("--results", nargs="+", default=[], metavar="RESULT.json",
                      help="result files of `contstim evaluate` (their log-probabilities; their model specs for "
                           "the pool check and the generators)")
    plan.add_argument("--leaderboard", metavar="DIR", help="a leaderboard's results folder: every result file in it")
    plan.add_argument("--experiment", default="pll", metavar="{main,pll,ROUND}",
                      help="human data that decides which pairs are separated (default: %(default)s)")
    plan.add_argument("--condition", default="all", metavar="KEY",
                      help="condition of that data (default: %(default)s, every trial)")
    plan.add_argument("--pilot", metavar="ROUND", help="an ingested pilot round (in --datasets): its head-to-heads "
                      "give the effects and spreads, and its targeted models the pairs (unless models are given)")
    plan.add_argument("--effect", nargs="+", metavar="SHARE|observed", help=EFFECT_HELP)
    plan.add_argument("--participants", nargs="+", type=positive_int, metavar="N",
                      help="numbers of participants to simulate (default: 6 8 10 12 16 20 24 30)")
    plan.add_argument("--trials-per-participant", nargs="+", type=positive_int, metavar="T",
                      help="controversial trials of each target pair per participant (default: 10)")
    plan.add_argument("--groups", type=positive_int, default=1,
                      help="participant groups, each with its own sentence pairs; with more than one the groups are "
                           "the units of the by-participant test (default: 1)")
    plan.add_argument("--catch-trials", type=int, default=12, help="catch trials per participant (default: 12)")
    plan.add_argument("--min-catch-correct", type=int, help="catch trials a participant must get right to be kept "
                      "(default: catch trials - 1, the paper's 11 of 12)")
    plan.add_argument("--random-pairs", type=int, default=0, help="randomly sampled natural pairs per participant "
                      "(default: 0)")
    plan.add_argument("--test", choices=["participants", "items", "both"], default="participants",
                      help="what separates a pair: the head-to-head by participant (the paper's), by item (sentence "
                           "pairs as units) or both (default: %(default)s)")
    plan.add_argument("--target-power", type=float, default=0.8, help="power to reach (default: %(default)s)")
    plan.add_argument("--simulations", type=positive_int, default=500,
                      help="simulated rounds per design point (default: %(default)s)")
    plan.add_argument("--seed", type=int, default=0, help="seed of the simulations and the design (default: 0)")
    plan.add_argument("--stimuli", choices=["natural", "synthetic"], default="natural",
                      help="controversial pairs from a pool (natural, the package's ILP) or synthesised "
                           "(synthetic, Eq. 2) (default: %(default)s)")
    plan.add_argument("--pool", metavar="FILE|contstim[:SPLIT]", help="natural-sentence pool for the natural pairs "
                      "(default: contstim:start, the held-out start part of the synthesis pool)")
    plan.add_argument("--no-pool-check", action="store_true", help="do not score the pool to check it holds the "
                      "natural pairs asked")
    plan.add_argument("--generate", action="store_true", help="also select the natural pairs and write the design "
                      "(OUT/natural, OUT/design) for `contstim experiment export --design OUT/design`")
    plan.add_argument("--round-name", default="planned", help="the experiment name the design records "
                      "(default: %(default)s)")
    plan.add_argument("--pay-per-hour", type=float, help="pay per participant hour, for the cost line")
    plan.add_argument("--seconds-per-trial", type=float, help="seconds a trial takes (default: the median response "
                      "time of the human data)")
    plan.add_argument("--participant-sd", type=float, help="between-participant spread (probit scale) instead of "
                      "the one estimated from the human data")
    plan.add_argument("--item-sd", type=float, help="between-sentence-pair spread (probit scale) instead of the "
                      "estimated one")
    plan.add_argument("--lapse", type=float, help="lapse rate instead of the one the catch trials show")
    plan.add_argument("--datasets", type=existing_folder, help=DATASETS_HELP)
    add_run_args(plan)
    plan.add_argument("--quiet", action="store_true", help="print no summary")
    plan.add_argument("--out", required=True, metavar="DIR",
                      help="the plan folder to write: written beside and renamed into place; an existing one is "
                           "replaced only if it is a plan folder this command wrote and holds nothing else")
    plan.set_defaults(func=_plan)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _plan(args) -> int:
    from ..planning.plan_folder import PLAN_KIND, make_plan, write_plan
    from ..planning.settings import PlanSettings
    from ..planning.targets import ModelSources
    from ..report.plan_text import summary
    from ..staging import check_inputs_kept, check_replaceable

    settings = PlanSettings(
        participants=tuple(args.participants or PlanSettings.participants),
        trials_per_participant=tuple(args.trials_per_participant or PlanSettings.trials_per_participant),
        effects=_effects(args.effect) if not (args.pilot and not args.effect) else None,
        groups=args.groups, catch_trials=args.catch_trials, min_catch_correct=args.min_catch_correct,
        test=args.test, target_power=args.target_power, simulations=args.simulations, seed=args.seed,
        stimuli=args.stimuli, random_pairs=args.random_pairs, pay_per_hour=args.pay_per_hour,
        seconds_per_trial=args.seconds_per_trial, participant_sd=args.participant_sd, item_sd=args.item_sd,
        lapse=args.lapse)
    sources = ModelSources(models=_specs(args.models), candidates=_specs(args.candidates),
                           references=_specs(args.references), results=tuple(args.results),
                           leaderboard=args.leaderboard)
    reads = sources.inputs() + [("--pool", args.pool), ("--datasets", args.datasets)]
    check_inputs_kept([("--out", args.out)], reads, folders=("--leaderboard", "--datasets"))  # before any work
    check_replaceable(args.out, kind=PLAN_KIND)
    log = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    options = run_options(args)
    plan, targets = make_plan(sources, settings, experiment=args.experiment, condition_key=args.condition,
                              pilot=args.pilot, datasets_dir=args.datasets, out=args.out, pool=args.pool,
                              pool_check=not args.no_pool_check, options=options, log=log)
    written = write_plan(plan, targets, args.out, settings=settings, generate_stimuli=args.generate, pool=args.pool,
                         round_name=args.round_name, datasets_dir=args.datasets, options=options, log=log)
    if not args.quiet:
        print(summary(plan))
    print(f"wrote {args.out}: {', '.join(p.name for p in written)}", file=sys.stderr)
    return 0
