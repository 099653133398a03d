"""``contstim benchmarks``: list every benchmark identifier ``contstim evaluate --benchmark`` takes."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("benchmarks", help="list the benchmarks (identifier, version, dataset, description)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..benchmarks import BENCHMARKS

    for bid, bench in BENCHMARKS.items():
        print(f"{bid:<16} v{bench.version:<3} {bench.dataset:<13} {bench.description}")
    return 0
