"""A round plan as text: ``plan.md`` (a preregistration) and the terminal summary of
``contstim round plan``; and the lines ``evaluate`` prints for a round checked against its plan.
Reads the plan (``plan.json``'s content) or a result's ``plan_check``; computes nothing."""
from __future__ import annotations

from ..analysis.inference import p_text


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _pair(row: dict) -> str:
    return f"{row['model_a']} vs {row['model_b']}"


def power_table(plan: dict, test: str | None = None) -> list[str]:
    """The power grid as a Markdown table for one test (default: the plan's): one row per pair,
    trials per participant and effect, one column per number of participants."""
    test = test or plan["analysis"]["test"]
    rows = [r for r in plan["power"] if r["test"] == test]
    counts = sorted({r["participants"] for r in rows})
    lines = ["| pair | trials per participant | effect | " + " | ".join(f"N={n}" for n in counts) + " |",
             "|---|---|---|" + "---|" * len(counts)]
    keys = list(dict.fromkeys((_pair(r), r["trials_per_participant"], r["effect"]) for r in rows))
    for pair, trials, effect in keys:
        cells = {r["participants"]: r for r in rows
                 if (_pair(r), r["trials_per_participant"], r["effect"]) == (pair, trials, effect)}
        lines.append(f"| {pair} | {trials} | {effect:.3f} | "
                     + " | ".join(_cell(cells[n]) if n in cells else "" for n in counts) + " |")
    if any(not r["valid"] for r in rows):
        lines.append("")
        lines.append("`!`: not valid: at no effect (0.5) the test separates the pair in more than "
                     f"{plan['analysis']['alpha']:.0%} of the simulated rounds (up to "
                     f"{max(r['null_rejection'] for r in rows):.0%}): the sentence pairs every participant judges "
                     "decide; give each group its own pairs (`contstim round plan --groups`) or test by item")
    return lines


def _cell(row: dict) -> str:
    return _pct(row["power"]) + ("" if row["valid"] else " !")


def summary(plan: dict) -> str:
    """What ``contstim round plan`` prints."""
    d, a, cost = plan["design"], plan["analysis"], plan["cost"]
    lines = [f"human data: {plan['evidence']['experiment']} / {plan['evidence']['condition']} "
             f"({plan['evidence']['n_units']} {plan['evidence']['unit']}s)"]
    for row in plan["evidence"]["pairs"]:
        lines.append(f"  {_pair(row):<44} {row['verdict']}")
    if plan["left_out"]:
        lines.append("left out:")
        lines += [f"  {_pair(r):<44} {r['why']}" for r in plan["left_out"]]
    lines.append(f"planned: {', '.join(_pair(t) for t in plan['targets'])}")
    lines.append(f"power ({a['test_text']}; q < {a['alpha']:g}, BH over {a['family_size']} model pair(s); "
                 f"{plan['settings']['simulations']} simulated rounds per point):")
    lines += ["  " + line for line in power_table(plan)]
    for cannot in {c["reason"] for c in plan.get("cannot_succeed", []) if c["test"] == a["test"]}:
        lines.append(f"  cannot succeed: {cannot}")
    lines.append("sample size (smallest participants reaching the target power):")
    for s in plan["sample_size"]:
        if s["test"] != a["test"]:
            continue
        got = f"{s['participants']} participants (power {s['power']:.2f})" if s["participants"] else s["reason"]
        lines.append(f"  {_pair(s):<44} {s['trials_per_participant']} trials, effect {s['effect']:.3f}: {got}")
    lines.append(f"recommended design: {d['participants']} participants, {d['trials_per_participant']} "
                 f"{plan['stimuli']['condition'].replace('_', ' ')} trials per pair per participant, {d['groups']} "
                 f"group(s), {d['catch_trials']} catch trials ({d['trials_per_participant_total']} trials each)")
    if not (d["reaches_target"] and d["valid"]):
        lines.append(f"  but: {d['why']}")
    line = (f"cost: {cost['participants']} participants x {cost['minutes_per_participant']} min "
            f"({cost['seconds_per_trial']} s a trial: {cost['seconds_per_trial_source']})")
    if cost["total"] is not None:
        line += f" x {cost['pay_per_hour']:g}/hour = {cost['total']:.2f}"
    lines.append(line)
    check = plan["stimuli"].get("pool_check")
    if check and check.get("skipped"):
        lines.append(f"stimuli: {plan['stimuli']['per_pair']} {plan['stimuli']['kind']} pairs per model pair; "
                     f"{check['skipped']}")
    elif check:
        lines.append(f"stimuli: {plan['stimuli']['per_pair']} {plan['stimuli']['kind']} pairs per model pair; the "
                     f"pool ({check['pool']}) holds them: the ILP selected {check['selected']} ({check['status']})")
    return "\n".join(lines)


def plan_markdown(plan: dict) -> str:
    """``plan.md``: the plan as a preregistration."""
    d, a, s, pm, cost = plan["design"], plan["analysis"], plan["stimuli"], plan["participant_model"], plan["cost"]
    settings = plan["settings"]
    out = ["# Preregistration: a round of the contstim benchmark", "",
           f"Written by `contstim round plan` (contstim-bench {plan['provenance']['package_version']}, "
           f"{plan['provenance']['created']}); seed {settings['seed']}.", "",
           "## Hypotheses", ""]
    for h in plan["hypotheses"]:
        out.append(f"- **{h['id']}** ({h['model_a']} vs {h['model_b']}): {h['prediction']}. Planned effect "
                   f"{h['effect']:.3f}; predicted power {h['predicted_power']:.2f} (Monte Carlo SE "
                   f"{h['predicted_power_mc_se']:.3f}).")
    out += ["", "Why these pairs: on the human data of "
            f"`{plan['evidence']['experiment']}` ({plan['evidence']['condition']} trials):", ""]
    out += [f"- {_pair(r)}: {r['verdict']}" for r in plan["evidence"]["pairs"]]
    if plan["left_out"]:
        out += ["", "Left out:", ""] + [f"- {_pair(r)}: {r['why']}" for r in plan["left_out"]]
    out += ["", "## Design", "",
            f"- {d['participants']} participants in {d['groups']} group(s); each group sees its own sentence pairs.",
            f"- Per participant and target pair: {d['trials_per_participant']} {s['kind']} controversial pairs "
            f"({s['condition']}); {s['per_pair']} distinct pairs per model pair, {s['total_pairs']} in all.",
            f"- Per participant: {d['catch_trials']} catch trials (a natural sentence against its shuffled words) and "
            f"{d['random_pairs']} randomly sampled natural pairs; {d['trials_per_participant_total']} trials in all, "
            f"in random order and sides.",
            "", "Stimuli are made with the package's generators:", "", "```bash"] + s["commands"] + ["```"]
    if s.get("pool_check") and s["pool_check"].get("skipped"):
        out += ["", f"Pool ({s['pool_check']['pool']}): {s['pool_check']['skipped']}."]
    elif s.get("pool_check"):
        c = s["pool_check"]
        out += ["", f"The pool ({c['pool']}, {c['sentences_scorable']} sentences every model can score) holds them: "
                    f"the selection ILP chose {c['selected']} pairs ({c['status']}); eligible sentences per pair: "
                    f"{c['eligible_per_pair']}."]
    out += ["", "## Sample size and why", "",
            f"Power was estimated by simulating {settings['simulations']} rounds per design point and running on each "
            f"the package's own tests, the ones `contstim evaluate` runs on the ingested round (the head-to-head "
            f"Wilcoxon by participant and by item, Benjamini-Hochberg over the round's {a['family_size']} model "
            f"pair(s), the catch-trial exclusion).", "",
            f"Participant model: {pm['model']}.", "",
            f"- lapse rate {pm['lapse']:.4f} ({pm['lapse_source']})",
            f"- spreads: {pm['spread_source']}"]
    for m in pm["per_pair"]:
        out.append(f"- {_pair(m)}: effect {m['effect']:.3f}, participant SD {m['participant_sd']:.3f}, item SD "
                   f"{m['item_sd']:.3f} ({m['source']})")
    out += ["", f"Power of the {a['test']} test ({a['test_text']}):", ""] + power_table(plan) + [
        "", f"Recommended: {d['participants']} participants with {d['trials_per_participant']} trials per pair: "
            f"{d['why']}."]
    for c in {c["reason"] for c in plan.get("cannot_succeed", [])}:
        out.append(f"- Cannot succeed: {c}.")
    out += ["", "## Analysis", "",
            f"- Condition: `{a['condition']}`; test: {a['test_text']}; two-sided Wilcoxon signed-rank of the per-unit "
            f"shares of choices for model A's sentences against 0.5; q < {a['alpha']:g} after Benjamini-Hochberg over "
            f"{a['family']}.",
            "- A hypothesis is supported when the pair is separated with a share above 0.5.",
            "- `contstim evaluate --benchmark contstim.ROUND` reports each hypothesis's outcome and the departures "
            "from this plan.",
            "", "## Exclusions", "", f"- {a['exclusion'][0].upper() + a['exclusion'][1:]}.",
            "- Participants who do not finish are excluded.", "",
            "## Cost", "",
            f"{cost['participants']} participants x {cost['minutes_per_participant']} minutes "
            f"({cost['trials_per_participant_total']} trials at {cost['seconds_per_trial']} s: "
            f"{cost['seconds_per_trial_source']})"
            + (f" x {cost['pay_per_hour']:g} per hour = **{cost['total']:.2f}**." if cost["total"] is not None else "."),
            ""]
    return "\n".join(out)


def plan_check_lines(check: dict) -> list[str]:
    """What ``evaluate`` prints for a round checked against its plan (a result's ``plan_check``)."""
    planned = check["planned"]
    lines = ["", f"against its plan ({planned.get('participants')} participants, {planned.get('trials_per_participant')} "
                 f"trials per pair, {planned.get('groups')} group(s) planned):"]
    for h in check["hypotheses"]:
        head = f"  {h['id']} {h['model_a']} vs {h['model_b']} ({h['condition']}, {h['test']}; predicted power " \
               f"{_pct(h.get('predicted_power'))})"
        if "share" not in h:
            lines.append(f"{head}: {h['outcome']}")
            continue
        lines.append(f"{head}: {h['outcome']}; share {_pct(h['share'])} q={p_text(h['q']) or '-'} over "
                     f"{h['n_units']} units, by item {_pct(h['share_items'])} q={p_text(h['q_items']) or '-'} over "
                     f"{h['n_pairs']} pairs")
    lines += [f"  departure: {d}" for d in check["departures"]] or ["  no departure from the plan"]
    return lines
