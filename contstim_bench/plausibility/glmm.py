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
- the warnings (``warnings`` of the fit) are not lme4's checks (gradient, singular fit): a fit with
  an item variance near zero is reported as it is.  Recorded instead: gpboost's own convergence
  status and warnings (:func:`_gpboost_messages`: the maximal number of iterations reached, an
  unsuccessful line search), standard errors that are not finite, and (quasi-)complete
  separation, checked on the data (:func:`separation`): the fixed effects are every interaction of
  the factors, a model of one mean per cell (combination of levels), whose maximum-likelihood
  estimates are finite only when every cell has hits and misses; in a cell of all hits (or all
  misses) the estimates run off towards infinity until the optimiser stops, and their standard
  errors, z and p mean nothing (e.g. an estimate of 13.6 with a standard error of 191.6).

statsmodels' ``BinomialBayesMixedGLM`` was not used: it is Bayesian (Gaussian priors on the
fixed effects and the log standard deviations, fitted by variational Bayes or a posterior mode),
so its estimates are not the maximum-likelihood ones of lme4.
"""
from __future__ import annotations

import itertools
import keyword
import logging
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

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
    -> ``voice[passive]``; interactions joined by ``:`` (a level may hold a ``:`` itself, as a
    model spec ``hf-causal:gpt2`` does: parts are split only where the next one starts)."""
    out = []
    for part in re.split(r":(?=C\()", name):
        if part.startswith("C(") and ")[" in part:
            var = part[2:part.index(",")]
            level = part[part.index(")[") + 2:-1].split(".", 1)[-1]
            out.append(f"{var}[{level}]")
        else:
            out.append(part)
    return ":".join(out)


def fit_glmm(trials: pd.DataFrame, factors: Sequence[str], *, voice: bool = True,
             max_iterations: int | None = None) -> dict:
    """Fit the Appendix D GLMM to ``trials`` (one row per model x pair: ``hit`` 0/1 or bool,
    ``item``, ``voice``, and a column per name of ``factors``).

    Returns ``{"formula", "random_effects", "estimator", "n_observations", "n_items",
    "coefficients": [{"term", "estimate", "std_error", "z", "p"}], "item_variance",
    "item_variance_std_error", "log_likelihood", "converged", "optimizer_iterations",
    "gpboost_version", "warnings"}`` (``warnings``: non-convergence, gpboost's warnings, standard
    errors that are not finite and separation, :func:`separation`; empty for a sound fit).
    ``max_iterations``: gpboost's ``maxit`` (default: its own, 1000).  ValueError names a missing
    column, a factor with one level, or factors the design cannot separate (a rank-deficient
    design, e.g. two results that differ in both "class" and "version").
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
    params: dict = {"trace": False}
    if max_iterations is not None:
        params["maxit"] = int(max_iterations)
    found = separation(data, factors + (["voice"] if voice else []))
    with _gpboost_messages(gpboost) as messages:
        model = gpboost.GPModel(group_data=data["item"].to_numpy(), likelihood="bernoulli_logit")
        model.fit(y=data.hit.to_numpy(), X=X.to_numpy(dtype=np.float64), params=params)
        coef = np.asarray(model.get_coef(std_err=True), dtype=np.float64).reshape(2, -1)
        cov = np.asarray(model.get_cov_pars(std_err=True), dtype=np.float64).reshape(2, -1)
    est, se = coef[0], coef[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = est / se
    p = 2 * stats.norm.sf(np.abs(z))
    status = model._get_convergence_status() if hasattr(model, "_get_convergence_status") else None
    found += _fit_warnings(status, messages, [_readable(t) for t, s in zip(X.columns, se) if not np.isfinite(s)])
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
        "converged": status == 0 if status is not None else None,
        "optimizer_iterations": int(model._get_num_optim_iter()) if hasattr(model, "_get_num_optim_iter") else None,
        "gpboost_version": getattr(gpboost, "__version__", None),
        "warnings": found,
    }


def separation(trials: pd.DataFrame, variables: Sequence[str]) -> list[str]:
    """Warnings of (quasi-)complete separation in ``trials`` (``hit`` and the fixed-effect
    ``variables``): every level, and every combination of levels of several variables, whose
    observations are all hits or all misses, coarsest first (a combination inside one already named
    is not named again).  Empty when every cell has both outcomes."""
    hits = trials["hit"].astype(float)
    found: list[tuple[dict, str]] = []
    for size in range(1, len(variables) + 1):
        for combo in itertools.combinations(variables, size):
            for key, cell in hits.groupby([trials[v] for v in combo], sort=True):
                levels = dict(zip(combo, key if isinstance(key, tuple) else (key,)))
                if cell.nunique() > 1 or any(all(levels.get(v) == lv for v, lv in f.items()) for f, _ in found):
                    continue
                where = ", ".join(f"{v}={lv}" for v, lv in levels.items())
                what = "a hit" if cell.iloc[0] == 1 else "a miss"
                found.append((levels, f"separation: every observation with {where} is {what} ({len(cell)} of "
                                      f"{len(cell)}): the maximum-likelihood estimates of the terms involving "
                                      f"{', '.join(combo)} are not finite; what the fit reports for them (estimate, "
                                      "standard error, z, p) means nothing"))
    return [message for _, message in found]


@contextmanager
def _gpboost_messages(gpboost) -> Iterator[list[str]]:
    """The warnings gpboost gives during the block (its native library's ``[GPBoost] [Warning] ...``
    lines, without the prefix, and Python warnings), collected instead of printed (its other log
    lines are dropped); its logger is restored after."""
    from gpboost import basic

    collected: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage().strip()
            if record.levelno >= logging.WARNING or "[Warning]" in message:
                collected.append(message.split("[Warning]", 1)[-1].strip())

    logger = logging.Logger("contstim_bench.glmm.gpboost")
    logger.addHandler(_Collect())
    before = basic._LOGGER
    gpboost.register_logger(logger)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield collected
        collected.extend(str(w.message) for w in caught)
    finally:
        basic._LOGGER = before


_STATUS = {1: "gpboost did not converge: the maximal number of iterations was reached",
           2: "gpboost did not converge: the line search of its optimiser was not successful (the estimates may be "
              "a local optimum, or the optimiser stopped early)"}


def _fit_warnings(status: int | None, messages: Sequence[str], no_se: Sequence[str]) -> list[str]:
    """Warnings of a fit: gpboost's convergence ``status`` (0 converged), its logged warnings and
    the terms whose standard error is not finite."""
    out = [_STATUS.get(status, f"gpboost convergence status {status} (not 0: not converged)")] if status else []
    out += [f"gpboost: {m}" for m in dict.fromkeys(messages)]
    if no_se:
        out.append(f"no finite standard error for {', '.join(no_se)}: the fit is not identified there")
    return out


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
