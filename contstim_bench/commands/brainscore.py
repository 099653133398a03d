"""``contstim brainscore plugin --out DIR``: write the benchmark as a Brain-Score Language plugin
(:mod:`contstim_bench.brainscore_plugin.folder`) and print its folder."""
from __future__ import annotations

import argparse
import sys

from ._common import DATASETS_HELP, existing_folder


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "brainscore",
        help="the benchmark as a Brain-Score Language plugin (contstim brainscore plugin)",
        description="The benchmark as a plugin of Brain-Score Language 2.3 (brainscore-language on PyPI), so that every "
                    "model registered there can be scored on controversial sentence pairs (docs/brainscore.md).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    w = actions.add_parser(
        "plugin",
        help="write the plugin folder and print the path of benchmarks/golan2023",
        description=(
            "Write DIR/benchmarks/golan2023: benchmarks Golan2023.<experiment>-accuracy and -srcs for every experiment "
            "whose human data is present (pll, and main when its results file was supplied) and for every round of "
            "the datasets folder; each scores a subject's reading times (summed surprisal) of the sentences through "
            "the package's own analysis and returns the value over its lower noise ceiling, with the raw value, the "
            "ceilings and the standard error as attributes. The folder holds its data (the built datasets) and a "
            "test with reference values; its requirements.txt pins this package. Copy the folder into "
            "brainscore_language/benchmarks/ (or contribute it) and load it with "
            "brainscore_language.load_benchmark('Golan2023.pll-accuracy')."
        ),
    )
    w.add_argument("--out", metavar="DIR", required=True,
                   help="folder to write (it receives benchmarks/golan2023/): written beside and renamed into place; a "
                        "folder this command wrote is replaced if it holds nothing else, any other non-empty folder (or "
                        "one holding --datasets) is refused")
    w.add_argument("--datasets", type=existing_folder, help=DATASETS_HELP)
    w.set_defaults(func=_plugin)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _plugin(args) -> int:
    from ..brainscore_plugin.folder import write_plugin_folder
    from ..data.paths import default_datasets_dir
    from ..staging import check_inputs_kept

    # the folder is replaced whole and copies the datasets: never one inside the other
    datasets = args.datasets if args.datasets is not None else default_datasets_dir()
    check_inputs_kept([("--out", args.out)], [("--datasets", datasets)], folders=("--datasets",))
    plugin, names = write_plugin_folder(args.out, args.datasets, log=lambda msg: print(msg, file=sys.stderr))
    print(f"wrote the Brain-Score Language plugin ({', '.join(names)}) to {plugin}", file=sys.stderr)
    print(plugin)
    return 0
