"""Throughput of causal scoring: an offline causal LM over the 2,240 main-experiment stimuli.

Timings over the same sentences (tokens/s counts the positions a scorer must feed: every token
of a sentence after the start token, i.e. the start token and every token but the last):

* **floor**: the bare forward pass (``model(input_ids, attention_mask)``) over every token of the
  package's length-sorted batches of ``--batch-size`` sentences, tokenised and right-padded in
  advance: what a plain padded scorer spends, and the baseline of the targets (packed scoring at
  most 0.88x of it); the same over every token but the last (which a score never reads) is
  printed too;
* **package**: ``CausalScorer.score(sentences)`` end to end (validation, tokenisation, packing
  into rows without padding, forward, log-softmax read-out, float64 sums), cache off; and the
  same scorer with packing turned off (**padded**), whose values the packed ones must match:
  the largest difference is printed for float32 and, on the first 64 sentences, for float64
  (where the two layouts must agree to rounding, ~1e-12);
* **minicons** (``IncrementalLMScorer.sequence_score(..., bos_token=True)``, minicons 0.3.39,
  transformers<5) and **lm-eval** (``HFLM.loglikelihood`` with the start token as context,
  lm-evaluation-harness 0.4.13, transformers 5), each in its own venv that ``--peers DIR`` makes
  (``bench/peers.py``), both loading SmolLM2 from the package's converted offline folder; the
  time excludes their model loading.

Each timing is the best of ``--repeats`` rounds; a round runs every scorer one after the other,
so that load from other processes affects all alike.  ``--scaling`` adds a data-parallel run:
``torchrun --nproc_per_node 1`` and ``2`` of ``contstim score`` over the same
sentences (cache off, one thread per process; wall time of the whole command, model loading
included; ideal ratio 2.0 on 2 free cores; the two alternate for ``--repeats`` rounds, best of
each).  Prints a table and ends with one JSON line.

    python bench/causal.py [--peers /tmp/contstim-peers] [--scaling | --scaling-only] [--limit 560] [--threads 1]
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
    ap.add_argument("--peer", action="append", choices=["minicons", "lm-eval"], default=None,
                    help="with --peers: only this peer (repeatable; default both)")
    ap.add_argument("--scaling", action="store_true", help="also time torchrun with 1 and 2 CPU processes")
    ap.add_argument("--scaling-only", action="store_true",
                    help="only the torchrun timing, over all 2,240 stimuli (--limit ignored), --repeats rounds")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--model", default="smollm2-135m", choices=["smollm2-135m", "gemma3-270m"],
                    help="the offline model to time (default smollm2-135m)")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--lm-eval-python", metavar="PYTHON", default=None,
                    help="an interpreter that imports lm_eval 0.4.13 (e.g. this one on a GPU machine without "
                         "network): lm-eval is timed there, no venv is made")
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
    if args.scaling_only:
        result = {"bench": "causal-scaling", "n_sentences": len(sents), **scaling(sents, args.batch_size, args.repeats),
                  "load_avg_1min": round(os.getloadavg()[0], 2)}
        print(f"torchrun, 1 process {result['scaling_1_process_s']:.1f} s, 2 processes "
              f"{result['scaling_2_processes_s']:.1f} s: {result['scaling_speedup']:.2f}x (ideal 2.0), "
              f"bit-identical: {result['scaling_identical_scores']}")
        print(json.dumps(result))
        return 0
    if args.limit:
        sents = sents[:: max(1, len(sents) // args.limit)][: args.limit]
    from contstim_bench.scoring.offline import OFFLINE_MODELS

    start = OFFLINE_MODELS[args.model].start_token
    scorer = CausalScorer(model_dir(args.model), start=start, cache=False, progress=False,
                          batch_size=args.batch_size, device=args.device, dtype=args.dtype, name=args.model)
    model = scorer.model
    seqs = scorer.encode(sents)
    batches = scorer.plan_batches(sents)
    padded_all = [scorer._pad([seqs[i] for i in b]) for b in batches]  # every token
    but_last = [(ids[:, :-1], mask[:, :-1]) for ids, mask in padded_all]  # every token but the last
    prepared = but_last
    n_tokens = sum(len(s) - 1 for s in seqs)
    fed_all = sum(int(ids.numel()) for ids, _ in padded_all)
    fed_but_last = sum(int(ids.numel()) for ids, _ in but_last)
    # packed: the start token once, then each batch's sentences after it, without their last token,
    # packed or padded as the scorer runs them
    fed_packed = 1 + sum(scorer.positions_fed(1, [seqs[i][1:] for i in b]) for b in batches)

    def sync() -> None:
        if scorer.device.type == "cuda":
            torch.cuda.synchronize()

    def bare(inputs) -> float:
        sync()
        t0 = time.perf_counter()
        with torch.inference_mode():
            for ids, mask in inputs:
                model(input_ids=ids, attention_mask=mask, use_cache=False)
        sync()
        return time.perf_counter() - t0

    def floor() -> float:
        return bare(padded_all)

    layouts = {True: scorer.with_layout("auto"), False: scorer.with_layout("padded")}  # the spec option layout=

    def package(packs: bool = True) -> tuple[float, np.ndarray]:
        t0 = time.perf_counter()
        out = layouts[packs].score(sents)
        return time.perf_counter() - t0, out

    with torch.inference_mode():  # warm-up
        model(input_ids=prepared[-1][0], attention_mask=prepared[-1][1], use_cache=False)
    sent_batches = [[sents[i] for i in b] for b in batches]
    order = [i for b in batches for i in b]
    pythons = {p: make_venv(p, args.peers) for p in (args.peer or ["minicons", "lm-eval"])} if args.peers else {}
    if args.lm_eval_python:
        pythons["lm-eval"] = args.lm_eval_python
    if not scorer.packs:
        raise SystemExit(f"{args.model}'s forward pass did not keep packed rows apart: nothing to measure")
    floor_times, last_times, pkg_times, pad_times = [], [], [], []
    peer_times: dict[str, list[float]] = {p: [] for p in pythons}
    peer_out: dict[str, dict] = {}
    scores = padded_scores = None
    for r in range(args.repeats):
        floor_times.append(floor())
        last_times.append(bare(but_last))
        t, scores = package(True)
        pkg_times.append(t)
        t, padded_scores = package(False)
        pad_times.append(t)
        line = (f"  repeat {r + 1}: floor {floor_times[-1]:.2f} s, but the last {last_times[-1]:.2f} s, "
                f"package {pkg_times[-1]:.2f} s, padded {pad_times[-1]:.2f} s")
        for peer, python in pythons.items():  # inside the loop: every scorer sees the same load
            peer_out[peer] = run_peer(peer, python, scorer.folder, sent_batches, repeats=1, start=start,
                                      threads=torch.get_num_threads(), batch_size=args.batch_size,
                                      device=args.device, dtype=args.dtype)
            peer_times[peer].append(peer_out[peer]["seconds"])
            line += f", {peer} {peer_times[peer][-1]:.2f} s"
        print(line, file=sys.stderr)
    t_floor, t_pkg, t_last, t_pad = min(floor_times), min(pkg_times), min(last_times), min(pad_times)
    f64 = float64_agreement(scorer, sents[:64])

    result = {
        "bench": "causal",
        "model": args.model,
        "device": str(scorer.device),
        "dtype": args.dtype,
        "n_sentences": len(sents),
        "n_tokens": n_tokens,
        "batch_size": args.batch_size,
        "n_batches": len(batches),
        "repeats": args.repeats,
        "threads": torch.get_num_threads(),
        "positions_fed": {"floor": fed_all, "floor_but_last": fed_but_last, "packed": fed_packed},
        "floor_s": round(t_floor, 4),
        "floor_but_last_s": round(t_last, 4),
        "package_s": round(t_pkg, 4),
        "padded_package_s": round(t_pad, 4),
        "package_over_floor": round(t_pkg / t_floor, 4),
        "padded_over_floor": round(t_pad / t_floor, 4),
        "max_abs_diff_packed_vs_padded": float(np.abs(scores - padded_scores).max()),
        "max_abs_diff_packed_vs_padded_float64": f64,
        "target_package_over_floor": 0.88,
        "package_sentences_per_s": round(len(sents) / t_pkg, 1),
        "floor_tokens_per_s": round(n_tokens / t_floor, 1),
        "package_tokens_per_s": round(n_tokens / t_pkg, 1),
        "mean_logprob": float(np.mean(scores)),
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "load_avg_1min": round(os.getloadavg()[0], 2),
    }

    rows = [("bare forward (floor)", t_floor), ("bare forward, all but last", t_last),
            ("contstim CausalScorer (packed)", t_pkg), ("contstim, padded", t_pad)]
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
    met = t_pkg / t_floor <= 0.88
    if "lm-eval" in peer_out:
        met = met and result["package_speedup_over_lm_eval"] >= 1.08
    result["target_met"] = met
    if not pythons:
        print("no --peers DIR: minicons and lm-eval skipped (the lm-eval target is not checked)", file=sys.stderr)
    if args.scaling:
        result.update(scaling(sents, args.batch_size, args.repeats))

    print(f"{args.model} ({args.dtype}, {scorer.device}), {len(sents)} stimuli ({n_tokens} tokens fed), batch {args.batch_size}, "
          f"{result['threads']} threads, best of {args.repeats}")
    print(f"{'scorer':<30} {'seconds':>9} {'tokens/s':>9} {'x floor':>8}")
    for name, t in rows:
        print(f"{name:<30} {t:>9.2f} {n_tokens / t:>9.1f} {t / t_floor:>8.3f}")
    if args.scaling:
        print(f"torchrun, 1 process {result['scaling_1_process_s']:.1f} s, 2 processes "
              f"{result['scaling_2_processes_s']:.1f} s: {result['scaling_speedup']:.2f}x (ideal 2.0)")
    print(json.dumps(result))
    return 0


def float64_agreement(scorer, sents: list[str]) -> float:
    """Largest |packed - padded| over ``sents`` with the model in float64 (the two layouts must
    agree to rounding there); the scorer's model is restored to its dtype afterwards."""
    import numpy as np

    dtype = scorer.model.dtype
    model = scorer.model.double()
    try:  # each view computes its start token's state on the float64 model
        packed = scorer.with_layout("auto").score(sents)
        padded = scorer.with_layout("padded").score(sents)
    finally:
        model.to(dtype)
    return float(np.abs(packed - padded).max())


def scaling(sents: list[str], batch_size: int, repeats: int = 1) -> dict:
    """Wall seconds of ``torchrun --nproc_per_node N -m contstim_bench score`` over
    ``sents`` for N = 1 and 2 (cache off, one thread per process), and the speed-up.

    The two launches alternate for ``repeats`` rounds and each keeps its best: this machine's
    speed drifts by 10-25% between minutes, so one launch of each would measure the drift."""
    import subprocess
    import tempfile

    import numpy as np

    out: dict = {}
    best: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="contstim-scaling-") as tmp:
        (Path(tmp) / "s.txt").write_text("\n".join(sents) + "\n", encoding="utf-8")
        arrays = {}
        for r in range(repeats):
            for n in (1, 2):
                # torchrun: N CPU processes (accelerate launch --cpu starts one process without MPI)
                cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(n), "-m",
                       "contstim_bench", "score", "--model", "smollm2-135m", "--input", f"{tmp}/s.txt",
                       "--output", f"{tmp}/{n}.npy", "--no-cache", "--quiet", "--batch-size", str(batch_size),
                       "--device", "cpu"]
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
                seconds = time.perf_counter() - t0
                best[n] = min(best.get(n, seconds), seconds)
                print(f"  scaling round {r + 1}: {n} process{'es' if n > 1 else ''} {seconds:.1f} s", file=sys.stderr)
                arrays[n] = np.load(f"{tmp}/{n}.npy")
        out["scaling_1_process_s"] = round(best[1], 2)
        out["scaling_2_processes_s"] = round(best[2], 2)
        out["scaling_rounds"] = repeats
        out["scaling_speedup"] = round(best[1] / best[2], 3)
        out["scaling_identical_scores"] = bool(np.array_equal(arrays[1], arrays[2]))
    return out


if __name__ == "__main__":
    sys.exit(main())
