"""The round planner's power curve (issue 51): 3 model pairs x 8 participant counts x 500
simulated rounds, as `contstim round plan` computes it, against the 60 s target on this 2-core
machine, and against a named baseline measured in the same run.

What is timed: :func:`contstim_bench.planning.sizing.power_grid` on the three pairs of the
pseudo-log-likelihood read-outs of the pll experiment (their observed participant models), 10
trials per participant, participants 6 8 10 12 16 20 24 30, 500 simulated rounds per point for the
power and 500 at no effect (the false-discovery check), every point's three tests.

Baseline (``--baseline-rounds``, default 100 per point so that it ends in minutes): the same
simulated rounds tested one at a time, each head-to-head through ``inference.wilcoxon_p`` on its
own (what a loop over simulated experiments calling the package's one-sample test costs), scaled to
500 rounds.  The batched and the one-at-a-time p-values of those rounds are asserted identical.

    python bench/power.py [--simulations 500] [--baseline-rounds 100]

Prints a table and ends with one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODELS = ("precomputed:roberta_has_a_mouth", "precomputed:electra_has_a_mouth", "precomputed:bert_has_a_mouth")
PARTICIPANTS = (6, 8, 10, 12, 16, 20, 24, 30)
TARGET_S = 60.0


def main(argv=None) -> int:
    import numpy as np

    from contstim_bench.analysis.head_to_head import CHANCE, share_p_values
    from contstim_bench.analysis.inference import wilcoxon_p
    from contstim_bench.analysis.power import RoundDesign, simulate_tests
    from contstim_bench.planning.settings import PlanSettings
    from contstim_bench.planning.sizing import power_grid
    from contstim_bench.planning.targets import ModelSources, plan_targets

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=500)
    ap.add_argument("--baseline-rounds", type=int, default=100)
    args = ap.parse_args(argv)

    settings = PlanSettings(participants=PARTICIPANTS, trials_per_participant=(10,), effects=None,
                            simulations=args.simulations)
    targets = plan_targets(ModelSources(models=MODELS), settings, log=lambda msg: None)
    started = time.perf_counter()
    cpu = time.process_time()
    sizing = power_grid(targets, settings)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu

    # the baseline: the same kind of simulated rounds, each test run alone
    base_seconds = 0.0
    for n in PARTICIPANTS:
        sims = simulate_tests(targets.models(None), RoundDesign(n, 10), args.baseline_rounds, seed=[9, n])
        t0 = time.perf_counter()
        one_by_one = np.full_like(sims.p["participants"], np.nan)
        rng = np.random.default_rng([9, n])
        shares = []
        for k, model in enumerate(targets.models(None)):  # the shares again, to test them one at a time
            u = rng.standard_normal((args.baseline_rounds, n, 1)) * model.participant_sd
            w = rng.standard_normal((args.baseline_rounds, 1, 10)) * model.item_sd
            y = (rng.random((args.baseline_rounds, n, 10)) < model.probability(u, w)).mean(axis=2)
            shares.append(y)
            for r in range(args.baseline_rounds):
                one_by_one[r, k] = wilcoxon_p(np.round(y[r] - CHANCE, 12), np.zeros(n))
        base_seconds += time.perf_counter() - t0
        batched = np.stack([share_p_values(y) for y in shares], axis=1)
        assert np.array_equal(batched, one_by_one), "the batched test differs from the one-at-a-time test"
    points = len(PARTICIPANTS) * 2  # power and no-effect simulations per participant count
    baseline = base_seconds / (args.baseline_rounds * len(PARTICIPANTS)) * args.simulations * points
    rows = [("power curve (batched, as `round plan`)", seconds, cpu_seconds),
            (f"baseline: one test at a time (from {args.baseline_rounds} rounds per point)", baseline, None)]
    print(f"{len(targets.targets)} pairs x {len(PARTICIPANTS)} participant counts x {args.simulations} rounds "
          f"(+ as many at no effect), 10 trials each")
    for name, wall, cpu_s in rows:
        print(f"  {name:<58} {wall:8.1f} s" + (f"  ({cpu_s:.1f} CPU-s)" if cpu_s is not None else ""))
    print(f"  target: under {TARGET_S:.0f} s -> {'met' if seconds < TARGET_S else 'NOT met'} "
          f"({seconds / TARGET_S:.2f}x the target; {baseline / seconds:.1f}x faster than the baseline)")
    print(json.dumps({"pairs": len(targets.targets), "participant_counts": len(PARTICIPANTS),
                      "simulations": args.simulations, "seconds": round(seconds, 2),
                      "cpu_seconds": round(cpu_seconds, 2), "baseline_seconds": round(baseline, 2),
                      "target_seconds": TARGET_S, "ratio_to_target": round(seconds / TARGET_S, 3),
                      "speedup_over_baseline": round(baseline / seconds, 2), "pass": seconds < TARGET_S,
                      "rows": len(sizing.rows)}))
    return 0 if seconds < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
