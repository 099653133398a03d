"""The one way to build a scorer: :func:`load_scorer` (a :class:`~.spec.ModelSpec` or its text,
and a :class:`ScoringContext`), reached with a run's options through :func:`load_with_options`.

Every command (``evaluate``, ``score``, ``generate``, ``blimp``, ``plausibility``, the
leaderboard's rescoring, ``experiment simulate``) loads its models through
:func:`load_with_options`, which takes the :class:`~.run_options.RunOptions` whole and is the one
place they are applied (torch's threads, device, dtype, batch size, token budget, the score cache
as given); so a spec and an option mean the same everywhere:
``precomputed:NAME`` reads the datasets of ``context.datasets_dir``, a short name records
both the typed and the canonical spec, and options are checked before a model is loaded.

Factories are imported lazily (``module:function`` of :data:`~.spec.FAMILIES`), so asking
for an n-gram model never imports torch.  Each factory has the signature ``from_spec(target,
options, load) -> scorer``, ``load`` a :class:`~.base.LoadSettings`.  A factory module may define
``OPTION_KEYS`` (a set of accepted option names, or a dict ``kind -> set``); any other key is
rejected with an error naming it before the model is loaded.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path

from .base import LoadSettings
from .run_options import RunOptions
from .spec import FAMILIES, KNOWN_KINDS, ModelSpec, format_spec, parse_spec, short_names

__all__ = ["KNOWN_KINDS", "ModelSpec", "ScoringContext", "format_spec", "load_scorer", "load_with_options", "parse_spec",
           "short_names"]


@dataclass(frozen=True)
class ScoringContext:
    """Where and how scorers run, shared by every model of one command.

    ``datasets_dir``: built datasets (for ``precomputed:``; None: the default folder).
    ``batch_size``: sentences per forward pass (None: the family's default).  ``cache``: a
    :class:`~contstim_bench.scoring.base.ScoreCache`, None for the default on-disk cache, False
    for none.  ``progress``: show progress bars.  ``max_tokens_per_batch``: padded tokens per
    forward pass (length-sorted batches under a token budget; families with ``token_budget``).
    """

    datasets_dir: str | os.PathLike | None = None
    batch_size: int | None = None
    cache: object = None
    progress: bool = True
    max_tokens_per_batch: int | None = None


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


def load_scorer(
    spec: "str | ModelSpec",
    context: ScoringContext | None = None,
    *,
    device=None,
    dtype=None,
    datasets_dir: str | os.PathLike | None = None,
    batch_size: int | None = None,
    cache=None,
    progress: bool | None = None,
    max_tokens_per_batch: int | None = None,
):
    """Build the scorer a model spec names (see :mod:`.spec` for the grammar).

    ``context`` holds the settings shared by a command's models; the keyword arguments override
    single fields of it (``load_scorer("smollm2-135m", cache=False)``).  ``device``/``dtype``
    override the spec's own.  The scorer's ``spec`` is the canonical form and ``spec_typed``
    the text as given.  Errors: ValueError for an unknown kind, short name or option,
    FileNotFoundError naming a missing model file or folder.
    """
    ctx = context or ScoringContext()
    ms = ModelSpec.parse(spec, device=device, dtype=dtype)
    family = FAMILIES[ms.family]
    if family.path_target and not Path(ms.target).expanduser().exists():
        raise FileNotFoundError(f"model file or folder not found for {ms.family}: {ms.target} (spec {ms.typed!r})")
    module, factory = _factory(ms.family)
    _check_options(getattr(module, "OPTION_KEYS", None), ms.family, ms.options, ms.typed)
    budget = max_tokens_per_batch if max_tokens_per_batch is not None else ctx.max_tokens_per_batch
    if budget is not None and not family.token_budget:
        raise ValueError(f"a token budget per batch (max_tokens_per_batch) does not apply to {ms.family} models "
                         f"(spec {ms.typed!r}); they batch by a number of sentences (batch_size)")
    load = LoadSettings(
        kind=ms.family, device=ms.device, dtype=ms.dtype,
        batch_size=batch_size if batch_size is not None else ctx.batch_size, max_tokens_per_batch=budget,
        cache=cache if cache is not None else ctx.cache, progress=ctx.progress if progress is None else progress,
        datasets_dir=(datasets_dir if datasets_dir is not None else ctx.datasets_dir) if family.uses_datasets else None,
    )
    scorer = factory(ms.target, dict(ms.options), load)
    scorer.spec = ms.canonical
    scorer.spec_typed = ms.typed
    return scorer


def load_with_options(spec: "str | ModelSpec", options: RunOptions = RunOptions(), *,
                      datasets_dir: str | os.PathLike | None = None):
    """The scorer of ``spec`` run as ``options`` say (:class:`~.run_options.RunOptions`, passed
    whole): the one place a run's options reach a model.  torch's CPU threads are set
    (``options.threads``; None leaves them), ``device`` and ``dtype`` override the spec's, the
    batch size and token budget apply, and the score cache is ``options.cache`` as given (a
    :class:`~.base.ScoreCache`, None for the default on-disk cache, False for none).  Every door
    and every run of generation and simulation loads its models through here."""
    from .parallel import set_threads

    set_threads(options.threads)
    context = ScoringContext(datasets_dir=datasets_dir, batch_size=options.batch_size, cache=options.cache,
                             progress=options.progress, max_tokens_per_batch=options.max_tokens_per_batch)
    return load_scorer(spec, context, device=options.device, dtype=options.dtype)
