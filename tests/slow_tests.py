"""Write tests/slow_tests.txt from the ``--durations=0`` table of a full run: every test whose
setup, call and teardown together took more than ``--seconds`` (default 2); and
tests/module_seconds.txt: each module's seconds in that run, the order in which the xdist workers
take the modules (the longest first, conftest.py).

    bash scripts/test.sh --durations=0 > run.log 2>&1; python tests/slow_tests.py run.log
"""
from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

LINE = re.compile(r"\s*([\d.]+)s (setup|call|teardown)\s+(tests/\S+)")
HEADER = """\
# Tests that took more than {seconds:g} s (setup, call and teardown) in a full run of scripts/test.sh on
# 2 cores (--durations=0): marked `slow` by conftest.py, so that `scripts/test.sh -m "not slow"`
# is the quick loop. Regenerate with: python tests/slow_tests.py DURATIONS_LOG
"""
COSTS_HEADER = """\
# Seconds each test module took (setup, call and teardown of its tests) in a full run of
# scripts/test.sh on 2 cores. conftest.py hands the modules to the xdist workers longest first, so
# that no long module starts last while the other worker idles. Regenerate with tests/slow_tests.py.
"""
MODULES = "# Whole modules (their fixtures convert a real model or build every result): a line without ::\n"
"""Whole-module lines (no ``::``) are kept from the file as it is."""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="output of a pytest run with --durations=0")
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args(argv)
    totals: collections.Counter = collections.Counter()
    for line in Path(args.log).read_text(encoding="utf-8", errors="replace").splitlines():
        m = LINE.match(line)
        if m:
            totals[m.group(3)] += float(m.group(1))
    if not totals:
        raise SystemExit(f"{args.log}: no --durations table found")
    slow = sorted(t for t, s in totals.items() if s > args.seconds)
    out = Path(__file__).with_name("slow_tests.txt")
    modules = [line for line in out.read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#") and "::" not in line] if out.exists() else []
    out.write_text(HEADER.format(seconds=args.seconds) + MODULES + "".join(f"{m}\n" for m in modules)
                   + "".join(f"{t}\n" for t in slow), encoding="utf-8")
    modules_s: collections.Counter = collections.Counter()
    for test, seconds in totals.items():
        modules_s[test.partition("::")[0]] += seconds
    costs = Path(__file__).with_name("module_seconds.txt")
    costs.write_text(COSTS_HEADER + "".join(f"{s:.0f} {m}\n" for m, s in modules_s.most_common()), encoding="utf-8")
    print(f"{out}: {len(slow)} of {len(totals)} timed tests took more than {args.seconds:g} s")
    print(f"{costs}: {len(modules_s)} modules")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
