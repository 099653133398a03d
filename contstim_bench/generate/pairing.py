"""Which model pairs a generation run contrasts: every pair of ``--models``, or each of
``--candidates`` against each of ``--references``.

The paper contrasts every pair of its nine models.  A new model is better tested the way a new
benchmark round needs it (Golan et al. 2023, Discussion; Dynabench's rounds): its sentences pitted
against those of the strongest existing models, in both directions (for a synthetic triplet, S1 is
accepted by the candidate and rejected by the reference and S2 the reverse; for natural pairs,
both members), and no time spent contrasting the references with each other.

:func:`pairing` resolves the flags into the run's models (candidates first, then references) and
the index pairs ``(i, j)``, ``i < j``, it contrasts.  :func:`check_can_synthesize` refuses a model
that can only look up stored values (``precomputed:``) for the synthetic search.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ..names import MAX_TEXT_LENGTH, check_name
from ..scoring.spec import split_named

ROLES = ("candidate", "reference")


@dataclass(frozen=True)
class ModelEntry:
    """A model of the run: its display name (``m1``/``m2`` in the output) and its spec."""

    name: str
    spec: str


def parse_models(text: str | Sequence[str], minimum: int = 2, flag: str = "--models") -> list[ModelEntry]:
    """``SPEC,SPEC,...`` or ``NAME=SPEC,...`` -> model entries (name defaults to the spec).

    ValueError for fewer than ``minimum`` models, an empty entry, a repeated name or one with a
    control or invisible format character (``flag`` names the option in the messages).
    """
    items = [x.strip() for x in (text.split(",") if isinstance(text, str) else text)]
    out: list[ModelEntry] = []
    for i, item in enumerate(items):
        if not item:
            raise ValueError(f"{flag} entry {i + 1} is empty (use SPEC,SPEC or NAME=SPEC,NAME=SPEC)")
        name, spec = split_named(item)
        out.append(ModelEntry(check_name(name, f"model name in {flag}"), spec) if name is not None
                   else ModelEntry(check_name(item, f"model spec in {flag}", MAX_TEXT_LENGTH), item))
    if len(out) < minimum:
        want = "two models" if minimum == 2 else f"{minimum} model(s) in {flag}"
        raise ValueError(f"need at least {want} to synthesise controversial pairs, got {len(out)}")
    names = [m.name for m in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"model name(s) {dup} given twice in {flag}")
    return out



@dataclass(frozen=True)
class Pairing:
    """The models of a run and the pairs it contrasts.

    ``models``: candidates first, then references (or the ``--models`` in their order);
    ``pairs``: index pairs ``(i, j)`` into ``models``, ``i < j``, in job order; ``roles``: model
    name -> ``"candidate"`` / ``"reference"`` (empty for ``--models``, where every pair is
    contrasted)."""

    models: list[ModelEntry]
    pairs: list[tuple[int, int]]
    roles: dict[str, str]

    @property
    def explicit(self) -> bool:
        """True for candidates vs references, False for every pair of ``--models``."""
        return bool(self.roles)

    def record(self) -> dict:
        """What a run record stores about the pairing (``{}`` for every pair of ``--models``)."""
        if not self.explicit:
            return {}
        return {"pairing": {
            "candidates": [m.name for m in self.models if self.roles[m.name] == "candidate"],
            "references": [m.name for m in self.models if self.roles[m.name] == "reference"],
            "pairs": [[self.models[i].name, self.models[j].name] for i, j in self.pairs],
        }}

    def name_pairs(self) -> list[tuple[str, str]]:
        """The contrasted pairs as model names."""
        return [(self.models[i].name, self.models[j].name) for i, j in self.pairs]


def _entries(text: str | Sequence[str], flag: str) -> list[ModelEntry]:
    return parse_models(text, minimum=1, flag=flag)


def pairing(models: str | Sequence[str] | None = None, *, candidates: str | Sequence[str] | None = None,
            references: str | Sequence[str] | None = None) -> Pairing:
    """The models and pairs of a run: ``models`` (every pair) or ``candidates`` x ``references``.

    Specs are ``SPEC`` or ``NAME=SPEC`` (:func:`parse_models`).  ValueError when both
    or neither form is given, a list is empty, or a name is given twice (a model cannot be both a
    candidate and a reference).
    """
    if models is not None and (candidates is not None or references is not None):
        raise ValueError("`contstim generate synthetic` and `natural` take either --models (every pair) or --candidates with "
                         "--references, not both")
    if models is not None:
        entries = parse_models(models)
        return Pairing(entries, list(itertools.combinations(range(len(entries)), 2)), {})
    if candidates is None or references is None:
        raise ValueError("`contstim generate synthetic` and `natural` need --models SPEC,SPEC,... (every pair), or "
                         "--candidates SPEC[,SPEC] together with --references SPEC,SPEC,... (each candidate against "
                         "each reference)")
    cands = _entries(candidates, "--candidates")
    refs = _entries(references, "--references")
    names = [m.name for m in cands + refs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"`contstim generate synthetic`/`natural`: model name(s) {dup} given twice in "
                         f"--candidates/--references (a model is either a candidate or a reference; rename one "
                         f"with NAME=SPEC)")
    entries = cands + refs
    pairs = [(i, len(cands) + j) for i in range(len(cands)) for j in range(len(refs))]
    roles = {m.name: "candidate" for m in cands} | {m.name: "reference" for m in refs}
    return Pairing(entries, pairs, roles)


def check_can_synthesize(models: Sequence[ModelEntry]) -> None:
    """ValueError naming every model that cannot score new sentences (``precomputed:``): the
    synthetic search scores every candidate replacement, sentences nobody scored before."""
    from ..scoring.spec import ModelSpec

    bad = [m for m in models if not ModelSpec.parse(m.spec).family_info.scores_any_sentence]
    if bad:
        listed = ", ".join(f"{m.name} ({m.spec})" for m in bad)
        raise ValueError(
            f"the synthetic search needs models that can score new sentences; {listed} only look(s) up "
            f"stored log-probabilities of existing sentences. Use it in `contstim generate natural` (natural "
            f"pairs from a pool it covers, with --restrict-to-scorable), and give the synthetic search a model "
            f"that scores any sentence (hf-causal:, hf-masked:, kenlm:, rnn:, lstm:)")
