#!/usr/bin/env bash
# Build the Python environment the Brain-Score plugin tests run in: brainscore-language 2.3.0 with
# its own pins (numpy<2, transformers<5), the CPU build of torch, contstim-bench's core from this
# checkout (same pip command: it installs beside Brain-Score's pins only so, with pyarrow<26),
# pytest, and gguf with accelerate (transformers 4 reads the GGUF file of SmolLM2, the package's
# default model, with them: docs/brainscore.md). It cannot share .venv: the package itself needs transformers 5.
#
# Usage: bash scripts/build_brainscore_venv.sh      prints the environment's python on stdout
#
# Built once per machine, in the user's cache ($XDG_CACHE_HOME or ~/.cache,
# contstim_bench/brainscore-venv-<key>/, the key a digest of what is installed: this script and the
# package's core requirements), as the Chromium install and lmplz are; a later checkout reuses it
# (the tests put their checkout first on PYTHONPATH, so the installed copy of the package is only
# what satisfies the plugin's requirements.txt). CONTSTIM_BRAINSCORE_REBUILD=1 builds anew.
# Exits 1 with the reason on stderr when it cannot build (no Python 3.11, no package index).
set -euo pipefail
cd "$(dirname "$0")/.."
BRAINSCORE="brainscore-language==2.3.0"
TORCH="torch==2.13.0"
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
key=$(cat scripts/build_brainscore_venv.sh setup.py | sha256sum | cut -c1-12)
venv="${XDG_CACHE_HOME:-$HOME/.cache}/contstim_bench/brainscore-venv-$key"
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9  # one build at a time (test workers, checkouts); the others then find it complete
if [ -z "${CONTSTIM_BRAINSCORE_REBUILD:-}" ] && [ -f "$venv/.complete" ]; then
  echo "$venv/bin/python"
  exit 0
fi
echo "[brainscore] building $venv ($BRAINSCORE, its pins, the package's core; a few minutes, once)" >&2
rm -rf "$venv"  # a build cut short has no .complete
"$PY" -m venv "$venv"
pip_() {
  "$venv/bin/python" -m pip --disable-pip-version-check -q "$@" 2> >(grep -v "is ignored: it is neither" >&2)
}
pip_ install --upgrade pip >/dev/null
# the CPU wheel first (PyTorch's CPU index unless pip already finds the +cpu build), so that
# Brain-Score's torch requirement never pulls CUDA packages
tmpd=$(mktemp -d)
if "$venv/bin/python" -m pip download -q --no-deps --no-index -d "$tmpd" "$TORCH" >/dev/null 2>&1 \
     && ls "$tmpd" | grep -q "+cpu"; then
  pip_ install "$TORCH"
else
  pip_ install "$TORCH" --index-url "${CONTSTIM_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
fi
rm -rf "$tmpd"
# one pip command: the package's core resolves against Brain-Score's pins (pyarrow 26 would import
# under numpy<2, then `datasets` fails on it, and pip's check does not notice)
pip_ install "$BRAINSCORE" "pyarrow<26" "pytest>=8" "gguf>=0.17" "accelerate>=1.0" "$PWD"
"$venv/bin/python" -c "import brainscore_language, contstim_bench.driver, datasets, transformers, numpy; \
assert int(numpy.__version__.split('.')[0]) < 2 and int(transformers.__version__.split('.')[0]) < 5" \
  || { echo "[brainscore] the environment does not import" >&2; exit 1; }
touch "$venv/.complete"
echo "$venv/bin/python"
