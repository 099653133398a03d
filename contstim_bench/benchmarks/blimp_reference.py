"""Published BLiMP accuracies to print beside a model's: Kauf & Ivanova (2023), Table 3 (Appendix
H), per PLL metric, for four masked LMs, and its human row (Warstadt et al. 2020).

Values are the paper's percentages (forced-choice accuracy, mean of paradigm accuracies), per
phenomenon in the package's phenomenon keys (the ``phenomenon`` column of the ``blimp`` dataset).
The PLL-sentence-l2r rows (Appendix G) are read out by ``method=pll-sentence-l2r``.
"""
from __future__ import annotations

PHENOMENA = ("anaphor_agreement", "argument_structure", "binding", "control_raising", "determiner_noun_agreement",
             "ellipsis", "filler_gap_dependency", "irregular_forms", "island_effects", "npi_licensing",
             "quantifiers", "subject_verb_agreement")
"""Table 3's columns after "overall": ANA. AGR, ARG. STR, BINDING, CTRL. RAIS., D-N AGR, ELLIPSIS,
FILLER GAP, IRREGULAR, ISLAND, NPI, QUANTIFIERS, S-V AGR."""

METHOD_NAMES = {"pll": "PLL-original", "pll-word-l2r": "PLL-word-l2r", "pll-whole-word": "PLL-whole-word",
                "pll-sentence-l2r": "PLL-sentence-l2r"}
"""Package method -> the paper's metric name (``approx-ll`` is Golan et al.'s: no row here)."""

MODELS = {"bert-base-cased": "BERT (base)", "bert-large-cased": "BERT (large)", "roberta-base": "RoBERTa (base)",
          "roberta-large": "RoBERTa (large)"}
"""Hub ids of the paper's (cased) models -> its row names."""

_ROWS = """
bert-base-cased pll 84.2 97.0 80.0 82.3 79.6 97.6 89.4 83.1 96.5 73.6 84.7 71.2 92.4
bert-base-cased pll-word-l2r 84.7 97.1 81.0 82.3 81.9 98.4 89.6 83.0 96.5 75.0 85.0 69.8 92.1
bert-base-cased pll-whole-word 83.1 96.6 76.5 81.5 80.5 96.9 87.1 82.5 97.1 74.9 83.8 69.2 88.5
bert-base-cased pll-sentence-l2r 58.7 80.3 63.0 68.3 53.5 82.1 68.3 47.8 47.3 56.5 38.9 51.6 50.7
bert-large-cased pll 84.8 97.2 80.7 82.0 82.7 97.6 86.4 84.3 92.8 77.0 83.4 72.8 91.9
bert-large-cased pll-word-l2r 85.0 96.8 80.6 81.9 84.8 97.8 85.8 84.0 92.0 78.8 83.6 71.7 91.2
bert-large-cased pll-whole-word 82.6 96.6 75.7 79.9 81.4 95.2 83.6 83.3 90.1 78.7 81.5 70.4 86.7
bert-large-cased pll-sentence-l2r 59.8 61.5 63.0 71.3 60.5 71.8 58.3 58.5 63.0 50.2 42.8 51.9 63.0
roberta-base pll 85.4 97.3 83.5 77.8 81.9 97.0 91.4 90.1 96.2 80.7 81.0 69.8 91.9
roberta-base pll-word-l2r 86.7 97.8 84.8 78.7 84.9 98.3 91.6 90.0 95.4 81.0 84.4 69.7 94.0
roberta-base pll-whole-word 85.4 97.6 80.9 76.6 85.2 96.6 91.6 90.0 95.6 80.2 84.7 69.6 91.1
roberta-base pll-sentence-l2r 79.3 97.0 79.9 71.2 78.4 95.0 84.8 82.6 85.0 68.2 80.6 58.4 81.6
roberta-large pll 86.5 97.8 84.6 79.1 84.1 96.8 90.8 88.9 96.8 83.4 85.5 70.2 91.4
roberta-large pll-word-l2r 87.5 98.0 85.0 80.0 86.8 98.3 90.4 89.1 95.7 83.4 88.0 70.3 93.2
roberta-large pll-whole-word 85.9 98.2 80.2 78.0 87.1 96.0 90.1 88.9 95.6 82.2 88.0 69.8 89.7
roberta-large pll-sentence-l2r 80.4 98.8 82.5 71.8 80.4 95.1 82.0 80.8 91.6 73.0 76.6 57.8 86.0
human human 88.6 97.5 90.0 87.3 83.9 92.2 85.0 86.9 97.0 84.9 88.1 86.6 90.9
"""


def _parse() -> dict[tuple[str, str], dict[str, float]]:
    out = {}
    for line in _ROWS.strip().splitlines():
        model, method, *values = line.split()
        nums = [float(v) for v in values]
        out[(model, method)] = {"overall": nums[0], **dict(zip(PHENOMENA, nums[1:]))}
    return out


KAUF_IVANOVA_2023_TABLE3: dict[tuple[str, str], dict[str, float]] = _parse()
"""(model hub id or ``human``, method or ``human``) -> {"overall" and each phenomenon: percent}."""


def paper_model(spec: str) -> str | None:
    """The paper's model a spec names (``hf-masked:bert-base-cased?method=pll`` -> ``bert-base-cased``),
    by the last path component of its target; None for any other model."""
    from ..scoring.spec import ModelSpec

    name = ModelSpec.parse(spec).model_target.rstrip("/").rsplit("/", 1)[-1]
    return name if name in MODELS else None


def reference_rows(methods, model: str | None = None) -> list[tuple[str, dict[str, float]]]:
    """(label, row) of Table 3 for ``methods``: the paper's ``model`` only when given, else all
    four; the human row last."""
    models = [model] if model is not None else list(MODELS)
    rows = [(f"{MODELS[m]}, {METHOD_NAMES[meth]}", KAUF_IVANOVA_2023_TABLE3[(m, meth)])
            for m in models for meth in methods if (m, meth) in KAUF_IVANOVA_2023_TABLE3]
    return rows + [("human (Warstadt et al. 2020)", KAUF_IVANOVA_2023_TABLE3[("human", "human")])]
