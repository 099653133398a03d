"""The models dataset of an experiment design (``OUTPUT/models``, written by ``contstim generate
design`` beside ``OUTPUT/design``, read by ``contstim experiment ingest``): a data format below
both (:mod:`contstim_bench.generate.design_models` finds the specs and scores the sentences).

- ``models``: one row per model named in the design's targeting columns: ``name``, ``spec`` and
  ``role`` (``candidate``/``reference`` of a ``--candidates``/``--references`` run, else null);
- ``logprobs``: one row per distinct sentence of the design (catch trials' shuffled sentences
  included), one float64 column per model: its natural-log probability, null where the model
  cannot score the sentence.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ..study import TARGET_COLUMNS

MODELS_DATASET = "models"


def design_model_names(design: pd.DataFrame) -> list[str]:
    """Model names in the design's targeting columns, in order of first appearance."""
    names: dict[str, None] = {}
    for row in design[list(TARGET_COLUMNS)].itertuples(index=False):
        for v in row:
            if isinstance(v, str) and v:
                names.setdefault(v)
    return list(names)


def design_sentences(design: pd.DataFrame) -> list[str]:
    """Distinct sentences of the design, in order of first appearance."""
    both = pd.concat([design["sentence1"], design["sentence2"]], ignore_index=True)
    return list(dict.fromkeys(both.tolist()))


def write_models_dataset(specs: dict[str, dict], logprobs: pd.DataFrame, output: Path) -> Path:
    """Write ``OUTPUT/models`` (configs ``models`` and ``logprobs``, split ``train``)."""
    from .writer import ConfigSpec, DatasetSpec, write_dataset

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
