"""The ``contstim`` console script.

Every sub-command lives in its own module under :mod:`contstim_bench.commands`; a module there
defines ``register(subparsers)`` which adds its parser and sets ``func`` (called with the parsed
arguments, returning an exit code).  Modules are discovered in name order, so adding a command
never touches this file.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import commands
from ._version import __version__
from .progress import quiet_library_bars
from .provenance import extra_for


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="contstim",
        description=(
            "Benchmark language-model sentence probabilities against human judgments of "
            "controversial sentence pairs (Golan et al. 2023)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"contstim-bench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def run(parser: argparse.ArgumentParser, argv: list[str] | None, prog: str = "contstim") -> int:
    """Parse ``argv`` with ``parser`` and call the chosen command's ``func``.

    Package errors (ValueError, RuntimeError) name the problem and OSErrors (FileNotFoundError,
    IsADirectoryError, PermissionError, ...) name the file, so they are printed as one line
    ``<prog>: error: <type>: <message>`` without a traceback (exit 1); so is a missing optional
    dependency (ModuleNotFoundError), with the package extra that installs it
    (:func:`extra_for`).  Any other exception, a KeyError included (a missing key is a bug, not a
    user error), keeps its traceback.
    """
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    quiet_library_bars()  # a log or a pipe gets plain progress lines, not carriage-return animations
    _terminate_as_interrupt()
    try:
        return int(args.func(args) or 0)
    except Terminated:
        print("terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as exc:
        extra = extra_for(exc.name or "")
        hint = f": install the '{extra}' extra (pip install 'contstim-bench[{extra}]')" if extra else ""
        print(f"{prog}: error: ModuleNotFoundError: {exc}{hint}", file=sys.stderr)
        return 1
    except (ValueError, OSError, RuntimeError) as exc:
        # Errors raised by the package name the problem, and an OSError names the file (a folder
        # given as an output file, a permission denied, a full disk): print them without a traceback.
        name = type(exc).__name__
        print(f"{prog}: error: {name}: {exc}", file=sys.stderr)
        return 1


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM, so that every ``finally`` runs: a folder being written
    beside its old version is removed, the old one stays whole."""


def _terminate_as_interrupt() -> None:
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def on_term(signum, frame):
        raise Terminated()

    try:
        signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError):  # pragma: no cover - not the main thread of the interpreter
        pass


def main(argv: list[str] | None = None) -> int:
    return run(build_parser(), argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
