"""Formats of the files the package writes beside the benchmark results, known to the one
validator (:func:`.schema.validate_result` dispatches here by ``format``):

- ``contstim-bench-plausibility-glmm`` (``contstim plausibility-glmm``,
  :mod:`contstim_bench.benchmarks.plausibility_glmm`): the Appendix D GLMM of Kauf et al. (2024)
  over several plausibility results;
- ``contstim-bench-comparison`` (``contstim compare``, ``comparison.json``,
  :mod:`contstim_bench.benchmarks.contstim_compare`): head-to-head and agreement matrices;
- ``contstim-bench-plan`` (``contstim round plan``, ``plan.json``, :mod:`.plan_file`): a planned
  round, its power and its hypotheses.

Each carries ``format``, ``format_version`` and ``provenance``
(:func:`contstim_bench.provenance.provenance`).  These are not results of a benchmark: a
leaderboard (which asks for a dataset's results) refuses them.
"""
from __future__ import annotations

from collections.abc import Callable

from ..analysis.accuracy import TIES
from ..analysis.selection import CONDITION_KEYS
from .checks import Problems, check_provenance, check_range, field, is_int, is_num, typename
from .plan_file import PLAN_FORMAT, PLAN_FORMAT_VERSION, plan_problems

GLMM_FORMAT = "contstim-bench-plausibility-glmm"
GLMM_FORMAT_VERSION = 1
COMPARISON_FORMAT = "contstim-bench-comparison"
COMPARISON_FORMAT_VERSION = 2  # 2: every head-to-head also by item (share_items, share_by_item, p_items, p_items_bh)
UNITS = ("participant", "group")


def _number_or_null(obj: dict, key: str, path: str, problems: Problems, lo: float | None = None,
                    hi: float | None = None) -> None:
    if key not in obj:
        problems.append(f"{path}.{key}: missing")
        return
    v = obj[key]
    if v is None:
        return
    if not is_num(v):
        problems.append(f"{path}.{key}: expected a finite number or null, got {typename(v)} {v!r:.60}")
    elif lo is not None and hi is not None:
        check_range(v, lo, hi, f"{path}.{key}", problems)


def _strings(value, path: str, problems: Problems) -> None:
    if problems.check(isinstance(value, list), path, f"expected a list of strings, got {typename(value)}"):
        for i, v in enumerate(value):
            problems.check(isinstance(v, str), f"{path}[{i}]", f"expected a string, got {typename(v)}")


def glmm_problems(doc: dict, problems: Problems) -> None:
    """The score sections of a GLMM file (``format`` and ``format_version`` are checked by the caller)."""
    p = "file"
    for key in ("paper", "package_version"):
        field(doc, key, str, p, problems)
    fp = field(doc, "dataset_fingerprint", str, p, problems)
    subsets = field(doc, "subsets", list, p, problems)
    if subsets is not None:
        _strings(subsets, f"{p}.subsets", problems)
        problems.check(bool(subsets), f"{p}.subsets", "is empty")
    results = field(doc, "results", list, p, problems)
    for i, r in enumerate(results or []):
        rp = f"{p}.results[{i}]"
        if not problems.check(isinstance(r, dict), rp, f"expected an object, got {typename(r)}"):
            continue
        field(r, "source", str, rp, problems)
        field(r, "spec", str, rp, problems)
        field(r, "method", "str?", rp, problems)
        levels = field(r, "levels", dict, rp, problems)
        for k, v in (levels or {}).items():
            problems.check(isinstance(v, str), f"{rp}.levels.{k}", f"expected a string level, got {typename(v)}")
        field(r, "n_pairs", "int", rp, problems)
        check_range(field(r, "accuracy", "number", rp, problems), 0.0, 1.0, f"{rp}.accuracy", problems)
    fit = field(doc, "glmm", dict, p, problems)
    if fit is not None:
        fp_ = f"{p}.glmm"
        for key in ("formula", "random_effects", "estimator"):
            field(fit, key, str, fp_, problems)
        field(fit, "coding", dict, fp_, problems)
        for key in ("n_observations", "n_items"):
            field(fit, key, "int", fp_, problems)
        for key in ("item_variance", "item_variance_std_error", "log_likelihood"):
            field(fit, key, "number", fp_, problems)
        converged = fit.get("converged", "missing")
        problems.check(converged is None or isinstance(converged, bool), f"{fp_}.converged",
                       f"expected true, false or null, got {converged!r:.60}")
        iterations = fit.get("optimizer_iterations", "missing")
        problems.check(iterations is None or is_int(iterations), f"{fp_}.optimizer_iterations",
                       f"expected an integer or null, got {iterations!r:.60}")
        field(fit, "gpboost_version", "str?", fp_, problems, optional=True)
        warnings = field(fit, "warnings", list, fp_, problems)
        if warnings is not None:
            _strings(warnings, f"{fp_}.warnings", problems)
        coefs = field(fit, "coefficients", list, fp_, problems)
        for i, c in enumerate(coefs or []):
            cp = f"{fp_}.coefficients[{i}]"
            if not problems.check(isinstance(c, dict), cp, f"expected an object, got {typename(c)}"):
                continue
            field(c, "term", str, cp, problems)
            for key in ("estimate", "std_error", "z"):
                field(c, key, "number", cp, problems)
            check_range(field(c, "p", "number", cp, problems), 0.0, 1.0, f"{cp}.p", problems)
    check_provenance(doc, p, problems, fp, f"{p}.dataset_fingerprint")


def _check_matrix(matrix, models: set, path: str, problems: Problems, check_cell: Callable[[dict, str], None]) -> None:
    if not problems.check(isinstance(matrix, dict), path, f"expected an object, got {typename(matrix)}"):
        return
    for a, row in matrix.items():
        if not problems.check(a in models and isinstance(row, dict), f"{path}.{a}",
                              "expected a compared model's row (an object)"):
            continue
        for b, cell in row.items():
            cp = f"{path}.{a}.{b}"
            if problems.check(b in models and b != a and isinstance(cell, dict), cp,
                              "expected an object for another compared model"):
                check_cell(cell, cp)


def comparison_problems(doc: dict, problems: Problems) -> None:
    """The sections of a ``contstim compare`` file."""
    p = "file"
    field(doc, "experiment", str, p, problems)
    models = field(doc, "models", dict, p, problems) or {}
    for name, m in models.items():
        if problems.check(isinstance(m, dict), f"{p}.models.{name}", f"expected an object, got {typename(m)}"):
            field(m, "spec", str, f"{p}.models.{name}", problems)
    problems.check(len(models) >= 2 or "models" not in doc, f"{p}.models", "a comparison has at least two models")
    analysis = field(doc, "analysis", dict, p, problems)
    ties = field(analysis, "ties", str, f"{p}.analysis", problems) if analysis is not None else None
    if ties is not None:
        problems.check(ties in TIES, f"{p}.analysis.ties", f"{ties!r} is not one of {', '.join(TIES)}")

    def head_to_head(cell: dict, cp: str) -> None:
        field(cell, "selection", str, cp, problems)
        for key in ("n_pairs_selected", "n_trials", "n_pairs"):
            field(cell, key, "int", cp, problems)
        for key in ("share", "share_pooled", "p", "p_bh", "share_items", "p_items", "p_items_bh"):
            _number_or_null(cell, key, cp, problems, 0.0, 1.0)
        for by in ("share_by_unit", "share_by_item"):
            shares = field(cell, by, dict, cp, problems)
            for unit, v in (shares or {}).items():
                if problems.check(is_num(v), f"{cp}.{by}.{unit}", f"expected a finite number, got {typename(v)}"):
                    check_range(v, 0.0, 1.0, f"{cp}.{by}.{unit}", problems)

    def agreement(cell: dict, cp: str) -> None:
        _number_or_null(cell, "share", cp, problems, 0.0, 1.0)
        field(cell, "n_pairs", "int", cp, problems)

    conditions = field(doc, "conditions", dict, p, problems)
    for key, block in (conditions or {}).items():
        cp = f"{p}.conditions.{key}"
        if not problems.check(key in CONDITION_KEYS, cp, f"unknown condition (known: {', '.join(CONDITION_KEYS)})"):
            continue
        if not problems.check(isinstance(block, dict), cp, f"expected an object, got {typename(block)}"):
            continue
        unit = field(block, "unit", str, cp, problems)
        if unit is not None:
            problems.check(unit in UNITS, f"{cp}.unit", f"{unit!r} is not one of {', '.join(UNITS)}")
        for k in ("n_units", "n_pairs", "bh_family_size", "bh_family_size_items"):
            field(block, k, "int", cp, problems)
        for k, check in (("head_to_head", head_to_head), ("agreement", agreement)):
            if k in block:
                _check_matrix(block[k], set(models), f"{cp}.{k}", problems, check)
            else:
                problems.append(f"{cp}.{k}: missing")
    check_provenance(doc, p, problems)


FILE_FORMATS: dict[str, dict] = {
    GLMM_FORMAT: {"versions": (GLMM_FORMAT_VERSION,), "check": glmm_problems},
    COMPARISON_FORMAT: {"versions": (COMPARISON_FORMAT_VERSION,), "check": comparison_problems},
    PLAN_FORMAT: {"versions": (PLAN_FORMAT_VERSION,), "check": plan_problems},
}
"""The files other than benchmark results: format -> supported versions and checker."""


def file_problems(doc: dict, fmt: str, problems: Problems) -> None:
    """Every problem of a file of format ``fmt`` (one of :data:`FILE_FORMATS`), its version included."""
    spec = FILE_FORMATS[fmt]
    version = field(doc, "format_version", "int", "file", problems)
    if version is not None:
        problems.check(version in spec["versions"], "file.format_version",
                       f"{version} is not a supported version of {fmt} ({spec['versions']})")
    spec["check"](doc, problems)
