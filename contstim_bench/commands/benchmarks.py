"""``contstim benchmarks``: list every benchmark identifier ``contstim evaluate --benchmark`` takes,
the rounds of the contstim benchmark found in the datasets folder included."""
from __future__ import annotations

import argparse

from ._common import DATASETS_HELP


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("benchmarks", help="list the benchmarks (identifier, version, dataset, description), "
                                          "rounds of the contstim benchmark included")
    p.add_argument("--datasets", default=None, help=DATASETS_HELP + "; rounds are found there")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..benchmarks import BENCHMARKS
    from ..benchmarks.registry import rounds

    for bid, bench in {**BENCHMARKS, **rounds(args.datasets)}.items():
        print(f"{bid:<16} v{bench.version:<3} {bench.dataset:<13} {bench.description}")
    return 0
