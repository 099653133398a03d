"""Speed of masked-LM scoring (issue 4): exact approx-ll vs its Monte-Carlo form, and PLL overhead.

Builds a small random BERT (4 layers, 256 hidden, 4 heads) on a WordPiece tokenizer trained on
the natural sentences of Golan et al. (8 words each), then, in one run:

1. ``approx-ll`` (exact mean over all word orders) vs ``approx-ll-sampled`` (100 random orders,
   the paper's algorithm): model rows, wall time (best of ``--repeats``), and agreement in units
   of the Monte-Carlo standard error of the sampled estimate.
   Targets: >= 3x fewer rows, >= 2x faster, |difference| <= 3 standard errors.  (Until issue 16
   the time target was 2.5x: since then the output projection runs only at read-out positions,
   which speeds up both forms and the sampled one more, as exact enumeration reads out 1.28x as
   many (row, position) pairs from its 3x fewer rows.)
2. ``pll-word-l2r`` against the bare forward pass over exactly the rows it runs (same batches).
   Target: scorer time <= 1.10 x bare time.  (The scorer computes vocabulary logits only at the
   read-out positions, the bare pass at every position, so the ratio can fall below 1.)

Also reports, from the plans alone, the row ratio when words split into several pieces
(a 1,000-token vocabulary), where exact enumeration needs 2^k - 2 extra rows per multi-piece
word and masked set.

3. **Real stimuli** (issue 16): the sentences of the ``pll`` and ``main`` experiments (read with
   the package's loaders; ``--real-sentences`` of them, half from each, evenly spaced) on a
   real-sized tokenizer with multi-piece words, SmolLM2's 49,152-piece byte-level BPE (with a
   ``<mask>`` token, :func:`tiny_mlm.smollm2_bpe_with_mask`), and a random RoBERTa of the same
   size as in 1.: ``approx-ll`` vs ``approx-ll-sampled`` in model rows, vocabulary read-outs,
   wall and CPU time (interleaved repeats, best kept) and agreement in Monte-Carlo standard
   errors.  For 8-word sentences the exact form needs 2^7 = 128 contexts per word against the
   sampled form's 100 orders, so 1.28x its read-outs, but far fewer rows (encoder passes):
   2^8 - 1 + 2^7 * sum(2^k - 2) against 100 * sum(2^k - 1).  Target: approx-ll at least as fast
   as approx-ll-sampled in CPU time (``real_cpu_speedup`` >= 1; wall time is also printed, but on a
   shared machine it mostly measures the other processes), and every sentence within the
   family-wise 1% bound of Monte-Carlo standard errors (``real_z_bound``: 4.0 for 160 sentences;
   the mean |z| of an unbiased estimate is about 0.80).  With ``--real-shape bert-base`` (issue
   43) the target is approx-ll at least 2x faster in wall time.  ``real_tokens_ratio`` is the
   tokens the sampled form feeds the encoder over the exact form's: the same model runs both, so
   at the same cost per token exact cannot be faster than that ratio (it also reads out more
   positions), whatever the implementation.

Ends with one JSON line.

    python bench/masked.py [--sentences 8] [--pll-sentences 200] [--repeats 2] [--device cpu]
                           [--real-sentences 160] [--real-repeats 1] [--only-real]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from contstim_bench.data.build_contstim import POOL_SYNTHESIS

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NATURAL = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool


def _tiny_mlm():
    """``tests/tiny_mlm.py`` (small masked LMs built locally): a test helper, not part of the package."""
    tests = str(Path(__file__).resolve().parent.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import tiny_mlm

    return tiny_mlm


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=8, help="8-word sentences for approx-ll (default 8)")
    ap.add_argument("--pll-sentences", type=int, default=200, help="sentences for pll-word-l2r (default 200)")
    ap.add_argument("--repeats", type=int, default=2, help="timed repeats, best kept (default 2)")
    ap.add_argument("--vocab", type=int, default=30000, help="WordPiece vocabulary size (default 30000, BERT-like)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--real-sentences", type=int, default=160,
                    help="real pll + main stimuli for section 3 (default 160, half from each; 0 skips it)")
    ap.add_argument("--real-repeats", type=int, default=1, help="timed repeats of section 3 (default 1)")
    ap.add_argument("--only-real", action="store_true", help="run only section 3 (real stimuli)")
    ap.add_argument("--real-shape", choices=sorted(REAL_SHAPES), default="small",
                    help="section 3's model: small (4x256, default) or bert-base (12x768, 12 heads)")
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    real = bench_real_stimuli(args) if args.real_sentences > 0 else {}
    if args.only_real:
        result = {"bench": "masked", "device": args.device, "torch_threads": torch.get_num_threads(), **real}
        # issue 16's target for the small model: exact at least as fast in CPU time; issue 43's for
        # the BERT-base shape: at least 2x in wall time (one thread)
        target = 2.0 if args.real_shape == "bert-base" else 1.0
        result["real_speedup_target"] = target
        speed = real.get("real_speedup" if args.real_shape == "bert-base" else "real_cpu_speedup", 0)
        result["pass"] = bool(speed >= target and real.get("real_max_abs_z", 99) <= real.get("real_z_bound", 0))
        print(json.dumps(result))
        return 0 if result["pass"] else 1

    from contstim_bench.data import sources
    from contstim_bench.scoring import masked, orders
    from contstim_bench.scoring.word_pieces import tokenize_many

    tiny_mlm = _tiny_mlm()

    pool = sources.resolve(NATURAL).read_text(encoding="utf-8").splitlines()
    tok = tiny_mlm.train_wordpiece(pool, args.vocab)
    model = tiny_mlm.random_masked_lm(tok, hidden=256, layers=4, heads=4, intermediate=1024, seed=0, init_range=0.1)
    stride = max(1, len(pool) // max(args.sentences, 1))
    sents = pool[::stride][: args.sentences]
    pieces = [t.pieces for t in tokenize_many(tok, sents, "whitespace")]
    assert all(len(p) == 8 for p in pieces)

    def make(method, **kw):
        return masked.MaskedLMScorer(model, tok, method=method, device=args.device, batch_size=args.batch_size,
                                     cache=False, progress=False, **kw)

    exact_sc = make("approx-ll")
    sampled_sc = make("approx-ll-sampled", orders=100, seed=0)
    exact_sc.score(pool[-2:])  # warm-up (first-call allocations)
    t_exact, t_sampled = [], []
    for _ in range(args.repeats):  # interleaved, so load changes hit both alike
        exact_sc.n_model_rows = 0
        t0 = time.perf_counter()
        exact = exact_sc.score(sents)
        t_exact.append(time.perf_counter() - t0)
        rows_exact = exact_sc.n_model_rows
        sampled_sc.n_model_rows = 0
        t0 = time.perf_counter()
        per_order = sampled_sc.sampled_order_logprobs(sents)
        t_sampled.append(time.perf_counter() - t0)
        rows_sampled = sampled_sc.n_model_rows
    sampled = np.array([p.mean() for p in per_order])
    se = np.array([p.std(ddof=1) / math.sqrt(len(p)) for p in per_order])
    z = np.abs(sampled - exact) / se
    print(f"approx-ll: {len(sents)} sentences, {rows_exact} rows, best {min(t_exact):.2f} s", file=sys.stderr)
    print(f"approx-ll-sampled: {rows_sampled} rows, best {min(t_sampled):.2f} s", file=sys.stderr)
    for s, e, m, d in zip(sents, exact, sampled, z):
        print(f"  {e:10.4f} {m:10.4f} |z|={d:.2f}  {s}", file=sys.stderr)

    # PLL-word-l2r vs the bare forward pass of the same batches
    pll_sents = pool[: args.pll_sentences]
    pll_sc = make("pll-word-l2r")
    pll_sc.score(pool[-2:])
    batches = pll_sc.row_batches(pll_sents)
    t_pll, t_bare = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        with torch.inference_mode():
            for x, att in batches:
                model(input_ids=torch.as_tensor(x, device=args.device),
                      attention_mask=torch.as_tensor(att, device=args.device)).logits
        t_bare.append(time.perf_counter() - t0)
        pll_sc.n_model_rows = 0
        t0 = time.perf_counter()
        pll_sc.score(pll_sents)
        t_pll.append(time.perf_counter() - t0)
    pll_rows = sum(len(x) for x, _ in batches)
    assert pll_rows == pll_sc.n_model_rows
    print(f"pll-word-l2r: {pll_rows} rows, best {min(t_pll):.3f} s; bare forward best {min(t_bare):.3f} s",
          file=sys.stderr)

    # rows with multi-piece words, from the plans only (no model)
    small = tiny_mlm.train_wordpiece(pool, 1000)
    small_pieces = [t.pieces for t in tokenize_many(small, sents, "whitespace")]
    small_exact = sum(orders.exact_row_count(p) for p in small_pieces)
    small_sampled = sum(
        len(orders.sampled_plan(p, orders.sampled_orders(8, 100, 0, s)).rows) for p, s in zip(small_pieces, sents)
    )

    result = {
        "bench": "masked",
        "device": args.device,
        "torch_threads": torch.get_num_threads(),
        "model": "random BertForMaskedLM 4x256, WordPiece vocab %d" % len(tok),
        "sentences": len(sents),
        "multi_piece_words": int(sum(k > 1 for p in pieces for k in p)),
        "approx_ll_rows": rows_exact,
        "approx_ll_sampled_rows": rows_sampled,
        "rows_ratio": round(rows_sampled / rows_exact, 3),
        "approx_ll_s": round(min(t_exact), 4),
        "approx_ll_sampled_s": round(min(t_sampled), 4),
        "speedup": round(min(t_sampled) / min(t_exact), 3),
        "max_abs_z": round(float(z.max()), 3),
        "mean_se": round(float(se.mean()), 6),
        "pll_word_l2r_rows": pll_rows,
        "pll_word_l2r_s": round(min(t_pll), 4),
        "bare_forward_s": round(min(t_bare), 4),
        "pll_over_bare": round(min(t_pll) / min(t_bare), 3),
        "vocab1000_multi_piece_words": int(sum(k > 1 for p in small_pieces for k in p)),
        "vocab1000_rows_ratio": round(small_sampled / small_exact, 3),
        **real,
    }
    result["pass"] = bool(
        result["rows_ratio"] >= 3 and result["speedup"] >= 2 and result["max_abs_z"] <= 3
        and result["pll_over_bare"] <= 1.10
        and (not real or (real["real_cpu_speedup"] >= 1 and real["real_max_abs_z"] <= real["real_z_bound"]))
    )
    print(json.dumps(result))
    return 0 if result["pass"] else 1


#: --real-shape: (hidden, layers, heads, intermediate) of section 3's random RoBERTa. ``bert-base``
#: is shaped like the masked LMs people score (BERT-base / RoBERTa-base: 12 x 768), where an
#: encoder row costs far more than a vocabulary read-out
REAL_SHAPES = {"small": (256, 4, 4, 1024), "bert-base": (768, 12, 12, 3072)}


def real_stimuli(n: int) -> list[str]:
    """``n`` stimuli of the pll and main experiments (half from each, evenly spaced), read with
    the package's dataset loader."""
    from contstim_bench.data.load import load_config

    out = []
    for exp, k in (("pll", n // 2), ("main", n - n // 2)):
        sents = list(load_config("contstim", "sentences", exp)["sentence"])
        stride = max(1, len(sents) // max(k, 1))
        out += sents[::stride][:k]
    return out


def bench_real_stimuli(args) -> dict:
    """Section 3 of the module docstring: exact vs sampled approx-ll on real stimuli."""
    import scipy.stats
    import torch

    from contstim_bench.scoring import masked
    from contstim_bench.scoring.word_pieces import tokenize_many

    tiny_mlm = _tiny_mlm()
    sents = real_stimuli(args.real_sentences)
    tok = tiny_mlm.smollm2_bpe_with_mask()
    hidden, layers, heads, intermediate = REAL_SHAPES[args.real_shape]
    model = tiny_mlm.random_masked_lm(tok, arch="roberta", hidden=hidden, layers=layers, heads=heads,
                                      intermediate=intermediate, seed=0, init_range=0.1)
    pieces = [t.pieces for t in tokenize_many(tok, sents, "whitespace")]

    def make(method, **kw):
        return masked.MaskedLMScorer(model, tok, method=method, device=args.device, batch_size=args.batch_size,
                                     cache=False, progress=False, **kw)

    exact_sc = make("approx-ll")
    sampled_sc = make("approx-ll-sampled", orders=100, seed=0)
    for sc in (exact_sc, sampled_sc):
        sc.score(sents[:1])  # warm-up (first-call allocations, the read-out self-check)
    runs = {"exact": [], "sampled": []}
    for _ in range(max(1, args.real_repeats)):  # interleaved, so load changes hit both alike
        for name, sc in (("exact", exact_sc), ("sampled", sampled_sc)):
            sc.n_model_rows = sc.n_model_tokens = sc.n_readouts = 0
            w0, c0 = time.perf_counter(), time.process_time()
            if name == "exact":
                values = sc.score(sents)
            else:
                per_order = sc.sampled_order_logprobs(sents)
                values = np.array([p.mean() for p in per_order])
            runs[name].append({"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0,
                               "rows": sc.n_model_rows, "tokens": sc.n_model_tokens, "reads": sc.n_readouts,
                               "values": values})
    exact, sampled = runs["exact"][-1]["values"], runs["sampled"][-1]["values"]
    se = np.array([p.std(ddof=1) / math.sqrt(len(p)) for p in per_order])
    z = np.abs(sampled - exact) / se
    # per form: the best wall and CPU times of its repeats, the counts of its last (all alike)
    best = {k: {**v[-1], "wall": min(r["wall"] for r in v), "cpu": min(r["cpu"] for r in v)} for k, v in runs.items()}
    for k, b in best.items():
        print(f"real stimuli, approx-ll{'-sampled' if k == 'sampled' else ''}: {len(sents)} sentences, {b['rows']} rows "
              f"({b['tokens']} tokens), {b['reads']} read-outs, best {b['wall']:.1f} s wall, {b['cpu']:.1f} s CPU",
              file=sys.stderr)
    ceiling = best["sampled"]["tokens"] / best["exact"]["tokens"]
    print(f"real stimuli: the sampled form feeds the encoder {ceiling:.3f}x the exact form's tokens; exact reads "
          f"out {best['exact']['reads'] / best['sampled']['reads']:.3f}x as many positions, so at the same cost per token "
          f"exact cannot be more than {ceiling:.3f}x faster", file=sys.stderr)
    flat = [k for p in pieces for k in p]
    return {
        "real_model": "random RobertaForMaskedLM %dx%d, SmolLM2 byte-level BPE + <mask> (%d pieces)" % (
            layers, hidden, len(tok)),
        "real_sentences": len(sents),
        "real_words": len(flat),
        "real_multi_piece_words": int(sum(k > 1 for k in flat)),
        "real_max_pieces": int(max(flat)),
        "real_approx_ll_rows": best["exact"]["rows"],
        "real_approx_ll_sampled_rows": best["sampled"]["rows"],
        "real_rows_ratio": round(best["sampled"]["rows"] / best["exact"]["rows"], 3),
        "real_approx_ll_tokens": best["exact"]["tokens"],
        "real_approx_ll_sampled_tokens": best["sampled"]["tokens"],
        "real_tokens_ratio": round(ceiling, 3),
        "real_approx_ll_readouts": best["exact"]["reads"],
        "real_approx_ll_sampled_readouts": best["sampled"]["reads"],
        "real_readouts_ratio": round(best["sampled"]["reads"] / best["exact"]["reads"], 3),
        "real_approx_ll_s": round(best["exact"]["wall"], 2),
        "real_approx_ll_sampled_s": round(best["sampled"]["wall"], 2),
        "real_speedup": round(best["sampled"]["wall"] / best["exact"]["wall"], 3),
        "real_approx_ll_cpu_s": round(best["exact"]["cpu"], 2),
        "real_approx_ll_sampled_cpu_s": round(best["sampled"]["cpu"], 2),
        "real_cpu_speedup": round(best["sampled"]["cpu"] / best["exact"]["cpu"], 3),
        "real_max_abs_z": round(float(z.max()), 3),
        "real_z_bound": round(float(scipy.stats.norm.ppf(1 - 0.01 / (2 * len(sents)))), 3),
        "real_mean_abs_z": round(float(z.mean()), 3),
        "real_torch_threads": torch.get_num_threads(),
    }


if __name__ == "__main__":
    raise SystemExit(main())
