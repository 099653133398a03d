"""A round plan from what a user has to a folder of files (``contstim round plan``).

:func:`make_plan` runs the steps (the targets, the power grid, the stimuli) and returns the plan
(``plan.json``'s content, :mod:`contstim_bench.results.plan_file`); :func:`write_plan` writes the
folder whole, beside the old one and renamed into place (a folder the planner did not write is
never replaced):

- ``plan.json``: everything, the ``power`` table one row per model pair, participants, trials
  per participant, effect and test;
- ``plan.md``: the plan as a preregistration (hypotheses, design, sample size and why, analysis,
  exclusions, cost), :func:`contstim_bench.report.plan_text.plan_markdown`;
- ``power.png`` / ``power.svg``: the power curves (:mod:`contstim_bench.report.power_figure`);
- with ``--generate`` (natural pairs): ``natural/`` (the ILP's selection for the target pairs) and
  ``design/`` (the design ``experiment export`` takes, carrying ``plan.json``).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from ..analysis.exclusion import rule_text
from ..analysis.power import TESTS
from ..provenance import provenance
from ..results.plan_file import PLAN_FILE, PLAN_FORMAT, PLAN_FORMAT_VERSION
from ..scoring.run_options import RunOptions
from .settings import OBSERVED, PlanSettings
from .sizing import Sizing, power_grid
from .stimuli import check_pool, commands, generate
from .targets import ModelSources, Targets, plan_targets

PLAN_KIND = "round-plan"
"""The marker kind of a plan folder (:func:`contstim_bench.staging.replace_folder`)."""
TEST_WORDS = {"participants": "by participant (the paper's head-to-head: units are the participants, or the "
                              "participant groups when there are several)",
              "items": "by item (sentence pairs as units)",
              "both": "by participant and by item (both must separate the pair)"}


def _hypotheses(targets: Targets, sizing: Sizing, settings: PlanSettings) -> list[dict]:
    rec = sizing.recommended
    out = []
    for k, (target, model) in enumerate(zip(targets.targets, targets.models(None if settings.observed
                                                                             else settings.effects[0])), start=1):
        row = next(r for r in sizing.rows if r["model_a"] == target.a and r["model_b"] == target.b
                   and r["participants"] == rec["participants"] and r["test"] == settings.test
                   and r["trials_per_participant"] == rec["trials_per_participant"]
                   and r["effect"] == round(model.effect, 6))
        out.append({
            "id": f"H{k}", "model_a": target.a, "model_b": target.b, "condition": settings.condition,
            "test": settings.test, "effect": round(model.effect, 6), "predicted_power": row["power"],
            "predicted_power_mc_se": row["power_mc_se"],
            "prediction": (f"on the round's {settings.condition.replace('_', ' ')} pairs that contrast {target.a} and "
                           f"{target.b}, participants choose {target.a}'s sentence more often than {target.b}'s: "
                           f"the head-to-head {TEST_WORDS[settings.test]} is significant at q < {settings.alpha:g} "
                           f"(two-sided Wilcoxon of the shares against 0.5, Benjamini-Hochberg over the round's model "
                           f"pairs) with a share above 0.5"),
        })
    return out


def _cost(targets: Targets, settings: PlanSettings, sizing: Sizing) -> dict:
    rec = sizing.recommended
    seconds = settings.seconds_per_trial
    source = "given (--seconds-per-trial)"
    if seconds is None:
        seconds = targets.evidence.seconds_per_trial or 10.0
        source = (f"median response time of {targets.evidence.experiment}" if targets.evidence.seconds_per_trial
                  else "assumed (no response times in the data)")
    minutes = rec["trials_per_participant_total"] * seconds / 60.0
    out = {"participants": rec["participants"], "trials_per_participant_total": rec["trials_per_participant_total"],
           "seconds_per_trial": round(seconds, 2), "seconds_per_trial_source": source,
           "minutes_per_participant": round(minutes, 1), "pay_per_hour": settings.pay_per_hour, "total": None}
    if settings.pay_per_hour is not None:
        out["total"] = round(rec["participants"] * minutes / 60.0 * settings.pay_per_hour, 2)
    return out


def make_plan(sources: ModelSources, settings: PlanSettings, *, experiment: str = "pll", condition_key: str = "all",
              pilot: str | None = None, datasets_dir: str | os.PathLike | None = None, out: str = "plan",
              pool: str | None = None, pool_check: bool = True, options: RunOptions | None = None,
              log: Callable[[str], None] | None = None) -> tuple[dict, Targets]:
    """The plan (see the module docstring) and its targets."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    options = options or RunOptions()
    if pilot is not None:
        sources = sources if (sources.models or sources.candidates or sources.results or sources.leaderboard) else \
            ModelSources(models=tuple(_round_models(pilot, datasets_dir)))
        experiment, condition_key = pilot, settings.condition
    targets = plan_targets(sources, settings, experiment=experiment, condition_key=condition_key,
                           datasets_dir=datasets_dir, options=options, log=log)
    log(f"planning {len(targets.targets)} model pair(s): " + ", ".join(f"{t.a} vs {t.b}" for t in targets.targets))
    sizing = power_grid(targets, settings, progress=log)
    per_pair = sizing.recommended["groups"] * sizing.recommended["trials_per_participant"]
    stimuli = {"kind": settings.stimuli, "condition": settings.condition, "per_pair": per_pair,
               "per_group": sizing.recommended["trials_per_participant"], "groups": sizing.recommended["groups"],
               "total_pairs": per_pair * len(targets.targets),
               "commands": commands(targets, settings, sizing.recommended, out, pool), "pool_check": None}
    if settings.stimuli == "natural" and pool_check:
        log(f"checking that the pool holds {per_pair} natural controversial pairs for each target pair ...")
        stimuli["pool_check"] = check_pool(targets, per_pair, pool=pool, datasets_dir=datasets_dir, options=options,
                                           log=log)
        if stimuli["pool_check"].get("skipped"):
            log(f"warning: {stimuli['pool_check']['skipped']}")
    models = targets.models(None if settings.observed else settings.effects[0])
    plan = {
        "format": PLAN_FORMAT, "format_version": PLAN_FORMAT_VERSION,
        "settings": {**settings.record(), "experiment": experiment, "condition": condition_key, "pilot": pilot},
        "evidence": targets.evidence.record(),
        "targets": [{"model_a": t.a, "model_b": t.b, "why": t.verdict()} for t in targets.targets],
        "left_out": [{"model_a": p.a, "model_b": p.b, "why": why} for p, why in targets.left_out],
        "participant_model": {
            "lapse": targets.lapse, "lapse_source": targets.lapse_source,
            "participant_sd": targets.spread[0] if not settings.observed else None,
            "item_sd": targets.spread[1] if not settings.observed else None, "spread_source": targets.spread_source,
            "per_pair": [{"model_a": t.a, "model_b": t.b, **m.record()} for t, m in zip(targets.targets, models)],
            "model": ("P(choose A's sentence) = lapse/2 + (1 - lapse) * Phi(mu + u_participant + w_item), u ~ "
                      "N(0, participant_sd^2), w ~ N(0, item_sd^2); mu set by the effect "
                      "(contstim_bench.analysis.participant_model)"),
        },
        "power": sizing.rows,
        "sample_size": sizing.sample_size,
        "cannot_succeed": sizing.designs_that_cannot,
        "design": {**sizing.recommended, "stimuli": settings.stimuli, "condition": settings.condition},
        "stimuli": stimuli,
        "analysis": {
            "condition": settings.condition, "tests": list(TESTS) if settings.test == "both" else [settings.test],
            "test": settings.test, "test_text": TEST_WORDS[settings.test], "alpha": settings.alpha,
            "family": "head_to_head (BH over the pairs of the round's models that disagree on the condition; the "
                      "by-item tests form their own family)", "family_size": sizing.family_size,
            "exclusion": rule_text(settings.min_catch_correct, settings.catch_trials),
            "effects": OBSERVED if settings.observed else list(settings.effects),
        },
        "hypotheses": _hypotheses(targets, sizing, settings),
        "cost": _cost(targets, settings, sizing),
        "provenance": provenance(targets.evidence.fingerprint),
    }
    from ..results import validate_result

    validate_result(plan)
    return plan, targets


def _round_models(pilot: str, datasets_dir) -> list[str]:
    """``NAME=SPEC`` of a pilot round's targeted models with a spec (the others by their recorded values)."""
    from ..data.rounds import find_round, load_round

    data = load_round(find_round(pilot, datasets_dir))
    return [f"{n}={s}" for n, s in data.model_specs().items() if s]


def write_plan(plan: dict, targets: Targets, folder: str | os.PathLike, *, settings: PlanSettings,
               generate_stimuli: bool = False, pool: str | None = None, round_name: str = "planned",
               datasets_dir: str | os.PathLike | None = None, options: RunOptions | None = None,
               log: Callable[[str], None] | None = None) -> list[Path]:
    """Write the plan folder (see the module docstring); returns the files written."""
    from ..report.plan_text import plan_markdown
    from ..report.power_figure import save_power_figure
    from ..staging import replace_folder
    from ..generate.synthetic_run import write_json_atomic

    log = log or (lambda msg: print(msg, file=sys.stderr))
    with replace_folder(folder, kind=PLAN_KIND, flag="--out") as tmp:
        write_json_atomic(tmp / PLAN_FILE, plan)
        (tmp / "plan.md").write_text(plan_markdown(plan), encoding="utf-8")
        save_power_figure(plan, tmp, "power")
        if generate_stimuli:
            made = generate(targets, settings, plan["design"], tmp, pool=pool, round_name=round_name,
                            datasets_dir=datasets_dir, options=options or RunOptions(), log=log)
            log(f"generated {made['n_pairs_selected']} natural pairs and a design of {made['trials']}")
    final = Path(folder)
    return sorted(p for p in final.rglob("*") if p.is_file() and p.parent == final)
