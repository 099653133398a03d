"""Terminal summary of a BLiMP result, and the side-by-side table of several masked-LM read-outs
with Kauf & Ivanova's (2023) Table 3 beside (reads results, computes no score)."""
from __future__ import annotations

from ..scoring.spec import spec_label
from ..benchmarks.blimp_reference import METHOD_NAMES, PHENOMENA, paper_model, reference_rows

_SHORT = {"anaphor_agreement": "ANA", "argument_structure": "ARG", "binding": "BIND", "control_raising": "CTRL",
          "determiner_noun_agreement": "D-N", "ellipsis": "ELL", "filler_gap_dependency": "FILL",
          "irregular_forms": "IRR", "island_effects": "ISL", "npi_licensing": "NPI", "quantifiers": "QNT",
          "subject_verb_agreement": "S-V"}


def summary_table(result: dict, paradigms: bool = True) -> str:
    """Overall, per field, per phenomenon (and per paradigm) accuracy with the human one beside."""
    acc = result["accuracy"]
    lines = [f"model: {result['model']['spec']}   BLiMP: {acc['overall']['n_paradigms']} paradigms, "
             f"{acc['overall']['n_pairs']} pairs", ""]
    header = f"{'':<48} {'pairs':>6} {'model':>7} {'human':>7}"

    def row(name: str, e: dict) -> str:
        human = f"{e['human_accuracy']:>7.3f}" if "human_accuracy" in e else f"{'-':>7}"
        return f"{name:<48} {e['n_pairs']:>6} {e['accuracy']:>7.3f} {human}"

    lines += [header, row("overall", acc["overall"])]
    for level in ("field", "phenomenon"):
        lines += ["", f"per {level}:"] + [row("  " + k, e) for k, e in acc[level].items()]
    if paradigms:
        lines += ["", "per paradigm:"] + [row("  " + k, e) for k, e in acc["paradigm"].items()]
    return "\n".join(lines)


def methods_table(results: dict[str, dict]) -> str:
    """Overall and per-phenomenon accuracy (percent) of one model per read-out method (rows), the
    rows of Kauf & Ivanova (2023) Table 3 for the same methods beside them (the paper's model when
    the spec names one of its four, else all four) and the human row.  ``results``: method -> BLiMP
    result of the same model and pairs."""
    if not results:
        raise ValueError("no BLiMP results to tabulate")
    first = next(iter(results.values()))
    spec = first["model"]["spec"]
    overall = first["accuracy"]["overall"]
    head = f"{'':<40} {'overall':>7} " + " ".join(f"{_SHORT[p]:>5}" for p in PHENOMENA)
    lines = [f"BLiMP by method: {spec_label(spec)} ({overall['n_paradigms']} paradigms, {overall['n_pairs']} pairs; "
             "accuracy in %, mean of paradigm accuracies)", "", head, "-" * len(head)]

    def row(label: str, overall_pct: float, by: dict[str, float | None]) -> str:
        cells = " ".join(f"{by[p]:>5.1f}" if by.get(p) is not None else f"{'-':>5}" for p in PHENOMENA)
        return f"{label:<40} {overall_pct:>7.1f} {cells}"

    for method, r in results.items():
        acc = r["accuracy"]
        label = METHOD_NAMES.get(method, method) + " (this run)"
        lines.append(row(label, 100 * acc["overall"]["accuracy"],
                         {p: 100 * acc["phenomenon"][p]["accuracy"] for p in PHENOMENA if p in acc["phenomenon"]}))
    known = [m for m in results if m in METHOD_NAMES]
    model = paper_model(spec)
    lines += ["", "Kauf & Ivanova (2023), Table 3" + ("" if model else " (all four models: the spec is none of them)")]
    for label, ref in reference_rows(known, model):
        lines.append(row(label, ref["overall"], ref))
    if first["benchmark"].get("limit") is not None or overall["n_paradigms"] < 67:
        lines += ["", "note: this run covers a subset of BLiMP; the paper's numbers are over all 67,000 pairs"]
    return "\n".join(lines)
