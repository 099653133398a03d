"""``contstim space metric|leaderboard --out DIR``: write a ready-to-push Gradio Space folder
(:func:`contstim_bench.spaces.stage_space`)."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "space",
        help="write a ready-to-push Hugging Face Space folder (the metric or the leaderboard)",
        description=(
            "Write app.py, README.md (the Space's YAML header) and requirements.txt into a new folder; "
            "requirements.txt installs contstim-bench from a wheel copied into the folder (--wheel, "
            "installed from its URL in the Space --repo) or from a pinned git commit (--git). Start it "
            "locally with `python app.py` (GRADIO_SERVER_PORT chooses the port); push it with "
            "`hf upload ORG/NAME DIR --repo-type space`."
        ),
    )
    p.add_argument("kind", choices=["metric", "leaderboard"],
                   help="metric: the contstim evaluate module (evaluate.load('ORG/NAME')); "
                        "leaderboard: the Gradio leaderboard app with its result files")
    p.add_argument("--out", required=True, metavar="DIR", help="new or empty folder to write")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--wheel", metavar="FILE",
                        help="contstim_bench-*.whl built with `python -m build --wheel` (needs --repo)")
    source.add_argument("--git", metavar="URL@COMMIT",
                        help="git repository of the package and a full 40-hex commit, e.g. "
                             "https://github.com/ORG/contstim-bench@<commit>")
    p.add_argument("--repo", metavar="ORG/NAME",
                   help="the Space's id (metric: names the script NAME.py; --wheel: the URL of the wheel)")
    p.add_argument("--endpoint", help="hub endpoint of --repo (default: https://huggingface.co)")
    p.add_argument("--results", metavar="DIR",
                   help="leaderboard: result files to show (default: leaderboard/results of this checkout)")
    p.add_argument("--no-validate", action="store_true", help="leaderboard: copy the results without validating them")
    p.add_argument("--datasets", help="folder of built datasets, for validating the results (default: $CONTSTIM_DATASETS)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..spaces import stage_space

    folder = stage_space(args.kind, args.out, wheel=args.wheel, git=args.git, repo_id=args.repo,
                         endpoint=args.endpoint, results_dir=args.results, validate=not args.no_validate,
                         datasets_dir=args.datasets)
    print(f"wrote the {args.kind} Space to {folder}: start it with `cd {folder} && python app.py`")
    return 0
