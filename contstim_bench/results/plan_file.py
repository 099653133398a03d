"""The plan of a round (``plan.json``, written by ``contstim round plan``): its format, the checks
of the one validator, and :func:`read_plan`.

A plan travels with the design it sized (``generate design --plan``) into the round that
``experiment ingest`` writes, and ``evaluate`` checks the round against its ``hypotheses``; so it
is read, as every file of the package, with size, depth and duplicate-key limits and checked::

    {"format": "contstim-bench-plan", "format_version": 1,
     "evidence": {...},            # the human data's verdict on every given pair
     "targets": [...], "left_out": [...],
     "participant_model": {...},   # lapse, spreads, per-pair models and their sources
     "settings": {...},            # what was asked (PlanSettings.record)
     "power": [{model_a, model_b, participants, trials_per_participant, effect, test, power, ...}],
     "sample_size": [...], "design": {...},          # the recommended design
     "stimuli": {...}, "analysis": {...}, "hypotheses": [{id, model_a, model_b, condition, test, ...}],
     "cost": {...}, "provenance": {...}}
"""
from __future__ import annotations

from .checks import Problems, check_provenance, check_range, field, is_num, typename

PLAN_FORMAT = "contstim-bench-plan"
PLAN_FORMAT_VERSION = 1
PLAN_FILE = "plan.json"
TESTS = ("participants", "items", "both")


def plan_problems(doc: dict, problems: Problems) -> None:
    """The sections of a plan (see the module docstring)."""
    p = "file"
    rows = field(doc, "power", list, p, problems) or []
    for i, row in enumerate(rows):
        rp = f"{p}.power[{i}]"
        if not problems.check(isinstance(row, dict), rp, f"expected an object, got {typename(row)}"):
            continue
        field(row, "model_a", str, rp, problems)
        field(row, "model_b", str, rp, problems)
        for key in ("participants", "trials_per_participant", "groups"):
            value = field(row, key, "int", rp, problems)
            if value is not None:
                problems.check(value >= 1, f"{rp}.{key}", f"must be >= 1, got {value}")
        check_range(field(row, "power", "number", rp, problems), 0.0, 1.0, f"{rp}.power", problems)
        effect = field(row, "effect", "number", rp, problems)
        if effect is not None:
            problems.check(0.0 < effect < 1.0, f"{rp}.effect", f"must be a share in (0, 1), got {effect}")
        test = field(row, "test", str, rp, problems)
        if test is not None:
            problems.check(test in TESTS, f"{rp}.test", f"{test!r} is not one of {', '.join(TESTS)}")
    design = field(doc, "design", dict, p, problems) or {}
    for key in ("participants", "trials_per_participant", "groups", "catch_trials", "min_catch_correct"):
        value = field(design, key, "int", f"{p}.design", problems)
        if value is not None:
            problems.check(value >= 0, f"{p}.design.{key}", f"must be >= 0, got {value}")
    for i, h in enumerate(field(doc, "hypotheses", list, p, problems) or []):
        hp = f"{p}.hypotheses[{i}]"
        if not problems.check(isinstance(h, dict), hp, f"expected an object, got {typename(h)}"):
            continue
        for key in ("id", "model_a", "model_b", "condition", "test"):
            field(h, key, str, hp, problems)
        power = h.get("predicted_power")
        problems.check(is_num(power) and 0.0 <= power <= 1.0, f"{hp}.predicted_power",
                       f"expected a number in [0, 1], got {typename(power)}")
        if h.get("test") is not None:
            problems.check(h["test"] in TESTS, f"{hp}.test", f"{h['test']!r} is not one of {', '.join(TESTS)}")
    field(doc, "settings", dict, p, problems)
    field(doc, "analysis", dict, p, problems)
    check_provenance(doc, p, problems)
