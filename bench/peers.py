"""The peers of ``bench/causal.py``, each in its own venv made here: minicons 0.3.39 (needs
``transformers<5``) and lm-evaluation-harness's ``HFLM.loglikelihood`` (transformers 5).  Each venv
gets ``torch==2.13.0`` first (pip's on-disk CPU wheel, so that no CUDA wheel is pulled), then the
peer.  Both load SmolLM2 from the package's converted offline folder (``scoring/offline.py``), score
the same sentences conditioned on ``<|endoftext|>`` and report the seconds spent in scoring alone
(model loading excluded) and the scores, in input order.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PEERS = {
    "minicons": ["minicons==0.3.39", "transformers<5"],
    "lm-eval": ["lm-eval[hf]==0.4.13", "transformers>=5"],
}

_MINICONS = r"""
import json, sys, time
import torch, minicons
from minicons import scorer
a = json.load(open(sys.argv[1]))
torch.set_num_threads(a["threads"])
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast
# transformers 4 cannot read the tokenizer_config.json that transformers 5 wrote (its class
# TokenizersBackend is new): the tokenizer is built from the folder's tokenizer.json
tok = PreTrainedTokenizerFast(tokenizer_file=a["folder"] + "/tokenizer.json", bos_token=a["start"],
                              eos_token="<|im_end|>", pad_token="<|im_end|>")
from transformers import AutoConfig
# transformers 5 writes RoPE settings as rope_parameters; transformers 4 reads rope_theta (and would
# otherwise fall back to its default base, a different model)
config = AutoConfig.from_pretrained(a["folder"])
saved = json.load(open(a["folder"] + "/config.json"))
rope = saved.get("rope_parameters") or {}
if "rope_theta" in rope:
    config.rope_theta = rope["rope_theta"]
model = AutoModelForCausalLM.from_pretrained(a["folder"], config=config, torch_dtype=torch.float32).eval()
lm = scorer.IncrementalLMScorer(model, device="cpu", tokenizer=tok)
lm.tokenizer.bos_token = a["start"]
total = lambda x: x.sum(0).item()
lm.sequence_score(a["batches"][0][:2], reduction=total, bos_token=True)  # warm-up
best = None
for _ in range(a["repeats"]):
    t0 = time.perf_counter()
    out = [s for b in a["batches"] for s in lm.sequence_score(b, reduction=total, bos_token=True)]
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
import transformers
json.dump({"scores": out, "seconds": best, "versions": {"minicons": "0.3.39", "transformers": transformers.__version__,
           "torch": torch.__version__}}, open(sys.argv[2], "w"))
"""

_LM_EVAL = r"""
import json, sys, time
import torch, transformers
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
a = json.load(open(sys.argv[1]))
torch.set_num_threads(a["threads"])
lm = HFLM(pretrained=a["folder"], device=a.get("device", "cpu"), batch_size=a["batch_size"], dtype=a.get("dtype", "float32"))
sents = [s for b in a["batches"] for s in b]
reqs = [Instance(request_type="loglikelihood", doc={}, arguments=(a["start"], s), idx=i) for i, s in enumerate(sents)]
lm.loglikelihood(reqs[:2], disable_tqdm=True)  # warm-up
best = None
for _ in range(a["repeats"]):
    t0 = time.perf_counter()
    out = lm.loglikelihood(reqs, disable_tqdm=True)
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
import lm_eval
json.dump({"scores": [ll for ll, _ in out], "seconds": best,
           "versions": {"lm_eval": getattr(lm_eval, "__version__", "0.4.13"), "transformers": transformers.__version__,
                        "torch": torch.__version__}}, open(sys.argv[2], "w"))
"""

WORKERS = {"minicons": _MINICONS, "lm-eval": _LM_EVAL}


def make_venv(peer: str, root: str | os.PathLike) -> Path:
    """``root/<peer>/bin/python`` with torch 2.13.0 and the peer installed (made once)."""
    venv = Path(root) / peer
    python = venv / "bin" / "python"
    marker = venv / ".contstim-peer-ready"
    if marker.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check"]
    subprocess.run([*pip, "torch==2.13.0"], check=True)
    subprocess.run([*pip, *PEERS[peer]], check=True)
    marker.write_text("ok\n")
    return python


def run_peer(peer: str, python: str | os.PathLike, folder: str | os.PathLike, batches: list[list[str]], *,
             start: str = "<|endoftext|>", repeats: int = 1, threads: int = 1, batch_size: int = 32,
             timeout: float = 3600, device: str = "cpu", dtype: str = "float32") -> dict:
    """Run ``peer``'s worker on ``batches`` in its venv; returns its JSON (scores in input order,
    seconds of the best repeat, versions).  RuntimeError with the worker's stderr on failure."""
    with tempfile.TemporaryDirectory(prefix=f"contstim-{peer}-") as tmp:
        inp, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        inp.write_text(json.dumps({"folder": str(folder), "start": start, "batches": batches, "repeats": repeats,
                                   "threads": threads, "batch_size": batch_size,
                                   "device": device, "dtype": dtype}))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": str(threads)}
        proc = subprocess.run([str(python), "-c", WORKERS[peer], str(inp), str(out)], capture_output=True, text=True,
                              timeout=timeout, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"{peer} worker failed ({python}):\n{proc.stderr[-3000:]}")
        return json.loads(out.read_text())
