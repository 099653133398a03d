"""Cross-check masked-LM PLL scores against minicons' ``MaskedLMScorer`` (and the causal check).

minicons 0.3.39 needs ``transformers<5``, so it runs in a separate environment given by the path
of its python (``--minicons-python``), made with::

    python3.11 -m venv /tmp/minicons-venv
    /tmp/minicons-venv/bin/pip install torch==2.13.0 'transformers<5' minicons==0.3.39 gguf

A WordPiece tokenizer (1,000 tokens, so many words split into pieces) is trained on the natural
sentences of Golan et al. and a small random ``BertForMaskedLM`` built on it is saved to a
temporary folder; both environments load that folder.  Our ``pll`` / ``pll-word-l2r`` must
equal minicons' ``PLL_metric="original"`` / ``"within_word_l2r"`` (sum of natural-log token
probabilities) within 1e-4 on every sentence.  When ``bench/crosscheck_causal.py`` exists, its
``run(minicons_python)`` (SmolLM2 vs ``IncrementalLMScorer``) runs too and both results print.

    python bench/crosscheck.py --minicons-python /tmp/minicons-venv/bin/python [--n 60]

Ends with one JSON line; exit status 1 when a check disagrees.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from contstim_bench.data.build_contstim import POOL_SYNTHESIS

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TOLERANCE = 1e-4
NATURAL = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool
EXTRA = ["Don't stop, it's fine.", "Beehives are disproportionally schizophrenic"]


def _tiny_mlm():
    """``tests/tiny_mlm.py`` (small masked LMs built locally): a test helper, not part of the package."""
    tests = str(Path(__file__).resolve().parent.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import tiny_mlm

    return tiny_mlm


# Runs inside the minicons environment (transformers 4).  The tokenizer is rebuilt from its
# tokenizer.json because transformers 4 does not know the v5 tokenizer class name.
_WORKER = r"""
import json, sys
import torch, transformers, minicons
from transformers import AutoModelForMaskedLM, PreTrainedTokenizerFast
from minicons import scorer

args = json.load(open(sys.argv[1]))
torch.set_num_threads(args["threads"])
tok = PreTrainedTokenizerFast(tokenizer_file=args["dir"] + "/tokenizer.json", unk_token="[UNK]",
                              pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
model = AutoModelForMaskedLM.from_pretrained(args["dir"], torch_dtype=torch.float32).eval()
lm = scorer.MaskedLMScorer(model, "cpu", tokenizer=tok)
total = lambda x: x.sum(0).item()
out = {"versions": {"minicons": getattr(minicons, "__version__", "0.3.39"),
                    "transformers": transformers.__version__, "torch": torch.__version__}}
for metric in ("original", "within_word_l2r"):
    scores = []
    for i in range(0, len(args["sentences"]), 8):
        scores.extend(lm.sequence_score(args["sentences"][i:i + 8], reduction=total, PLL_metric=metric))
    out[metric] = scores
json.dump(out, open(sys.argv[2], "w"))
"""


def build_model(folder: Path, pool: list[str]) -> Path:
    """Save the WordPiece tokenizer and a small random BERT to ``folder``."""
    tiny_mlm = _tiny_mlm()

    tok = tiny_mlm.train_wordpiece(pool, 1000)
    model = tiny_mlm.random_masked_lm(tok, hidden=64, layers=2, heads=2, seed=7, init_range=0.1)
    return tiny_mlm.save(model, tok, folder)


def run_minicons(minicons_python: str, folder: Path, sentences: list[str]) -> dict:
    if not Path(minicons_python).is_file():
        raise FileNotFoundError(f"--minicons-python {minicons_python} does not exist; see this script's docstring")
    with tempfile.TemporaryDirectory() as tmp:
        args = Path(tmp) / "args.json"
        out = Path(tmp) / "out.json"
        args.write_text(json.dumps({"dir": str(folder), "sentences": sentences, "threads": 2}))
        proc = subprocess.run([minicons_python, "-c", _WORKER, str(args), str(out)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"minicons worker failed:\n{proc.stderr[-3000:]}")
        return json.loads(out.read_text())


def run_masked(minicons_python: str, n: int = 60) -> dict:
    """Compare ``pll`` and ``pll-word-l2r`` with minicons on ``n`` natural sentences + 2 extra."""
    from contstim_bench.data import sources
    from contstim_bench.scoring import masked
    from contstim_bench.scoring.base import LoadSettings
    from contstim_bench.scoring.run_options import RunOptions

    pool = sources.resolve(NATURAL).read_text(encoding="utf-8").splitlines()
    sentences = pool[:: max(1, len(pool) // n)][:n] + EXTRA
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_model(Path(tmp) / "mlm", pool)
        ours = {
            m: masked.from_spec(str(folder), {"method": m}, LoadSettings("hf-masked", RunOptions(device="cpu", cache=False, progress=False))).score(sentences)
            for m in ("pll", "pll-word-l2r")
        }
        theirs = run_minicons(minicons_python, folder, sentences)
    result: dict = {"bench": "crosscheck_masked", "n_sentences": len(sentences), "tolerance": TOLERANCE,
                    "minicons_versions": theirs["versions"]}
    agree = True
    for ours_name, metric in (("pll", "original"), ("pll-word-l2r", "within_word_l2r")):
        diff = np.abs(ours[ours_name] - np.asarray(theirs[metric], dtype=np.float64))
        result[f"{ours_name}_max_abs_diff"] = float(diff.max())
        result[f"{ours_name}_mean_logprob"] = float(np.mean(ours[ours_name]))
        agree &= bool(diff.max() <= TOLERANCE)
    # the two metrics must differ somewhere, or the check would not tell them apart
    result["l2r_differs_from_original"] = float(np.abs(ours["pll"] - ours["pll-word-l2r"]).max())
    result["agree"] = bool(agree and result["l2r_differs_from_original"] > 1e-3)
    return result


def _causal_module():
    path = Path(__file__).with_name("crosscheck_causal.py")
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("crosscheck_causal", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent.parent))
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minicons-python", default="/tmp/minicons-venv/bin/python")
    ap.add_argument("--n", type=int, default=60, help="natural sentences for the masked check (default 60)")
    ap.add_argument("--skip-causal", action="store_true", help="only the masked check")
    args = ap.parse_args(argv)

    masked_res = run_masked(args.minicons_python, args.n)
    print("masked:", json.dumps(masked_res), file=sys.stderr)
    combined = {"bench": "crosscheck", "masked": masked_res}
    causal = None if args.skip_causal else _causal_module()
    if causal is not None:
        causal_res = causal.run(args.minicons_python)
        print("causal:", json.dumps(causal_res), file=sys.stderr)
        combined["causal"] = causal_res
    combined["agree"] = bool(masked_res["agree"] and combined.get("causal", {"agree": True})["agree"])
    print(json.dumps(combined))
    return 0 if combined["agree"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
