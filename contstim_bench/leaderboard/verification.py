"""Verification of valid results: re-score each one's model spec here, through the one driver
(:func:`contstim_bench.driver.score_sentences`), and compare with its log-probabilities.

A file that passes every check of :mod:`.validate` is *valid*; it is *verified* only when its
``model.spec`` was loaded here and re-scored every sentence to within ``RESCORE_TOLERANCE`` nats
of the submitted log-probabilities.  A valid file whose re-scored log-probabilities differ is
refused; a valid file that could not be re-scored (its spec cannot be loaded here, it names an
unpinned Hub model, or re-scoring was skipped) is *unverified*, with the reason.  One file's
failure never stops the others.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace
from collections.abc import Sequence
from pathlib import Path

from .validate import RESCORE_TOLERANCE, Checked, validate_files

def rescore(result: dict, datasets_dir=None, tolerance: float = RESCORE_TOLERANCE, options=None) -> list[str]:
    """Re-score the submission's ``model.spec`` here and compare with its log-probabilities
    (problems when they differ; errors of loading or running the model propagate).

    It scores through the one driver (:func:`contstim_bench.driver.score_sentences`) the model
    named by the spec, with the result's ``model.dtype`` when it names one (the spec is parsed by
    :mod:`contstim_bench.scoring.spec`; nothing from the file is executed, and no scorer of the
    registry runs a model's own code), with the model options of ``options``
    (:class:`contstim_bench.driver.RunOptions`: device, threads, batch sizes; its dtype, when set,
    replaces the result's).  Scores come from the score cache when this model (same
    content fingerprint) scored them before.
    """
    from ..driver import RunOptions, score_sentences

    spec = result["model"]["spec"]
    dtype = result["model"].get("dtype")
    options = options or RunOptions()
    options = replace(options, progress=False, dtype=options.dtype or (dtype if isinstance(dtype, str) else None))
    sentences = list(result["logprobs"])
    values = score_sentences(spec, sentences, options, datasets_dir=datasets_dir, what="re-scoring")
    off = [(s, float(v)) for s, v in zip(sentences, values) if not abs(float(v) - result["logprobs"][s]) <= tolerance]
    if not off:
        return []
    s, v = off[0]
    return [
        f"re-scoring {spec!r} gives different log-probabilities for {len(off)} sentence(s) "
        f"(tolerance {tolerance}), e.g. {s!r}: submitted {result['logprobs'][s]!r}, re-scored {v!r}"
    ]


# a Hub repository id: "name" or "owner/name" (no leading "/", ".", "~"; no deeper path)
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def unpinned_hub_model(spec: str) -> str | None:
    """The Hub id of a ``hf-causal``/``hf-masked``/``prompt`` spec that names a Hub model without
    ``?revision=`` (None otherwise: a pinned revision, a local folder, an offline model shipped in a
    package, or another family).  Such a model can change under its name, so re-scoring it today
    proves nothing about the weights that produced a submission."""
    from ..scoring.offline import OFFLINE_MODELS
    from ..scoring.spec import ModelSpec

    try:
        ms = ModelSpec.parse(spec)
    except ValueError:
        return None
    if ms.family not in ("hf-causal", "hf-masked", "prompt") or ms.revision:
        return None
    target = ms.model_target
    if target in OFFLINE_MODELS or Path(target).expanduser().exists() or not _HUB_ID.fullmatch(target):
        return None  # a local folder (present or not) is not a Hub model: re-scoring says if it loads
    return target


def verify(checked: Checked, datasets_dir=None, tolerance: float = RESCORE_TOLERANCE, options=None) -> Checked:
    """Re-score one valid result from its model spec (:func:`rescore`) and record the outcome on
    ``checked``: verified when every log-probability matches; refused (a problem added) when one
    differs; unverified, with the reason, when the spec cannot be loaded or run here, or names a
    Hub model without ``?revision=`` (:func:`unpinned_hub_model`).  Never raises for a bad spec,
    so one file cannot stop a batch."""
    if not checked.ok:
        return checked
    spec = checked.result["model"]["spec"]
    hub_id = unpinned_hub_model(spec)
    if hub_id is not None:
        pinned = spec + ("&" if "?" in spec else "?") + "revision=<commit>"
        checked.verification = (f"unverified: the Hub model {hub_id!r} is not pinned to a revision; evaluate it with "
                                f"`contstim evaluate --model '{pinned}'` so that re-scoring loads the same weights")
        return checked
    try:
        problems = rescore(checked.result, datasets_dir, tolerance, options=options)
    except Exception as exc:  # noqa: BLE001 - whatever the spec does, the other files go on
        reason = str(exc).splitlines()[0] if str(exc) else ""
        reason = reason if len(reason) <= 300 else reason[:297] + "..."
        checked.verification = (f"unverified: its model spec {spec!r} could not be re-scored here "
                                f"({type(exc).__name__}: {reason})")
        return checked
    if problems:
        checked.problems += problems
        checked.verification = "refused: re-scoring gives different log-probabilities"
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
) -> list[Checked]:
    """:func:`validate_files`, then, with ``rescore_models`` (the default), :func:`verify` every
    file that passed; without it every valid file stays unverified ("not re-scored").  What
    ``contstim leaderboard validate`` and ``build`` run.  ``log`` receives one line per re-scored
    file."""
    checked = validate_files(paths, results_dir=results_dir, datasets_dir=datasets_dir)
    for c in checked:
        if not c.ok:
            continue
        if rescore_models:
            if log is not None:
                log(f"leaderboard: re-scoring {c.source} from {c.result['model']['spec']!r} ...")
            verify(c, datasets_dir, tolerance, options=options)
        else:
            c.verification = "unverified: re-scoring was skipped (`leaderboard validate --no-rescore`)"
    return checked
