"""``contstim leaderboard validate|add|build|push``: check submissions, add one to a results folder,
render the site, publish results."""
from __future__ import annotations

import argparse
import sys

from ._common import add_run_args, existing_folder, run_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "leaderboard",
        help="validate result files, build the static leaderboard site, push results to the hub",
        description="Leaderboard maintenance: every score of a submission is recomputed from its log-probabilities.",
    )
    lsub = p.add_subparsers(dest="leaderboard_command", metavar="ACTION")

    v = lsub.add_parser(
        "validate",
        help="check result files (schema, benchmark, log-probabilities, recomputed scores, duplicates) and "
             "verify them by re-scoring their model spec",
        description=(
            "Check result JSON files: schema; every score recomputed from the submitted per-sentence "
            "log-probabilities must match within 1e-9; every benchmark sentence present, finite and at most 0; "
            "dataset fingerprint and result format known; reference model names reserved for precomputed:<name>; "
            "no duplicate (model, revision) among the files or in --results. Nothing in a file is executed. "
            "Then each valid file's model spec is loaded and re-scores every sentence (--no-rescore skips it): "
            "a match makes it VERIFIED, a difference refuses it, and a spec that cannot be loaded here leaves it "
            "valid but UNVERIFIED (listed apart on the leaderboard, never ranked with verified models)."
        ),
    )
    v.add_argument("files", nargs="+", metavar="FILE", help="result JSON file(s)")
    v.add_argument("--results", metavar="DIR", help="results folder whose (model, revision) pairs count as taken")
    v.add_argument("--datasets", type=existing_folder, help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    _add_rescore_args(v)
    v.set_defaults(func=_validate)

    a = lsub.add_parser(
        "add",
        help="validate a result file and add it to a results folder (one file per model)",
        description=(
            "Validate a result JSON (as `validate` does) and copy it into the results folder as "
            "<model name>.json. A folder holds one result per model: a second result of the same model "
            "(same weights' content fingerprint, scorer settings such as method, start token and dtype, and "
            "revision; whatever its name or batch size) is refused, naming the file that has it, unless "
            "--replace is given. The file is re-scored first (as `validate` does): a verified result is "
            "never blocked by an unverified file that claims its identity."
        ),
    )
    a.add_argument("file", metavar="RESULT.json", help="result file written by `contstim evaluate`")
    a.add_argument("--results", default="leaderboard/results", metavar="DIR",
                   help="results folder (default: %(default)s; created if missing)")
    a.add_argument("--replace", action="store_true", help="replace the folder's result of the same model")
    a.add_argument("--datasets", type=existing_folder, help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    _add_rescore_args(a)
    a.set_defaults(func=_add)

    b = lsub.add_parser("build", help="render the static site from a results folder (verified and unverified "
                                      "entries in separate tables)")
    b.add_argument("--results", required=True, metavar="DIR", help="folder of result JSON files")
    b.add_argument("--out", required=True, metavar="SITE", help="output folder: written beside and renamed into place; an existing one is replaced only if it is a site this command wrote and holds nothing else")
    b.add_argument("--datasets", type=existing_folder, help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    b.add_argument("--no-validate", action="store_true",
                   help="skip validating the results first (then nothing is verified: every entry is listed as unverified)")
    _add_rescore_args(b)
    b.set_defaults(func=_build)

    u = lsub.add_parser("push", help="publish a results folder as a Hugging Face dataset repository")
    u.add_argument("--repo", required=True, metavar="ORG/NAME", help="dataset repository id")
    u.add_argument("--results", default="leaderboard/results", metavar="DIR", help="results folder (default: %(default)s)")
    u.add_argument("--private", action="store_true", help="create the repository as private")
    u.add_argument("--token", help="hub token (default: the huggingface_hub login / $HF_TOKEN)")
    u.add_argument("--endpoint", help="hub endpoint (default: $HF_ENDPOINT or huggingface.co)")
    u.add_argument("--datasets", type=existing_folder, help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    u.add_argument("--no-validate", action="store_true",
                   help="skip validating the results first (then every entry is published as unverified)")
    _add_rescore_args(u)
    u.set_defaults(func=_push)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _add_rescore_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rescore", action=argparse.BooleanOptionalAction, default=True,
        help="load each valid file's model spec and re-score its sentences (default: on); a match makes the entry "
             "verified, a difference refuses it, a spec that cannot be loaded leaves it unverified with the reason; "
             "--no-rescore loads no model and leaves every entry unverified",
    )
    # = leaderboard.validate.RESCORE_TOLERANCE (not imported here: the parser is built without it)
    parser.add_argument("--rescore-tolerance", type=float, default=1e-3,
                        help="absolute tolerance in nats per sentence when re-scoring (default 1e-3: batch size "
                             "and CPU move float32 log-probabilities by up to about 1.4e-4)")
    parser.add_argument("--models-folder", metavar="DIR",
                        help="the maintainer's folder of local models (n-gram files, RNN and transformers folders): a "
                             "submission's local model is loaded only by its name from here, never by its path "
                             "(default: $CONTSTIM_LEADERBOARD_MODELS; none: local models stay unverified)")
    add_run_args(parser, device="device for re-scoring (e.g. cpu, cuda)",
                 dtype="weights dtype for re-scoring (default: the dtype each result records)")


def _validate(args) -> int:
    from ..leaderboard.verification import validate_and_rescore

    checked = validate_and_rescore(args.files, args.results, args.datasets, rescore_models=args.rescore,
                                   tolerance=args.rescore_tolerance, options=run_options(args),
                                   log=lambda m: print(m, file=sys.stderr), models_folder=args.models_folder)
    for c in checked:
        if c.ok:
            name, rev = c.key
            n = len(c.result["logprobs"])
            print(f"OK {c.source}: model {name!r} revision {rev[:12]}, {n} sentences, experiments "
                  f"{', '.join(c.result['experiments'])}; {c.verification}")
        else:
            print(f"INVALID {c.source}:")
            for problem in c.problems:
                print(f"  - {problem}")
    bad = sum(not c.ok for c in checked)
    verified = sum(c.ok and c.verified for c in checked)
    print(f"{len(checked) - bad} valid ({verified} verified, {len(checked) - bad - verified} unverified), {bad} invalid",
          file=sys.stderr)
    return 1 if bad else 0


def _add(args) -> int:
    from pathlib import Path

    from ..leaderboard.add import add_results

    given = Path(args.file)
    # `evaluate --output F` writes a file F.json, or a folder F of <benchmark>.json: both are added
    files = sorted(given.glob("*.json")) if given.is_dir() else [given]
    if not files:
        raise FileNotFoundError(f"{given} is a folder without a result file (*.json)")
    def done(path, outcome) -> None:
        if isinstance(outcome, Exception):
            print(f"NOT ADDED {path}: {type(outcome).__name__}: {outcome}", file=sys.stderr)
            return
        replaced = f" (replaced {outcome.replaced})" if outcome.replaced is not None else ""
        print(f"added {outcome.name!r} as {outcome.path}{replaced}; {outcome.verification}")

    outcomes = add_results(files, args.results, done=done, replace=args.replace, datasets_dir=args.datasets,
                           rescore=args.rescore, tolerance=args.rescore_tolerance, options=run_options(args),
                           models_folder=args.models_folder, log=lambda m: print(m, file=sys.stderr))
    failed = sum(isinstance(o, Exception) for o in outcomes)
    return 1 if failed else 0


def _build(args) -> int:
    from ..leaderboard.site import build_site
    from ..staging import check_inputs_kept

    # the site is replaced whole: never over what the command reads
    check_inputs_kept([("--out", args.out)], [("--results", args.results), ("--datasets", args.datasets),
                                              ("--models-folder", args.models_folder)],
                      folders=("--results", "--datasets", "--models-folder"))
    out = build_site(args.results, args.out, validate=not args.no_validate, datasets_dir=args.datasets,
                     rescore=args.rescore, tolerance=args.rescore_tolerance, options=run_options(args),
                     models_folder=args.models_folder)
    print(f"wrote {out / 'index.html'}")
    return 0


def _push(args) -> int:
    from ..leaderboard.push import push_results

    url = push_results(
        args.results,
        args.repo,
        token=args.token,
        private=args.private,
        endpoint=args.endpoint,
        validate=not args.no_validate,
        datasets_dir=args.datasets,
        rescore=args.rescore,
        tolerance=args.rescore_tolerance,
        options=run_options(args),
        models_folder=args.models_folder,
    )
    print(f"pushed {args.results} to {url}")
    return 0
