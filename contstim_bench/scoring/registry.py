"""The one way to build a scorer: :func:`load_scorer`, a model spec (:class:`~.spec.ModelSpec`
or its text) and the run's :class:`~.run_options.RunOptions`, whole.

Every command (``evaluate``, ``score``, ``generate``, ``blimp``, ``plausibility``, the
leaderboard's rescoring, ``experiment simulate``) loads its models here, and this is the one
place the options are applied (torch's threads, device, dtype, batch size, token budget, the
score cache as given); so a spec and an option mean the same everywhere: ``precomputed:NAME``
reads the datasets of ``datasets_dir``, a short name records both the typed and the canonical
spec, and options are checked before a model is loaded.  A family's factory receives the same
options, with the spec's own device and dtype merged in (:class:`~.base.LoadSettings`): adding
a run option is one field of ``RunOptions`` and its use in the families it applies to.

Factories are imported lazily (``module:function`` of :data:`~.spec.FAMILIES`), so asking
for an n-gram model never imports torch.  Each factory has the signature ``from_spec(target,
options, load) -> scorer``, ``load`` a :class:`~.base.LoadSettings`.  A factory module may define
``OPTION_KEYS`` (a set of accepted option names, or a dict ``kind -> set``); any other key is
rejected with an error naming it before the model is loaded.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import fields, replace
from pathlib import Path

from .base import LoadSettings
from .run_options import RunOptions
from .spec import FAMILIES, KNOWN_KINDS, ModelSpec, format_spec, parse_spec, short_names

__all__ = ["KNOWN_KINDS", "ModelSpec", "RunOptions", "format_spec", "load_scorer", "parse_spec", "short_names"]


def _factory(kind: str):
    module_name, _, func_name = FAMILIES[kind].factory.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise ValueError(
                f"model kind {kind!r} is not available in this installation "
                f"(module {module_name} is missing)"
            ) from None
        raise
    return module, getattr(module, func_name)


def _check_options(allowed, kind: str, options, spec: str) -> None:
    if isinstance(allowed, dict):
        allowed = allowed.get(kind)
    if allowed is None:
        return
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(map(repr, unknown))} for {kind} in model spec {spec!r}; "
            f"accepted: {', '.join(sorted(allowed)) or '(none)'}"
        )


def load_scorer(spec: "str | ModelSpec", options: RunOptions | None = None, *,
                datasets_dir: str | os.PathLike | None = None, **changes):
    """The scorer a model spec names (see :mod:`.spec` for the grammar), run as ``options`` say
    (:class:`~.run_options.RunOptions`, passed whole; ``changes``: fields of it replaced, as in
    ``load_scorer("smollm2-135m", cache=False)``).  torch's CPU threads are set
    (``options.threads``; None leaves them), ``device`` and ``dtype`` override the spec's own, the
    batch size and token budget apply, and the score cache is ``options.cache`` as given (a
    :class:`~.base.ScoreCache`, None for the default on-disk cache, False for none);
    ``datasets_dir``: the built datasets ``precomputed:`` reads.  The scorer's ``spec`` is the
    canonical form and ``spec_typed`` the text as given.  Errors: TypeError for a keyword that
    is no run option; ValueError for an unknown kind, short name or option; FileNotFoundError
    naming a missing model file or folder."""
    from .parallel import set_threads

    known = {f.name for f in fields(RunOptions)}
    if set(changes) - known:
        raise TypeError(f"load_scorer() got {', '.join(sorted(set(changes) - known))}: not a run option "
                        f"({', '.join(sorted(known))})")
    options = replace(options or RunOptions(), **changes)
    ms = ModelSpec.parse(spec, device=options.device, dtype=options.dtype)
    family = FAMILIES[ms.family]
    if family.path_target and not Path(ms.target).expanduser().exists():
        raise FileNotFoundError(f"model file or folder not found for {ms.family}: {ms.target} (spec {ms.typed!r})")
    module, factory = _factory(ms.family)
    _check_options(getattr(module, "OPTION_KEYS", None), ms.family, ms.options, ms.typed)
    if options.max_tokens_per_batch is not None and not family.token_budget:
        raise ValueError(f"a token budget per batch (max_tokens_per_batch) does not apply to {ms.family} models "
                         f"(spec {ms.typed!r}); they batch by a number of sentences (batch_size)")
    set_threads(options.threads)
    load = LoadSettings(kind=ms.family, options=replace(options, device=ms.device, dtype=ms.dtype),
                        datasets_dir=datasets_dir if family.uses_datasets else None)
    scorer = factory(ms.target, dict(ms.options), load)
    scorer.spec = ms.canonical
    scorer.spec_typed = ms.typed
    return scorer
