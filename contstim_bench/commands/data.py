"""``contstim data build|fetch|info|push``: build the benchmark's datasets from raw sources, fetch
the raw files, describe the datasets, publish them on the Hugging Face Hub."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="build and inspect the benchmark datasets")
    dsub = p.add_subparsers(dest="data_command", metavar="ACTION")

    b = dsub.add_parser("build", help="build contstim, plausibility and blimp from raw sources")
    b.add_argument("--source", help="folder holding the raw files (default: $CONTSTIM_RAW_DATA, "
                   "../shared/data next to a checkout, the user cache, then download)")
    b.add_argument("--out", help="output folder (default: $CONTSTIM_DATASETS or "
                   "~/.cache/contstim_bench/datasets); each dataset's folder there is replaced only if it is a "
                   "dataset the package built and holds nothing else")
    b.add_argument("--only", action="append", help="build only this dataset (repeatable)")
    b.add_argument("--main-results", metavar="FILE",
                   help="contstim: the main experiment's results CSV in the raw Gorilla layout "
                   "(validated by its layout, not its hash; recorded in the card)")
    b.set_defaults(func=_build)

    f = dsub.add_parser(
        "fetch", help="download the raw files at the pinned upstream commits into a folder",
        description=("Download every raw file the project's shared data folder holds (the manifest's rows; the files "
                     "absent there stay absent) into DIR, each verified by its git blob SHA-1 before it is kept; a "
                     "file already in DIR and verified is not fetched again. Then use DIR as $CONTSTIM_RAW_DATA "
                     "(scripts/test.sh does this when no data folder is configured)."))
    f.add_argument("--out", required=True, metavar="DIR", help="folder to fetch into (created)")
    f.add_argument("--base", metavar="URL", help="download base URL: files lie at URL/OWNER/REPO/COMMIT/PATH "
                   "(default: $CONTSTIM_DOWNLOAD_BASE or https://raw.githubusercontent.com)")
    f.add_argument("--quiet", action="store_true", help="no progress bar")
    f.set_defaults(func=_fetch)

    i = dsub.add_parser("info", help="verify the built datasets (every file as recorded, no unlisted file) and print "
                        "their configs, splits, row counts and fingerprints")
    i.add_argument("--out", "--datasets", dest="out", help="folder of built datasets")
    i.set_defaults(func=_info)
    u = dsub.add_parser(
        "push", help="publish a built dataset with its card as a Hugging Face dataset repository",
        description=("Check the built dataset (every file the card lists exists and nothing else is uploaded, "
                     "sha256 and content fingerprint as recorded, every config and split loads with "
                     "datasets.load_dataset with its recorded row count), then upload it in one commit. "
                     "Run once per dataset; plausibility has no upstream licence and is refused."))
    u.add_argument("--repo", required=True, metavar="ORG/NAME", help="dataset repository id")
    u.add_argument("--dataset", default="contstim", choices=["contstim", "blimp", "plausibility"],
                   help="which built dataset (default: %(default)s)")
    u.add_argument("--datasets", help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    u.add_argument("--private", action="store_true", help="create the repository as private")
    u.add_argument("--token", help="hub token (default: the huggingface_hub login / $HF_TOKEN)")
    u.add_argument("--endpoint", help="hub endpoint (default: $HF_ENDPOINT or huggingface.co)")
    u.add_argument("--dry-run", metavar="DIR",
                   help="write and check the repository's files in DIR, upload nothing")
    u.set_defaults(func=_push)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _push(args) -> int:
    from ..data.publish import push_dataset

    report = push_dataset(args.dataset, args.repo, datasets_dir=args.datasets, token=args.token,
                          private=args.private, endpoint=args.endpoint, dry_run=args.dry_run)
    splits = ", ".join(f"{c}/{s} {n:,}" for c, d in report["configs"].items() for s, n in d.items())
    verb = "checked (dry run, nothing uploaded)" if args.dry_run else "pushed"
    print(f"{verb} {args.dataset} ({len(report['files'])} files; {splits}) -> {report['url']}")
    return 0


def _fetch(args) -> int:
    import os

    from ..data import sources

    if args.base:
        os.environ[sources.ENV_DOWNLOAD_BASE] = args.base
    sources.download_base()  # a malformed base is named before anything is fetched
    downloaded, kept = sources.fetch_all(args.out, progress=not args.quiet)
    print(f"{args.out}: {downloaded} raw files downloaded, {kept} already there and verified "
          f"(from {sources.download_base()})")
    return 0


def _build(args) -> int:
    from ..data.builders import BUILDERS, build
    from ..data.load import card_warnings, default_datasets_dir
    from ..data.writer import read_fingerprint
    from ..staging import check_inputs_kept

    out = Path(args.out) if args.out else default_datasets_dir()
    names = args.only or list(BUILDERS)
    # each dataset folder is replaced whole: never one that holds the raw files or the results file
    check_inputs_kept([("--out", out / name) for name in names],
                      [("--source", args.source), ("--main-results", args.main_results)])
    for name in names:
        print(f"building {name} ...", file=sys.stderr)
        options = {"main_results_csv": args.main_results} if name == "contstim" and args.main_results else {}
        folder = build(name, out, source=args.source, **options)
        fp = read_fingerprint(folder)
        print(f"{name}: {folder} (fingerprint {fp['fingerprint'][:16]})")
        for warning in card_warnings(folder):
            print(f"  note: {warning}")
    return 0


def _info(args) -> int:
    from ..data.builders import BUILDERS
    from ..data.load import card_warnings, default_datasets_dir
    from ..data.verify import CorruptDatasetError, UnlistedFilesError, verify_dataset

    out = Path(args.out) if args.out else default_datasets_dir()
    found, corrupt = False, False
    for name in BUILDERS:
        folder = out / name
        try:
            meta = verify_dataset(folder)
        except FileNotFoundError:
            print(f"{name}: not built in {out} (run `contstim data build --out {out}`)")
            continue
        except UnlistedFilesError as exc:
            print(f"{name}: NOT VERIFIED: {folder} holds {len(exc.files)} file(s) its fingerprint.json does not "
                  f"list; loading it is refused until they are moved out of the folder (rebuilding would delete them)")
            for rel in exc.files:
                print(f"  unlisted: {rel}")
            corrupt = True
            continue
        except CorruptDatasetError as exc:
            print(f"{name}: CORRUPT: {exc}")
            corrupt = True
            continue
        found = True
        print(f"{name}  fingerprint {meta['fingerprint']} (every file verified)")
        for key, rows in meta["rows"].items():
            config, split = key.split("/")
            print(f"  {config:<30} {split:<12} {rows:>9,} rows")
        for warning in card_warnings(folder):
            print(f"  note: {warning}")
    return 0 if found and not corrupt else 1
