"""The ``lm-eval:`` family against ``hf-causal``: SmolLM2-135M over 560 main-experiment stimuli.

Both scorers are this package's, built from specs as any command builds them (cache off, same
converted folder, batches of 32, float32 weights): ``hf-causal:<folder>`` (the baseline) and
``lm-eval:hf?pretrained=<folder>`` (lm-evaluation-harness's ``HFLM.loglikelihood`` with the
start token as prefix, log-softmax in float64).  Each timing is the best of ``--repeats`` rounds
(a round runs both, one after the other, so load from other processes affects both alike; model
loading excluded: each scorer is warmed up on two sentences first).  Prints a table of seconds,
sentences/s and the ratio to the baseline, the largest and median per-sentence difference in
nats, and one JSON line.  ``--softmax-dtype float32`` times lm-eval's own default read-out.

    python bench/lm_eval_family.py [--limit 560] [--repeats 3] [--threads N]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crosscheck_causal import stimuli  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=560, help="every (2240/N)-th stimulus, N in all (default 560)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--softmax-dtype", default="float64", choices=("float64", "float32"))
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    import lm_eval

    from contstim_bench.scoring.offline import model_dir
    from contstim_bench.scoring.registry import load_scorer

    sents = stimuli()
    sents = sents[:: max(1, len(sents) // args.limit)][: args.limit]
    folder = model_dir("smollm2-135m", progress=False)
    specs = {"hf-causal": f"hf-causal:{folder}",
             "lm-eval:hf": f"lm-eval:hf?pretrained={folder}&softmax_dtype={args.softmax_dtype}"}
    scorers = {name: load_scorer(spec, cache=False, progress=False, batch_size=args.batch_size, device="cpu")
               for name, spec in specs.items()}
    for scorer in scorers.values():
        scorer.score(sents[:2])  # loads the model (not timed)
    times: dict[str, list[float]] = {name: [] for name in scorers}
    values: dict[str, np.ndarray] = {}
    for r in range(args.repeats):
        for name, scorer in scorers.items():
            t0 = time.perf_counter()
            values[name] = scorer.score(sents)
            times[name].append(time.perf_counter() - t0)
        print(f"  repeat {r + 1}: " + ", ".join(f"{n} {t[-1]:.2f} s" for n, t in times.items()), file=sys.stderr)
    best = {name: min(t) for name, t in times.items()}
    diff = np.abs(values["lm-eval:hf"] - values["hf-causal"])
    result = {
        "bench": "lm_eval_family",
        "model": "smollm2-135m",
        "n_sentences": len(sents),
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "threads": torch.get_num_threads(),
        "softmax_dtype": args.softmax_dtype,
        "hf_causal_s": round(best["hf-causal"], 4),
        "lm_eval_hf_s": round(best["lm-eval:hf"], 4),
        "lm_eval_over_hf_causal": round(best["lm-eval:hf"] / best["hf-causal"], 4),
        "max_abs_diff_nats": float(diff.max()),
        "median_abs_diff_nats": float(np.median(diff)),
        "within_1e-4": bool(diff.max() < 1e-4),
        "lm_eval": getattr(lm_eval, "__version__", None),
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "load_avg_1min": round(os.getloadavg()[0], 2),
    }
    print(f"{'scorer':<14} {'seconds':>8} {'sent/s':>8} {'x hf-causal':>12}")
    for name, t in best.items():
        print(f"{name:<14} {t:8.2f} {len(sents) / t:8.1f} {t / best['hf-causal']:12.3f}")
    print(f"per-sentence |lm-eval:hf - hf-causal|: max {diff.max():.2e} nats, median {np.median(diff):.2e}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
