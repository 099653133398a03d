"""Validation of the ``evaluate`` metric's raw inputs, before anything converts them.

The metric's features are typed (``references`` and ``group`` are ``int64``), and ``datasets``
casts what it is given: a rating of 3.5 would silently become 3 and a rating of ``"a"`` would fail
deep inside pyarrow.  :func:`check_metric_inputs` runs first, on the values exactly as the caller
passed them, and raises one ValueError that names every bad input (the column, the position and
the value of the first few of each kind): mismatched lengths, non-numeric, NaN or infinite,
non-integer and out-of-range values.  Nothing is truncated or dropped.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence

from ..study import RATING_MAX, RATING_MIN

NUMERIC = ("predictions",)
"""Columns of finite real numbers (the model's per-trial log-ratios, nats)."""
INTEGER = {"references": (RATING_MIN, RATING_MAX), "group": (None, None)}
"""Columns of integers, with their (lowest, highest) allowed value (None: unbounded)."""
SHOWN_PER_PROBLEM = 3


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and type(v).__name__ != "bool_"


def _describe(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _column_problems(name: str, values: Sequence) -> list[str]:
    """Problems of one numeric column, grouped by kind: ``name[i] = value: why``."""
    lo, hi = INTEGER.get(name, (None, None))
    kinds: dict[str, list[str]] = {}
    for i, v in enumerate(values):
        if not _is_real(v):
            why = "not a number" if v is not None else "missing (None)"
        elif not math.isfinite(float(v)):
            why = "not finite (NaN or infinite)"
        elif name in INTEGER and float(v) != math.floor(float(v)):
            why = "not an integer (it would be truncated)"
        elif (lo is not None and v < lo) or (hi is not None and v > hi):
            why = f"outside {lo}..{hi}"
        else:
            continue
        kinds.setdefault(why, []).append(f"{name}[{i}] = {_describe(v)}")
    out = []
    for why, items in kinds.items():
        more = f" and {len(items) - SHOWN_PER_PROBLEM} more" if len(items) > SHOWN_PER_PROBLEM else ""
        out.append(f"{len(items)} value(s) {why}: {', '.join(items[:SHOWN_PER_PROBLEM])}{more}")
    return out


def _as_list(name: str, values) -> list | None:
    if values is None or isinstance(values, (str, bytes, Mapping)):
        return None
    try:
        return list(values)
    except TypeError:
        return None


def check_metric_inputs(columns: Mapping[str, object]) -> None:
    """Raise ValueError naming every bad input among ``columns`` (feature name -> values).

    Every column must be a sequence (not a str or a mapping) as long as ``predictions``;
    ``predictions`` finite real numbers; ``references`` integers in 1..6 (6 = strongest preference
    for sentence2); ``group`` integers.  Other columns (strings) are checked later, row by row,
    by :func:`contstim_bench.analysis.trials.prepare_trials`.
    """
    problems: list[str] = []
    lists: dict[str, list] = {}
    for name, values in columns.items():
        as_list = _as_list(name, values)
        if as_list is None:
            problems.append(f"{name}: expected a list of values (one per trial), got {type(values).__name__}")
        else:
            lists[name] = as_list
    if "predictions" in lists:
        n = len(lists["predictions"])
        wrong = {k: len(v) for k, v in lists.items() if len(v) != n}
        if wrong:
            problems.append(f"mismatched lengths: predictions has {n} values, but "
                            + ", ".join(f"{k} has {m}" for k, m in wrong.items()))
    for name in (*NUMERIC, *INTEGER):
        if name in lists:
            problems += [f"{name}: {p}" for p in _column_problems(name, lists[name])]
    if problems:
        raise ValueError("invalid contstim metric input: " + "; ".join(problems))


def metric_model_name(model_name: str, targeted: Sequence[str | None]) -> str:
    """The name the metric evaluates ``model_name`` under, as ``contstim evaluate`` names it
    (:func:`contstim_bench.scoring.spec.model_name`: ``precomputed:roberta`` is ``roberta``, a
    spec its canonical form, a plain label itself).  ``targeted``: the model names of the
    trials' accept/reject columns.  A ``precomputed:NAME`` spec names a reference model, which
    is evaluated on the trials that target it: a NAME that no trial targets is an error (it would
    silently be evaluated on every trial instead)."""
    from ..scoring.spec import model_name as canonical_name

    name, spec = canonical_name(model_name)
    reference = spec is not None and spec.family == "precomputed" and "sentences" not in spec.options
    if reference and name not in set(targeted):
        known = sorted({t for t in targeted if t})
        raise ValueError(f"model_name {model_name!r} names the reference model {name!r}, but no trial targets it "
                         f"(targeted models in these trials: {', '.join(known) or 'none'}); give one of those, or a "
                         "name of your own for a new model (evaluated on every trial)")
    return name
