"""Terminal summary of a contstim result: :func:`summary_table` (reads a result, computes no score)."""
from __future__ import annotations

from ..analysis.inference import ALPHA, p_text, stars
from ..analysis.ranking import ranked_from, rank_text
from ..benchmarks.base import short_reason


def stderr_text(stderr: float | None) -> str:
    """A standard error at 3 decimals without the leading zero (``.013``), '-' when there is none
    (one unit)."""
    return "-" if stderr is None else f"{stderr:.3f}".removeprefix("0")


def _marks(p: float, value: float, lower: float) -> str:
    """Below the lower noise ceiling: ``*`` q < .05, ``**`` q < .01, ``***`` q < .001 (the
    paper's asterisks); ``^`` significantly above it (q < .05); nothing otherwise."""
    if not p < ALPHA:
        return ""
    return "^" if value > lower else stars(p)


def _winner(better: str | None, model: str, significant: bool) -> str:
    """"model" / "reference" / "tie", with "*" when the difference is significant (q < .05)."""
    word = "tie" if better in ("tie", None) else "model" if better == model else "reference"
    return word + ("*" if significant else "")


def _head_to_head_line(other: str, h: dict, name: str) -> str:
    head = f"    {other:<22} [{h['selection']:<13}]"
    if h["n_trials"] == 0:
        return (f"{head} disagree on 0 of {h['n_pairs_selected']} pairs: no disagreement, "
                "not separable on this data")
    return (
        f"{head} disagree on {h['n_pairs']:>4} of {h['n_pairs_selected']:>4} pairs ({h['n_trials']:>5} trials): "
        f"share {h['share']:.3f} q={p_text(h['p_bh']):>7} {_winner(h['better'], name, h['significant']):<10}"
        f"by item {h['share_items']:.3f} q={p_text(h['p_items_bh']):>7}{'*' if h['significant_items'] else ''}"
    )


VERSUS_LEGEND = (
    "vs reference models: the head-to-head on the same trials decides which model is better: on the pairs\n"
    "  where the two models prefer different sentences, share = how often participants chose {name}'s\n"
    "  sentence (mean over units; 0.5 = no difference), q = BH-adjusted two-sided Wilcoxon of the shares vs 0.5\n"
    "  over the model pairs of the condition; by item: the same test with the sentence pairs as units (F2: per\n"
    "  pair, the share of its participants who chose {name}'s sentence; BH over the pairs tested by item).\n"
    "  Per-unit scores are compared only like for like: on the same trials, or each model on the trials that\n"
    "  target it (own selection, as the paper's Fig. 1b/3a);\n"
    "  delta = model - reference. * = q < .05"
)


def _versus_lines(exp: str, key: str, e: dict, name: str) -> list[str]:
    """The head-to-head with every other model, then the like-for-like per-unit comparisons."""
    matches, comps = e.get("head_to_head") or {}, e.get("comparisons") or {}
    if not matches and not comps:
        return []
    fam = e["bh_families"]
    lines = [""]
    if matches:
        n_fam = fam["head_to_head"]["size"]
        lines.append(f"{exp} / {key}: head-to-head (q: BH over the {n_fam} model pairs that disagree)"
                     if n_fam else f"{exp} / {key}: head-to-head (no two models disagree on any pair)")
        lines += [_head_to_head_line(other, h, name) for other, h in matches.items()]
    if comps:
        lines.append(f"  per-unit scores (q: BH over the {fam['comparisons']['size']} comparable model pairs)")
        for ref, c in comps.items():
            won = {m: _winner(c[f"{m}_better"], name, c[f"{m}_significant"]) for m in ("accuracy", "srcs")}
            basis = c["basis"].replace("_", " ")
            lines.append(
                f"    {ref:<22} [{basis:<13}] accuracy {c['accuracy']:.3f} "
                f"delta {c['accuracy_delta']:+.3f} q={p_text(c['accuracy_p_bh']):>7} {won['accuracy']:<10} "
                f"SRCS {c['srcs']:.3f} delta {c['srcs_delta']:+.3f} q={p_text(c['srcs_p_bh']):>7} {won['srcs']}"
            )
    return lines


def summary_table(result: dict) -> str:
    """A readable table of the main numbers: conditions x (accuracy, SRCS), each with its noise
    ceiling (lower-upper), significance stars against the lower ceiling and the model's rank
    among the reference models; then, per condition, the head-to-head with every reference model
    on the trials where they disagree (with the number of such pairs), and the like-for-like
    comparisons of per-unit scores."""
    model = result["model"]
    name = model["name"]
    run = ", ".join(f"{k} {model[k]}" for k in ("method", "dtype", "device") if model.get(k))
    lines = [f"model: {model['spec']} (evaluated as {name!r}{'; ' + run if run else ''})"]
    scoring = result.get("scoring")
    if scoring:
        lines.append(
            f"scored {scoring['n_sentences']} sentences ({scoring['n_from_cache']} from cache) "
            f"in {scoring['seconds']:.1f} s"
        )
    ties = result.get("analysis", {}).get("ties", "half")
    if ties != "half":
        lines.append(f"model ties (equal log-probabilities) count as a {ties} in the accuracy (contstim evaluate --ties {ties})")
    for exp, conds in result["experiments"].items():
        why = next(iter(conds.values())).get("degenerate")
        if why:
            lines.append(f"DEGENERATE predictions on {exp}: {why}; the model is not ranked")
    header = (
        f"{'condition':<28} {'selection':<16} {'units':>5} {'trials':>6} | "
        f"{'accuracy':>9} {'SE':>5} {'ceiling':>13} {'p(LB)':>8} {'rank':>5} | "
        f"{'SRCS':>9} {'SE':>5} {'ceiling':>15} {'p(LB)':>8} {'rank':>5}"
    )
    for exp, conds in result["experiments"].items():
        first = next(iter(conds.values()))
        lines += [
            "",
            f"experiment {exp} (units: {first['unit']}s; p(LB): two-sided Wilcoxon vs the lower noise "
            f"ceiling, BH-adjusted; below it: * q < .05, ** q < .01, *** q < .001, above it: ^; SE: standard "
            "error across units, '-' for one unit; rank: among the "
            "models evaluated on the same trials, or each on the trials that target it; =N: shared at 3 decimals; "
            "'-': no such model, or degenerate predictions)",
            header,
            "-" * len(header),
        ]
        for key, e in conds.items():
            cells = []
            for m, width in (("accuracy", 13), ("srcs", 15)):
                c, p = e[f"{m}_noise_ceiling"], e["p_vs_lower_ceiling"][m]
                ceiling = f"{c['lower']:.3f}-{c['upper']:.3f}"
                cells.append(
                    f"{e[m]:>6.3f}{_marks(p, e[m], c['lower']):<3} {stderr_text(e[f'{m}_stderr']):>5} "
                    f"{ceiling:>{width}} {p_text(p):>8} "
                    f"{rank_text(ranked_from(e['rank'][m])):>5}"
                )
            lines.append(
                f"{key:<28} {e['selection']:<16} {e['n_units']:>5} {e['n_trials']:>6} | "
                + " | ".join(cells)
            )
        versus = [line for key, e in conds.items() for line in _versus_lines(exp, key, e, name)]
        if versus:
            lines += ["", VERSUS_LEGEND.format(name=name)] + versus
    if result.get("plan_check"):
        from .plan_text import plan_check_lines

        lines += plan_check_lines(result["plan_check"])
    skipped = result.get("skipped_experiments")
    if skipped:
        lines += [""] + [f"experiment {exp} not evaluated: {short_reason(why)} (details in the result file)"
                         for exp, why in skipped.items()]
    return "\n".join(lines)
