"""Run several ``contstim`` commands one after the other in each process of one launch: the script
that tests/scoring/test_parallel_scoring.py starts with ``torchrun --nproc_per_node 2``, so that one
launch (whose three processes import torch, transformers and accelerate: about 25 CPU-seconds before
any work) serves every sharded command of the module instead of one launch per command.

``python launched_commands.py PLAN.json OUT``: PLAN is a JSON list of ``{"name", "args", "env"}``;
each command runs as ``python -m contstim_bench ARGS`` would (:func:`contstim_bench.cli.main`) with
``env`` added to the environment.  Process ``r`` first writes ``OUT/rank.r``: ``rank r of n saw
[every rank]`` after a gather across the launch.  Then for each command it writes ``OUT/NAME.r.err``,
everything the process wrote to its stdout and stderr meanwhile (at the file-descriptor level, so
library and C output too), and ``OUT/NAME.r.rc``, the command's exit status (``exception`` when it
raised, its traceback in the ``.err`` file).
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path


def run_captured(args: list[str], env: dict[str, str], err: Path) -> str:
    """The exit status of ``contstim ARGS`` run in this process with ``env`` set, its output in ``err``."""
    from contstim_bench.cli import main

    os.environ.update(env)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(err, "wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            status = str(main(args))
        except SystemExit as exc:  # argparse's errors
            status = str(exc.code)
        except BaseException:  # noqa: BLE001 - recorded for the test, which fails on it
            traceback.print_exc()
            status = "exception"
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
    return status


def main(plan_file: str, out: str) -> None:
    from contstim_bench.scoring.parallel import _gather, processes

    folder = Path(out)
    p = processes()
    every = _gather(p.index)
    (folder / f"rank.{p.index}").write_text(f"rank {p.index} of {p.count} saw {every}")
    for command in json.loads(Path(plan_file).read_text(encoding="utf-8")):
        status = run_captured(command["args"], command.get("env", {}), folder / f"{command['name']}.{p.index}.err")
        (folder / f"{command['name']}.{p.index}.rc").write_text(status)


if __name__ == "__main__":
    main(*sys.argv[1:])
