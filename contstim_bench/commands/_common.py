"""What the commands that run a model share: their common flags (:func:`add_model_args`) and the
run of one registered benchmark (:func:`run_benchmark`).  Not a command: the CLI skips modules
whose name starts with ``_``."""
from __future__ import annotations

import argparse
import sys

DATASETS_HELP = "folder of built datasets (default: $CONTSTIM_DATASETS)"
DTYPE_HELP = "weights dtype for model families that run a network: float32 (default), bfloat16, float16, float64"
THREADS_HELP = "torch CPU threads (default: torch's choice; 1 is often much faster on a busy machine)"


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (``--batch-size 0`` is refused while parsing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


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
    (:func:`existing_folder`), ``--device``, ``--dtype``, ``--threads`` (:func:`positive_int`),
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
    _add(parser, "--threads", threads, type=positive_int)
    _add(parser, "--batch-size", batch_size, type=positive_int)
    _add(parser, "--max-tokens-per-batch", max_tokens, type=positive_int, metavar="N")
    _add(parser, "--quiet", quiet, action="store_true")


def _add(parser: argparse.ArgumentParser, flag: str, spec: str | dict | None, **base) -> None:
    if spec is None:
        return
    parser.add_argument(flag, **{**base, **({"help": spec} if isinstance(spec, str) else spec)})


def run_benchmark(identifier: str, args: argparse.Namespace, **options) -> int:
    """Evaluate ``args.model`` on the registered benchmark ``identifier`` (what ``contstim
    evaluate --benchmark ID`` runs) with the flags of :func:`add_model_args` and the benchmark's
    own ``options``; write the result to ``--output``, print its summary unless ``--quiet``."""
    from ..api import set_threads
    from ..benchmarks import get_benchmark
    from ..report import summary
    from ..results import write_result
    from ..results.io import check_output_file

    from ..scoring.parallel import data_parallel, is_main_process

    check_output_file(args.output)  # before any model runs
    set_threads(args.threads)
    main = is_main_process()
    quiet = args.quiet or not main
    with data_parallel():
        result = get_benchmark(identifier).evaluate(
            args.model, datasets_dir=args.datasets, log=(lambda m: None) if quiet else None, limit=args.limit,
            device=args.device, dtype=args.dtype, batch_size=args.batch_size,
            max_tokens_per_batch=args.max_tokens_per_batch, progress=not quiet, **options)
    if not main:  # under accelerate launch only process 0 writes
        return 0
    path = write_result(result, args.output)
    if not args.quiet:
        print(summary(result))
    print(f"wrote {path}", file=sys.stderr)
    return 0
