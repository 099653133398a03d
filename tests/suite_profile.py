"""Where a run of the test suite spends its CPU: every process of the run (the xdist workers and
each process a test starts), by kind of work, from a py-spy profile.

    .venv/bin/python -m pip install py-spy    # a developer's tool, not a dependency of the package
    py-spy record --subprocesses --nonblocking --rate 25 --format raw -o run.prof -- \\
        .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --no-loadscope-reorder
    python tests/suite_profile.py run.prof --rate 25

(with the environment of scripts/test.sh: ``CONTSTIM_OFFLINE=1``, the raw data folder, PATH with
``.venv/bin``).  Each line of py-spy's raw output is one call stack, its frames joined by ``;``
from the outermost, each process a ``process PID:"COMMAND"`` frame, then the number of samples
it got; py-spy counts a thread only while it runs, so at ``--rate R`` a sample is 1/R CPU-second.
A process a test starts through ``bash`` (the README's blocks) has no Python parent in the
profile: it is counted with the started processes all the same, by its own command.

``--durations=0`` (tests/slow_tests.py) says which tests take the time; this says what the time
is made of (imports in fresh processes, model forward passes, figures, pip), which is what decides
whether it can be shared or only done faster.
"""
from __future__ import annotations

import argparse
import collections
import re
from dataclasses import dataclass
from pathlib import Path

WORKER = "exec(eval(sys.stdin.readline()))"
"""The bootstrap of a pytest-xdist worker (``python -c 'import sys;exec(eval(...))'``)."""
KINDS = (
    ("imports", ("_find_and_load (",)),
    ("model forward passes", ("forward (", "_score_ids (")),
    ("loading models and tokenizers", ("from_pretrained (", "load_tokenizer (", "check_causal_config (")),
    ("figures (matplotlib)", ("/matplotlib/", "(matplotlib/")),
    ("pip", ("(pip/", "/pip/")),
)
"""Kinds of work, the first whose frame text a stack contains wins; ``other`` for the rest."""
OTHER = "other"


@dataclass(frozen=True)
class Sample:
    """One stack of the profile: ``samples`` samples of the process ``command``, whose ``role``
    is ``workers`` (an xdist worker), ``started`` (a process a worker or a test's bash started) or
    ``pytest`` (the controller); ``kind`` of :data:`KINDS`."""

    command: str
    role: str
    kind: str
    samples: int


def frames(stack: str) -> list[str]:
    """The frames of one raw stack, a process frame whole although its command may hold ``;``."""
    out: list[str] = []
    for part in stack.split(";"):
        if out and out[-1].startswith("process ") and not out[-1].endswith('"'):
            out[-1] += ";" + part
        else:
            out.append(part)
    return out


def short_command(command: str) -> str:
    """A process's command without interpreters, folders and the run's temporary paths:
    ``contstim evaluate``, ``python -m pip install``, ``python app.py``."""
    words = command.split()
    if words and re.search(r"(^|/)python[\d.]*$", words[0]):
        words = words[1:]
        while words and words[0] in ("-u", "-B"):  # flags without a value
            words = words[1:]
    if words and words[0].endswith("/contstim"):
        return " ".join(["contstim", *words[1:2]])
    if words[:1] == ["-m"]:
        return " ".join(["python -m", *words[1:3]])
    if words[:1] == ["-c"]:
        return "python -c"
    return " ".join(["python", Path(words[0]).name] if words else ["?"])


def kind_of(stack: str) -> str:
    return next((name for name, marks in KINDS if any(m in stack for m in marks)), OTHER)


STACK_START = re.compile(r'process \d+:"')
"""How every stack of a ``--subprocesses`` profile begins: the run's first process frame."""


def read_profile(path: str | Path) -> list[Sample]:
    """The stacks of a py-spy raw profile written with ``--subprocesses``.  A stack begins at a
    line that starts with a process frame and runs until the next such line (a ``python -c``
    program's text may hold newlines, and a line of it may end in a number, ``len(t) / 7``); it
    ends with its sample count.  ValueError names the line of a stack that is not ``STACK COUNT``
    or has no process frame, and an empty file."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    records: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() and not records:
            continue
        if records and not STACK_START.match(line):
            records[-1] = (records[-1][0], records[-1][1] + "\n" + line)
        else:
            records.append((number, line))
    out = []
    for first, record in records:
        stack, _, count = record.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            raise ValueError(f"{path} line {first}: not 'STACK COUNT' (a py-spy --format raw profile?)")
        parts = frames(stack)
        procs = [k for k, f in enumerate(parts) if f.startswith("process ")]
        if not procs:
            raise ValueError(f"{path} line {first}: a stack without a process frame (record with py-spy "
                             f"--subprocesses)")
        inner = parts[procs[-1]]
        command = inner.split(":", 1)[1].strip('"')
        role = ("workers" if WORKER in command
                else "pytest" if len(procs) == 1 and " -m pytest" in f" {command}" else "started")
        out.append(Sample("pytest worker" if role == "workers" else short_command(command), role,
                          kind_of(stack), int(count)))
    if not out:
        raise ValueError(f"{path}: no stack (a py-spy --format raw profile?)")
    return out


def table(samples: list[Sample], rate: float, top: int = 15) -> str:
    """The report: CPU-seconds by kind of work in the workers and in the processes started, then
    the started commands with the most seconds (and how many of them went to imports)."""
    where = collections.Counter()
    for s in samples:
        where[(s.kind, s.role)] += s.samples
    total = sum(s.samples for s in samples)
    lines = [f"{total / rate:,.0f} CPU-s sampled at {rate:g}/s",
             f"{'kind of work':32} {'workers':>8} {'started':>8} {'all':>8}"]
    for name in [k for k, _ in KINDS] + [OTHER]:
        w, s_ = where[(name, "workers")] / rate, where[(name, "started")] / rate
        lines.append(f"{name:32} {w:8.0f} {s_:8.0f} {w + s_ + where[(name, 'pytest')] / rate:8.0f}")
    by_command, imports = collections.Counter(), collections.Counter()
    for s in samples:
        if s.role == "started":
            by_command[s.command] += s.samples
            imports[s.command] += s.samples if s.kind == "imports" else 0
    lines.append("\nstarted processes, by command (CPU-s, of which imports):")
    for command, n in by_command.most_common(top):
        lines.append(f"{n / rate:8.1f} {imports[command] / rate:7.1f}  {command}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", help="py-spy record --subprocesses --format raw output")
    ap.add_argument("--rate", type=float, default=25.0, help="py-spy's --rate, samples per second (default 25)")
    ap.add_argument("--top", type=int, default=15, help="how many started commands to list (default 15)")
    args = ap.parse_args(argv)
    if args.rate <= 0:
        ap.error(f"--rate must be positive, got {args.rate:g}")
    print(table(read_profile(args.profile), args.rate, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
