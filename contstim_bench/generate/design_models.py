"""The models a design targets, and their log-probabilities of every sentence it shows.

``contstim generate design`` writes, beside the trial lists (``OUTPUT/design``), the dataset
``OUTPUT/models`` with two configs:

- ``models``: one row per model named in the design's targeting columns: ``name``, ``spec``
  (from the run that generated its pairs: ``models.json`` of ``generate natural``, the
  ``m1_spec``/``m2_spec`` columns of the triplets) and ``role`` (``candidate``/``reference`` of
  a ``--candidates``/``--references`` run, else null);
- ``logprobs``: one row per distinct sentence of the design (catch trials' shuffled sentences
  included), one float64 column per model: its natural-log probability, null where the model
  cannot score the sentence (a ``precomputed:`` model has values for known sentences only).

The dataset's layout, and reading it, belong to :mod:`contstim_bench.data.design_scores` (the
experiment reads it too); this module finds the specs and scores the sentences.  These are the
reference models of the benchmark round the design becomes (:mod:`contstim_bench.data.rounds`): a model evaluated on the round meets each of them, on
every condition whose sentences the reference can score.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..scoring.run_options import RunOptions


def collect_specs(natural: str | os.PathLike | None, triplets: pd.DataFrame | None,
                  triplets_source: str | os.PathLike | None = None) -> dict[str, dict]:
    """``{name: {"spec", "role"}}`` from the runs that generated the design's pairs.

    ``natural``: the output folder of ``generate natural`` (its ``models.json``); ``triplets``:
    the triplet rows (``m1_spec``/``m2_spec``); ``triplets_source``: their folder, whose
    ``run.json`` (a ``generate synthetic`` run) gives the roles.  ValueError when two runs give a
    name different specs.
    """
    from .natural_run import MODELS_FILE

    found: dict[str, dict] = {}

    def add(name: str, spec: str | None, role: str | None, where: str) -> None:
        old = found.get(name)
        if old is not None and spec and old["spec"] and old["spec"] != spec:
            raise ValueError(f"model {name!r} is {old['spec']!r} in {old['where']} but {spec!r} in {where}; "
                             f"a design's model names must mean one model")
        if old is None:
            found[name] = {"spec": spec, "role": role, "where": where}
        else:
            old["spec"] = old["spec"] or spec
            old["role"] = old["role"] or role

    if natural is not None:
        path = Path(natural) / MODELS_FILE
        if path.is_file():
            record = json.loads(path.read_text(encoding="utf-8"))
            for m in record.get("models", []):
                add(str(m["name"]), m.get("spec"), m.get("role"), str(path))
    if triplets is not None:
        roles = _synthetic_roles(triplets_source)
        for col in ("m1", "m2"):
            spec_col = f"{col}_spec"
            for name, spec in zip(triplets[col], triplets[spec_col] if spec_col in triplets.columns
                                  else [None] * len(triplets)):
                add(str(name), spec if isinstance(spec, str) else None, roles.get(str(name)), "the triplets")
    return {k: {"spec": v["spec"], "role": v["role"]} for k, v in found.items()}


def _synthetic_roles(source) -> dict[str, str]:
    if source is None:
        return {}
    path = Path(source) / "run.json"
    if not path.is_file():
        return {}
    pairing = json.loads(path.read_text(encoding="utf-8")).get("pairing") or {}
    return {**{n: "candidate" for n in pairing.get("candidates", [])},
            **{n: "reference" for n in pairing.get("references", [])}}


def score_sentences(sentences: Sequence[str], specs: dict[str, dict], *, datasets_dir=None,
                    options: RunOptions = RunOptions(progress=False),
                    log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """``sentence`` plus one float64 column per model with a spec: natural-log probabilities,
    NaN where a lookup model (``precomputed:``) has no value.  Models without a spec are left
    out; the others load as ``options`` say
    (:func:`~contstim_bench.scoring.registry.load_scorer`).  Under a launcher the sentences
    are split across the processes (:func:`contstim_bench.scoring.parallel.data_parallel`)."""
    from ..scoring.parallel import data_parallel
    from ..scoring.protocols import SentenceLookup
    from ..scoring.registry import load_scorer

    log = log or (lambda msg: print(msg, file=sys.stderr))
    sentences = list(sentences)
    frame = pd.DataFrame({"sentence": sentences})
    for name, info in specs.items():
        if not info.get("spec"):
            continue
        scorer = load_scorer(info["spec"], options, datasets_dir=datasets_dir)
        values = np.full(len(sentences), np.nan)
        have = (np.asarray(scorer.can_score(sentences), dtype=bool) if isinstance(scorer, SentenceLookup)
                else np.ones(len(sentences), dtype=bool))
        if have.any():
            with data_parallel():
                values[have] = np.asarray(scorer.score([s for s, h in zip(sentences, have) if h]), dtype=np.float64)
        frame[name] = values
        log(f"design: {name} scores {int(have.sum())} of {len(sentences)} sentences")
    return frame
