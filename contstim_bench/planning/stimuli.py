"""Which sentences a planned round needs, whether a pool holds them, and how to make them.

Every target pair needs ``groups x trials_per_participant`` controversial sentence pairs (each
group sees its own ``trials_per_participant``):

- **natural** pairs, selected from a natural-sentence pool by the package's ILP (Eq. 5-6,
  :func:`contstim_bench.generate.natural_ilp.select_natural_pairs`).  The plan scores the pool with
  the round's models and runs that selection for the target pairs, so a pool too small for the
  pairs asked is an error before anyone is paid, and a pair of models that never disagree on the
  pool (no sentence one finds improbable and the other probable) is named as such;
- **synthetic** pairs, one per triplet of the synthetic search (Eq. 2), for models that score any
  sentence; the plan gives the ``contstim generate synthetic`` and ``select`` commands.

``--generate`` (natural pairs) writes the selection and the design ``experiment export`` takes.
"""
from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from ..scoring.run_options import RunOptions
from .settings import PlanSettings
from .targets import Targets


def model_specs(targets: Targets) -> dict[str, str | None]:
    """Model name -> the spec that loads it (None when only its recorded values are known)."""
    out = {}
    for name in targets.round_models:
        described = targets.specs.get(name)
        spec = described.get("spec") if isinstance(described, dict) else None
        out[name] = spec if isinstance(spec, str) else None
    return out


def _named(specs: dict[str, str | None]) -> list[str]:
    missing = [n for n, s in specs.items() if s is None]
    if missing:
        raise ValueError(f"no spec to load {', '.join(missing)} with (known only by recorded log-probabilities); "
                         f"give them as --models NAME=SPEC to check a pool or generate stimuli, or plan with "
                         f"--no-pool-check")
    return [f"{n}={s}" for n, s in specs.items()]


def commands(targets: Targets, settings: PlanSettings, recommended: dict, out: str, pool: str | None) -> list[str]:
    """The commands that make the round's stimuli and design with the package's generators."""
    specs = model_specs(targets)
    named = ",".join(f"{n}={s or '<SPEC>'}" for n, s in specs.items())
    per_pair = recommended["groups"] * recommended["trials_per_participant"]
    pool_arg = f" --pool {shlex.quote(pool)}" if pool else ""
    design = (f"contstim generate design --{{kind}} {{folder}} --groups {recommended['groups']} --per-group "
              f"{recommended['trials_per_participant']} --random-pairs {settings.random_pairs} --catch-trials "
              f"{settings.catch_trials}{pool_arg} --plan {shlex.quote(out)} --experiment ROUND "
              f"--output {shlex.quote(str(Path(out) / 'design'))}")
    if settings.stimuli == "natural":
        natural = str(Path(out) / "natural")
        return [f"contstim generate natural --models {shlex.quote(named)}{pool_arg} --restrict-to-scorable "
                f"--per-pair {per_pair} --output {shlex.quote(natural)}  # (`contstim round plan --generate` selects "
                f"for the target pairs only)",
                design.format(kind="natural", folder=shlex.quote(natural))]
    synth, selected = str(Path(out) / "synth"), str(Path(out) / "selected")
    return [f"contstim generate synthetic --models {shlex.quote(named)} --start-sentences {2 * per_pair} "
            f"--output {shlex.quote(synth)}",
            f"contstim generate select --triplets {shlex.quote(synth)} --per-pair {per_pair} "
            f"--output {shlex.quote(selected)}",
            design.format(kind="triplets", folder=shlex.quote(selected))]


def _score(entries, sentences, lines, pool, datasets_dir, options: RunOptions, log):
    from ..generate.natural_run import score_pool

    return score_pool(sentences, entries, options=options, datasets_dir=datasets_dir, restrict_to_scorable=True,
                      pool_lines=lines, pool_file=pool if pool and Path(pool).expanduser().is_file() else None,
                      log=log)


def check_pool(targets: Targets, per_pair: int, *, pool: str | None, datasets_dir, options: RunOptions,
               solver: str = "cbc", log: Callable[[str], None] | None = None) -> dict:
    """Score ``pool`` with the round's models and select ``per_pair`` natural pairs for every target
    pair (the ILP of ``generate natural``).  ValueError naming the pairs that never disagree on the
    pool, and a pool too small for the pairs asked."""
    from ..generate.inputs import load_pool
    from ..generate.natural_ilp import controversial_mask, fractional_ranks, select_natural_pairs
    from ..generate.natural_run import NothingScorable
    from ..generate.pairing import parse_models

    log = log or (lambda msg: None)
    entries = parse_models(_named(model_specs(targets)), minimum=2)
    lines, pool_desc = load_pool(pool, datasets_dir)
    sentences = list(dict.fromkeys(lines))
    try:
        kept, log_probs = _score(entries, sentences, lines, pool, datasets_dir, options, log)
    except NothingScorable as exc:
        return {"pool": pool_desc, "skipped": f"the pool was not checked: {exc}; these models cannot make natural "
                                              f"pairs from it (give a --pool they have values for, e.g. the upstream "
                                              f"selection pool for the paper's reference models)"}
    names = [m.name for m in entries]
    ranks = fractional_ranks(log_probs)
    eligible = controversial_mask(ranks)
    available, never = {}, []
    for t in targets.targets:
        a, b = names.index(t.a), names.index(t.b)
        both = (int((eligible & (ranks[:, a] < 0.5) & (ranks[:, b] >= 0.5)).sum()),
                int((eligible & (ranks[:, b] < 0.5) & (ranks[:, a] >= 0.5)).sum()))
        available[f"{t.a} vs {t.b}"] = min(both)
        if min(both) == 0:
            never.append(f"{t.a} vs {t.b}")
    if never:
        raise ValueError(f"{', '.join(never)} never disagree on the pool ({pool_desc}, {len(kept)} sentences every "
                         f"model can score): no sentence is improbable under one and probable under the other; "
                         f"give a larger or other --pool, or plan synthetic pairs (--stimuli synthetic)")
    pairs = [(t.a, t.b) for t in targets.targets]
    try:
        selection = select_natural_pairs(log_probs, names, kept, per_pair, model_pairs=pairs, solver=solver)
    except ValueError as exc:
        raise ValueError(f"the pool is too small for the pairs asked: {per_pair} natural pairs for each of "
                         f"{len(pairs)} model pair(s) from {pool_desc} ({len(kept)} sentences every model can "
                         f"score; eligible sentences per pair: {available}): {exc}") from None
    return {"pool": pool_desc, "sentences_scorable": len(kept), "eligible_per_pair": available,
            "selected": int(len(selection.pairs)), "status": selection.report.status,
            "objective": float(selection.objective)}


def generate(targets: Targets, settings: PlanSettings, recommended: dict, folder: Path, *, pool: str | None,
             round_name: str, datasets_dir, options: RunOptions, log: Callable[[str], None]) -> dict:
    """Select the natural pairs of the target pairs into ``folder/natural`` and write the design
    (``folder/design``, with the plan) that ``experiment export`` takes."""
    from ..generate.design import design_experiment
    from ..generate.natural_run import select_natural

    if settings.stimuli != "natural":
        raise ValueError("--generate makes natural pairs; synthetic pairs take minutes of search per triplet on a CPU: "
                         "run the commands the plan gives (plan.md)")
    per_pair = recommended["groups"] * recommended["trials_per_participant"]
    run = select_natural(_named(model_specs(targets)), folder / "natural", pool=pool, per_pair=per_pair,
                         options=options, datasets_dir=datasets_dir, restrict_to_scorable=True, log=log,
                         pairs=[(t.a, t.b) for t in targets.targets])
    design, design_folder = design_experiment(
        folder / "design", natural=folder / "natural", pool=pool, groups=recommended["groups"],
        random_pairs=settings.random_pairs, catch_trials=settings.catch_trials, seed=settings.seed,
        experiment=round_name, datasets_dir=datasets_dir, options=options, log=log,
        per_group=recommended["trials_per_participant"], plan=folder / "plan.json")
    counts = {str(k): int(v) for k, v in design.groupby("trial_type").size().items()}
    return {"natural": str(run.folder), "design": str(design_folder.parent), "trials": counts,
            "n_pairs_selected": int(len(run.selection.pairs))}
