"""A round of the contstim benchmark (``contstim.<round>``), as a benchmark: identifier, version,
``load()``, ``sentences()``, ``evaluate(scorer)`` and the recomputation a leaderboard needs.

A round (:mod:`contstim_bench.data.rounds`) is evaluated like the paper's experiments, with the
same result layout (:mod:`contstim_bench.results.schema`): its ``experiments`` and ``panels``
sections are keyed by the round's name, ``benchmark`` carries the round's identifier, version
and fingerprint (``dataset_fingerprint``) and a ``round`` block (name, date, source database
sha256).  Its reference models are the models the round targeted, with the log-probabilities
recorded when the round was designed; each takes part in the conditions whose sentences it can
all score (:mod:`contstim_bench.analysis.partial_references`).  Head-to-head comparisons use the
trials that target both compared models (:func:`contstim_bench.analysis.head_to_head.pair_selection`
on the round's targeting columns).

A round made from a plan of ``contstim round plan`` is checked against it
(:mod:`.round_plan_check`): the result's ``plan_check`` says, for each planned hypothesis, what the
round's data show, and lists the departures from the plan.

Naming: a model evaluated on a round is named like the targeted model whose spec it has (so the
round's candidate, re-evaluated, is scored on the trials that target it, as a reference model is
in the paper's experiments), ``NAME`` for ``precomputed:NAME``, and by its spec otherwise.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..analysis.accuracy import DEFAULT_TIES, tie_value
from ..analysis.evaluation import unique_sentences
from ..analysis.partial_references import evaluate_with_partial_references
from ..data.rounds import RoundData, find_round, load_round
from ..scoring.protocols import LogProbScorer, require_logprobs
from .base import contstim_result, no_method
from .round_plan_check import plan_check

DATASET = "contstim"


def round_block(data: RoundData) -> dict:
    """The ``benchmark.round`` block of a result: what identifies the round's data."""
    meta = data.meta
    return {"name": meta["name"], "date": meta.get("date"), "source_db_sha256": meta.get("source_db_sha256"),
            "models": [m.get("name") for m in meta.get("models", [])]}


def model_name_on_round(scorer, data: RoundData, name: str | None = None) -> str:
    """The name a scorer is evaluated under on a round (see the module docstring)."""
    from ..scoring.precomputed import PrecomputedScorer

    from ..scoring.spec import ModelSpec

    if name:
        return name
    for model, spec in data.model_specs().items():
        if spec is not None and ModelSpec.parse(spec).canonical == scorer.spec:
            return model
    return scorer.name if isinstance(scorer, PrecomputedScorer) else scorer.spec


def evaluate_round(scorer, data: RoundData, *, name: str | None = None, log: Callable[[str], None] | None = None,
                   ties: str = DEFAULT_TIES) -> dict:
    """Score every sentence of the round with ``scorer`` and build the result dict."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    tie_value(ties)
    if not isinstance(scorer, LogProbScorer):
        require_logprobs(scorer, "a contstim round")
    model_name = model_name_on_round(scorer, data, name)
    if not isinstance(model_name, str) or not model_name.strip():
        raise ValueError(f"model name must be a non-empty string, got {model_name!r}")
    sentences = unique_sentences(data.trials)
    log(f"{data.identifier}: scoring {len(sentences)} sentences with {scorer.spec} ...")
    n_before = scorer.n_model_sentences
    started = time.perf_counter()
    values = scorer.score(sentences)
    seconds = time.perf_counter() - started
    lp = dict(zip(sentences, (float(v) for v in values)))
    refs = data.reference_logprobs()
    checked = plan_check(data.meta, data.trials, refs)
    refs.pop(model_name, None)
    entries, panels = evaluate_with_partial_references(data.trials, lp, model_name, refs, ties=ties)
    result = contstim_result(
        scorer, model_name, fingerprint=data.meta["fingerprint"], ties=ties,
        benchmark={"identifier": data.identifier, "version": data.meta["version"], "round": round_block(data)},
        experiments={data.name: entries}, panels={data.name: panels}, logprobs=lp,
        n_model=scorer.n_model_sentences - n_before, seconds=seconds)
    if checked is not None:
        result["plan_check"] = checked
    return result


def recompute_round_sections(result: dict, name: str, datasets_dir: str | os.PathLike | None = None
                             ) -> tuple[dict, dict]:
    """(entries, panels) of round ``name`` recomputed from ``result["logprobs"]`` and the round's
    data found in ``datasets_dir``."""
    data = load_round(find_round(name, datasets_dir))
    refs = data.reference_logprobs()
    model_name = result["model"]["name"]
    refs.pop(model_name, None)
    lp = {s: result["logprobs"][s] for s in unique_sentences(data.trials) if s in result["logprobs"]}
    ties = result.get("analysis", {}).get("ties", DEFAULT_TIES)
    return evaluate_with_partial_references(data.trials, lp, model_name, refs, ties=ties)


@dataclass(frozen=True)
class ContstimRound:
    """One round found in a datasets folder (:func:`contstim_bench.data.rounds.discover_rounds`)."""

    identifier: str
    version: str
    folder: Path
    description: str = ""
    dataset: str = DATASET

    @classmethod
    def from_folder(cls, folder: str | os.PathLike) -> "ContstimRound":
        from ..data.rounds import read_meta

        meta = read_meta(folder)
        models = ", ".join(m.get("name", "?") for m in meta.get("models", [])) or "no model recorded"
        n = meta.get("participants", {}).get("included", "?")
        return cls(meta["identifier"], meta["version"], Path(folder),
                   f"round {meta['name']} (v{meta['version']}, {meta.get('date', '?')[:10]}): {n} participants, "
                   f"targeting {models}")

    def data(self) -> RoundData:
        return load_round(self.folder)

    def load(self, datasets_dir=None):
        """(trials, {targeted model: {sentence: log-prob}}) of the round."""
        data = self.data()
        return data.trials, data.reference_logprobs()

    def sentences(self, datasets_dir=None) -> list[str]:
        return unique_sentences(self.data().trials)

    def spec_for(self, spec, method: str | None):
        return no_method(spec, method, self.identifier)

    def evaluate(self, scorer, *, datasets_dir=None, log=None, name=None, ties=DEFAULT_TIES, **options) -> dict:
        if options:
            raise ValueError(f"{self.identifier} takes no option(s) {sorted(options)}")
        return evaluate_round(scorer, self.data(), name=name, log=log, ties=ties)
