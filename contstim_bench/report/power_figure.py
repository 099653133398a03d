"""The power curves of a round plan (``power.png`` / ``power.svg``): draws the plan's ``power``
table, computes nothing."""
from __future__ import annotations

import os
from pathlib import Path

from .figures import Mark, add_key, pyplot, save_figure

TEST_TITLES = {"participants": "by participant", "items": "by item", "both": "both tests"}


def power_figure(plan: dict):
    """One panel per test: power against participants, a line per model pair (and trials per
    participant and effect), the Monte Carlo interval as a band, the target power dashed."""
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    tests = ["participants", "items", "both"]
    target = plan["settings"]["target_power"]
    fig, axes = plt.subplots(1, len(tests), figsize=(4.2 * len(tests), 3.6), sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    series = list(dict.fromkeys((r["model_a"], r["model_b"], r["trials_per_participant"], r["effect"])
                                for r in plan["power"]))
    invalid = False
    for ax, test in zip(axes, tests):
        for k, key in enumerate(series):
            rows = sorted((r for r in plan["power"] if r["test"] == test
                           and (r["model_a"], r["model_b"], r["trials_per_participant"], r["effect"]) == key),
                          key=lambda r: r["participants"])
            if not rows:
                continue
            n = [r["participants"] for r in rows]
            p = [r["power"] for r in rows]
            se = [1.96 * r["power_mc_se"] for r in rows]
            color = colors[k % len(colors)]
            label = f"{key[0]} vs {key[1]} (T={key[2]}, effect {key[3]:.2f})"
            ax.plot(n, p, marker="o", ms=3, color=color, label=label)
            bad = [(x, y) for x, y, r in zip(n, p, rows) if not r.get("valid", True)]
            if bad:
                ax.plot(*zip(*bad), linestyle="", marker="x", ms=7, color="#c0392b")
                invalid = True
            ax.fill_between(n, [max(0, a - b) for a, b in zip(p, se)], [min(1, a + b) for a, b in zip(p, se)],
                            color=color, alpha=0.15, lw=0)
        ax.axhline(target, color="0.4", ls="--", lw=0.8)
        ax.set_title(TEST_TITLES[test], fontsize=10)
        ax.set_xlabel("participants")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"power (q < {plan['analysis']['alpha']:g})")
    fig.suptitle("Planned round: the probability that `evaluate` separates each pair", fontsize=10)
    fig.tight_layout()
    marks = [Mark(f"{a} vs {b} (T={t}, effect {e:.2f})", "line", color=colors[k % len(colors)])
             for k, (a, b, t, e) in enumerate(series)]
    marks += [Mark("95% Monte Carlo interval", "patch", color="0.85"),
              Mark(f"target power {target:g}", "line", color="0.4", linestyle="--")]
    if invalid:
        marks.append(Mark("not valid: at no effect this design separates equal models in more than "
                          f"{plan['analysis']['alpha']:.0%} of the rounds", "marker", color="#c0392b", marker="x"))
    add_key(fig, marks, note=(f"T: trials per participant and pair; each point {plan['settings']['simulations']} "
                              f"simulated rounds, separated = q < {plan['analysis']['alpha']:g} (BH over the round's "
                              f"model pairs) in favour of the first model"))
    return fig


def save_power_figure(plan: dict, out_dir: str | os.PathLike, stem: str = "power") -> list[Path]:
    return save_figure(power_figure(plan), out_dir, stem)
