"""``contstim experiment export|serve|simulate|ingest``: collect human judgments in the browser
(or dry-run a study with simulated participants) and ingest them as a new round of the benchmark."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..experiment.limits import MAX_BODY_BYTES, MAX_PER_GROUP, SIGNUPS_PER_MINUTE
from ._common import add_run_args, positive_int, run_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("experiment", help="browser experiment: export, serve, simulate, ingest human judgments")
    esub = p.add_subparsers(dest="experiment_command", metavar="ACTION")

    e = esub.add_parser("export", help="write a self-contained browser experiment from a design")
    e.add_argument("--design", required=True, help="design parquet file, or a folder holding one "
                   "(e.g. the output of `contstim generate design`)")
    e.add_argument("--out", required=True, help="output folder, written beside and renamed into place: absent, empty, or "
                   "an export this command wrote that holds nothing else")
    e.add_argument("--title", default=None, help="page title")
    e.add_argument("--fixed-order", action="store_true",
                   help="show every participant the design's trial order (default: shuffled per participant)")
    e.add_argument("--fixed-sides", action="store_true",
                   help="show every sentence on its design side (default: sides randomised per participant and trial)")
    e.set_defaults(func=_export)

    s = esub.add_parser("serve", help="serve an exported experiment and record responses in SQLite")
    s.add_argument("--dir", required=True, help="folder written by `contstim experiment export`")
    s.add_argument("--db", required=True, help="SQLite response database (created if absent)")
    s.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    s.add_argument("--threads", type=int, default=8, help="worker threads (default 8)")
    s.add_argument("--completion-code", help="code shown on the end page (e.g. the Prolific completion code)")
    s.add_argument("--completion-url", help="link on the end page; {code} is replaced by the completion code, "
                   "e.g. https://app.prolific.com/submissions/complete?cc={code}")
    s.add_argument("--external-id-param", default="PROLIFIC_PID",
                   help="URL query parameter recorded as the participant's platform id (default PROLIFIC_PID)")
    s.add_argument("--max-body", type=int, default=MAX_BODY_BYTES,
                   help=f"largest accepted request body in bytes (default {MAX_BODY_BYTES})")
    s.add_argument("--max-per-group", type=positive_int, default=MAX_PER_GROUP,
                   help=f"most participants per design group; later sign-ups are refused (403) as the experiment "
                        f"is full (default {MAX_PER_GROUP}; set it to your recruitment target plus replacements)")
    s.add_argument("--signups-per-minute", type=positive_int, default=SIGNUPS_PER_MINUTE,
                   help=f"most sign-ups per client address and minute; more get 429 (default {SIGNUPS_PER_MINUTE}; "
                        "behind a reverse proxy every client has the proxy's address)")
    s.add_argument("--seed", type=int, default=None,
                   help="dry runs only: assign groups, trial orders and sides reproducibly from this seed "
                        "(default: the system's random source; never use a seed with real participants)")
    s.set_defaults(func=_serve)

    m = esub.add_parser("simulate", help="dry run: simulated participants answer a served experiment through its "
                                         "HTTP API, their choices following a language model",
                        description="Simulated participants answer the experiment served at --url through its real "
                                    "HTTP API (as the browser does): each trial's choice is the model's preference "
                                    "(log p(right) - log p(left)) plus Gaussian noise, confidence grows with its size, "
                                    "and a catch trial is failed with probability --catch-failure-rate.  Participant k "
                                    "draws from the seed and k, so a server started with --seed and the same "
                                    "simulation give the same responses.")
    m.add_argument("--url", required=True, help="address of the served experiment, e.g. http://127.0.0.1:8000/")
    m.add_argument("--participants", type=int, required=True, help="number of simulated participants (run one after "
                   "another)")
    m.add_argument("--model", help="model spec whose log-probabilities drive the choices (or --plan)")
    m.add_argument("--plan", metavar="PLAN", help="a plan folder of `contstim round plan`: participants answer as its "
                   "participant model says (on the pairs of each hypothesis, the planned effect and spreads; catch "
                   "trials with its lapse rate; other trials at random), for a dry run of the planned round")
    m.add_argument("--design", metavar="DIR", help="with --plan: the exported design (default: PLAN/design)")
    m.add_argument("--noise", type=float, default=1.0,
                   help="standard deviation (nats) of the Gaussian noise added to each log-ratio (default 1)")
    m.add_argument("--catch-failure-rate", type=float, default=0.05,
                   help="probability of choosing the model's rejected sentence on a catch trial (default 0.05)")
    m.add_argument("--seed", type=int, default=0, help="seed of the participants' draws (default 0)")
    m.add_argument("--wait", type=float, default=0, metavar="SECONDS",
                   help="wait up to SECONDS for the server to answer (one started just before, in a script)")
    m.add_argument("--first", type=int, default=0, help="number of the first participant (default 0; to add "
                   "participants to a run: the server refuses a participant number it already has for the same --seed)")
    m.add_argument("--datasets", default=None, help="folder of built datasets (for precomputed: models)")
    add_run_args(m)
    m.set_defaults(func=_simulate)

    i = esub.add_parser("ingest", help="turn a response database into a new round of the contstim benchmark",
                        description="Read the response database (read-only), apply the exclusion rule and write the "
                                    "round contstim.EXPERIMENT: trials, participants (with exclusion reasons), the "
                                    "served design, the targeted models and their log-probabilities (from --design), "
                                    "round.json (identifier, version, date, fingerprint, database sha256, exclusions) "
                                    "and a dataset card.  Evaluate it with `contstim evaluate --benchmark "
                                    "contstim.EXPERIMENT --datasets OUT`.")
    i.add_argument("--db", required=True, help="SQLite response database (opened read-only)")
    i.add_argument("--out", default=None, help="datasets folder; the round is written to OUT/NAME (a new folder, or "
                   "that round version's own folder: see --replace) (default: "
                   "$CONTSTIM_DATASETS, where `contstim evaluate` finds it without --datasets)")
    i.add_argument("--experiment", default="browser", help="experiment name in the rows and round name: the round is "
                   "contstim.EXPERIMENT (default: browser)")
    i.add_argument("--design", default=None, metavar="DIR",
                   help="output folder of the `contstim generate design` run that was exported: gives the round its "
                        "targeted models (specs, roles) and their log-probabilities, its reference panel")
    i.add_argument("--round-version", default="1", help="version of the round (default 1); each version has its own "
                   "folder (NAME-vVERSION), so versions are kept side by side; the same round and version with other "
                   "data is refused unless --replace")
    i.add_argument("--replace", action="store_true", help="replace this round version's folder when it holds other "
                   "data (never another round, another version or a folder the package did not write)")
    i.add_argument("--name", help="dataset name (default: contstim-EXPERIMENT)")
    i.add_argument("--min-catch-correct", type=int, default=11,
                   help="catch trials a participant must answer for the natural sentence (default 11, of 12)")
    i.add_argument("--keep-incomplete", action="store_true",
                   help="keep participants who did not answer every trial (default: exclude them)")
    i.set_defaults(func=_ingest)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _export(args) -> int:
    from ..experiment.export import export_and_load
    from ..staging import check_inputs_kept

    check_inputs_kept([("--out", args.out)], [("--design", args.design)])  # the export folder is replaced whole
    out, exp = export_and_load(args.design, args.out, randomize_order=not args.fixed_order,
                               randomize_sides=not args.fixed_sides, title=args.title or None)
    sizes = exp.design.groupby("group").size()
    print(f"exported {len(exp.design)} trials in {len(sizes)} group(s) "
          f"({', '.join(f'group {g}: {n}' for g, n in sizes.items())}) to {out}")
    print(f"experiment id {exp.experiment_id}; serve it with `contstim experiment serve --dir {out} --db FILE`")
    return 0


def _serve(args) -> int:
    from ..experiment.server import serve

    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port} is not a TCP port (1..65535)")
    if args.threads < 1:
        raise ValueError(f"--threads must be >= 1, got {args.threads}")
    print(f"serving {args.dir} on http://{args.host}:{args.port}/ (responses in {args.db})", file=sys.stderr, flush=True)
    serve(args.dir, args.db, host=args.host, port=args.port, threads=args.threads,
          completion_code=args.completion_code, completion_url=args.completion_url,
          external_id_param=args.external_id_param, max_body_bytes=args.max_body,
          max_per_group=args.max_per_group, signups_per_minute=args.signups_per_minute, seed=args.seed)
    return 0


def _ingest(args) -> int:
    from ..experiment.ingest import dataset_name, ingest_to_dataset

    from ..data.paths import default_datasets_dir
    from ..data.rounds import read_meta
    from ..staging import check_inputs_kept

    out = args.out if args.out is not None else default_datasets_dir()
    # the round's folder is replaced whole: never one that holds the database or the design
    check_inputs_kept([("--out", Path(out) / dataset_name(args.experiment, args.name, args.round_version))],
                      [("--db", args.db), ("--design", args.design)])
    result = ingest_to_dataset(args.db, out, args.experiment, name=args.name,
                               min_catch_correct=args.min_catch_correct, keep_incomplete=args.keep_incomplete,
                               on_ingested=_print_participants, design=args.design, round_version=args.round_version,
                               replace=args.replace)
    meta = read_meta(result.dataset_folder)
    print(f"wrote {len(result.trials)} trial rows to {result.dataset_folder} (source sha256 {result.db_sha256})")
    print(f"round {meta['identifier']} version {meta['version']} ({meta['date']}), fingerprint {meta['fingerprint']}; "
          f"targeted models: {', '.join(m['name'] for m in meta['models']) or 'none'}")
    print(f"evaluate a model on it: contstim evaluate --benchmark {meta['identifier']} --datasets {out} --model SPEC")
    return 0


def _simulate(args) -> int:
    from ..experiment.simulate import SimulationSettings, simulate

    if (args.model is None) == (args.plan is None):
        raise ValueError("give --model (choices that follow a language model) or --plan (choices as a round plan's "
                         "participant model says), one of the two")
    plan = None
    if args.plan is not None:
        from ..experiment.plan_choices import PlanChooser, plan_design, plan_trials
        from ..results import read_plan

        trials, models = plan_trials(read_plan(args.plan), plan_design(args.plan, args.design))
        plan = lambda k: PlanChooser(trials, models, args.seed, k)  # noqa: E731
    settings = SimulationSettings(noise=args.noise, catch_failure_rate=args.catch_failure_rate, seed=args.seed)
    if args.wait:
        from ..experiment.simulate import wait_for

        wait_for(args.url, args.wait)
    run = simulate(args.url, args.participants, args.model, settings, first_index=args.first,
                   datasets_dir=args.datasets, options=run_options(args), log=lambda msg: print(msg, flush=True),
                   choosers=plan)
    failed = sum(p.catch_failures for p in run.participants)
    how = (f"the plan's participant model ({failed} catch trial(s) failed)" if plan else
           f"{run.model} (noise {settings.noise} nats, {failed} catch trial(s) failed)")
    print(f"{len(run.participants)} simulated participant(s) answered {sum(p.n_trials for p in run.participants)} "
          f"trials at {run.url} with {how}")
    return 0


def _print_participants(result) -> None:
    """Who was kept and who was excluded, printed before the dataset is written."""
    p = result.participants
    print(f"{len(p)} participant(s): {int(p['included'].sum())} included, {len(result.excluded)} excluded", flush=True)
    for row in result.excluded.itertuples(index=False):
        print(f"  excluded {row.participant} (group {row.group}): {row.exclusion_reason}", flush=True)
