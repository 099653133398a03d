"""The GLMM of Kauf et al. (2024), Appendix D: per-pair accuracy of Experiment 1 modelled by a
binomial generalised linear mixed-effects model with a logit link.

Fixed effects: the model factors the user names (the paper: model class Mistral/Falcon/MPT and
version base/instruct), voice (active/passive) and all their interactions; random effects: a
random intercept per item (an EventsAdapt item is the same event in both voices, scored by every
model).  Coding as the paper: *sum* coding for the model factors (``C(x, Sum)``, R's
``contr.sum``: a coefficient is a level's deviation from the mean over levels, the last level
carries minus the sum of the others) and *dummy* coding for voice with "active" as the reference
(``C(voice, Treatment('active'))``).  The formula, in lme4's terms::

    hit ~ class * version * voice + (1 | item)

Estimation: :class:`gpboost.GPModel` with ``likelihood="bernoulli_logit"`` and the item as a
grouped random effect, i.e. maximum likelihood with the **Laplace approximation** of the marginal
likelihood, which is also what ``lme4::glmer`` does by default (``nAGQ = 1``).  Where it differs
from the lme4 fit of the paper:

- the optimiser (gpboost's default for non-Gaussian likelihoods, not lme4's bobyqa + Nelder-Mead)
  and its convergence tolerances, so estimates agree to optimiser precision, not bit for bit;
- standard errors come from gpboost's numerically approximated Hessian of the approximate
  log-likelihood (lme4: the Hessian of the deviance, ``use.hessian = TRUE``); p-values are the
  same two-sided Wald z tests lme4's ``summary`` prints;
- the random-intercept variance has a standard error here; lme4 reports none;
- no convergence warnings: gpboost's are not lme4's checks (gradient, singular fit), so a fit with
  an item variance near zero is reported as it is.

statsmodels' ``BinomialBayesMixedGLM`` was not used: it is Bayesian (Gaussian priors on the
fixed effects and the log standard deviations, fitted by variational Bayes or a posterior mode),
so its estimates are not the maximum-likelihood ones of lme4.
"""
from __future__ import annotations

import keyword
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

VOICE_REFERENCE = "active"
ESTIMATOR = ("gpboost GPModel, bernoulli_logit likelihood, grouped random intercept per item; maximum "
             "likelihood with the Laplace approximation (as lme4::glmer with nAGQ = 1); Wald z tests")


def formula(factors: Sequence[str], voice: bool = True) -> str:
    """The fixed-effects formula (patsy): sum-coded ``factors``, dummy-coded voice, all
    interactions."""
    terms = [f"C({f}, Sum)" for f in factors]
    if voice:
        terms.append(f"C(voice, Treatment('{VOICE_REFERENCE}'))")
    if not terms:
        raise ValueError("the GLMM needs at least one fixed-effect factor")
    return "hit ~ " + " * ".join(terms)


def _readable(name: str) -> str:
    """``C(version, Sum)[S.base]`` -> ``version[base]``; ``C(voice, Treatment('active'))[T.passive]``
    -> ``voice[passive]``; interactions joined by ``:``."""
    out = []
    for part in name.split(":"):
        if part.startswith("C(") and ")[" in part:
            var = part[2:part.index(",")]
            level = part[part.index(")[") + 2:-1].split(".", 1)[-1]
            out.append(f"{var}[{level}]")
        else:
            out.append(part)
    return ":".join(out)


def fit_glmm(trials: pd.DataFrame, factors: Sequence[str], *, voice: bool = True) -> dict:
    """Fit the Appendix D GLMM to ``trials`` (one row per model x pair: ``hit`` 0/1 or bool,
    ``item``, ``voice``, and a column per name of ``factors``).

    Returns ``{"formula", "random_effects", "estimator", "n_observations", "n_items",
    "coefficients": [{"term", "estimate", "std_error", "z", "p"}], "item_variance",
    "item_variance_std_error", "log_likelihood"}``.  ValueError names a missing column, a factor
    with one level, or factors the design cannot separate (a rank-deficient design, e.g. two
    results that differ in both "class" and "version").
    """
    import patsy

    try:
        import gpboost
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installation
        if exc.name != "gpboost":  # installed but broken: its own error, not "install it"
            raise
        raise ValueError("the GLMM needs the gpboost package: pip install 'contstim-bench[stats]'") from None
    factors = list(factors)
    for f in factors:
        if not f.isidentifier() or keyword.iskeyword(f):
            raise ValueError(f"GLMM factor name {f!r} must be a Python identifier and not a keyword "
                             "(e.g. family, not class)")
    need = ["hit", "item", *factors] + (["voice"] if voice else [])
    missing = [c for c in need if c not in trials.columns]
    if missing:
        raise ValueError(f"GLMM trials: missing columns {missing}")
    if trials.empty:
        raise ValueError("GLMM trials: no rows")
    for f in factors + (["voice"] if voice else []):
        if trials[f].nunique() < 2:
            raise ValueError(f"GLMM: factor {f!r} has one level ({trials[f].iloc[0]!r}); give results that differ in it")
    if voice and VOICE_REFERENCE not in set(trials.voice):
        raise ValueError(f"GLMM: no {VOICE_REFERENCE!r} voice rows (the reference level)")
    data = trials.assign(hit=trials.hit.astype(float))
    fml = formula(factors, voice)
    X = patsy.dmatrix(fml.split("~", 1)[1], data, return_type="dataframe")
    rank = np.linalg.matrix_rank(X.to_numpy())
    if rank < X.shape[1]:
        raise ValueError(f"GLMM: the design of {fml} is rank deficient ({rank} of {X.shape[1]} columns): "
                         f"the factors {factors} do not vary independently across the results given")
    model = gpboost.GPModel(group_data=data["item"].to_numpy(), likelihood="bernoulli_logit")
    model.fit(y=data.hit.to_numpy(), X=X.to_numpy(dtype=np.float64), params={"trace": False})
    coef = np.asarray(model.get_coef(std_err=True), dtype=np.float64).reshape(2, -1)
    est, se = coef[0], coef[1]
    z = est / se
    p = 2 * stats.norm.sf(np.abs(z))
    cov = np.asarray(model.get_cov_pars(std_err=True), dtype=np.float64).reshape(2, -1)
    return {
        "formula": fml,
        "random_effects": "(1 | item)",
        "estimator": ESTIMATOR,
        "coding": {"factors": "sum (contr.sum)", "voice": f"dummy, reference {VOICE_REFERENCE!r}"} if voice
        else {"factors": "sum (contr.sum)"},
        "n_observations": int(len(data)),
        "n_items": int(data["item"].nunique()),
        "coefficients": [{"term": _readable(t), "estimate": float(b), "std_error": float(s), "z": float(zz),
                          "p": float(pp)} for t, b, s, zz, pp in zip(X.columns, est, se, z, p)],
        "item_variance": float(cov[0, 0]),
        "item_variance_std_error": float(cov[1, 0]),
        "log_likelihood": float(-model.get_current_neg_log_likelihood()),
    }


def trials_frame(pairs: pd.DataFrame, hits: Mapping[str, Mapping[str, bool]],
                 levels: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """One row per result x pair: ``label``, ``pair_id``, ``item``, ``subset``, ``voice``, ``hit``
    and a column per factor.

    ``pairs``: Experiment 1 pairs (:func:`.metrics.experiment1_pairs`); ``hits``: per result label,
    pair id -> hit; ``levels``: per result label, factor -> level.  A pair id of ``hits`` that
    ``pairs`` lacks is a ValueError; pairs a result did not score (``limit``) are left out.
    """
    info = pairs.set_index("pair_id")[["item", "subset", "voice"]]
    frames = []
    for label, by_pair in hits.items():
        unknown = sorted(set(by_pair) - set(info.index))
        if unknown:
            raise ValueError(f"result {label!r}: unknown pair ids {unknown[:3]}")
        ids = list(by_pair)
        f = info.loc[ids].reset_index()
        f.insert(0, "label", label)
        f["hit"] = [bool(by_pair[i]) for i in ids]
        for factor, level in levels[label].items():
            f[factor] = level
        frames.append(f)
    if not frames:
        raise ValueError("no results to model")
    return pd.concat(frames, ignore_index=True)
