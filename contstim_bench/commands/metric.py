"""``contstim metric push|path``: publish the ``contstim`` evaluate module as a metric Space
(:func:`contstim_bench.metric_hub.push_metric`), or print the module's folder."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metric", help="the contstim evaluate module: locate it or publish it as a Space")
    msub = p.add_subparsers(dest="metric_command", metavar="ACTION")

    push = msub.add_parser("push", help="publish the metric as a Hugging Face metric Space")
    push.add_argument("--repo", required=True, help="Space id ORG/NAME (evaluate.load('ORG/NAME') loads it)")
    push.add_argument("--token", help="Hugging Face token (default: $HF_TOKEN or the saved login)")
    push.add_argument("--endpoint", help="Hub endpoint (default: https://huggingface.co)")
    push.add_argument("--private", action="store_true", help="create the Space as private")
    source = push.add_mutually_exclusive_group(required=True)
    source.add_argument("--wheel", metavar="FILE",
                        help="a contstim_bench-*.whl (python -m build --wheel): uploaded with the Space, which "
                             "installs it from its URL there")
    source.add_argument("--git", metavar="URL@COMMIT",
                        help="install the package from this git repository at this full 40-hex commit")
    source.add_argument("--requirement", metavar="LINE",
                        help="requirements.txt line that installs this package on the Space, given as is")
    push.set_defaults(func=_push)

    path = msub.add_parser("path", help="print the folder of the evaluate module")
    path.set_defaults(func=_path)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _push(args) -> int:
    from ..metric_hub import push_metric

    url = push_metric(args.repo, token=args.token, endpoint=args.endpoint, private=args.private,
                      requirement=args.requirement, wheel=args.wheel, git=args.git)
    print(f"pushed the contstim metric to {url}; load it with evaluate.load({args.repo!r})")
    return 0


def _path(args) -> int:
    from .. import metric_path

    print(metric_path())
    return 0
