"""Regenerate ``leaderboard/results/``: one result file per model, as ``contstim evaluate`` writes it.

Entries: the six reference models of the ``pll`` experiment from their precomputed
log-probabilities (``precomputed:NAME``; the pll experiment is the only one with human data in
the shared data), and the offline models that ship inside PyPI packages (``smollm2-135m``,
``gemma3-270m``), which run on the CPU (scores are cached in ``$CONTSTIM_SCORE_CACHE``).

    python leaderboard/make_results.py                     # every model
    python leaderboard/make_results.py --only bert smollm2-135m
    python leaderboard/make_results.py --no-offline        # reference models only

Every model is also evaluated on every round of the benchmark found in ``--datasets``
(``contstim experiment ingest`` writes them; one file ``<model>.<round>.json`` each), so the
leaderboard shows every model on every round; a model that cannot score a round's sentences (a
``precomputed:`` reference has no value for sentences synthesised later) is reported and left out
of that round.

Every written file is validated (:mod:`contstim_bench.leaderboard.validate`) and must stay under
1 MB; a model that cannot be scored here is reported and skipped (exit status 1).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from contstim_bench import driver
from contstim_bench.benchmarks.registry import rounds
from contstim_bench.leaderboard.site import slug
from contstim_bench.leaderboard.validate import validate_files
from contstim_bench.results import write_result
from contstim_bench.study import PLL_MODELS

HERE = Path(__file__).resolve().parent
EXPERIMENT = "pll"
OFFLINE_MODELS = ("smollm2-135m", "gemma3-270m")
MAX_BYTES = 1_000_000


def models(offline: bool) -> dict[str, str]:
    """Model name -> spec."""
    out = {name: f"precomputed:{name}" for name in PLL_MODELS}
    if offline:
        out.update({name: name for name in OFFLINE_MODELS})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results folder (default: %(default)s)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="regenerate only these models")
    parser.add_argument("--no-offline", action="store_true", help="skip the offline models (smollm2-135m, gemma3-270m)")
    parser.add_argument("--datasets", help="folder of built datasets (default: $CONTSTIM_DATASETS)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    options = driver.RunOptions(threads=args.threads, progress=False)

    todo = models(not args.no_offline)
    if args.only:
        unknown = [n for n in args.only if n not in todo]
        if unknown:
            parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(todo)}")
        todo = {n: todo[n] for n in args.only}
    args.out.mkdir(parents=True, exist_ok=True)
    failed, written = [], []
    for name, spec in todo.items():
        quiet = lambda m: None  # noqa: E731
        try:  # the one driver, as `contstim evaluate --experiment pll` runs it
            scorer = driver.load_model(spec, options, datasets_dir=args.datasets)
            result = driver.evaluate(scorer, [f"contstim.{EXPERIMENT}"], options=options, datasets_dir=args.datasets,
                                     log=quiet)[f"contstim.{EXPERIMENT}"]
        except (ValueError, FileNotFoundError, RuntimeError, ImportError, OSError) as exc:
            print(f"{name}: not scored: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        results = {f"{slug(name)}.json": result}
        for ident in rounds(args.datasets):
            try:
                results[f"{slug(name)}.{ident.split('.', 1)[1]}.json"] = driver.evaluate(
                    scorer, [ident], options=options, datasets_dir=args.datasets, log=quiet)[ident]
            except ValueError as exc:  # e.g. a precomputed reference without values for the round's sentences
                print(f"{name}: not evaluated on {ident}: {str(exc).splitlines()[0]}", file=sys.stderr)
        for file_name, result in results.items():
            path = write_result(result, args.out / file_name)
            size = path.stat().st_size
            if size >= MAX_BYTES:
                print(f"{name}: {path} is {size:,} bytes (limit {MAX_BYTES:,})", file=sys.stderr)
                failed.append(name)
            written.append(path)
            print(f"{name}: wrote {path} ({size:,} bytes)", file=sys.stderr)
    for checked in validate_files(written, results_dir=args.out, datasets_dir=args.datasets):
        if not checked.ok:
            print(f"INVALID {checked.source}: {'; '.join(checked.problems)}", file=sys.stderr)
            failed.append(checked.source)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
