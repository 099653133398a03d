"""What the human data already says about model pairs, and the observations behind it: the
input of a planned round (``contstim round plan``).

For every pair of the given models, on one condition of an experiment (or of a round), the
head-to-head of :mod:`contstim_bench.analysis.head_to_head` as ``contstim compare`` computes it
(the same panel, the same Benjamini-Hochberg family: every pair of the given models), whether it
separates the pair (q < .05), and its observations: the disagreement trials' participants, sentence
pairs and choices, to which :func:`contstim_bench.analysis.participant_model.estimate` fits a
participant model.  Also the catch trials' answers per participant (the lapse rate, and the
answers a resampled round draws) and the median time a trial took.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.evaluation import log_ratios_from_logprobs, resolve_logprobs, unique_sentences
from ..analysis.head_to_head import disagreement, pair_selection
from ..analysis.inference import ALPHA
from ..analysis.panel import Evaluator, condition_panel
from ..analysis.participant_model import ChoiceModel, estimate, lapse_from_catch
from ..analysis.power import ObservedPair
from ..analysis.selection import condition
from ..analysis.trials import prepare_trials
from ..analysis.exclusion import catch_correct
from ..data.design_file import CATCH_TRIAL_TYPE
from .contstim_compare import experiment_trials


@dataclass(frozen=True)
class PairEvidence:
    """One model pair on the human data.  ``a`` is the model whose sentences the participants
    chose more often where the two disagree (the first given when they never disagree or tie);
    ``chose_a`` per disagreement row, with its ``participant`` and ``item`` (pair id)."""

    a: str
    b: str
    selection: str
    n_trials: int
    n_pairs: int
    share: float | None
    q: float | None
    q_items: float | None
    participant: np.ndarray
    item: np.ndarray
    chose_a: np.ndarray

    @property
    def separated(self) -> bool:
        """Whether the data separate the pair (its head-to-head's q < .05)."""
        return self.q is not None and self.q < ALPHA

    def verdict(self) -> str:
        if self.n_trials == 0:
            return "never disagree on these trials: not separable on this data"
        share = f"share {self.share:.3f} for {self.a} on {self.n_pairs} pairs ({self.n_trials} trials), q={self.q:.2g}"
        return f"separated ({share})" if self.separated else f"not separated ({share})"

    def record(self) -> dict:
        return {"model_a": self.a, "model_b": self.b, "selection": self.selection, "n_trials": self.n_trials,
                "n_pairs": self.n_pairs, "share": self.share, "q": self.q, "q_items": self.q_items,
                "separated": self.separated, "verdict": self.verdict()}

    def observed(self) -> ObservedPair:
        """The choices as a complete participants x pairs table (ValueError when some participant
        did not answer some pair: a round drawn from them would be a different design)."""
        people, pc = np.unique(self.participant, return_inverse=True)
        items, ic = np.unique(self.item, return_inverse=True)
        table = np.full((len(people), len(items)), np.nan)
        table[pc, ic] = self.chose_a
        if np.isnan(table).any():
            raise ValueError(f"{self.a} vs {self.b}: not every participant answered every pair; resampling needs a "
                             "complete table")
        return ObservedPair(tuple(str(p) for p in people), table)

    def model(self, lapse: float) -> ChoiceModel:
        """The pair's participant model fitted to its observations (:func:`.participant_model.estimate`)."""
        return estimate(self.chose_a, self.participant, self.item, lapse,
                        f"{self.a} vs {self.b}: estimated from {self.n_trials} trials on {self.n_pairs} sentence pairs")


@dataclass(frozen=True)
class Evidence:
    """The human data on every pair of the given models (see the module docstring)."""

    experiment: str
    condition: str
    unit: str
    n_units: int
    family_size: int
    pairs: list[PairEvidence]
    catch: dict[str, np.ndarray]
    seconds_per_trial: float | None
    fingerprint: str

    def pair(self, a: str, b: str) -> PairEvidence:
        for p in self.pairs:
            if {p.a, p.b} == {a, b}:
                return p
        raise ValueError(f"no evidence on {a} vs {b}")

    def record(self) -> dict:
        return {"experiment": self.experiment, "condition": self.condition, "unit": self.unit,
                "n_units": self.n_units, "family_size": self.family_size,
                "pairs": [p.record() for p in self.pairs], "catch_trials": int(sum(len(v) for v in self.catch.values())),
                "seconds_per_trial": self.seconds_per_trial, "dataset_fingerprint": self.fingerprint}

    def lapse(self) -> float:
        """The lapse rate its catch trials show (:func:`.participant_model.lapse_from_catch`)."""
        answers = np.concatenate(list(self.catch.values())) if self.catch else np.zeros(0, dtype=bool)
        return lapse_from_catch(int((~answers).sum()), len(answers))


def catch_answers(trials) -> dict[str, np.ndarray]:
    """Participant -> for each of their catch trials, whether they chose the natural sentence
    (:func:`contstim_bench.analysis.exclusion.catch_correct`, the rule ingestion applies)."""
    is_catch = (trials["trial_type"] == CATCH_TRIAL_TYPE).to_numpy()
    ok = catch_correct(trials)[is_catch]
    who = trials["participant"].to_numpy()[is_catch]
    return {str(p): ok[who == p] for p in pd.unique(who)}


def head_to_head_evidence(logprobs: Mapping[str, Mapping[str, float]], pairs: Sequence[tuple[str, str]],
                          experiment: str, datasets_dir: str | os.PathLike | None = None, *,
                          condition_key: str = "all") -> Evidence:
    """The :class:`Evidence` of ``pairs`` (model names of ``logprobs``: name -> {sentence:
    natural-log probability of every sentence of the experiment}) on ``condition_key`` of
    ``experiment`` (a paper experiment or a round in ``datasets_dir``).  The BH family is every
    pair of the models of ``logprobs`` that disagree, as in ``contstim compare``."""
    trials, fingerprint = experiment_trials(experiment, datasets_dir)
    cond = condition(condition_key)
    sentences = unique_sentences(trials)
    prepared = prepare_trials(trials)
    ratios = {name: prepared.orient(log_ratios_from_logprobs(trials, resolve_logprobs(values, sentences, name)))
              for name, values in logprobs.items()}
    ev = Evaluator(prepared)
    panel = condition_panel(ev, cond, ratios, per_unit_tests=False)
    if panel is None:
        raise ValueError(f"{experiment} has no {condition_key} trials")
    frame = prepared.frame
    out = []
    for a, b in pairs:
        match, q, swapped = panel.match(a, b)
        share = None if match.share is None else (1.0 - match.share if swapped else match.share)
        if share is not None and share < 0.5:
            a, b, share = b, a, 1.0 - share
        mask, selection = pair_selection(ev.masks, a, b, cond)
        rows, chose_a = disagreement(ev.codes, ratios[a], ratios[b], mask)
        out.append(PairEvidence(a, b, selection, match.n_trials, match.n_pairs, share, q, panel.items_q(a, b),
                                frame["participant"].to_numpy()[rows].astype(str),
                                frame["pair_id"].to_numpy()[rows].astype(str), chose_a.astype(bool)))
    rt = trials["reaction_time_ms"].to_numpy(dtype=np.float64)
    rt = rt[np.isfinite(rt)]
    return Evidence(experiment, condition_key, prepared.unit, int(frame[prepared.unit].nunique()),
                    panel.family_sizes()["head_to_head"], out, catch_answers(trials),
                    float(np.median(rt)) / 1000.0 if len(rt) else None, fingerprint)
