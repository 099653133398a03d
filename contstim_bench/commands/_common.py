"""What the commands that run a model share: their common flags (:func:`add_model_args`) and the
run of one registered benchmark (:func:`run_benchmark`).  Not a command: the CLI skips modules
whose name starts with ``_``."""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..driver import RunOptions

DATASETS_HELP = "folder of built datasets (default: $CONTSTIM_DATASETS)"
DTYPE_HELP = "weights dtype for model families that run a network: float32 (default), bfloat16, float16, float64"
THREADS_HELP = ("torch CPU threads, at most 4 per CPU (default: torch's choice; 1 is often much faster on a busy "
                "machine)")


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (``--batch-size 0`` is refused while parsing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def thread_count(text: str) -> int:
    """argparse type of ``--threads``: an integer from 1 to 4 per CPU of the machine
    (:func:`contstim_bench.scoring.parallel.check_threads`), refused while parsing."""
    from ..scoring.parallel import check_threads

    try:
        return check_threads(positive_int(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def existing_folder(text: str) -> str:
    """argparse type: a folder that exists (an explicit ``--datasets`` is never created silently;
    ``contstim data build --out DIR`` builds into a new folder)."""
    from pathlib import Path

    path = Path(text).expanduser()
    if not path.is_dir():
        what = "is a file, not a folder" if path.exists() else "does not exist"
        raise argparse.ArgumentTypeError(f"{text} {what}; build the datasets there first with "
                                         f"`contstim data build --out {text}`, or leave the flag out")
    return text

MAX_TOKENS_HELP = ("hf-causal models: length-sorted batches of at most N padded tokens (sentences x longest "
                   "length) instead of a fixed number of sentences per batch (which then only caps the count if given)")
PARALLEL_NOTE = ("Data-parallel: `accelerate launch --num_processes N -m contstim_bench <command> ...` on GPUs, "
                 "`torchrun --nproc_per_node N -m contstim_bench <command> ...` on CPU, splits the sentences across "
                 "processes (each resumable from the score cache); process 0 writes the output.")


RUN_FLAGS = ("--device", "--dtype", "--threads", "--batch-size", "--max-tokens-per-batch")
"""The model options every command that runs a model takes (:func:`add_run_args`), the flags of
:class:`contstim_bench.driver.RunOptions`."""


def add_run_args(parser: argparse.ArgumentParser, *, device: str = "device for model families that run a network "
                 "(e.g. cpu, cuda; default: the family's choice)", dtype: str = DTYPE_HELP,
                 threads: str = THREADS_HELP, batch_size: str = "sentences per forward pass",
                 max_tokens: str = MAX_TOKENS_HELP) -> None:
    """Add the model options of :data:`RUN_FLAGS` (help texts may differ per command)."""
    parser.add_argument("--device", help=device)
    parser.add_argument("--dtype", help=dtype)
    parser.add_argument("--threads", type=thread_count, help=threads)
    parser.add_argument("--batch-size", type=positive_int, help=batch_size)
    parser.add_argument("--max-tokens-per-batch", type=positive_int, metavar="N", help=max_tokens)


def add_model_args(
    parser: argparse.ArgumentParser,
    *,
    model: str | dict | None,
    output: str | dict | None,
    device: str | dict | None,
    batch_size: str | dict | None,
    quiet: str | dict | None,
    datasets: str | dict | None = DATASETS_HELP,
    dtype: str | dict | None = DTYPE_HELP,
    threads: str | dict | None = THREADS_HELP,
    limit: str | dict | None = None,
    max_tokens: str | dict | None = MAX_TOKENS_HELP,
) -> None:
    """Add the flags shared by the commands that run a model, in this order: ``--model``
    (required), ``--limit`` (:func:`positive_int`), ``--output`` (required), ``--datasets``
    (:func:`existing_folder`), ``--device``, ``--dtype``, ``--threads`` (:func:`thread_count`),
    ``--batch-size`` (:func:`positive_int`), ``--max-tokens-per-batch`` (:func:`positive_int`),
    ``--quiet``.

    Each keyword is the command's help text of that flag, or a dict of ``add_argument`` keywords
    where a command's flag differs (``{"help": ..., "default": ..., "required": False}``, a
    ``metavar``); None leaves the flag out.
    """
    _add(parser, "--model", model, required=True)
    _add(parser, "--limit", limit, type=positive_int)
    _add(parser, "--output", output, required=True)
    _add(parser, "--datasets", datasets, type=existing_folder)
    _add(parser, "--device", device)
    _add(parser, "--dtype", dtype)
    _add(parser, "--threads", threads, type=thread_count)
    _add(parser, "--batch-size", batch_size, type=positive_int)
    _add(parser, "--max-tokens-per-batch", max_tokens, type=positive_int, metavar="N")
    _add(parser, "--quiet", quiet, action="store_true")


def _add(parser: argparse.ArgumentParser, flag: str, spec: str | dict | None, **base) -> None:
    if spec is None:
        return
    parser.add_argument(flag, **{**base, **({"help": spec} if isinstance(spec, str) else spec)})


def run_options(args: argparse.Namespace, **overrides) -> "RunOptions":
    """The :class:`~contstim_bench.driver.RunOptions` of the flags of :func:`add_model_args` (a
    flag a command does not take counts as absent; ``--no-cache``: no cache; ``--quiet``: no
    progress bar), ``overrides`` replacing fields (``progress=True`` where ``--quiet`` only
    silences a command's printed table)."""
    from ..driver import run_options as make

    get = lambda name: getattr(args, name, None)  # noqa: E731
    fields = dict(device=get("device"), dtype=get("dtype"), batch_size=get("batch_size"),
                  max_tokens_per_batch=get("max_tokens_per_batch"), threads=get("threads"),
                  cache=False if get("no_cache") else None, progress=not get("quiet"))
    return make(**{**fields, **overrides})


def run_benchmark(identifier: str, args: argparse.Namespace, *, then=None, **options) -> int:
    """Evaluate ``args.model`` on the registered benchmark ``identifier`` (what ``contstim
    evaluate --benchmark ID`` runs) through :func:`contstim_bench.driver.evaluate`, with the
    flags of :func:`add_model_args` and the benchmark's own ``options``; write the result to
    ``--output`` (the driver's output convention), print its summary unless ``--quiet``;
    ``then(result)`` last (process 0 only: e.g. the result's figures)."""
    from ..driver import check_outputs, evaluate, model_inputs, write_outputs
    from ..report import summary
    from ..scoring.parallel import is_main_process

    check_outputs(args.output, 1, identifiers=[identifier], reads=model_inputs(args.model),
                  datasets_dir=args.datasets)  # before any model runs
    main = is_main_process()
    quiet = args.quiet or not main
    limit = {"limit": args.limit} if getattr(args, "limit", None) is not None else {}
    results = evaluate(args.model, [identifier], options=run_options(args), datasets_dir=args.datasets,
                       benchmark_options={**limit, **options}, log=(lambda m: None) if quiet else None)
    if not main:  # under a launcher only process 0 writes
        return 0
    for path in write_outputs(results, args.output):
        print(f"wrote {path}", file=sys.stderr)
    if not args.quiet:
        print(summary(results[identifier]))
    if then is not None:
        then(results[identifier])
    return 0
