"""Lists of named model specs, as the commands that take several models read them.

``SPEC,SPEC,...`` or ``NAME=SPEC,...`` (``smollm2=smollm2-135m,trigram=kenlm:lm.arpa``).  A model
without a name is called by its spec, except ``precomputed:NAME``, which is called ``NAME`` (the
reference model it is), so that its trial selections and the reference models of the results
line up.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..names import check_name
from .spec import ModelSpec, split_named


@dataclass(frozen=True)
class NamedSpec:
    """A model of a command: its display name and its spec (as typed)."""

    name: str
    spec: str


def default_name(spec: str) -> str:
    """``NAME`` for ``precomputed:NAME``, else the spec as typed."""
    ms = ModelSpec.parse(spec)
    return ms.target if ms.family == "precomputed" else spec.strip()


def parse_named_specs(text: str | Sequence[str], *, minimum: int = 1, flag: str = "--models",
                      purpose: str = "") -> list[NamedSpec]:
    """``SPEC,SPEC,...`` or ``NAME=SPEC,...`` (or a list of such items) -> named specs.

    ValueError for an empty entry, fewer than ``minimum`` models (``purpose`` says why they are
    needed), a name given twice or one with a control or invisible format character.  Specs are
    parsed here, so a malformed one fails early.
    """
    items = [x.strip() for x in (text.split(",") if isinstance(text, str) else text)]
    out: list[NamedSpec] = []
    for i, item in enumerate(items):
        if not item:
            raise ValueError(f"{flag} entry {i + 1} is empty (use SPEC,SPEC or NAME=SPEC,NAME=SPEC)")
        name, spec = split_named(item)
        out.append(NamedSpec(check_name(name, f"model name in {flag}"), spec) if name is not None
                   else NamedSpec(default_name(item), item))
    if len(out) < minimum:
        raise ValueError(f"{flag} needs at least {minimum} model(s){' ' + purpose if purpose else ''}, got {len(out)}")
    names = [m.name for m in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"model name(s) {dup} given twice in {flag}")
    return out
