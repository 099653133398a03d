"""Simulated participants who answer as a round's plan says people do (``experiment simulate
--plan PLAN``): a dry run of a planned round whose outcome the plan predicts.

The plan (``contstim round plan``) holds a participant model per hypothesis
(:class:`contstim_bench.analysis.participant_model.ChoiceModel`: effect, spreads, lapse rate).
On a trial of the design that targets both models of a hypothesis (one sentence accepted by model
A and rejected by model B), participant ``k`` chooses A's sentence with the model's probability
``lapse/2 + (1 - lapse) Phi(mu + u_k + w_pair)``: ``u_k`` drawn once per participant and
hypothesis, ``w_pair`` once per sentence pair (from the pair's id, so every participant meets the
same pair effect).  On a catch trial the participant chooses the natural sentence except on a
lapse, half of whose answers are wrong; on any other trial, either sentence at random.  The same
seed gives the same answers.
"""
from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

import numpy as np

from ..analysis.participant_model import ChoiceModel
from ..data.design_file import CATCH_TRIAL_TYPE, NATURAL_CATCH_CODE
from .simulate import RT_MEDIAN_MS, RT_SIGMA, rating_for


def _pair_key(left: str, right: str) -> frozenset[str]:
    return frozenset((left, right))


class PlanChooser:
    """The answers of one simulated participant (participant ``index`` of a run) under a plan."""

    def __init__(self, trials: dict[frozenset, dict], models: dict[tuple[str, str], ChoiceModel], seed: int,
                 index: int):
        self.trials = trials
        self.models = models
        self.seed = seed
        self.rng = np.random.default_rng([seed, index])
        self.u = {pair: float(self.rng.standard_normal()) * m.participant_sd for pair, m in sorted(models.items())}
        self.lapse = float(np.mean([m.lapse for m in models.values()])) if models else 0.0
        self.catch_trials = 0
        self.catch_failures = 0

    def _item_effect(self, pair_id: str, model: ChoiceModel) -> float:
        digest = int.from_bytes(hashlib.sha256(f"{self.seed}:{pair_id}".encode()).digest()[:8], "little")
        return float(np.random.default_rng(digest).standard_normal()) * model.item_sd

    def answer(self, left: str, right: str) -> tuple[int, float]:
        """(rating 1..6, reaction time in ms) for one trial (see the module docstring)."""
        row = self.trials.get(_pair_key(left, right))
        draw, lapse_draw = float(self.rng.random()), float(self.rng.random())
        rt = float(RT_MEDIAN_MS * math.exp(RT_SIGMA * self.rng.standard_normal()))
        choose_right = draw < 0.5
        if row is not None and row["trial_type"] == CATCH_TRIAL_TYPE:
            self.catch_trials += 1
            natural_right = (row["sentence2"] == right) == (row["sentence2_type"] == NATURAL_CATCH_CODE)
            choose_right = natural_right
            if lapse_draw < self.lapse and draw < 0.5:  # a lapse answers at random: wrong half the time
                choose_right = not natural_right
                self.catch_failures += 1
        elif row is not None and row["pair"] is not None:
            (a, b), a_sentence = row["pair"], row["a_sentence"]
            model = self.models[(a, b)]
            p = float(model.probability(self.u[(a, b)], self._item_effect(row["pair_id"], model)))
            choose_a = draw < p
            choose_right = choose_a == (a_sentence == right)
        return rating_for(2.0, choose_right), round(rt, 1)


def plan_trials(plan: dict, design: str | os.PathLike) -> tuple[dict[frozenset, dict], dict[tuple[str, str], ChoiceModel]]:
    """The design's trials by their two sentences (with the hypothesis pair they contrast, if any,
    and model A's sentence) and the plan's participant model of each hypothesis."""
    from ..data.design_file import read_design

    models = {}
    for m in plan["participant_model"]["per_pair"]:
        models[(m["model_a"], m["model_b"])] = ChoiceModel(m["effect"], m["participant_sd"], m["item_sd"], m["lapse"],
                                                           m.get("source", ""))
    frame = read_design(design)
    trials = {}
    for r in frame.to_dict("records"):
        pair, a_sentence = None, None
        for (a, b) in models:
            for side, other in (("sentence1", "sentence2"), ("sentence2", "sentence1")):
                if r[f"{side}_accept_model"] == a and r[f"{side}_reject_model"] == b:
                    pair, a_sentence = (a, b), r[side]
                elif r[f"{side}_accept_model"] == b and r[f"{side}_reject_model"] == a:
                    pair, a_sentence = (a, b), r[other]
        trials[_pair_key(r["sentence1"], r["sentence2"])] = {**r, "pair": pair, "a_sentence": a_sentence}
    if not any(t["pair"] for t in trials.values()):
        raise ValueError(f"the design {design} has no trial contrasting a pair of the plan's hypotheses "
                         f"({', '.join(f'{a} vs {b}' for a, b in models)}); is it the plan's design?")
    return trials, models


def plan_design(plan_folder: str | os.PathLike, design: str | os.PathLike | None) -> Path:
    """The design a plan's participants answer: ``design``, or the plan folder's ``design/``."""
    if design is not None:
        return Path(design)
    found = Path(plan_folder) / "design"
    if not found.is_dir():
        raise FileNotFoundError(f"{plan_folder} has no design/ (the plan was written without `contstim round plan "
                                f"--generate`); give the exported design with `contstim experiment simulate --design`")
    return found
