"""How many people: the power grid of a plan, the sample size per pair, and the recommended design.

For every trials-per-participant value, planned effect (or each pair's observed one) and number
of participants of the settings, the round is simulated ``simulations`` times
(:func:`contstim_bench.analysis.power.simulate_tests`: the package's own tests, by participant and
by item, with the catch-trial exclusion) and every target pair's power is read for the three
tests.  The Benjamini-Hochberg family is the round's model pairs: every pair of the models the
round targets (the pairs ``evaluate`` tests on the round's condition), the untargeted ones
counted as tests without effect.

Every point is also simulated at no effect (0.5, the same spreads and lapses): its
``null_rejection`` is the rate at which the test separates a pair that no model wins, the
false-discovery rate of the design.  A by-participant test over participants who all judge the
same sentence pairs treats the pairs as fixed (Clark's 1973 language-as-fixed-effect fallacy): when
pairs differ (``item_sd`` > 0) a few pairs that happen to lean one way separate the models at no
effect.  Such a design is flagged (``valid`` false) and never recommended: give each group its own
pairs (``--groups``, the groups become the units, as in the paper's main experiment), or test by
item or both.

The recommended design is the cheapest valid point of the grid (fewest participant-trials) at
which every target pair reaches the target power on the plan's test at the first planned effect;
when none does, the valid point with the highest lowest power, flagged.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import comb

from ..analysis.power import RoundDesign, cannot_succeed, separated, simulate_tests
from .settings import PlanSettings
from .targets import Targets

POWER_TESTS = ("participants", "items", "both")


@dataclass(frozen=True)
class Sizing:
    """The grid (``rows``: the plan's ``power`` table), the smallest participants per pair,
    effect, trials and test (``sample_size``), the recommended design and why."""

    rows: list[dict]
    sample_size: list[dict]
    recommended: dict
    family_size: int
    designs_that_cannot: list[dict]


def effects_of(settings: PlanSettings) -> list[float | None]:
    return [None] if settings.observed else list(settings.effects)


def design_for(settings: PlanSettings, participants: int, trials: int) -> RoundDesign:
    return RoundDesign(participants, trials, settings.groups, settings.catch_trials, settings.min_catch_correct)


def power_grid(targets: Targets, settings: PlanSettings, progress: Callable[[str], None] | None = None) -> Sizing:
    """Simulate every point of the grid (see the module docstring)."""
    progress = progress or (lambda msg: None)
    k = len(targets.round_models)
    family = max(comb(k, 2), len(targets.targets))
    rows, cannot = [], []
    points = [(e, t, n) for e in effects_of(settings) for t in settings.trials_per_participant
              for n in settings.participants]
    nulls: dict[tuple[int, int], dict] = {}
    for index, (effect, trials, participants) in enumerate(points):
        design = design_for(settings, participants, trials)
        if (participants, trials) not in nulls:
            null_models = [m.with_effect(0.5) for m in targets.models(effect)]
            null_sims = simulate_tests(null_models, design, settings.simulations,
                                       seed=[settings.seed, 0, participants, trials, 5])
            nulls[(participants, trials)] = separated(null_sims, family, settings.alpha,
                                                      seed=[settings.seed, 0, participants, trials, 6])
        for test in POWER_TESTS:
            why = cannot_succeed(design, test, settings.alpha)
            if why:
                cannot.append({"participants": participants, "trials_per_participant": trials, "test": test,
                               "reason": why})
        models = targets.models(effect)
        sims = simulate_tests(models, design, settings.simulations,
                              seed=[settings.seed, index, participants, trials])
        verdicts = separated(sims, family, settings.alpha, seed=[settings.seed, index, 1])
        bound = settings.alpha + 2 * (settings.alpha * (1 - settings.alpha) / settings.simulations) ** .5
        for j, (target, model) in enumerate(zip(targets.targets, models)):
            for test in POWER_TESTS:
                hits, either = verdicts[test]
                power = float(hits[:, j].mean())
                null = float(nulls[(participants, trials)][test][1][:, j].mean())
                rows.append({
                    "model_a": target.a, "model_b": target.b, "participants": participants,
                    "trials_per_participant": trials, "groups": settings.groups,
                    "effect": round(model.effect, 6), "effect_source": "observed" if effect is None else "planned",
                    "test": test, "power": power,
                    "power_mc_se": (max(power * (1 - power), 1.0 / settings.simulations) / settings.simulations) ** .5,
                    "any_direction": float(either[:, j].mean()),
                    "mean_included": float(sims.included.mean()),
                    "null_rejection": null, "valid": null <= bound,
                    "cannot_succeed": cannot_succeed(design, test, settings.alpha),
                })
        progress(f"simulated {settings.simulations} rounds of {participants} participants x {trials} trials"
                 f"{'' if effect is None else f' at effect {effect:g}'} ({index + 1}/{len(points)})")
    sample = _sample_sizes(rows, settings)
    return Sizing(rows, sample, _recommend(rows, targets, settings), family, _unique(cannot))


def _unique(items: list[dict]) -> list[dict]:
    out, seen = [], set()
    for item in items:
        key = tuple(sorted(item.items()))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _sample_sizes(rows: list[dict], settings: PlanSettings) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["model_a"], r["model_b"], r["trials_per_participant"], r["effect"], r["test"]), []).append(r)
    out = []
    for (a, b, trials, effect, test), items in groups.items():
        items.sort(key=lambda r: r["participants"])
        reach = [r for r in items if r["power"] >= settings.target_power]
        best = max(items, key=lambda r: r["power"])
        out.append({
            "model_a": a, "model_b": b, "trials_per_participant": trials, "effect": effect, "test": test,
            "target_power": settings.target_power, "participants": reach[0]["participants"] if reach else None,
            "power": reach[0]["power"] if reach else best["power"],
            "reason": (f"the smallest number of participants of the grid with power >= {settings.target_power:g}"
                       if reach else
                       f"no number of participants of the grid reaches power {settings.target_power:g} (best "
                       f"{best['power']:.3f} with {best['participants']}); "
                       + (best["cannot_succeed"] or "try more participants, trials per participant or groups")),
        })
    return out


def trials_per_participant_total(targets: Targets, settings: PlanSettings, trials: int) -> int:
    """Every trial a participant answers: the controversial trials of every target pair (three
    per triplet for synthetic stimuli: natural vs S1, natural vs S2, S1 vs S2), random pairs and
    catch trials."""
    per_pair = trials * (3 if settings.stimuli == "synthetic" else 1)
    return len(targets.targets) * per_pair + settings.random_pairs + settings.catch_trials


def _recommend(rows: list[dict], targets: Targets, settings: PlanSettings) -> dict:
    effect_rows = [r for r in rows if r["test"] == settings.test]
    if not settings.observed:  # the first planned effect decides
        effect_rows = [r for r in effect_rows if r["effect"] == round(settings.effects[0], 6)]
    points: dict[tuple[int, int], list[dict]] = {}
    for r in effect_rows:
        points.setdefault((r["participants"], r["trials_per_participant"]), []).append(r)

    def cost(point):
        n, t = point
        return n * trials_per_participant_total(targets, settings, t), n

    valid = {p: items for p, items in points.items() if all(r["valid"] for r in items)}
    reaching = [p for p, items in valid.items() if all(r["power"] >= settings.target_power for r in items)]
    if reaching:
        n, t = min(reaching, key=cost)
        reached, why = True, (f"the cheapest valid design of the grid (fewest participant-trials) at which every "
                              f"target pair reaches power {settings.target_power:g} on the {settings.test} test")
    elif valid:
        n, t = max(valid, key=lambda p: (min(r["power"] for r in valid[p]), -cost(p)[0]))
        reached, why = False, (f"no valid design of the grid reaches power {settings.target_power:g} for every target "
                               f"pair on the {settings.test} test; this one has the highest lowest power")
    else:
        n, t = max(points, key=lambda p: (min(r["power"] for r in points[p]), -cost(p)[0]))
        worst = max(r["null_rejection"] for r in points[(n, t)])
        reached, why = False, (f"NO design of the grid is valid: at no effect the {settings.test} test separates a pair "
                               f"in up to {worst:.0%} of the simulated rounds (the sentence pairs every participant "
                               f"judges are a sample too); give each group its own pairs (--groups 6 or more) or test "
                               f"by item or both (--test items|both). Shown: the highest lowest power")
    items = points[(n, t)]
    return {"participants": n, "trials_per_participant": t, "groups": settings.groups,
            "catch_trials": settings.catch_trials, "min_catch_correct": settings.min_catch_correct,
            "random_pairs": settings.random_pairs, "test": settings.test, "reaches_target": reached,
            "valid": all(r["valid"] for r in items), "why": why,
            "trials_per_participant_total": trials_per_participant_total(targets, settings, t),
            "power": {f"{r['model_a']} vs {r['model_b']}": r["power"] for r in items}}
