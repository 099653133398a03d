"""Terminal summary of a BLiMP result (reads the result, computes no score)."""
from __future__ import annotations


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
