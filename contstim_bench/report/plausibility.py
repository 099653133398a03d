"""Terminal summary of a plausibility result (reads the result, computes no score)."""
from __future__ import annotations

from ..plausibility.metrics import CHANCE, EXPERIMENT1_SUBSETS, METRIC_TITLES, METRICS, SUBSET_TITLES


def summary_table(result: dict) -> str:
    """Readable tables of a :func:`run_plausibility` result (accuracy, human accuracy beside)."""
    chance = CHANCE["judgment"] if result["method"] == "prompt:sentence-judgment" else CHANCE["higher"]
    limit = result["benchmark"].get("limit")
    query = (result.get("prompt") or {}).get("query")
    lines = [f"model: {result['model']['spec']}   method: {result['method']}"
             + (f"   query: {query}" if query else "")
             + (f"   (first {limit} pairs per subset and voice"
                + (f", first {limit} SocialN400 items)" if "experiment2" in result else ")") if limit else ""),
             "", f"Experiment 1: binary accuracy (model vs human; chance {chance:.2f})"]
    choice = result["method"] in ("prompt:sentence-choice-1", "prompt:word-comparison")
    extra = f" {'1st':>6} {'2nd':>6} {'avg':>6}" if choice else ""
    header = f"{'subset':<30} {'voice':<8} {'pairs':>5} {'model':>7} {'human':>7}" + extra
    lines += [header, "-" * len(header)]
    for subset in EXPERIMENT1_SUBSETS:
        for voice, e in result["experiment1"].get(subset, {}).items():
            more = (f" {e['accuracy_plausible_first']:>6.3f} {e['accuracy_plausible_second']:>6.3f} "
                    f"{e['accuracy_order_averaged']:>6.3f}") if choice else ""
            lines.append(f"{SUBSET_TITLES[subset]:<30} {voice:<8} {e['n_pairs']:>5} {e['accuracy']:>7.3f} "
                         f"{e['human_accuracy']:>7.3f}" + more)
    if choice:
        lines.append("1st/2nd: plausible sentence shown first/second; avg: log-odds averaged over both orders")
    if "experiment2" in result:
        e2 = result["experiment2"]
        lines += ["", "Experiment 2 (SocialN400): accuracy over items (human: same comparison on sense rates)"]
        header = f"{'metric':<32} {'word':>7} {'sentence':>9} {'human':>7} {'items':>6}"
        lines += [header, "-" * len(header)]
        for m in METRICS:
            lines.append(f"{METRIC_TITLES[m]:<32} {e2['word']['metrics'][m]['accuracy']:>7.3f} "
                         f"{e2['sentence']['metrics'][m]['accuracy']:>9.3f} "
                         f"{e2['human']['metrics'][m]['accuracy']:>7.3f} {e2['word']['metrics'][m]['n_items']:>6}")
        lines += ["", "mean target-word log-prob (nats) per condition: "
                  + ", ".join(f"{c} {v:.2f}/{e2['word']['condition_means']['context'][c]:.2f}"
                              for c, v in e2["word"]["condition_means"]["no_context"].items())
                  + " (no context/context)"]
    if "experiment2" in result:
        lines += ["", "Appendix E similarity to the human pattern (1 = identical; matched: same perspective)"]
        lines += _similarity_lines({f"{lvl} log-prob": e2[lvl]["similarity"] for lvl in ("word", "sentence")})
    if "experiment1_free" in result:
        lines += ["", "Experiment 1 by free generation (greedy; accuracy over valid answers; "
                  "constrained beside it)"]
        header = f"{'subset':<30} {'voice':<8} {'valid':>11} {'free':>7} {'constr.':>8}"
        lines += [header, "-" * len(header)]
        for subset in EXPERIMENT1_SUBSETS:
            for voice, e in result["experiment1_free"].get(subset, {}).items():
                acc = f"{e['accuracy']:>7.3f}" if e["accuracy"] is not None else f"{'-':>7}"
                lines.append(f"{SUBSET_TITLES[subset]:<30} {voice:<8} {e['n_valid']:>5}/{e['n_answers']:<5} {acc} "
                             f"{result['experiment1'][subset][voice]['accuracy']:>8.3f}")
    if "experiment2_prompting" in result:
        ep = result["experiment2_prompting"]
        lines += ["", "Experiment 2 by prompting (Appendix F): share of Yes answers, model / human"]
        header = f"{'condition':<10} {'no context':>17} {'context':>17}"
        lines += [header, "-" * len(header)]
        for c in ep["condition_means"]["no_context"]:
            lines.append(f"{c:<10} " + " ".join(
                f"{ep['condition_means'][p][c]:>8.3f}/{ep['human']['condition_means'][p][c]:<8.3f}"
                for p in ("no_context", "context")))
        lines += _similarity_lines({"Yes answers": ep["similarity"]})
    for k, v in result.get("skipped", {}).items():
        lines += ["", f"{k} skipped: {v}"]
    return "\n".join(lines)


def _similarity_lines(entries: dict) -> list[str]:
    """Rows of Appendix E similarities (matched, unmatched, paired t-test)."""
    header = f"{'response':<16} {'matched':>8} {'unmatched':>10} {'t':>8} {'p':>10} {'items':>6}"
    lines = [header, "-" * len(header)]
    for name, sim in entries.items():
        if not sim["defined"]:
            lines.append(f"{name:<16} undefined: {sim['undefined_because']}")
            continue
        t = f"{sim['t_statistic']:>8.2f}" if sim["t_statistic"] is not None else f"{'-':>8}"
        p = f"{sim['p_value']:>10.2g}" if sim["p_value"] is not None else f"{'-':>10}"
        lines.append(f"{name:<16} {sim['matched']:>8.3f} {sim['unmatched']:>10.3f} {t} {p} {sim['n_items']:>6}")
    return lines


def glmm_table(report: dict) -> str:
    """Readable coefficient table of a :func:`run_glmm` report."""
    g = report["glmm"]
    lines = [f"GLMM (Kauf et al. 2024, Appendix D): {g['formula']} + {g['random_effects']}",
             f"subsets: {', '.join(report['subsets'])}; {g['n_observations']} observations, {g['n_items']} items; "
             f"log-likelihood {g['log_likelihood']:.2f}", f"estimator: {g['estimator']}", ""]
    for r in report["results"]:
        lines.append(f"  {r['spec']} ({r['method']}): {', '.join(f'{k}={v}' for k, v in r['levels'].items())}, "
                     f"accuracy {r['accuracy']:.3f} over {r['n_pairs']} pairs")
    header = f"{'term':<48} {'estimate':>9} {'std.err':>8} {'z':>7} {'p':>9}"
    lines += ["", header, "-" * len(header)]
    for c in g["coefficients"]:
        lines.append(f"{c['term']:<48} {c['estimate']:>9.3f} {c['std_error']:>8.3f} {c['z']:>7.2f} {c['p']:>9.3g}")
    lines.append(f"item random-intercept variance {g['item_variance']:.3f} (s.e. {g['item_variance_std_error']:.3f})")
    found = g.get("warnings", [])
    lines += ["", f"{len(found)} warning(s): the estimates above are not to be trusted as they are"] if found else []
    lines += [f"warning: {w}" for w in found]
    return "\n".join(lines)
