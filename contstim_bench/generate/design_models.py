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

These are the reference models of the benchmark round the design becomes
(:mod:`contstim_bench.experiment.rounds`): a model evaluated on the round meets each of them, on
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
import pyarrow as pa

MODELS_DATASET = "models"
TARGET_COLUMNS = ("sentence1_accept_model", "sentence1_reject_model", "sentence2_accept_model",
                  "sentence2_reject_model")


def design_model_names(design: pd.DataFrame) -> list[str]:
    """Model names in the design's targeting columns, in order of first appearance."""
    names: dict[str, None] = {}
    for row in design[list(TARGET_COLUMNS)].itertuples(index=False):
        for v in row:
            if isinstance(v, str) and v:
                names.setdefault(v)
    return list(names)


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


def design_sentences(design: pd.DataFrame) -> list[str]:
    """Distinct sentences of the design, in order of first appearance."""
    both = pd.concat([design["sentence1"], design["sentence2"]], ignore_index=True)
    return list(dict.fromkeys(both.tolist()))


def score_sentences(sentences: Sequence[str], specs: dict[str, dict], *, datasets_dir=None, device=None,
                    dtype=None, batch_size: int | None = None, max_tokens_per_batch: int | None = None,
                    use_cache: bool = True, progress: bool = False,
                    log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """``sentence`` plus one float64 column per model with a spec: natural-log probabilities,
    NaN where a lookup model (``precomputed:``) has no value.  Models without a spec are left
    out.  Under a launcher the sentences are split across the processes
    (:func:`contstim_bench.scoring.parallel.data_parallel`)."""
    from ..scoring.base import ScoreCache
    from ..scoring.protocols import SentenceLookup
    from ..scoring.registry import ScoringContext, load_scorer

    log = log or (lambda msg: print(msg, file=sys.stderr))
    from ..scoring.parallel import data_parallel

    context = ScoringContext(datasets_dir=datasets_dir, batch_size=batch_size, max_tokens_per_batch=max_tokens_per_batch,
                             cache=ScoreCache() if use_cache else False, progress=progress)
    sentences = list(sentences)
    frame = pd.DataFrame({"sentence": sentences})
    for name, info in specs.items():
        if not info.get("spec"):
            continue
        scorer = load_scorer(info["spec"], context, device=device, dtype=dtype)
        values = np.full(len(sentences), np.nan)
        have = (np.asarray(scorer.can_score(sentences), dtype=bool) if isinstance(scorer, SentenceLookup)
                else np.ones(len(sentences), dtype=bool))
        if have.any():
            with data_parallel():
                values[have] = np.asarray(scorer.score([s for s, h in zip(sentences, have) if h]), dtype=np.float64)
        frame[name] = values
        log(f"design: {name} scores {int(have.sum())} of {len(sentences)} sentences")
    return frame


def write_models_dataset(specs: dict[str, dict], logprobs: pd.DataFrame, output: Path) -> Path:
    """Write ``OUTPUT/models`` (configs ``models`` and ``logprobs``, split ``train``)."""
    from contstim_bench.data.writer import ConfigSpec, DatasetSpec, write_dataset

    from ..citations import GOLAN_2023

    models = pa.table({"name": list(specs), "spec": [specs[n]["spec"] for n in specs],
                       "role": [specs[n]["role"] for n in specs]},
                      schema=pa.schema([("name", pa.string()), ("spec", pa.string()), ("role", pa.string())]))
    fields = [("sentence", pa.string())] + [(c, pa.float64()) for c in logprobs.columns if c != "sentence"]
    table = pa.Table.from_pandas(logprobs, schema=pa.schema(fields), preserve_index=False)
    docs = {"sentence": "A sentence the design shows (catch trials' shuffled sentences included)."}
    docs.update({c: f"Natural-log probability under {c} ({specs[c]['spec']}); null where it cannot score the "
                    f"sentence." for c in logprobs.columns if c != "sentence"})
    spec = DatasetSpec(
        name=MODELS_DATASET, pretty_name="Models targeted by an experiment design", license="other",
        description="Written by `contstim generate design`: the models named in the design's targeting columns "
                    "and their log-probabilities of every sentence of the design.",
        citation=GOLAN_2023, sources=[str(specs[n]["spec"]) for n in specs if specs[n]["spec"]],
        configs=[
            ConfigSpec("models", {"train": models}, "One row per targeted model.",
                       {"name": "Model name as in the targeting columns.", "spec": "Model spec (null if unknown).",
                        "role": "candidate or reference (null when every pair was contrasted)."}),
            ConfigSpec("logprobs", {"train": table}, "One row per distinct sentence of the design.", docs),
        ])
    return write_dataset(spec, output)


def read_models_dataset(folder: str | os.PathLike) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(models, logprobs) of a ``generate design`` output folder (or its ``models`` dataset).
    FileNotFoundError names the missing table."""
    root = Path(folder)
    base = root / MODELS_DATASET if (root / MODELS_DATASET / "models").is_dir() else root
    paths = [base / "models" / "train.parquet", base / "logprobs" / "train.parquet"]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"{p} is missing: {folder} is not the output of `contstim generate design` "
                                    f"(it writes OUTPUT/{MODELS_DATASET} beside OUTPUT/design)")
    return pd.read_parquet(paths[0]), pd.read_parquet(paths[1])
