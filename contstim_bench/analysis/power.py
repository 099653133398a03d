"""Power of a planned round, by simulating it and running the package's own tests on it.

A round (:mod:`contstim_bench.data.rounds`) pits model pairs against each other on controversial
sentence pairs.  The question before paying anyone: with ``participants`` people, each judging
``trials_per_participant`` controversial pairs of every target model pair (in ``groups`` groups
that each see their own pairs, plus ``catch_trials`` catch trials), what is the probability that
``contstim evaluate`` on the ingested round reports each target pair **separated**: its
head-to-head significant after Benjamini-Hochberg over the round's model pairs (q < .05), in
favour of the better model?

Power by simulation (as simr and mixedpower do for mixed models; Kumle, Vo & Draschkow 2021):
each simulated round draws its participants' catch-trial answers and choices from the
participant model of each pair (:class:`.participant_model.ChoiceModel`), excludes participants
by the paper's rule (:func:`.exclusion.excluded_by_catch`), forms the units the analysis forms
(participants with one group, groups otherwise: :func:`.trials.default_unit`'s rule), and runs
the head-to-head test of :mod:`.head_to_head` (:func:`~.head_to_head.share_p_values`, the
Wilcoxon of the per-unit shares against 0.5, the test ``evaluate`` runs) by participant and by
item, then :func:`.inference.bh_adjust` over the round's model pairs.  Everything is vectorised
over the simulated rounds; the tests run thousands at a time (:func:`.inference.wilcoxon_p_rows`).

A design can be hopeless whatever the effect: a two-sided Wilcoxon over 5 units or fewer never
reaches p < .05 (:func:`least_attainable_p`); :func:`cannot_succeed` says so.

Two checks of the simulation that do not run it: :func:`exact_power` enumerates every outcome of
the case without spread or lapses (each unit's share binomial), and :func:`resampled_power` draws
rounds from real participants' own choices instead of the model.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .exclusion import CATCH_TRIALS, MIN_CATCH_CORRECT, excluded_by_catch
from .head_to_head import CHANCE, share_p_values
from .inference import ALPHA, bh_adjust
from .participant_model import ChoiceModel

TESTS = ("participants", "items", "both")
"""What a pair must pass to count as separated: the paper's head-to-head by participant (or
participant group, F1), the head-to-head by item (sentence pairs as units, F2), or both."""
DEFAULT_SIMULATIONS = 500


def _positive_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class RoundDesign:
    """What a round asks of its participants (see the module docstring).  Participant ``k`` (in
    arrival order) joins group ``k mod groups``, as the experiment server assigns them."""

    participants: int
    trials_per_participant: int
    groups: int = 1
    catch_trials: int = CATCH_TRIALS
    min_catch_correct: int = MIN_CATCH_CORRECT

    def __post_init__(self):
        _positive_int(self.participants, "the number of participants")
        _positive_int(self.trials_per_participant, "the trials per participant")
        _positive_int(self.groups, "the number of groups")
        _positive_int(self.catch_trials, "the number of catch trials", 0)
        _positive_int(self.min_catch_correct, "the catch trials required correct", 0)
        if self.min_catch_correct > self.catch_trials:
            raise ValueError(f"{self.min_catch_correct} correct catch trials are required of {self.catch_trials}: "
                             "every participant would be excluded")
        if self.groups > self.participants:
            raise ValueError(f"{self.groups} groups need at least as many participants (got {self.participants})")

    @property
    def unit(self) -> str:
        """The unit of the by-participant test: ``participant`` with one group, else ``group``."""
        return "participant" if self.groups == 1 else "group"

    @property
    def n_units(self) -> int:
        """Units of the by-participant test when nobody is excluded."""
        return self.participants if self.groups == 1 else self.groups

    @property
    def n_items(self) -> int:
        """Distinct controversial pairs of each target model pair: each group sees its own."""
        return self.groups * self.trials_per_participant

    def record(self) -> dict:
        return {"participants": self.participants, "trials_per_participant": self.trials_per_participant,
                "groups": self.groups, "unit": self.unit, "n_items_per_pair": self.n_items,
                "catch_trials": self.catch_trials, "min_catch_correct": self.min_catch_correct}


def least_attainable_p(n_units: int) -> float:
    """The smallest p-value the head-to-head test can give over ``n_units`` units (every unit on
    one side): the test itself run on that most extreme sample."""
    if n_units < 1:
        return 1.0
    extreme = CHANCE + (np.arange(1, n_units + 1) / (2.0 * (n_units + 1)))
    return float(share_p_values(extreme[None, :])[0])


def cannot_succeed(design: RoundDesign, test: str, alpha: float = ALPHA) -> str | None:
    """Why ``design`` can never separate a pair by ``test`` whatever the effect, or None."""
    counts = {"participants": (design.n_units, f"{design.unit}s"), "items": (design.n_items, "sentence pairs")}
    for which in (("participants", "items") if test == "both" else (test,)):
        n, what = counts[which]
        least = least_attainable_p(n)
        if least >= alpha:
            return (f"a two-sided Wilcoxon over {n} {what} never reaches p < {alpha:g} (its smallest p is "
                    f"{least:.4f}); the {which} test needs at least {_units_needed(alpha)} units")
    return None


def _units_needed(alpha: float) -> int:
    n = 1
    while least_attainable_p(n) >= alpha:
        n += 1
    return n


@dataclass(frozen=True)
class SimulatedTests:
    """p-values of the simulated rounds: ``p[test]`` and ``favours_a[test]`` of shape
    (simulations, pairs), for ``test`` in ``participants`` and ``items`` (NaN: no unit left)."""

    p: dict[str, np.ndarray]
    favours_a: dict[str, np.ndarray]
    included: np.ndarray  # (simulations,) participants kept by the catch-trial rule


def _unit_and_item_shares(y: np.ndarray, keep: np.ndarray, design: RoundDesign) -> tuple[np.ndarray, np.ndarray]:
    """Per simulated round: the per-unit shares and the per-item shares (NaN where no kept
    participant contributes), from choices ``y`` (rounds, participants, trials) and ``keep``."""
    s, n, t = y.shape
    group = np.arange(n) % design.groups
    member = np.eye(design.groups, dtype=np.float64)[group]  # (participants, groups)
    kept = keep.astype(np.float64)
    counts = y.sum(axis=2) * kept  # chosen-for-A per kept participant
    with np.errstate(invalid="ignore", divide="ignore"):
        if design.groups == 1:
            units = np.where(keep, y.mean(axis=2), np.nan)
        else:
            units = (counts @ member) / ((kept @ member) * t)
        # item (g, j) is seen by the kept participants of group g
        item_sum = np.einsum("snt,ng->sgt", y * kept[:, :, None], member)
        item_n = (kept @ member)[:, :, None]
        items = (item_sum / item_n).reshape(s, design.groups * t)
    return units, items


def _direction(shares: np.ndarray) -> np.ndarray:
    """Per row: whether the mean of the present shares (the head-to-head's ``share``) favours A."""
    present = ~np.isnan(shares)
    total = np.where(present, shares, 0.0).sum(axis=1)
    return present.any(axis=1) & (total > CHANCE * present.sum(axis=1))


def simulate_tests(models: Sequence[ChoiceModel], design: RoundDesign, simulations: int = DEFAULT_SIMULATIONS,
                   seed: int | Sequence[int] = 0) -> SimulatedTests:
    """Simulate ``simulations`` rounds of ``design`` with one head-to-head per model of
    ``models`` (the round's target pairs; A is each model's favoured side) and return the raw
    p-values of both tests (see the module docstring).  The same participants answer every pair
    (and are excluded from every pair); each pair has its own sentence pairs."""
    simulations = _positive_int(simulations, "the number of simulations")
    if not models:
        raise ValueError("no target pair to simulate")
    rng = np.random.default_rng(seed)
    s, n, t = simulations, design.participants, design.trials_per_participant
    lapse = float(np.mean([m.lapse for m in models]))
    failed = rng.binomial(design.catch_trials, lapse / 2, size=(s, n))
    keep = ~excluded_by_catch(design.catch_trials - failed, design.min_catch_correct)
    group = np.arange(n) % design.groups
    p = {k: np.full((s, len(models)), np.nan) for k in ("participants", "items")}
    fav = {k: np.zeros((s, len(models)), dtype=bool) for k in ("participants", "items")}
    for k, model in enumerate(models):
        u = rng.standard_normal((s, n, 1)) * model.participant_sd
        w = (rng.standard_normal((s, design.groups, t)) * model.item_sd)[:, group, :]
        y = (rng.random((s, n, t)) < model.probability(u, w)).astype(np.float64)
        for test, shares in zip(("participants", "items"), _unit_and_item_shares(y, keep, design)):
            p[test][:, k] = share_p_values(shares)
            fav[test][:, k] = _direction(shares)
    return SimulatedTests(p, fav, keep.sum(axis=1))


def separated(tests: SimulatedTests, family_size: int | None = None, alpha: float = ALPHA,
              seed: int | Sequence[int] = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per test (``participants``, ``items``, ``both``): (separated in favour of A, separated in
    either direction), each of shape (simulations, pairs), after Benjamini-Hochberg over the
    round's model pairs.  ``family_size`` > the number of simulated pairs counts the round's other
    model pairs as tests without effect (uniform p-values), which only makes BH stricter."""
    out = {}
    s, k = tests.p["participants"].shape
    extra = max(0, (family_size or k) - k)
    rng = np.random.default_rng(seed)
    for test in ("participants", "items"):
        p = np.nan_to_num(tests.p[test], nan=1.0)
        if extra:
            p = np.concatenate([p, rng.random((s, extra))], axis=1)
        q = bh_adjust(p)[:, :k]
        significant = q < alpha
        out[test] = (significant & tests.favours_a[test], significant)
    both = tuple(out["participants"][i] & out["items"][i] for i in range(2))
    out["both"] = both
    return out


@dataclass(frozen=True)
class PowerEstimate:
    """Power of one pair under one design and test: ``power`` (separated in favour of the better
    model), ``any_direction`` (separated either way: at effect 0.5, the false-discovery rate),
    their Monte Carlo standard error, ``simulations`` and the mean participants kept."""

    power: float
    any_direction: float
    mc_se: float
    simulations: int
    mean_included: float

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """The Monte Carlo interval of ``power`` (normal approximation, clipped to [0, 1])."""
        return max(0.0, self.power - z * self.mc_se), min(1.0, self.power + z * self.mc_se)


def power(models: Sequence[ChoiceModel], design: RoundDesign, test: str = "participants", *,
          simulations: int = DEFAULT_SIMULATIONS, seed: int | Sequence[int] = 0, family_size: int | None = None,
          alpha: float = ALPHA) -> list[PowerEstimate]:
    """The power of each pair of ``models`` under ``design`` for ``test`` (one of :data:`TESTS`)."""
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; known: {', '.join(TESTS)}")
    tests = simulate_tests(models, design, simulations, seed)
    hits, either = separated(tests, family_size, alpha, seed)[test]
    return [_estimate(hits[:, k], either[:, k], tests.included) for k in range(len(models))]


def _estimate(hits: np.ndarray, either: np.ndarray, included: np.ndarray) -> PowerEstimate:
    n = len(hits)
    value = float(hits.mean())
    return PowerEstimate(value, float(either.mean()), math.sqrt(max(value * (1 - value), 1.0 / n) / n), n,
                         float(np.mean(included)))


def exact_power(effect: float, n_units: int, trials: int, alpha: float = ALPHA) -> float:
    """The head-to-head's power, exactly, when every unit's share is binomial (``trials`` choices,
    each for A with probability ``effect``: no spread between participants or items, no lapses,
    nobody excluded, one pair): the sum over every possible set of unit shares of its multinomial
    probability where the test separates the pair in favour of A.  The analytic case against
    which :func:`power` is checked."""
    from scipy.stats import binom

    n_units = _positive_int(n_units, "the number of units")
    trials = _positive_int(trials, "the trials per unit")
    outcomes = np.array(list(itertools.combinations_with_replacement(range(trials + 1), n_units)))
    pmf = binom.pmf(np.arange(trials + 1), trials, effect)
    counts = np.stack([(outcomes == c).sum(axis=1) for c in range(trials + 1)], axis=1)
    log_multinomial = (math.lgamma(n_units + 1) - np.sum([[math.lgamma(m + 1) for m in row] for row in counts], axis=1)
                       + counts @ np.log(np.maximum(pmf, 1e-300)))
    shares = outcomes / trials
    p = share_p_values(shares)
    wins = (p < alpha) & (shares.mean(axis=1) > CHANCE)
    return float(np.sum(np.exp(log_multinomial)[wins]))


@dataclass(frozen=True)
class ObservedPair:
    """Real participants' choices on one pair's disagreement trials, for :func:`resampled_power`:
    ``choices[j, i]`` whether participant ``participants[j]`` chose A's sentence of pair ``i``
    (every participant answered every pair)."""

    participants: tuple[str, ...]
    choices: np.ndarray


def resampled_power(pairs: Sequence[ObservedPair], catch: dict[str, np.ndarray], design: RoundDesign,
                    test: str = "participants", *, simulations: int = DEFAULT_SIMULATIONS,
                    seed: int | Sequence[int] = 0, alpha: float = ALPHA) -> list[PowerEstimate]:
    """Empirical power: rounds of ``design`` drawn from real participants instead of a model.

    Each simulated round draws ``participants`` of the real participants (without replacement;
    the same people for every pair), for each pair ``groups x trials_per_participant`` of its
    sentence pairs (without replacement; group ``g`` gets its own ``trials_per_participant``), and
    ``catch_trials`` of each participant's own catch answers (``catch[participant]``: True where
    the natural sentence was chosen; without replacement when they have that many, else with);
    the same exclusion, units, tests and BH family as :func:`power`."""
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; known: {', '.join(TESTS)}")
    people = pairs[0].participants
    for pair in pairs:
        if pair.participants != people:
            raise ValueError("every pair must hold the same participants in the same order")
        if pair.choices.shape != (len(people), pair.choices.shape[1]) or np.isnan(pair.choices).any():
            raise ValueError("each pair's choices must be complete: every participant answered every pair")
        if pair.choices.shape[1] < design.n_items:
            raise ValueError(f"a round of {design.n_items} sentence pairs per model pair cannot be drawn from "
                             f"{pair.choices.shape[1]}")
    if len(people) < design.participants:
        raise ValueError(f"{design.participants} participants cannot be drawn from {len(people)} without replacement")
    rng = np.random.default_rng(seed)
    s, n, t, g = simulations, design.participants, design.trials_per_participant, design.groups
    who = np.stack([rng.permutation(len(people))[:n] for _ in range(s)])
    correct = np.zeros((s, n))
    for j, person in enumerate(people):
        answers = np.asarray(catch.get(person, []), dtype=bool)
        rows = np.flatnonzero((who == j).any(axis=1))
        for r in rows:
            pick = rng.choice(len(answers), design.catch_trials, replace=len(answers) < design.catch_trials) \
                if len(answers) else np.zeros(0, dtype=int)
            correct[r, who[r] == j] = answers[pick].sum() if len(answers) else design.catch_trials
    keep = ~excluded_by_catch(correct, design.min_catch_correct)
    group = np.arange(n) % g
    p = {k: np.full((s, len(pairs)), np.nan) for k in ("participants", "items")}
    fav = {k: np.zeros((s, len(pairs)), dtype=bool) for k in ("participants", "items")}
    for k, pair in enumerate(pairs):
        items = np.stack([rng.permutation(pair.choices.shape[1])[:g * t].reshape(g, t) for _ in range(s)])
        y = pair.choices[who[:, :, None], items[np.arange(s)[:, None], group[None, :], :]].astype(np.float64)
        for test_name, shares in zip(("participants", "items"), _unit_and_item_shares(y, keep, design)):
            p[test_name][:, k] = share_p_values(shares)
            fav[test_name][:, k] = _direction(shares)
    tests = SimulatedTests(p, fav, keep.sum(axis=1))
    hits, either = separated(tests, None, alpha, seed)[test]
    return [_estimate(hits[:, k], either[:, k], tests.included) for k in range(len(pairs))]

