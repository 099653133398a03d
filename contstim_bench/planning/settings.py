"""What a round plan is asked, checked once: :class:`PlanSettings`."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..analysis.exclusion import CATCH_TRIALS
from ..analysis.inference import ALPHA
from ..analysis.power import DEFAULT_SIMULATIONS, TESTS

DEFAULT_PARTICIPANTS = (6, 8, 10, 12, 16, 20, 24, 30)
DEFAULT_TRIALS = (10,)
DEFAULT_EFFECT = 0.6
"""The planned effect when none is given: 60% of the choices for the better model's sentences on
the pairs where the two models disagree (a modest preference: between-model head-to-heads on the
paper's controversial pairs range from about 0.6 to 0.9)."""
OBSERVED = "observed"
STIMULI = {"natural": "natural_controversial", "synthetic": "synthetic_vs_synthetic"}
"""Stimulus kind -> the condition whose head-to-head tests the planned hypotheses."""


def _ints(values, name: str, minimum: int = 1) -> tuple[int, ...]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise ValueError(f"{name} must be integers >= {minimum}, got {v!r}")
        out.append(int(v))
    if not out:
        raise ValueError(f"{name}: give at least one value")
    return tuple(sorted(set(out)))


def check_effect(value) -> float:
    """A planned effect: a share in [0.5, 1) (0.5: no effect, for a false-discovery check)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"an effect is a share of choices in [0.5, 1), got {value!r}")
    if not 0.5 <= value < 1.0:
        raise ValueError(f"an effect is the share of choices for the better model's sentences, in [0.5, 1) "
                         f"(0.5: no difference); got {value!r}")
    return float(value)


@dataclass(frozen=True)
class PlanSettings:
    """The questions of a plan.  ``effects``: planned effects (a sweep), or ``None`` for each
    pair's observed effect.  ``min_catch_correct`` defaults to ``catch_trials - 1`` (the paper's 11
    of 12)."""

    participants: tuple[int, ...] = DEFAULT_PARTICIPANTS
    trials_per_participant: tuple[int, ...] = DEFAULT_TRIALS
    effects: tuple[float, ...] | None = (DEFAULT_EFFECT,)
    groups: int = 1
    catch_trials: int = CATCH_TRIALS
    min_catch_correct: int | None = None
    test: str = "participants"
    target_power: float = 0.8
    alpha: float = ALPHA
    simulations: int = DEFAULT_SIMULATIONS
    seed: int = 0
    stimuli: str = "natural"
    random_pairs: int = 0
    pay_per_hour: float | None = None
    seconds_per_trial: float | None = None
    participant_sd: float | None = None
    item_sd: float | None = None
    lapse: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "participants", _ints(self.participants, "--participants"))
        object.__setattr__(self, "trials_per_participant", _ints(self.trials_per_participant,
                                                                 "--trials-per-participant"))
        if self.effects is not None:
            object.__setattr__(self, "effects", tuple(dict.fromkeys(check_effect(e) for e in self.effects)))
            if not self.effects:
                raise ValueError("--effect: give at least one value, or 'observed'")
        _ints([self.groups], "--groups")
        _ints([self.catch_trials], "--catch-trials", 0)
        _ints([self.random_pairs], "--random-pairs", 0)
        _ints([self.simulations], "--simulations", 10)
        _ints([self.seed], "--seed", 0)
        if self.min_catch_correct is None:
            object.__setattr__(self, "min_catch_correct", max(0, self.catch_trials - 1))
        _ints([self.min_catch_correct], "--min-catch-correct", 0)
        if self.min_catch_correct > self.catch_trials:
            raise ValueError(f"--min-catch-correct {self.min_catch_correct} is more than the {self.catch_trials} "
                             "catch trials: every participant would be excluded")
        if self.test not in TESTS:
            raise ValueError(f"--test must be one of {', '.join(TESTS)}, got {self.test!r}")
        for name, value in (("--target-power", self.target_power), ("--alpha", self.alpha)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
                raise ValueError(f"{name} must be a number strictly between 0 and 1, got {value!r}")
        if self.stimuli not in STIMULI:
            raise ValueError(f"--stimuli must be one of {', '.join(STIMULI)}, got {self.stimuli!r}")
        for name, value, hi in (("--pay-per-hour", self.pay_per_hour, math.inf),
                                ("--seconds-per-trial", self.seconds_per_trial, 3600.0),
                                ("--participant-sd", self.participant_sd, 50.0), ("--item-sd", self.item_sd, 50.0),
                                ("--lapse", self.lapse, 0.99)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value) or not 0 <= value <= hi):
                raise ValueError(f"{name} must be a number from 0 to {hi:g}, got {value!r}")
        if self.groups > min(self.participants):
            raise ValueError(f"--groups {self.groups} needs at least {self.groups} participants; the smallest "
                             f"--participants is {min(self.participants)}")

    @property
    def observed(self) -> bool:
        return self.effects is None

    @property
    def condition(self) -> str:
        """The condition whose head-to-head tests the plan's hypotheses."""
        return STIMULI[self.stimuli]

    def record(self) -> dict:
        return {"participants": list(self.participants), "trials_per_participant": list(self.trials_per_participant),
                "effects": OBSERVED if self.effects is None else list(self.effects), "groups": self.groups,
                "catch_trials": self.catch_trials, "min_catch_correct": self.min_catch_correct, "test": self.test,
                "target_power": self.target_power, "alpha": self.alpha, "simulations": self.simulations,
                "seed": self.seed, "stimuli": self.stimuli, "random_pairs": self.random_pairs,
                "pay_per_hour": self.pay_per_hour, "seconds_per_trial": self.seconds_per_trial,
                "participant_sd": self.participant_sd, "item_sd": self.item_sd, "lapse": self.lapse}
