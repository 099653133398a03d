#!/usr/bin/env python
"""Build the ``contstim`` dataset (Golan et al. 2023): raw files -> parquet + dataset card.

    python dataset_scripts/contstim.py [--source DIR] [--out DIR] [--main-results FILE]

``--source``: folder holding the raw files (default: $CONTSTIM_RAW_DATA, ../shared/data next to
a checkout, the user cache, then download at the pinned commit).  ``--out``: output folder
(default: $CONTSTIM_DATASETS); the dataset is written to ``OUT/contstim``.  ``--main-results``:
a main-experiment results CSV in the raw Gorilla layout used instead of the pinned upstream file
(validated by its layout, not its hash; recorded in the card).  All logic lives in
:mod:`contstim_bench.data.build_contstim`.
"""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    from contstim_bench.data.build_contstim import build_spec
    from contstim_bench.data.load import default_datasets_dir
    from contstim_bench.data.writer import read_fingerprint, write_dataset

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", help="folder holding the raw files")
    parser.add_argument("--out", help="output folder (default: $CONTSTIM_DATASETS)")
    parser.add_argument("--main-results", metavar="FILE", help="main-experiment results CSV (raw Gorilla layout)")
    args = parser.parse_args(argv)
    try:
        spec = build_spec(args.source, main_results_csv=args.main_results)
        folder = write_dataset(spec, args.out or default_datasets_dir())
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    meta = read_fingerprint(folder)
    print(f"contstim: {folder} (fingerprint {meta['fingerprint'][:16]})")
    for key, rows in meta["rows"].items():
        print(f"  {key:<40} {rows:>9,} rows")
    for line in spec.notes.splitlines():
        if line.lstrip("- ").startswith("MISSING"):
            print(f"  note: {line.lstrip('- ')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
