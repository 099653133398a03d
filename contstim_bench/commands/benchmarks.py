"""``contstim benchmarks``: list every benchmark identifier ``contstim evaluate --benchmark`` takes,
the rounds of the contstim benchmark found in the datasets folder included, each marked with
whether its data is built there (and the command that builds it when not)."""
from __future__ import annotations

import argparse

from ._common import DATASETS_HELP


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("benchmarks", help="list the benchmarks (identifier, version, dataset, built or not, "
                                          "description), rounds of the contstim benchmark included; a benchmark "
                                          "whose data is not built in the datasets folder is marked with the "
                                          "command that builds it")
    p.add_argument("--datasets", default=None, help=DATASETS_HELP + "; rounds are found there")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..benchmarks import BENCHMARKS
    from ..benchmarks.registry import build_status, rounds

    notes = []
    for bid, bench in {**BENCHMARKS, **rounds(args.datasets)}.items():
        built, note = build_status(bench, args.datasets)
        mark = "built" if built else "NOT BUILT"
        print(f"{bid:<16} v{bench.version:<3} {bench.dataset:<13} {mark:<9} {bench.description}")
        if note:
            notes.append(f"  {bid}: {note}")
    if notes:
        print("\n".join(["", *notes]))
    return 0
