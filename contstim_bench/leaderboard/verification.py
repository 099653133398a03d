"""Verification of valid results: re-score each one's model spec here, through the one driver
(:func:`contstim_bench.driver.score_sentences`), and compare with its log-probabilities.

A file that passes every check of :mod:`.validate` is *valid*; it is *verified* only when its
``model.spec``, resolved under the policy of :mod:`.spec_policy`, was loaded here, re-scored every
sentence to within ``RESCORE_TOLERANCE`` nats of the submitted log-probabilities, and has the
fingerprint and revision the file claims.  A valid file whose re-scored log-probabilities or
identity differ is refused; a valid file that could not be re-scored (the policy does not load
its spec, loading or running it fails here, or re-scoring was skipped) is *unverified*, with a
reason that quotes nothing but the submitted spec.  One file's failure never stops the others.
"""
from __future__ import annotations

import os
from dataclasses import replace
from collections.abc import Callable, Sequence

from .validate import RESCORE_TOLERANCE, Checked, validate_files

PROVED_FIELDS = ("fingerprint", "revision", "method", "start_token", "dtype")
"""The fields of a result's ``model`` block that make its identity (:mod:`.identity`): each must be
what the model re-scored here has, so the identity on the board is the proved one."""


class OtherDtype(ValueError):
    """The maintainer re-scored in another dtype (``--dtype``) than the result records: the
    fingerprint (which covers the dtype) cannot be compared, so the entry stays unverified."""


def rescore(result: dict, datasets_dir=None, tolerance: float = RESCORE_TOLERANCE, options=None, *,
            spec: str | None = None) -> list[str]:
    """Re-score the submission's model here and compare with its log-probabilities and its
    claimed identity (problems when they differ; errors of loading or running the model
    propagate).

    ``spec`` is the spec to load (:func:`.spec_policy.admit`'s resolution of ``model.spec``;
    default ``model.spec`` itself, for a caller that trusts the file).  It scores through the one
    driver (:func:`contstim_bench.driver.load_model`) with the result's ``model.dtype`` when it
    names one, and the model options of ``options`` (:class:`contstim_bench.driver.RunOptions`;
    its dtype, when set, replaces the result's).  Scores come from the score cache when this
    model (same content fingerprint) scored them before.  The model's content fingerprint and
    revision computed here must be the ones the file claims (``model.fingerprint``,
    ``model.revision``, and the method, start token and dtype: :data:`PROVED_FIELDS`): the board
    shows the identity re-scoring proved, never a claimed one.  :class:`OtherDtype` when
    ``options`` names another dtype than the result's.
    """
    from ..benchmarks.base import describe_model
    from ..driver import RunOptions, load_model, score_sentences

    submitted = result["model"]["spec"]
    dtype = result["model"].get("dtype")
    options = options or RunOptions()
    overridden = options.dtype is not None
    options = replace(options, progress=False, dtype=options.dtype or (dtype if isinstance(dtype, str) else None))
    sentences = list(result["logprobs"])
    scorer = load_model(spec or submitted, options, datasets_dir=datasets_dir)
    here = describe_model(scorer)
    if overridden and here.get("dtype") != result["model"].get("dtype"):  # known before any sentence is scored
        raise OtherDtype(f"re-scored in {here.get('dtype')} (the maintainer's choice), the result records "
                         f"{dtype!r}; re-scoring in the result's own dtype verifies it")
    values = score_sentences(scorer, sentences, options, datasets_dir=datasets_dir, what="re-scoring")
    off = [(s, float(v)) for s, v in zip(sentences, values) if not abs(float(v) - result["logprobs"][s]) <= tolerance]
    problems = []
    if off:
        s, v = off[0]
        problems.append(
            f"re-scoring {submitted!r} gives different log-probabilities for {len(off)} sentence(s) "
            f"(tolerance {tolerance}), e.g. {s!r}: submitted {result['logprobs'][s]!r}, re-scored {v!r}")
    for field in PROVED_FIELDS:
        claimed, proved = result["model"].get(field), here.get(field)
        if claimed != proved:
            problems.append(f"model.{field} is {claimed!r}, but the model re-scored here from {submitted!r} has "
                            f"{field} {proved!r}: a result carries the identity of the model that produced it")
    return problems


def verify(checked: Checked, datasets_dir=None, tolerance: float = RESCORE_TOLERANCE, options=None,
           models_folder=None, log=None) -> Checked:
    """Re-score one valid result (:func:`rescore`) from its model spec as
    :func:`.spec_policy.admit` resolves it (``models_folder``: the maintainer's folder of local
    models), and record the outcome on ``checked``: verified when every log-probability and the
    claimed fingerprint and revision match; refused (problems added) when one differs;
    unverified, with the reason, when the policy does not load the spec or loading or running it
    fails here.  The reason quotes only the submitted spec: never an error message (it could
    quote a file) nor a local path; ``log`` receives the full error for the maintainer.  Never
    raises for a bad spec, so one file cannot stop a batch."""
    from .spec_policy import admit

    if not checked.ok:
        return checked
    spec = checked.result["model"]["spec"]
    admitted = admit(spec, models_folder)
    if not admitted.admitted:
        checked.verification = f"unverified: {admitted.reason}"
        return checked
    try:
        problems = rescore(checked.result, datasets_dir, tolerance, options=options, spec=admitted.spec)
    except OtherDtype as exc:
        checked.verification = f"unverified: {exc}"
        return checked
    except Exception as exc:  # noqa: BLE001 - whatever the spec does, the other files go on
        if log is not None:
            log(f"leaderboard: {checked.source}: re-scoring {spec!r} failed: {type(exc).__name__}: {exc}")
        checked.verification = (f"unverified: its model spec {spec!r} could not be loaded or run here "
                                f"({type(exc).__name__})")
        return checked
    if problems and admitted.local:
        checked.verification = (f"unverified: the maintainer's model of that name is not the model that produced "
                                f"this file (re-scoring {spec!r} gives other values or another fingerprint)")
    elif problems:
        checked.problems += problems
        checked.verification = "refused: re-scoring gives different log-probabilities or identity"
    else:
        checked.verified = True
        checked.verification = f"verified: re-scored from {spec!r} here, every log-probability within {tolerance} nats"
    return checked


def validate_and_rescore(
    paths: Sequence[str | os.PathLike],
    results_dir: str | os.PathLike | None = None,
    datasets_dir=None,
    rescore_models: bool = True,
    tolerance: float = RESCORE_TOLERANCE,
    options=None,
    log=None,
    models_folder=None,
) -> list[Checked]:
    """:func:`validate_files`, then, with ``rescore_models`` (the default), :func:`verify` every
    file that passed (``models_folder``: the maintainer's folder of local models,
    :func:`.spec_policy.models_folder`); without it every valid file stays unverified ("not
    re-scored").  Then the duplicate check, within the verified and within the unverified files
    (:mod:`.duplicates`; a file of ``results_dir`` that shares an identity is re-scored to know
    its group).  What ``contstim leaderboard validate``, ``add`` and ``build`` run.  ``log``
    receives one line per re-scored file (and, for the maintainer only, why one failed)."""
    from .duplicates import check_duplicates

    checked = validate_files(paths, datasets_dir=datasets_dir, duplicates=False)
    for c in checked:
        if not c.ok:
            continue
        if rescore_models:
            if log is not None:
                log(f"leaderboard: re-scoring {c.source} from {c.result['model']['spec']!r} ...")
            verify(c, datasets_dir, tolerance, options=options, models_folder=models_folder, log=log)
        else:
            c.verification = "unverified: re-scoring was skipped (`leaderboard validate --no-rescore`)"

    verified_file = file_verifier(datasets_dir, tolerance, options, models_folder, log) if rescore_models else None
    check_duplicates(checked, results_dir, verified_file)
    return checked


def file_verifier(datasets_dir=None, tolerance: float = RESCORE_TOLERANCE, options=None, models_folder=None,
                  log=None) -> Callable[[str], bool]:
    """A function telling whether a result file (one already in a results folder) is verified:
    checked and re-scored as :func:`verify` does, once per file."""
    from functools import cache

    from .validate import check_file

    @cache
    def verified_file(path: str) -> bool:
        return verify(check_file(path, datasets_dir), datasets_dir, tolerance, options=options,
                      models_folder=models_folder, log=log).verified

    return verified_file
