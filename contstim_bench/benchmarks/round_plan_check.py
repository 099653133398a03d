"""A round against its plan: what the data show for each planned hypothesis, and the departures.

A round whose design carried a plan of ``contstim round plan`` (``generate design --plan``)
records the plan's hypotheses in ``round.json`` (``plan``).  Evaluating any model on the round
then adds ``plan_check`` to the result: for each hypothesis (model A's sentences chosen over
model B's on the pairs that contrast them), the head-to-head of A and B on the round's trials of
the planned condition, by participant and by item, with Benjamini-Hochberg over the pairs of the
round's targeted models that take part in that condition (the family the plan simulated), and
whether the round separates the pair in A's favour as predicted; and every departure from the
plan: fewer participants recruited or kept than planned, other groups or trials per participant,
planned pairs the round does not contrast and contrasted pairs the plan did not plan.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..analysis.evaluation import log_ratios_from_logprobs
from ..analysis.head_to_head import pair_selection
from ..analysis.inference import ALPHA
from ..analysis.panel import Evaluator, condition_panel
from ..analysis.partial_references import covered_models
from ..analysis.selection import condition, condition_mask
from ..analysis.trials import prepare_trials


def _checked_plan(meta: dict) -> dict | None:
    plan = meta.get("plan")
    if plan is None:
        return None
    ok = isinstance(plan, dict) and isinstance(plan.get("hypotheses"), list) and isinstance(plan.get("design"), dict)
    ok = ok and all(isinstance(h, dict) and all(isinstance(h.get(k), str) for k in
                                                ("id", "model_a", "model_b", "condition", "test"))
                    for h in plan["hypotheses"])
    if not ok:
        raise ValueError(f"round {meta.get('identifier')}: the plan block of its round.json is malformed (hypotheses "
                         "with id, model_a, model_b, condition and test; a design); ingest the round again")
    return plan


def _verdict(share: float | None, q: float | None) -> str:
    if share is None:
        return "not testable: the two models never disagree on the round's trials"
    if q is not None and q < ALPHA:
        return "supported" if share > 0.5 else "separated the other way"
    return "not supported (not significant)"


def plan_check(meta: dict, trials, reference_logprobs: Mapping[str, Mapping[str, float]]) -> dict | None:
    """The ``plan_check`` block of a round's result (see the module docstring), or None for a round
    without a plan."""
    plan = _checked_plan(meta)
    if plan is None:
        return None
    prepared = prepare_trials(trials)
    ev = Evaluator(prepared)
    hypotheses, departures = [], []
    panels: dict[str, object] = {}
    for h in plan["hypotheses"]:
        key = h["condition"]
        if key not in panels:
            cond = condition(key)
            mask = condition_mask(trials, cond)
            present = covered_models(trials, reference_logprobs, mask) if mask.any() else []
            ratios = {m: prepared.orient(_ratios(trials, reference_logprobs[m], mask)) for m in present}
            panels[key] = condition_panel(ev, cond, ratios, per_unit_tests=False) if len(ratios) >= 2 else None
        panel = panels[key]
        a, b = h["model_a"], h["model_b"]
        if panel is None or a not in panel.names or b not in panel.names:
            hypotheses.append({**_head(h), "outcome": f"not testable: the round has no {key} trials that both "
                                                      f"{a} and {b} score"})
            continue
        match, q, swapped = panel.match(a, b)
        share = None if match.share is None else (1.0 - match.share if swapped else match.share)
        share_items = None if match.share_items is None else (1.0 - match.share_items if swapped else match.share_items)
        q_items = panel.items_q(a, b)
        outcome = {"participants": _verdict(share, q), "items": _verdict(share_items, q_items)}
        if h["test"] == "both":
            outcome["both"] = ("supported" if outcome["participants"] == outcome["items"] == "supported"
                               else "not supported (both tests must separate the pair)")
        hypotheses.append({**_head(h), "selection": match.selection, "n_pairs": match.n_pairs,
                           "n_trials": match.n_trials, "n_units": int(len(match.share_by_unit)),
                           "share": share, "q": q, "share_items": share_items, "q_items": q_items,
                           "family_size": panel.family_sizes()["head_to_head"], "outcome": outcome[h["test"]],
                           "outcomes": outcome})
        per_person = _trials_per_participant(ev, a, b, key)
        planned_t = plan["design"].get("trials_per_participant")
        if per_person is not None and planned_t is not None and per_person != planned_t:
            departures.append(f"{h['id']} ({a} vs {b}): {per_person} trials per participant, {planned_t} planned")
    departures += _design_departures(plan, meta, hypotheses)
    return {"plan_sha256": plan.get("sha256"), "planned": plan["design"], "hypotheses": hypotheses,
            "departures": departures}


def _head(h: dict) -> dict:
    return {k: h.get(k) for k in ("id", "model_a", "model_b", "condition", "test", "predicted_power", "effect")}


def _ratios(trials, values: Mapping[str, float], mask: np.ndarray) -> np.ndarray:
    out = np.zeros(len(trials), dtype=np.float64)
    out[mask] = log_ratios_from_logprobs(trials[mask], values)
    return out


def _trials_per_participant(ev: Evaluator, a: str, b: str, key: str) -> int | None:
    """The median number of the trials that contrast ``a`` and ``b`` (the head-to-head's
    ``targeted_both`` selection) a participant answered; None when no trial targets both."""
    rows, selection = pair_selection(ev.masks, a, b, condition(key))
    if selection != "targeted_both":
        return None
    return int(np.median(ev.frame.loc[rows].groupby("participant").size().to_numpy()))


def _design_departures(plan: dict, meta: dict, hypotheses: list[dict]) -> list[str]:
    out = []
    design = plan["design"]
    people = meta.get("participants", {})
    planned = design.get("participants")
    if isinstance(planned, int):
        if people.get("total", 0) < planned:
            out.append(f"fewer participants than planned: {people.get('total')} took part, {planned} planned")
        kept = people.get("included")
        if isinstance(kept, int) and kept < planned:
            out.append(f"{kept} of the {people.get('total')} participants were kept by the exclusion rule "
                       f"(the plan's power already counts the exclusions it expects)")
    groups = meta.get("design", {}).get("groups")
    if isinstance(design.get("groups"), int) and groups is not None and groups != design["groups"]:
        out.append(f"{groups} groups, {design['groups']} planned")
    planned_pairs = {frozenset((h["model_a"], h["model_b"])) for h in hypotheses}
    targeted = set()
    for m in meta.get("models", []):
        targeted.add(m.get("name"))
    missing = sorted(" vs ".join(sorted(p)) for p in planned_pairs if not p <= targeted)
    if missing:
        out.append(f"planned pairs the round does not target: {', '.join(missing)}")
    extra = sorted(targeted - {m for p in planned_pairs for m in p})
    if extra:
        out.append(f"the round targets models the plan did not plan: {', '.join(str(e) for e in extra)}")
    rule = meta.get("exclusion_rule", {}).get("min_catch_correct")
    if isinstance(design.get("min_catch_correct"), int) and rule is not None and rule != design["min_catch_correct"]:
        out.append(f"exclusion rule: at least {rule} catch trials correct, {design['min_catch_correct']} planned")
    return out
