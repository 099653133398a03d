#!/usr/bin/env bash
# Set up ./.venv (scripts/setup.sh) and run the whole test suite.
# pytest's exit code 5 (no tests collected) is a failure here, like any other non-zero code.
set -euo pipefail
cd "$(dirname "$0")/.."
# The suite starts hundreds of Python processes (the README's commands, launches, servers): Python
# caches the bytecode of what they import (in .venv, which setup.sh installs without compiling), so
# torch and transformers are compiled once, not in every process.
unset PYTHONDONTWRITEBYTECODE
bash scripts/setup.sh all
# Headless Chromium for the browser tests (Debian's package; Playwright drives it without a
# browser download). Installed when running as root on Debian; otherwise those tests skip.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "[test] installing Debian's chromium for the browser tests" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "[test] could not install chromium: browser tests will be skipped" >&2
fi
# KenLM's lmplz, so the tests compare the built-in Kneser-Ney estimator with it (optional: the
# script says why and carries on when it cannot build it)
bash scripts/build_lmplz.sh
export PATH="$PWD/.venv/bin:$PATH"
# The tests read the real raw data. Without a data folder ($CONTSTIM_RAW_DATA, or ../shared/data
# beside the checkout), fetch it once at the pinned commits (each file verified by its git blob
# SHA-1; $CONTSTIM_DOWNLOAD_BASE sets the mirror) into .test-data/ and use that.
if [ -z "${CONTSTIM_RAW_DATA:-}${CONTSTIM_DATA_DIR:-}" ] && [ ! -d ../shared/data ]; then
  echo "[test] no raw data folder: fetching the raw files into .test-data/ (about 60 MB, once)" >&2
  .venv/bin/contstim data fetch --out .test-data
  export CONTSTIM_RAW_DATA="$PWD/.test-data"
fi
export CONTSTIM_OFFLINE=1
# On every core (pytest-xdist; $CONTSTIM_TEST_WORKERS sets how many, 0 for one process), a test
# file per worker at a time so that its module fixtures are built once; the files in the order
# tests/conftest.py gives them (the longest first, from tests/module_seconds.txt), not xdist's
# (the files with the most tests first).
.venv/bin/python -m pytest -q -p no:cacheprovider -n "${CONTSTIM_TEST_WORKERS:-auto}" --dist loadfile \
  --no-loadscope-reorder "$@"
