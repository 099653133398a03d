"""How people choose between two models' sentences: the participant model of a planned round.

On a trial of a head-to-head (two models prefer different sentences of the pair), participant
``j`` chooses model A's sentence of sentence pair ``i`` with probability

    P_ij = lapse / 2 + (1 - lapse) * Phi(mu + u_j + w_i),   u_j ~ N(0, participant_sd^2),
                                                             w_i ~ N(0, item_sd^2)

a probit model with crossed random effects of participants and items (the model psycholinguists
fit to binary choices, Baayen, Davidson & Bates 2008) and a lapse rate:

- ``lapse``: on a lapse the participant answers at random (each sentence with probability 1/2).
  Estimated from the catch trials (:func:`lapse_from_catch`): an attentive participant always
  prefers a natural sentence to its shuffled words, so a failed catch trial is half a lapse.
- ``participant_sd``: the between-participant spread, on the probit scale, of the pull toward
  A's sentences: the spread of the per-participant shares beyond what the trials' coin flips give.
- ``item_sd``: how much the pull varies from sentence pair to sentence pair: the noise of the
  choices around the two models' preference (some pairs are decided by everybody, others split).
- ``mu`` follows from the **effect**, the share of choices for A's sentence over participants and
  pairs, lapses included (:meth:`ChoiceModel.intercept`):
  ``effect = lapse/2 + (1 - lapse) * Phi(mu / sqrt(1 + participant_sd^2 + item_sd^2))``.

:func:`estimate` fits the two spreads to a head-to-head's observations (the rows of
:func:`.head_to_head.disagreement`) by the method of moments: the effect is the observed share
(the mean of the per-participant shares, as the head-to-head reports it), and the two spreads make
the model's expected variance of the per-participant shares and of the per-pair shares equal to
the observed ones.  The expectations are taken on the data's own design (which participant saw
which pair), by averaging over common random draws of ``u`` and ``w`` with the trials' Bernoulli
variance in closed form, so the fit is smooth and right for shared and for split item sets alike.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

FIT_DRAWS = 128
"""Common random draws of the participant and item effects over which :func:`estimate` averages."""
MAX_SD = 6.0
"""Largest spread (probit scale) :func:`estimate` considers."""


def _check_unit_interval(value, name: str, low: float = 0.0, high: float = 1.0, *, closed: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    ok = low <= value <= high if closed else low < value < high
    if not ok:
        raise ValueError(f"{name} must be in {'[' if closed else '('}{low}, {high}{']' if closed else ')'}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class ChoiceModel:
    """The participant model of one head-to-head (see the module docstring); ``source`` says where
    its values come from."""

    effect: float
    participant_sd: float
    item_sd: float
    lapse: float
    source: str = ""

    def __post_init__(self):
        _check_unit_interval(self.lapse, "the lapse rate", 0.0, 0.99)
        for name in ("participant_sd", "item_sd"):
            _check_unit_interval(getattr(self, name), name.replace("_", " "), 0.0, 50.0)
        lo, hi = self.lapse / 2, 1 - self.lapse / 2
        if not (isinstance(self.effect, (int, float)) and lo < self.effect < hi):
            raise ValueError(f"an effect of {self.effect!r} cannot be reached with a lapse rate of {self.lapse:.3f}: "
                             f"a share strictly between {lo:.3f} and {hi:.3f} can")

    def intercept(self) -> float:
        """``mu`` of the model: the probit pull toward A's sentence of an average participant and pair."""
        from scipy.stats import norm

        scale = math.sqrt(1.0 + self.participant_sd ** 2 + self.item_sd ** 2)
        return float(norm.ppf((self.effect - self.lapse / 2) / (1 - self.lapse)) * scale)

    def probability(self, u: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``P`` for participant effects ``u`` and item effects ``w`` (broadcast together)."""
        from scipy.special import ndtr

        return self.lapse / 2 + (1 - self.lapse) * ndtr(self.intercept() + u + w)

    def with_effect(self, effect: float, source: str | None = None) -> "ChoiceModel":
        """The same spreads and lapse rate with another effect."""
        return replace(self, effect=float(effect), source=self.source if source is None else source)

    def record(self) -> dict:
        return {"effect": self.effect, "participant_sd": self.participant_sd, "item_sd": self.item_sd,
                "lapse": self.lapse, "source": self.source}


def lapse_from_catch(n_failed: int, n_catch: int) -> float:
    """The lapse rate that catch trials show: twice the share of them failed (a lapse picks the
    shuffled sentence half the time), at most 0.99.  ValueError without catch trials."""
    if n_catch <= 0:
        raise ValueError("no catch trials to estimate the lapse rate from")
    if not 0 <= n_failed <= n_catch:
        raise ValueError(f"{n_failed} failed of {n_catch} catch trials is not a count")
    return min(0.99, 2.0 * n_failed / n_catch)


def _shares(values: np.ndarray, codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    counts = np.bincount(codes, minlength=n).astype(np.float64)
    return np.bincount(codes, weights=values, minlength=n) / counts, counts


def _codes(ids) -> tuple[np.ndarray, int]:
    _, codes = np.unique(np.asarray(ids).astype(str), return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1


def estimate(chose_a, participant, item, lapse: float, source: str = "") -> ChoiceModel:
    """The :class:`ChoiceModel` of a head-to-head's observations: per row, whether the participant
    chose A's sentence (``chose_a``), who it was (``participant``) and which sentence pair
    (``item``); ``lapse`` from :func:`lapse_from_catch`.  Method of moments (module docstring).
    ValueError for fewer than two participants or two pairs, or an observed share that the lapse
    rate cannot give (every choice one way with lapses)."""
    from scipy.optimize import least_squares

    y = np.asarray(chose_a, dtype=np.float64)
    if y.ndim != 1 or not len(y):
        raise ValueError("no observations: the two models never disagree on these trials")
    pc, n_p = _codes(participant)
    ic, n_i = _codes(item)
    if len(pc) != len(y) or len(ic) != len(y):
        raise ValueError("chose_a, participant and item must have one value per row")
    if n_p < 2 or n_i < 2:
        raise ValueError(f"a participant model needs at least two participants and two sentence pairs "
                         f"(got {n_p} and {n_i})")
    s, n_s = _shares(y, pc, n_p)
    t, n_t = _shares(y, ic, n_i)
    effect = float(s.mean())
    lo, hi = lapse / 2, 1 - lapse / 2
    effect = min(max(effect, lo + 1e-3), hi - 1e-3)  # an all-one-way share: the nearest the lapses allow
    observed = np.array([s.var(ddof=1), t.var(ddof=1)])
    rng = np.random.default_rng(20230101)
    zu = rng.standard_normal((FIT_DRAWS, n_p))[:, pc]
    zw = rng.standard_normal((FIT_DRAWS, n_i))[:, ic]

    def expected(theta: np.ndarray) -> np.ndarray:
        model = ChoiceModel(effect, float(theta[0]), float(theta[1]), lapse)
        p = model.probability(theta[0] * zu, theta[1] * zw)  # (draws, rows)
        q = p * (1 - p)
        out = []
        for codes, n, counts in ((pc, n_p, n_s), (ic, n_i, n_t)):
            means = np.stack([np.bincount(codes, weights=row, minlength=n) for row in p]) / counts
            noise = np.stack([np.bincount(codes, weights=row, minlength=n) for row in q]) / counts ** 2
            out.append(float(np.mean(means.var(axis=1, ddof=1) + noise.mean(axis=1))))
        return np.array(out)

    fit = least_squares(lambda th: (expected(th) - observed) / (observed + 1e-4), x0=[0.3, 0.5],
                        bounds=([0.0, 0.0], [MAX_SD, MAX_SD]))
    su, sw = (float(v) for v in fit.x)
    return ChoiceModel(effect, su, sw, lapse, source or f"estimated from {len(y)} trials, {n_p} participants, "
                                                          f"{n_i} sentence pairs")


def pooled_spread(models: list[ChoiceModel], weights: list[float]) -> tuple[float, float]:
    """(participant_sd, item_sd) averaged over estimated models, weighted (by their trials):
    the typical spread of human choices in a head-to-head, for a planned effect of a size
    not yet observed.  ValueError without any model."""
    if not models:
        raise ValueError("no head-to-head with observations to estimate the spread of choices from")
    w = np.asarray(weights, dtype=np.float64)
    return (float(np.average([m.participant_sd for m in models], weights=w)),
            float(np.average([m.item_sd for m in models], weights=w)))
