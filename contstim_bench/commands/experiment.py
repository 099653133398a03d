"""``contstim experiment export|serve|ingest``: collect human judgments in the browser."""
from __future__ import annotations

import argparse
import sys

from ..experiment.limits import MAX_BODY_BYTES, MAX_PER_GROUP, SIGNUPS_PER_MINUTE
from ._common import positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("experiment", help="browser experiment: export, serve, ingest human judgments")
    esub = p.add_subparsers(dest="experiment_command", metavar="ACTION")

    e = esub.add_parser("export", help="write a self-contained browser experiment from a design")
    e.add_argument("--design", required=True, help="design parquet file, or a folder holding one "
                   "(e.g. the output of `contstim generate design`)")
    e.add_argument("--out", required=True, help="output folder (absent, empty or a previous export)")
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
    s.set_defaults(func=_serve)

    i = esub.add_parser("ingest", help="turn a response database into a trials dataset")
    i.add_argument("--db", required=True, help="SQLite response database (opened read-only)")
    i.add_argument("--out", required=True, help="output folder; the dataset is written to OUT/NAME")
    i.add_argument("--experiment", default="browser", help="experiment name in the rows (default: browser)")
    i.add_argument("--name", help="dataset name (default: contstim-EXPERIMENT)")
    i.add_argument("--min-catch-correct", type=int, default=11,
                   help="catch trials a participant must answer for the natural sentence (default 11, of 12)")
    i.add_argument("--keep-incomplete", action="store_true",
                   help="keep participants who did not answer every trial (default: exclude them)")
    i.set_defaults(func=_ingest)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _export(args) -> int:
    from ..experiment.export import export_and_load

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
          max_per_group=args.max_per_group, signups_per_minute=args.signups_per_minute)
    return 0


def _ingest(args) -> int:
    from ..experiment.ingest import ingest_to_dataset

    result = ingest_to_dataset(args.db, args.out, args.experiment, name=args.name,
                               min_catch_correct=args.min_catch_correct, keep_incomplete=args.keep_incomplete,
                               on_ingested=_print_participants)
    print(f"wrote {len(result.trials)} trial rows to {result.dataset_dir} (source sha256 {result.db_sha256})")
    return 0


def _print_participants(result) -> None:
    """Who was kept and who was excluded, printed before the dataset is written."""
    p = result.participants
    print(f"{len(p)} participant(s): {int(p['included'].sum())} included, {len(result.excluded)} excluded", flush=True)
    for row in result.excluded.itertuples(index=False):
        print(f"  excluded {row.participant} (group {row.group}): {row.exclusion_reason}", flush=True)
