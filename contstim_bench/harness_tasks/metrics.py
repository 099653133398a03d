"""The metrics of a contstim lm-eval task, and where each is read in a contstim result.

For each condition of the benchmark (trial type, and ``all``), a task reports (the suffix is
``_<condition>``, none for ``all``):

========================  =====================================================================
``acc``                   binarised accuracy, mean over units (participants in ``pll``,
                          participant groups in ``main``)
``acc_stderr``            its standard error across units (the result's ``accuracy_stderr``)
``acc_normalised``        accuracy / lower noise ceiling
``acc_ceiling_lower``     lower noise ceiling of the accuracy (leave-one-participant-out vote)
``acc_ceiling_upper``     upper noise ceiling of the accuracy
``srcs``                  signed-rank cosine similarity (Eq. 11), mean over units
``srcs_stderr``           its standard error across units
``srcs_ceiling_lower``    lower noise ceiling of the SRCS
``srcs_ceiling_upper``    upper noise ceiling of the SRCS
========================  =====================================================================

``acc<suffix>_stderr`` is named as lm-eval names the standard error of ``acc<suffix>``: its
results table shows it in the ``Stderr`` column beside the accuracy.
"""
from __future__ import annotations

from ..analysis.noise_ceiling import normalised_accuracy

FIELDS: dict[str, tuple[str, bool]] = {
    "acc": ("accuracy", True),
    "acc_stderr": ("accuracy_stderr", False),
    "acc_normalised": ("accuracy_normalised", True),
    "acc_ceiling_lower": ("accuracy_noise_ceiling.lower", True),
    "acc_ceiling_upper": ("accuracy_noise_ceiling.upper", True),
    "srcs": ("srcs", True),
    "srcs_stderr": ("srcs_stderr", False),
    "srcs_ceiling_lower": ("srcs_noise_ceiling.lower", True),
    "srcs_ceiling_upper": ("srcs_noise_ceiling.upper", True),
}
"""Field -> (where it is read in a result's condition entry, higher is better)."""


def metric_name(field: str, condition: str) -> str:
    """The lm-eval metric of ``field`` on ``condition``: ``acc``, ``acc_stderr``,
    ``acc_synthetic_vs_synthetic``, ``acc_synthetic_vs_synthetic_stderr``, ..."""
    if field not in FIELDS:
        raise ValueError(f"unknown field {field!r}; known: {', '.join(FIELDS)}")
    suffix = "" if condition == "all" else f"_{condition}"
    if field.endswith("_stderr"):
        return f"{field.removesuffix('_stderr')}{suffix}_stderr"
    return f"{field}{suffix}"


def task_metrics(conditions: list[str]) -> dict[str, tuple[str, str]]:
    """Metric name -> (condition, field) for every field on every condition, in the order lm-eval
    must see them: a measure before its ``_stderr`` (lm-eval writes ``N/A`` under
    ``<metric>_stderr`` for a custom aggregation; the package's figure, aggregated after it,
    replaces it)."""
    return {metric_name(f, c): (c, f) for c in conditions for f in FIELDS}


def field_value(entry: dict, field: str) -> float | None:
    """The value of ``field`` in one condition entry of a contstim result (None for a standard
    error of a single unit)."""
    if field == "acc_normalised":
        return normalised_accuracy(entry["accuracy"], entry["accuracy_noise_ceiling"]["lower"])
    value = entry
    for key in FIELDS[field][0].split("."):
        value = value[key]
    return value
