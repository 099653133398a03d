"""Vocabulary-sweep benchmark (issue 4, "Speed"): the log-probability of a sentence with every
candidate word at one position, as the synthetic-sentence search needs it.

Two measurements, each against the baseline it names, in one run:

1. **kenlm 3-gram over the whole 29,157-word vocabulary** (``vocab_low`` + ``vocab_cap`` of the
   data) at every position of a few stimuli: :meth:`NgramScorer.sweep` (only the n-grams that
   touch the position are re-scored) vs scoring each replaced sentence whole. Target: one sweep
   under 0.1 s. The 3-gram is trained here on the 6,113 natural sentences of the data with the
   package's modified Kneser-Ney estimator.
2. **SmolLM2-135M over the paper's causal shortlist** (next-word log-probability >= -10, widened in
   steps of 5 until at least 10 words) at each of the 8 positions of a few stimuli:
   :meth:`CausalScorer.sweep` (prefix run once, its key/value cache shared) vs scoring
   the replaced sentences as whole sentences (same batches, no cache). Target: at least 1.5x
   faster on average, same values within 1e-4.

Usage: ``python bench/sweep.py [--stimuli 3] [--threads N]``. Prints a table and ends with one
JSON line of results.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _vocabulary() -> list[str]:
    from contstim_bench.data import safe_pickle
    from contstim_bench.data.sources import resolve

    low = safe_pickle.load(resolve("contstimlang/resources/vocabulary/vocab_low.pkl"))
    cap = safe_pickle.load(resolve("contstimlang/resources/vocabulary/vocab_cap.pkl"))
    return [str(w) for w in list(low) + list(cap)]


def _stimuli(n: int) -> list[list[str]]:
    """The first ``n`` 8-word natural sentences of the synthesis pool (start sentences)."""
    from contstim_bench.data.build_contstim import POOL_SYNTHESIS
    from contstim_bench.data.sources import resolve

    path = resolve(POOL_SYNTHESIS)
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if len(words) == 8:
            out.append(words)
        if len(out) == n:
            break
    return out


def bench_kenlm(vocab: list[str], stimuli: list[list[str]], tmp: Path) -> dict:
    from contstim_bench.data.build_contstim import POOL_SYNTHESIS
    from contstim_bench.data.sources import resolve
    from contstim_bench.scoring.kneser_ney import train_arpa
    from contstim_bench.scoring.ngram import NgramScorer

    corpus = resolve(POOL_SYNTHESIS)
    arpa = tmp / "trigram.arpa"
    train_arpa(corpus, 3, arpa)
    scorer = NgramScorer(arpa, cache=False, progress=False)
    sweep_times, whole_times, max_diff = [], [], 0.0
    for words in stimuli:
        for pos in range(len(words)):
            t0 = time.perf_counter()
            scorer.sweep(words, pos, vocab)
            sweep_times.append(time.perf_counter() - t0)
        # baseline at one position per sentence (whole-sentence scoring of 29,157 sentences)
        pos = len(words) // 2
        texts = [" ".join(words[:pos] + [c] + words[pos + 1 :]) for c in vocab]
        t0 = time.perf_counter()
        slow = scorer._score_unique(texts)
        whole_times.append(time.perf_counter() - t0)
        max_diff = max(max_diff, float(np.max(np.abs(scorer.sweep(words, pos, vocab) - slow))))
    return {
        "kenlm_vocab_size": len(vocab),
        "kenlm_sweep_median_s": statistics.median(sweep_times),
        "kenlm_sweep_max_s": max(sweep_times),
        "kenlm_whole_sentences_median_s": statistics.median(whole_times),
        "kenlm_speedup": statistics.median(whole_times) / statistics.median(sweep_times),
        "kenlm_max_abs_diff": max_diff,
        "kenlm_pass": statistics.median(sweep_times) < 0.1 and max_diff < 1e-6,
    }


def bench_causal(vocab: list[str], stimuli: list[list[str]], max_candidates: int | None) -> dict:
    from contstim_bench.generate.candidates import causal_shortlist
    from contstim_bench.scoring.registry import load_scorer

    scorer = load_scorer("smollm2-135m", cache=False, progress=False)
    rows = []
    for words in stimuli:
        for pos in range(len(words)):
            pool = vocab if max_candidates is None else vocab[:max_candidates]
            mask = causal_shortlist(scorer, words[:pos], pool)
            cands = [w for w, keep in zip(pool, mask) if keep and w != words[pos]]
            texts = [" ".join(words[:pos] + [c] + words[pos + 1 :]) for c in cands]
            t0 = time.perf_counter()
            fast = scorer.sweep(words, pos, cands)
            t_fast = time.perf_counter() - t0
            t0 = time.perf_counter()
            slow = scorer._score_unique(texts)  # whole sentences, same length-sorted batching
            t_slow = time.perf_counter() - t0
            rows.append((pos, len(cands), t_fast, t_slow, float(np.max(np.abs(fast - slow)))))
    speedups = [r[3] / r[2] for r in rows]
    total_fast = sum(r[2] for r in rows)
    total_slow = sum(r[3] for r in rows)
    print(f"\n{'pos':>4} {'shortlist':>9} {'prefix-shared s':>16} {'whole s':>9} {'speedup':>8} {'max |diff|':>11}")
    for (pos, n, tf, ts, d), sp in zip(rows, speedups):
        print(f"{pos:>4} {n:>9} {tf:>16.3f} {ts:>9.3f} {sp:>8.2f} {d:>11.2e}")
    max_diff = max(r[4] for r in rows)
    return {
        "causal_positions": len(rows),
        "causal_mean_shortlist": statistics.mean(r[1] for r in rows),
        "causal_mean_speedup": statistics.mean(speedups),
        "causal_total_speedup": total_slow / total_fast,
        "causal_max_abs_diff": max_diff,
        "causal_pass": statistics.mean(speedups) >= 1.5 and max_diff < 1e-4,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stimuli", type=int, default=3, help="number of 8-word stimuli (default 3)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--skip-causal", action="store_true", help="only the kenlm part")
    parser.add_argument("--max-candidates", type=int, default=None,
                        help="restrict the causal shortlist's pool to the first N vocabulary words "
                             "(default: the whole vocabulary)")
    args = parser.parse_args(argv)
    os.environ.setdefault("CONTSTIM_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    vocab = _vocabulary()
    stimuli = _stimuli(args.stimuli)
    results: dict = {"benchmark": "sweep", "stimuli": [" ".join(w) for w in stimuli]}
    with tempfile.TemporaryDirectory() as tmp:
        results.update(bench_kenlm(vocab, stimuli, Path(tmp)))
    print(
        f"kenlm 3-gram sweep over {results['kenlm_vocab_size']:,} words: median "
        f"{results['kenlm_sweep_median_s'] * 1000:.1f} ms (max {results['kenlm_sweep_max_s'] * 1000:.1f} ms); "
        f"whole sentences {results['kenlm_whole_sentences_median_s'] * 1000:.0f} ms "
        f"({results['kenlm_speedup']:.1f}x); max |diff| {results['kenlm_max_abs_diff']:.1e}"
    )
    if not args.skip_causal:
        results.update(bench_causal(vocab, stimuli, args.max_candidates))
        print(
            f"SmolLM2 shortlist sweep: mean speedup {results['causal_mean_speedup']:.2f}x over whole "
            f"sentences (total {results['causal_total_speedup']:.2f}x), max |diff| "
            f"{results['causal_max_abs_diff']:.1e}"
        )
    results["pass"] = bool(results["kenlm_pass"] and results.get("causal_pass", True))
    print(json.dumps(results))
    return 0 if results["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
