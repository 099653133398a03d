"""Which model pairs a round must separate, and how people choose between them.

The models come as specs (every pair of ``--models``; each of ``--candidates`` against each of
``--references``), as result files (``--results``) or as a leaderboard's results folder
(``--leaderboard``); their log-probabilities of the experiment's sentences come through the
driver (:func:`contstim_bench.api.model_logprobs`, as ``contstim compare`` gets them), and the
human data's verdict on every pair from :mod:`contstim_bench.benchmarks.contstim_evidence` (the
head-to-head and its Benjamini-Hochberg family over the given models' pairs).

With a planned effect (a number), the targets are the pairs the data cannot separate: they never
disagree, or their head-to-head is not significant after BH; the pairs already separated are
listed with their evidence and left out.  With ``observed`` (replicating a known effect), the
targets are the pairs whose head-to-head has observations, each with its own participant model.

The participant model's spreads for a planned effect come from the human data the package has:
the head-to-heads of the experiment's reference models (:func:`reference_spread`), or those of
a ``--pilot`` round; the lapse rate from the experiment's catch trials.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, product
from pathlib import Path

from ..analysis.participant_model import ChoiceModel, pooled_spread
from ..benchmarks.contstim_evidence import Evidence, PairEvidence, head_to_head_evidence
from ..scoring.run_options import RunOptions
from .settings import PlanSettings

MIN_OBSERVATIONS = 2
"""Participants and sentence pairs a head-to-head needs before a participant model is fitted to it."""


@dataclass(frozen=True)
class ModelSources:
    """Where the models of a plan come from (see the module docstring)."""

    models: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    results: tuple[str, ...] = ()
    leaderboard: str | None = None

    def inputs(self) -> list[tuple[str, str]]:
        """(flag, path) of every file or folder these sources read."""
        return [("--results", r) for r in self.results] + ([("--leaderboard", self.leaderboard)]
                                                             if self.leaderboard else [])


@dataclass
class Targets:
    """The pairs to plan (``targets``), those left out with the reason, and the participant
    model of each target (:meth:`models`)."""

    evidence: Evidence
    targets: list[PairEvidence]
    left_out: list[tuple[PairEvidence, str]]
    lapse: float
    lapse_source: str
    spread: tuple[float, float]
    spread_source: str
    round_models: list[str]
    observed: dict[tuple[str, str], ChoiceModel] = field(default_factory=dict)
    specs: dict[str, object] = field(default_factory=dict)

    def models(self, effect: float | None) -> list[ChoiceModel]:
        """One participant model per target: its observed one (``effect`` None), or the typical
        spreads with ``effect``."""
        if effect is None:
            return [self.observed[(t.a, t.b)] for t in self.targets]
        su, sw = self.spread
        return [ChoiceModel(effect, su, sw, self.lapse, f"planned effect {effect:g}; spreads: {self.spread_source}")
                for _ in self.targets]


def _leaderboard_results(folder: str, experiment: str) -> list[str]:
    """The contstim result files of a leaderboard's results folder that hold ``experiment``."""
    from ..results import read_result

    root = Path(folder).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"--leaderboard {folder} is not a folder of result files")
    found = []
    for path in sorted(root.glob("*.json")):
        if not path.is_file():
            continue
        result = read_result(path)
        if result.get("format") == "contstim-bench-result" and experiment in result.get("experiments", {}):
            found.append(str(path))
    if not found:
        raise ValueError(f"--leaderboard {folder} holds no result file of the {experiment} experiment")
    return found


def model_pairs(sources: ModelSources, names: Sequence[str], candidate_names: Sequence[str]) -> list[tuple[str, str]]:
    """Every pair of the models, or each candidate against each reference."""
    if candidate_names:
        refs = [n for n in names if n not in candidate_names]
        return [(c, r) for c, r in product(candidate_names, refs)]
    return list(combinations(names, 2))


def gather_logprobs(sources: ModelSources, experiment: str, datasets_dir, options: RunOptions,
                    log: Callable[[str], None]) -> tuple[dict, dict, list[tuple[str, str]]]:
    """(log-probabilities, descriptions, model pairs) of the given models on ``experiment``.
    ValueError for no model, one model, or candidates without references."""
    from ..api import model_logprobs
    from ..scoring.named import parse_named_specs

    if (sources.candidates or sources.references) and (sources.models or sources.results or sources.leaderboard):
        raise ValueError("give either --candidates with --references, or --models / --results / --leaderboard")
    if bool(sources.candidates) != bool(sources.references):
        raise ValueError("--candidates and --references go together (each candidate is planned against each "
                         "reference)")
    results = list(sources.results) + (_leaderboard_results(sources.leaderboard, experiment)
                                       if sources.leaderboard else [])
    specs = list(sources.models) or list(sources.candidates) + list(sources.references)
    if not specs and not results:
        raise ValueError("no models: give --models (two or more), --candidates and --references, --results or "
                         "--leaderboard")
    candidate_names = [n.name for n in parse_named_specs(sources.candidates, flag="--candidates")] \
        if sources.candidates else []
    logprobs, described = model_logprobs(specs or None, results=results, experiment=experiment,
                                         datasets_dir=datasets_dir, log=log, options=options)
    if len(logprobs) < 2:
        raise ValueError(f"a plan compares models: give at least two (got {len(logprobs)}: "
                         f"{', '.join(logprobs) or 'none'})")
    return logprobs, described, model_pairs(sources, list(logprobs), candidate_names)


def reference_spread(experiment: str, datasets_dir, lapse: float, log) -> tuple[tuple[float, float], str]:
    """The typical spreads of human choices in a head-to-head: pooled over the head-to-heads of
    ``experiment``'s reference models (the paper's published log-probabilities, or a round's
    targeted models: a pilot's own head-to-heads) that have enough observations; one fit per
    distinct set of observations."""
    from ..api import model_logprobs

    logprobs, _ = model_logprobs(None, experiment=experiment, with_references=True, datasets_dir=datasets_dir,
                                 log=log)
    found = head_to_head_evidence(logprobs, list(combinations(logprobs, 2)), experiment, datasets_dir)
    return _pooled(found.pairs, lapse, f"pooled over the head-to-heads of {experiment}'s reference models")


def _pooled(pairs: Sequence[PairEvidence], lapse: float, what: str) -> tuple[tuple[float, float], str]:
    seen, models, weights = set(), [], []
    for pair in pairs:
        key = (pair.chose_a.tobytes(), pair.participant.tobytes(), pair.item.tobytes())
        if pair.n_trials == 0 or key in seen or not _estimable(pair):
            continue
        seen.add(key)
        models.append(pair.model(lapse))
        weights.append(pair.n_trials)
    su, sw = pooled_spread(models, weights)
    return (su, sw), f"{what} ({len(models)} distinct head-to-heads, {int(sum(weights))} trials)"


def _estimable(pair: PairEvidence) -> bool:
    import numpy as np

    return (len(np.unique(pair.participant)) >= MIN_OBSERVATIONS and len(np.unique(pair.item)) >= MIN_OBSERVATIONS)


def choose_targets(evidence: Evidence, settings: PlanSettings, spread_from: Callable[[float], tuple],
                   specs: dict | None = None) -> Targets:
    """Targets, left-out pairs and participant models (see the module docstring)."""
    if settings.lapse is not None:
        lapse, lapse_source = settings.lapse, "given (--lapse)"
    elif evidence.catch:
        lapse = evidence.lapse()
        n = sum(len(v) for v in evidence.catch.values())
        lapse_source = f"twice the share of failed catch trials of {evidence.experiment} ({n} catch trials)"
    else:
        lapse, lapse_source = 0.0, f"{evidence.experiment} has no catch trials: no lapses assumed"
    targets, left_out, observed = [], [], {}
    for pair in evidence.pairs:
        if settings.observed:
            if pair.n_trials == 0:
                left_out.append((pair, "no observed effect: the two never disagree on these trials; plan it with a "
                                       "numeric --effect"))
            elif not _estimable(pair):
                left_out.append((pair, f"too few observations to fit a participant model (at least "
                                       f"{MIN_OBSERVATIONS} participants and {MIN_OBSERVATIONS} sentence pairs)"))
            else:
                targets.append(pair)
                observed[(pair.a, pair.b)] = _with_overrides(pair.model(lapse), settings)
        elif pair.separated:
            left_out.append((pair, f"already separated: {pair.verdict()}"))
        else:
            targets.append(pair)
    if not targets:
        why = "; ".join(f"{p.a} vs {p.b}: {reason}" for p, reason in left_out)
        raise ValueError(f"no model pair to plan: {why}")
    if settings.observed:
        spread, spread_source = (0.0, 0.0), "each pair's own (observed)"
    else:
        spread, spread_source = spread_from(lapse)
        spread = (settings.participant_sd if settings.participant_sd is not None else spread[0],
                  settings.item_sd if settings.item_sd is not None else spread[1])
        if settings.participant_sd is not None or settings.item_sd is not None:
            spread_source += "; overridden by --participant-sd/--item-sd"
    round_models = list(dict.fromkeys(m for t in targets for m in (t.a, t.b)))
    return Targets(evidence, targets, left_out, lapse, lapse_source, spread, spread_source, round_models,
                   observed, dict(specs or {}))


def _with_overrides(model: ChoiceModel, settings: PlanSettings) -> ChoiceModel:
    from dataclasses import replace

    changes = {k: getattr(settings, k) for k in ("participant_sd", "item_sd") if getattr(settings, k) is not None}
    return replace(model, **changes) if changes else model


def plan_targets(sources: ModelSources, settings: PlanSettings, *, experiment: str = "pll",
                 condition_key: str = "all", datasets_dir: str | os.PathLike | None = None,
                 options: RunOptions | None = None, log: Callable[[str], None] | None = None) -> Targets:
    """The :class:`Targets` of a plan from the given models on ``experiment`` (a paper experiment
    or a round, e.g. a pilot) and ``condition_key``."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    logprobs, described, pairs = gather_logprobs(sources, experiment, datasets_dir, options or RunOptions(), log)
    evidence = head_to_head_evidence(logprobs, pairs, experiment, datasets_dir, condition_key=condition_key)

    def spread_from(lapse: float):
        return reference_spread(experiment, datasets_dir, lapse, log)

    return choose_targets(evidence, settings, spread_from, described)
