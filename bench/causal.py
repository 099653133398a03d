"""Throughput of causal scoring: SmolLM2-135M over the 2,240 main-experiment stimuli.

Timings over the same sentences (tokens/s counts the positions a scorer must feed: every token
of a sentence after the start token, i.e. the start token and every token but the last):

* **floor**: the bare forward pass (``model(input_ids, attention_mask)``) over every token but the
  last, on the package's length-sorted batches tokenised and padded in advance: the least any
  scorer must spend (lm-evaluation-harness never feeds a sequence's last token either);
* **package**: ``CausalScorer.score(sentences)`` end to end (validation, tokenisation, padding,
  forward, log-softmax read-out, float64 sums), cache off;
* **minicons** (``IncrementalLMScorer.sequence_score(..., bos_token=True)``, minicons 0.3.39,
  transformers<5) and **lm-eval** (``HFLM.loglikelihood`` with the start token as context,
  lm-evaluation-harness 0.4.13, transformers 5), each in its own venv that ``--peers DIR`` makes
  (``bench/peers.py``), both loading SmolLM2 from the package's converted offline folder; the
  time excludes their model loading.

Each timing is the best of ``--repeats`` rounds; a round runs every scorer one after the other,
so that load from other processes affects all alike.  ``--scaling`` adds a data-parallel run:
``torchrun --nproc_per_node 1`` and ``2`` of ``contstim score`` over the same
sentences (cache off, one thread per process; wall time of the whole command, model loading
included; ideal ratio 2.0 on 2 free cores).  Prints a table and ends with one JSON line.

    python bench/causal.py [--peers /tmp/contstim-peers] [--scaling] [--limit 560] [--threads 1]
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
from peers import make_venv, run_peer  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers", metavar="DIR", default=None,
                    help="folder of the peers' venvs (made there on first use); without it the peers are skipped")
    ap.add_argument("--scaling", action="store_true", help="also time torchrun with 1 and 2 CPU processes")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None,
                    help="every (2240/N)-th stimulus only, N in all (quick runs on a busy machine)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    from contstim_bench.scoring.causal import CausalScorer
    from contstim_bench.scoring.offline import model_dir

    sents = stimuli()
    if args.limit:
        sents = sents[:: max(1, len(sents) // args.limit)][: args.limit]
    scorer = CausalScorer(model_dir("smollm2-135m"), start="<|endoftext|>", cache=False,
                          progress=False, batch_size=args.batch_size, device="cpu",
                          name="smollm2-135m")
    model = scorer.model
    seqs = scorer.encode(sents)
    batches = scorer.plan_batches(sents)
    prepared = [scorer._pad([seqs[i] for i in b]) for b in batches]
    prepared = [(ids[:, :-1], mask[:, :-1]) for ids, mask in prepared]  # every token but the last
    n_tokens = sum(len(s) - 1 for s in seqs)

    def floor() -> float:
        t0 = time.perf_counter()
        with torch.inference_mode():
            for ids, mask in prepared:
                model(input_ids=ids, attention_mask=mask, use_cache=False)
        return time.perf_counter() - t0

    def package() -> tuple[float, np.ndarray]:
        t0 = time.perf_counter()
        out = scorer.score(sents)
        return time.perf_counter() - t0, out

    with torch.inference_mode():  # warm-up
        model(input_ids=prepared[-1][0], attention_mask=prepared[-1][1], use_cache=False)
    sent_batches = [[sents[i] for i in b] for b in batches]
    order = [i for b in batches for i in b]
    pythons = {p: make_venv(p, args.peers) for p in ("minicons", "lm-eval")} if args.peers else {}
    floor_times, pkg_times = [], []
    peer_times: dict[str, list[float]] = {p: [] for p in pythons}
    peer_out: dict[str, dict] = {}
    scores = None
    for r in range(args.repeats):
        floor_times.append(floor())
        t, scores = package()
        pkg_times.append(t)
        line = f"  repeat {r + 1}: floor {floor_times[-1]:.2f} s, package {pkg_times[-1]:.2f} s"
        for peer, python in pythons.items():  # inside the loop: every scorer sees the same load
            peer_out[peer] = run_peer(peer, python, scorer.folder, sent_batches, repeats=1,
                                      threads=torch.get_num_threads(), batch_size=args.batch_size)
            peer_times[peer].append(peer_out[peer]["seconds"])
            line += f", {peer} {peer_times[peer][-1]:.2f} s"
        print(line, file=sys.stderr)
    t_floor, t_pkg = min(floor_times), min(pkg_times)

    result = {
        "bench": "causal",
        "model": "smollm2-135m",
        "n_sentences": len(sents),
        "n_tokens": n_tokens,
        "batch_size": args.batch_size,
        "n_batches": len(batches),
        "repeats": args.repeats,
        "threads": torch.get_num_threads(),
        "floor_s": round(t_floor, 4),
        "package_s": round(t_pkg, 4),
        "package_over_floor": round(t_pkg / t_floor, 4),
        "target_package_over_floor": 1.10,
        "target_met": t_pkg / t_floor <= 1.10,
        "package_sentences_per_s": round(len(sents) / t_pkg, 1),
        "floor_tokens_per_s": round(n_tokens / t_floor, 1),
        "package_tokens_per_s": round(n_tokens / t_pkg, 1),
        "mean_logprob": float(np.mean(scores)),
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "load_avg_1min": round(os.getloadavg()[0], 2),
    }

    rows = [("bare forward (floor)", t_floor), ("contstim CausalScorer", t_pkg)]
    for peer, out in peer_out.items():
        theirs = np.empty(len(sents))
        theirs[order] = out["scores"]  # the workers got the sentences batch by batch
        t_peer = min(peer_times[peer])
        key = peer.replace("-", "_")
        result.update({
            f"{key}_s": round(t_peer, 4),
            f"{key}_tokens_per_s": round(n_tokens / t_peer, 1),
            f"{key}_over_floor": round(t_peer / t_floor, 4),
            f"package_speedup_over_{key}": round(t_peer / t_pkg, 4),
            f"max_abs_diff_vs_{key}": float(np.abs(theirs - scores).max()),
            f"{key}_versions": out["versions"],
        })
        rows.append((peer, t_peer))
    if not pythons:
        print("no --peers DIR: minicons and lm-eval skipped", file=sys.stderr)
    if args.scaling:
        result.update(scaling(sents, args.batch_size))

    print(f"SmolLM2-135M, {len(sents)} stimuli ({n_tokens} tokens fed), batch {args.batch_size}, "
          f"{result['threads']} threads, best of {args.repeats}")
    print(f"{'scorer':<30} {'seconds':>9} {'tokens/s':>9} {'x floor':>8}")
    for name, t in rows:
        print(f"{name:<30} {t:>9.2f} {n_tokens / t:>9.1f} {t / t_floor:>8.3f}")
    if args.scaling:
        print(f"torchrun, 1 process {result['scaling_1_process_s']:.1f} s, 2 processes "
              f"{result['scaling_2_processes_s']:.1f} s: {result['scaling_speedup']:.2f}x (ideal 2.0)")
    print(json.dumps(result))
    return 0


def scaling(sents: list[str], batch_size: int) -> dict:
    """Wall seconds of ``torchrun --nproc_per_node N -m contstim_bench score`` over
    ``sents`` for N = 1 and 2 (cache off, one thread per process), and the speed-up."""
    import subprocess
    import tempfile

    import numpy as np

    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="contstim-scaling-") as tmp:
        (Path(tmp) / "s.txt").write_text("\n".join(sents) + "\n", encoding="utf-8")
        arrays = {}
        for n in (1, 2):
            # torchrun: N CPU processes (accelerate launch --cpu starts one process without MPI)
            cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(n), "-m", "contstim_bench",
                   "score", "--model", "smollm2-135m", "--input", f"{tmp}/s.txt", "--output", f"{tmp}/{n}.npy",
                   "--no-cache", "--quiet", "--batch-size", str(batch_size), "--device", "cpu"]
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            out[f"scaling_{n}_process{'es' if n > 1 else ''}_s"] = round(time.perf_counter() - t0, 2)
            arrays[n] = np.load(f"{tmp}/{n}.npy")
        out["scaling_speedup"] = round(out["scaling_1_process_s"] / out["scaling_2_processes_s"], 3)
        out["scaling_identical_scores"] = bool(np.array_equal(arrays[1], arrays[2]))
    return out


if __name__ == "__main__":
    sys.exit(main())
