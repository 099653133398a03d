"""Synthetic-sentence search (issues 16 and 43): the lazy search one at a time, the plain search,
and the lazy searches in lockstep, in one run, on SmolLM2-135M vs a KenLM trigram (the worked
example of docs/generation.md).

The trigram is trained here as docs/generation.md does (``contstim train ngram --order 3``, its default
corpus: the held-out ``train`` part of the contstim synthesis pool).  Start sentences are drawn
from the default pool of ``contstim generate synthetic`` (the ``start`` part) with ``--seed`` as
the command draws them, each job with the runner's job seed; ``--vocabulary-size`` keeps the
function words as the command does.
The lazy search runs all ``--start-sentences`` one at a time; the plain search the first
``--plain`` of them; with ``--lockstep K`` (default 20) all of them again, their 2 searches each
``K`` at a time in lockstep (``contstim generate synthetic --lockstep``: SmolLM2's forward passes
merged).  Reported per search: seconds per triplet (wall and CPU, one torch thread by default;
for the lockstep run its wall time over its triplets, since its triplets share every pass),
causal-LM sentence evaluations (full scores or partial-chain bounds) per accepted replacement,
next-word values, and, from the plain search, the attempts whose first choice under upstream's
penalty-form ranking would have differed from the Eq. 2 ranking's.  Asserts that the plain and
the lockstep runs give the one-at-a-time triplets (every column, every accepted replacement).

Target (this CPU, one thread, 10 start sentences): a SmolLM2-vs-trigram triplet in under 30 s
in float32 and under 15 s in bfloat16 (``--dtype bfloat16``), with the same triplets; the
figure checked is the lockstep run's seconds per triplet (with ``--lockstep 0``, the lazy
search's median).

    python bench/synthesis.py [--start-sentences 10] [--plain 3] [--lockstep 20]
        [--vocabulary-size 0] [--threads 1] [--dtype bfloat16]

Prints a table and ends with one JSON line.
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start-sentences", type=int, default=10, help="start sentences for the lazy search (default 10)")
    ap.add_argument("--plain", type=int, default=3,
                    help="of these, how many the plain search also runs (default 3; it is slow)")
    ap.add_argument("--vocabulary-size", type=int, default=0,
                    help="most frequent words per vocabulary list, as --vocabulary-size of contstim generate "
                         "synthetic (default 0: the whole 29,157-word vocabulary)")
    ap.add_argument("--seed", type=int, default=0, help="global seed, as --seed of contstim generate synthetic")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    ap.add_argument("--dtype", default=None,
                    help="SmolLM2's weights dtype, as --dtype of the scoring commands (default: the model's "
                         "float32; bfloat16 is faster on CPUs with AVX512-BF16 or AMX)")
    ap.add_argument("--device", default=None, help="SmolLM2's device (default: the package's, cpu without a GPU)")
    ap.add_argument("--lockstep", type=int, default=20,
                    help="also run every start sentence's two searches in lockstep, this many at once, sharing "
                         "SmolLM2's forward passes (default 20: every search of 10 start sentences; 0: not run)")
    ap.add_argument("--verbose", action="store_true", help="print every position attempt")
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    from contstim_bench.generate.inputs import choose_start_sentences, load_pool, load_vocabulary
    from contstim_bench.generate.natural_ilp import load_function_words
    from contstim_bench.generate.pairing import ModelEntry
    from contstim_bench.generate.synthetic_run import job_seed
    from contstim_bench.generate.lockstep_search import TripletTask, synthesize_triplets
    from contstim_bench.generate.synthetic import SearchModel, SearchSettings, synthesize_triplet
    from contstim_bench.scoring.lockstep import Lockstep
    from contstim_bench.generate.triplet_table import OUTPUT_COLUMNS
    from contstim_bench.scoring.registry import load_scorer
    from contstim_bench.scoring.training import train_ngram

    torch.set_num_threads(args.threads)
    fw = frozenset(w.lower() for w in load_function_words())
    vocab = load_vocabulary(size=args.vocabulary_size or None, keep=fw)  # as the command: function words kept
    pool, _ = load_pool()
    starts = choose_start_sentences(pool, args.start_sentences, args.seed)

    with tempfile.TemporaryDirectory() as tmp:
        arpa = Path(tmp) / "trigram.arpa"
        train_ngram(arpa, order=3, log=lambda m: None)
        specs = {"smollm2": "smollm2-135m", "trigram": f"kenlm:{arpa}"}
        entries = [ModelEntry(n, s) for n, s in specs.items()]
        # job seeds from fixed specs (the trigram's temporary path would change them every run)
        seeding = [ModelEntry("smollm2", "smollm2-135m"), ModelEntry("trigram", "kenlm:trigram.arpa")]
        runs: dict[str, list[dict]] = {"lazy": [], "plain": [], "lockstep": []}

        def new_tally() -> dict:
            return {"attempts": 0, "expensive": 0, "next_word": 0, "accepted": 0, "penalty_differs": 0}

        def count(tally: dict, r, label: str) -> None:
            """Add one position attempt's counts to a triplet's ``tally``."""
            tally["attempts"] += 1
            tally["expensive"] += r.evaluations.expensive
            tally["next_word"] += r.evaluations.next_word
            tally["accepted"] += r.new is not None
            tally["penalty_differs"] += bool(r.penalty_rule_differs)
            if args.verbose:
                print(f"  {label} {r.line()}", file=sys.stderr, flush=True)

        def load_models():
            m1, m2 = (SearchModel(e.name, load_scorer(e.spec, cache=False, progress=False,
                                                      dtype=args.dtype if e.name == "smollm2" else None,
                                                      **({"device": args.device} if args.device and e.name == "smollm2"
                                                         else {})), spec=e.spec)
                      for e in entries)
            m1.exact(starts[0].sentence)  # load the model before timing
            return m1, m2

        for strategy in ("lazy", "plain"):
            m1, m2 = load_models()
            settings = SearchSettings(strategy=strategy)
            todo = starts if strategy == "lazy" else starts[: args.plain]
            for start in todo:
                tally = new_tally()

                def report(r, tally=tally, strategy=strategy):
                    count(tally, r, strategy)

                seed = job_seed(args.seed, seeding[0], seeding[1], start)
                w0, c0 = time.perf_counter(), time.process_time()
                row = synthesize_triplet(start.sentence, m1, m2, vocab, fw, seed, settings, natural_index=start.index,
                                         report=report)
                tally.update(wall=time.perf_counter() - w0, cpu=time.process_time() - c0, row=row)
                runs[strategy].append(tally)
                print(f"{strategy:5s} {tally['wall']:7.1f} s wall {tally['cpu']:7.1f} s CPU  "
                      f"{tally['attempts']:3d} attempts {tally['accepted']:2d} accepted "
                      f"{tally['expensive']:6d} causal-LM sentences {tally['next_word']:6d} next-word  "
                      f"{row['N']!r} -> {row['S1']!r} / {row['S2']!r}", file=sys.stderr, flush=True)

        lockstep_wall = None
        if args.lockstep:
            m1, m2 = load_models()
            coordinator = Lockstep(args.lockstep)
            tallies = [new_tally() for _ in starts]
            tasks = [TripletTask(s.sentence, m1, m2, job_seed(args.seed, seeding[0], seeding[1], s), s.index)
                     for s in starts]
            w0, c0 = time.perf_counter(), time.process_time()
            rows = synthesize_triplets(tasks, vocab, fw, SearchSettings(), workers=args.lockstep,
                                       report=lambda k, r: count(tallies[k], r, "lockstep"),
                                       lockstep=coordinator)
            lockstep_wall, lockstep_cpu = time.perf_counter() - w0, time.process_time() - c0
            for t, row in zip(tallies, rows):
                t.update(wall=lockstep_wall / len(rows), cpu=lockstep_cpu / len(rows), row=row)
                runs["lockstep"].append(t)
            print(f"lockstep {lockstep_wall:7.1f} s wall for {len(rows)} triplets ({args.lockstep} searches at once): "
                  f"{lockstep_wall / len(rows):.1f} s per triplet; {coordinator.counts['requests']} forward passes "
                  f"asked for, {coordinator.counts['passes']} run", file=sys.stderr, flush=True)

    columns = (*OUTPUT_COLUMNS, "history_S1", "history_S2")
    for a, b in zip(runs["lazy"], runs["lockstep"]):
        for col in columns:
            assert a["row"][col] == b["row"][col], ("lockstep", col, a["row"][col], b["row"][col])
    both = len(runs["plain"])
    for a, b in zip(runs["plain"], runs["lazy"][:both]):
        for col in columns:
            assert a["row"][col] == b["row"][col], (col, a["row"][col], b["row"][col])

    def summary(items: list[dict]) -> dict | None:
        if not items:  # --plain 0: the lazy search alone (timing only, nothing compared)
            return None
        accepted = sum(t["accepted"] for t in items)
        return {
            "triplets": len(items),
            "median_s": round(statistics.median(t["wall"] for t in items), 2),
            "median_cpu_s": round(statistics.median(t["cpu"] for t in items), 2),
            "mean_s": round(float(np.mean([t["wall"] for t in items])), 2),
            "attempts": sum(t["attempts"] for t in items),
            "accepted": accepted,
            "expensive_evaluations": sum(t["expensive"] for t in items),
            "expensive_per_accepted": round(sum(t["expensive"] for t in items) / max(accepted, 1), 1),
            "next_word_values": sum(t["next_word"] for t in items),
        }

    lazy_all, lazy_common, plain = summary(runs["lazy"]), summary(runs["lazy"][:both]), summary(runs["plain"])
    result = {
        "bench": "synthesis",
        "models": specs | {"trigram": "kenlm: contstim train ngram --order 3 (default corpus)"},
        "vocabulary": vocab.source,
        "vocabulary_size": [len(vocab.first), len(vocab.rest)],
        "torch_threads": torch.get_num_threads(),
        "smollm2_dtype": args.dtype or "float32",
        "smollm2_device": args.device or "default",
        "lazy": lazy_all,
        "lazy_on_plain_starts": lazy_common,
        "plain": plain,
        "identical_triplets": both,
        "speedup_wall": round(sum(t["wall"] for t in runs["plain"]) / sum(t["wall"] for t in runs["lazy"][:both]), 2)
        if both else None,
        "speedup_cpu": round(sum(t["cpu"] for t in runs["plain"]) / sum(t["cpu"] for t in runs["lazy"][:both]), 2)
        if both else None,
        "evaluations_ratio": round(plain["expensive_evaluations"] / max(lazy_common["expensive_evaluations"], 1), 1)
        if both else None,
        "plain_attempts_where_penalty_ranking_differs": sum(t["penalty_differs"] for t in runs["plain"]),
    }
    if lockstep_wall is not None:
        result["lockstep"] = {
            "searches_at_once": args.lockstep,
            "triplets": len(runs["lockstep"]),
            "wall_s": round(lockstep_wall, 2),
            "s_per_triplet": round(lockstep_wall / len(runs["lockstep"]), 2),
            "forward_passes_asked": coordinator.counts["requests"],
            "forward_passes_run": coordinator.counts["passes"],
            "expensive_evaluations": sum(t["expensive"] for t in runs["lockstep"]),
            "identical_to_one_at_a_time": len(runs["lockstep"]),
        }
        result["lockstep_speedup_vs_lazy_mean"] = round(lazy_all["mean_s"] / result["lockstep"]["s_per_triplet"], 2)
    target = 15 if args.dtype in ("bfloat16", "bf16") else 30
    best = result["lockstep"]["s_per_triplet"] if lockstep_wall is not None else (lazy_all or {}).get("median_s")
    result["target_s_per_triplet"] = target
    result["pass"] = bool(best is not None and best < target and (both > 0 or lockstep_wall is not None))
    print(json.dumps(result))
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
