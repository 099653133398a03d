"""The generated triplet table: its columns (:data:`OUTPUT_COLUMNS`, the published triplet
columns plus the search's own), the frame of job rows (:func:`triplets_frame`), the dataset
``OUTPUT/triplets`` it is written as (:func:`write_triplets_dataset`) and read back from, like the
published triplets (:func:`read_triplets`).  Written by ``contstim generate synthetic`` and
``select``, read by ``select`` and ``design``."""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ..citations import GOLAN_2023
from .triplet_select import TRIPLET_COLUMNS, controversiality

RUN_FILE = "run.json"
"""The run record of a synthesis output folder (written by :mod:`.synthetic_run`)."""

OUTPUT_COLUMNS = (
    *TRIPLET_COLUMNS,
    "N_idx",
    "loss_S1_vs_N",
    "loss_S2_vs_N",
    "controversiality",
    "m1_spec",
    "m2_spec",
    "steps_S1",
    "replacements_S1",
    "steps_S2",
    "replacements_S2",
    "seed",
)
"""Columns of a generated triplet table: the published triplet columns, then ``N_idx`` (pool
line of N), the losses ``lp_S1_given_m2 - lp_N_given_m2`` and ``lp_S2_given_m1 -
lp_N_given_m1`` (nats, as published), Eq. 4 controversiality (nats), the model specs, the
number of position attempts and accepted replacements of each search, and the job seed."""


def triplets_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """The triplet table (:data:`OUTPUT_COLUMNS`, in order) of job rows, with stable dtypes."""
    frame = pd.DataFrame(list(rows), columns=list(OUTPUT_COLUMNS))
    for col in TRIPLET_COLUMNS[5:] + ("loss_S1_vs_N", "loss_S2_vs_N", "controversiality"):
        frame[col] = frame[col].astype(np.float64)
    for col in ("N_idx", "steps_S1", "replacements_S1", "steps_S2", "replacements_S2", "seed"):
        frame[col] = frame[col].astype(np.int64)
    for col in ("m1", "m2", "N", "S1", "S2", "m1_spec", "m2_spec"):
        frame[col] = frame[col].astype(object)
    return frame


TRIPLETS_DATASET = "triplets"
"""Folder name (dataset name) of a triplet table written by ``contstim generate synthetic`` /
``select`` inside their output folder; its config is ``synthetic_triplets``."""


def read_triplets(source: str | os.PathLike, split: str | None = None,
                  datasets_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """Load published or generated triplets alike, with Eq. 4 ``controversiality`` added when
    absent.

    ``source``: ``"contstim:main"`` / ``"contstim:pll"`` (the published triplets of the built
    contstim dataset), the output folder of ``contstim generate synthetic``/``select``, a
    triplet dataset folder (``.../triplets``), or a parquet file.  ``split``: which split of a
    dataset folder (default ``train``).  ValueError when the table lacks a triplet column.
    """
    text = str(source)
    if text.startswith("contstim:") and not Path(text).exists():
        from contstim_bench.data.load import dataset_folder

        exp = text.split(":", 1)[1] or "main"
        path = dataset_folder("contstim", datasets_dir) / "synthetic_triplets" / f"{exp}.parquet"
        if not path.is_file():
            raise FileNotFoundError(f"the contstim dataset has no synthetic_triplets split {exp!r} ({path})")
    else:
        path = Path(source).expanduser()
        if path.is_dir():
            for folder in (path / TRIPLETS_DATASET / "synthetic_triplets", path / "synthetic_triplets"):
                if folder.is_dir():
                    path = folder / f"{split or 'train'}.parquet"
                    break
            else:
                raise FileNotFoundError(f"{source}: no triplet table (expected {TRIPLETS_DATASET}/synthetic_triplets/ "
                                        f"as written by `contstim generate synthetic` or `select`)")
        if not path.is_file():
            raise FileNotFoundError(f"triplet table not found: {path}")
    from contstim_bench.data.verify import verify_parquet

    frame = pd.read_parquet(verify_parquet(path))  # a generated dataset is checked like a built one
    missing = [c for c in TRIPLET_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: not a triplet table, missing column(s) {missing}")
    if "controversiality" not in frame.columns:
        frame["controversiality"] = controversiality(frame)
    return frame


TRIPLET_COLUMN_DOCS = {
    "m1": "Model name (one of the run's models) targeted to accept S1 and reject S2.",
    "m2": "Model name targeted to accept S2 and reject S1.",
    "N": "Natural start sentence.",
    "S1": "Synthetic sentence: log p(S1|m1) >= log p(N|m1), log p(S1|m2) minimised (Eq. 2).",
    "S2": "Synthetic sentence: log p(S2|m2) >= log p(N|m2), log p(S2|m1) minimised (Eq. 2).",
    "lp_N_given_m1": "Natural-log probability of N under m1.",
    "lp_S1_given_m1": "Natural-log probability of S1 under m1.",
    "lp_N_given_m2": "Natural-log probability of N under m2.",
    "lp_S1_given_m2": "Natural-log probability of S1 under m2.",
    "lp_S2_given_m1": "Natural-log probability of S2 under m1.",
    "lp_S2_given_m2": "Natural-log probability of S2 under m2.",
    "N_idx": "Line of N in the natural-sentence pool (0-based).",
    "loss_S1_vs_N": "lp_S1_given_m2 - lp_N_given_m2 (nats; 0 when the search found no replacement).",
    "loss_S2_vs_N": "lp_S2_given_m1 - lp_N_given_m1 (nats).",
    "controversiality": "Eq. 4: (lp_N_given_m2 - lp_S1_given_m2) + (lp_N_given_m1 - lp_S2_given_m1), nats.",
    "m1_spec": "Model spec of m1.",
    "m2_spec": "Model spec of m2.",
    "steps_S1": "Word positions tried in the search for S1.",
    "replacements_S1": "Accepted word replacements in the search for S1.",
    "steps_S2": "Word positions tried in the search for S2.",
    "replacements_S2": "Accepted word replacements in the search for S2.",
    "seed": "The job's seed (derived from --seed and the job key).",
}
assert tuple(TRIPLET_COLUMN_DOCS) == OUTPUT_COLUMNS


def triplets_table(frame) -> pa.Table:
    """Arrow table of a generated triplet frame with a fixed schema."""
    types = {c: pa.string() for c in ("m1", "m2", "N", "S1", "S2", "m1_spec", "m2_spec")}
    types.update({c: pa.int64() for c in ("N_idx", "steps_S1", "replacements_S1", "steps_S2", "replacements_S2", "seed")})
    schema = pa.schema([(c, types.get(c, pa.float64())) for c in OUTPUT_COLUMNS])
    return pa.Table.from_pandas(frame[list(OUTPUT_COLUMNS)], schema=schema, preserve_index=False)


def write_triplets_dataset(frame, output: Path, record: dict, extra_configs=None, description: str = "") -> Path:
    """Write ``frame`` as the dataset ``OUTPUT/triplets`` (config ``synthetic_triplets``, split
    ``train``) with :mod:`contstim_bench.data.writer`; returns the dataset folder."""
    from contstim_bench.data.writer import ConfigSpec, DatasetSpec, write_dataset

    fps = record.get("model_fingerprints", {})
    models = ", ".join(f"`{m['name']}` = `{m['spec']}`" + (f" (content fingerprint {fps[m['name']][:16]})"
                                                          if m["name"] in fps else "")
                       for m in record.get("models", []))
    config = ConfigSpec(
        "synthetic_triplets", {"train": triplets_table(frame)},
        "Synthetic controversial triplets (Golan et al. 2023, Eq. 2), one row per model pair x start "
        "sentence, in the column layout of the published triplet files plus Eq. 4 controversiality.",
        TRIPLET_COLUMN_DOCS)
    spec = DatasetSpec(
        name=TRIPLETS_DATASET,
        pretty_name="Generated synthetic controversial sentence triplets",
        license="other",
        description=description or (f"Written by `contstim generate synthetic`. Models: {models}. Seed "
                                    f"{record.get('seed')}; search settings {json.dumps(record.get('settings'))}."),
        citation=GOLAN_2023,
        sources=[f"run record: {RUN_FILE} (pool {record.get('pool')}, vocabulary {record.get('vocabulary')})"],
        configs=[config, *(extra_configs or [])],
    )
    return write_dataset(spec, output)


@dataclass(frozen=True)
class PairSummary:
    """One model pair of a synthesis run: its ``triplets``, how many satisfy the Eq. 2 constraint
    (each synthetic sentence at least as probable as N under the model meant to accept it), and
    how many searches found no replacement at all, leaving S1 = N (search accepted by m1) or
    S2 = N (accepted by m2): a model that must accept its sentence and never moves is one that
    has seen N in training, or one whose sweep found nothing better."""

    m1: str
    m2: str
    triplets: int
    constraint_holds: int
    s1_equals_n: int
    s2_equals_n: int

    def line(self) -> str:
        """One line of the run summary."""
        def share(k: int) -> str:
            return f"{k} ({100 * k / self.triplets:.0f}%)" if self.triplets else "0"
        return (f"{self.m1} vs {self.m2}: {self.triplets} triplets; S1 = N in {share(self.s1_equals_n)}, "
                f"S2 = N in {share(self.s2_equals_n)}; constraint holds in {self.constraint_holds}")


def pair_summaries(frame) -> list[PairSummary]:
    """:class:`PairSummary` of every model pair of a triplet table, in table order."""
    out = []
    for (m1, m2), rows in frame.groupby(["m1", "m2"], sort=False):
        ok = (rows["lp_S1_given_m1"] >= rows["lp_N_given_m1"]) & (rows["lp_S2_given_m2"] >= rows["lp_N_given_m2"])
        out.append(PairSummary(str(m1), str(m2), len(rows), int(ok.sum()), int((rows["S1"] == rows["N"]).sum()),
                               int((rows["S2"] == rows["N"]).sum())))
    return out
