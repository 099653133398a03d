"""Registry of the dataset builders (one module per dataset, each with ``build_spec(source)``).

``build_spec(source)`` reads and verifies the raw files (:mod:`contstim_bench.data.sources`)
and returns a :class:`~contstim_bench.data.writer.DatasetSpec`; :func:`build` writes it.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

from .writer import write_dataset

BUILDERS = {
    "contstim": "contstim_bench.data.build_contstim",
    "plausibility": "contstim_bench.data.build_plausibility",
    "blimp": "contstim_bench.data.build_blimp",
}


def builder(name: str):
    """The builder module of dataset ``name`` (ValueError names unknown datasets)."""
    if name not in BUILDERS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(BUILDERS)}")
    return importlib.import_module(BUILDERS[name])


def build(name: str, out_dir: str | os.PathLike, source: str | os.PathLike | None = None, **options) -> Path:
    """Build dataset ``name`` from raw sources into ``out_dir/name``; returns that folder.

    ``options`` go to the builder's ``build_spec`` (e.g. ``main_results_csv`` for contstim).
    """
    spec = builder(name).build_spec(source, **options)
    return write_dataset(spec, out_dir)


def script_main(name: str, description: str, argv: list[str] | None = None) -> int:
    """The command line of a ``dataset_scripts/<name>.py`` script: ``[--source DIR] [--out DIR]``.

    Builds dataset ``name`` and prints its folder, fingerprint and row counts; errors are one
    line on stderr and exit code 1.
    """
    import argparse
    import sys

    from .paths import default_datasets_dir
    from .writer import read_fingerprint

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--source", help="folder holding the raw files (default: $CONTSTIM_RAW_DATA, "
                        "../shared/data next to a checkout, the user cache, then download)")
    parser.add_argument("--out", help="output folder (default: $CONTSTIM_DATASETS or ~/.cache/contstim_bench/datasets)")
    args = parser.parse_args(argv)
    try:
        folder = build(name, args.out or default_datasets_dir(), source=args.source)
    except (ValueError, FileNotFoundError, KeyError, RuntimeError) as exc:
        print(f"{name}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    meta = read_fingerprint(folder)
    rows = ", ".join(f"{k}: {v:,}" for k, v in meta["rows"].items())
    print(f"{name}: {folder} (fingerprint {meta['fingerprint'][:16]}; {rows})")
    return 0
