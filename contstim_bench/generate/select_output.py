"""Datasets written by ``contstim generate select`` and ``contstim generate natural``.

``select`` writes ``OUTPUT/triplets`` (config ``synthetic_triplets``: split ``train`` = the
selected triplets, split ``candidates`` = every input triplet with the selection columns), so
that :func:`contstim_bench.generate.triplet_table.read_triplets` reads it like a synthesis run.
``natural`` writes ``OUTPUT/natural`` (config ``natural_controversial_pairs``, split ``train``,
the columns of :data:`contstim_bench.generate.natural_ilp.PAIR_COLUMNS`; config
``pool_scores``: every pool sentence with each model's natural-log probability).
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ..citations import GOLAN_2023
from .natural_ilp import PAIR_COLUMNS
from .triplet_table import TRIPLET_COLUMN_DOCS, TRIPLETS_DATASET, read_triplets
from .triplet_select import TripletSelection, select_triplets

NATURAL_DATASET = "natural"

SELECTION_DOCS = {
    "loss_rank1": "Rank of loss_S1_vs_N among the model pair's candidates (ascending, average ranks).",
    "loss_rank2": "Rank of loss_S2_vs_N among the model pair's candidates.",
    "worst_rank_of_two": "max(loss_rank1, loss_rank2): upstream's selection utility.",
    "p_N_given_m1_decile": "Bin (0 = least probable) of lp_N_given_m1 among the pair's candidates.",
    "p_N_given_m2_decile": "Bin (0 = least probable) of lp_N_given_m2 among the pair's candidates.",
    "eligible": "True when S1 and S2 both keep the contrast (the four Eq. 2 inequalities).",
    "ineligible_reason": "Why the triplet cannot be chosen: empty (it can), 'S = N' (the search left S1 or S2 "
                         "equal to N) or 'constraint failed' (S1/S2 changed but the contrast does not hold).",
    "selected_for_human_testing": "True for the triplets chosen by the selection ILP.",
    "selected": "Published flag of the upstream selection (carried over from the input).",
}

BIN_DOCS = {
    "m1": "Model m1 of the pair.",
    "m2": "Model m2 of the pair.",
    "side": "Whose natural-sentence log-probability bins the row counts: m1 or m2.",
    "model": "The model of that side.",
    "bin": "Bin of that model's natural-sentence log-probabilities (0 = least probable).",
    "triplets": "Candidate triplets of the pair whose N falls in the bin.",
    "eligible": "Of these, the triplets that can be chosen (the contrast holds).",
    "unchanged": "Of these, the triplets whose S1 or S2 equals N (the search left the sentence unchanged).",
    "constraint_failed": "Of these, the triplets whose S1/S2 changed but do not keep the contrast.",
    "needed": "Triplets per bin the selection asked for (per_pair / bins).",
    "selected": "Triplets chosen in the bin (fewer than needed only with `generate select --fill`).",
}

NATURAL_DOCS = {
    "model_1": "Model that should find sentence1 improbable (and sentence2 probable).",
    "model_2": "Model that should find sentence2 improbable (and sentence1 probable).",
    "sentence1": "Natural sentence accepted by model_2 (rank >= 0.5) and rejected by model_1.",
    "sentence2": "Natural sentence accepted by model_1 and rejected by model_2.",
    "sentence1_index": "Index of sentence1 in the de-duplicated pool (config pool_scores).",
    "sentence2_index": "Index of sentence2 in the de-duplicated pool.",
    "s1_ranked_log_prob_model_1": "Fractional rank of sentence1 under model_1 (1 = most probable).",
    "s1_ranked_log_prob_model_2": "Fractional rank of sentence1 under model_2.",
    "s2_ranked_log_prob_model_1": "Fractional rank of sentence2 under model_1.",
    "s2_ranked_log_prob_model_2": "Fractional rank of sentence2 under model_2.",
    "s1_log_prob_model_1": "Natural-log probability of sentence1 under model_1.",
    "s1_log_prob_model_2": "Natural-log probability of sentence1 under model_2.",
    "s2_log_prob_model_1": "Natural-log probability of sentence2 under model_1.",
    "s2_log_prob_model_2": "Natural-log probability of sentence2 under model_2.",
}
assert tuple(NATURAL_DOCS) == PAIR_COLUMNS


def _table(frame: pd.DataFrame) -> pa.Table:
    frame = frame.reset_index(drop=True)
    fields = []
    for col in frame.columns:
        s = frame[col]
        if pd.api.types.is_bool_dtype(s):
            typ = pa.bool_()
        elif pd.api.types.is_integer_dtype(s):
            typ = pa.int64()
        elif pd.api.types.is_float_dtype(s):
            typ = pa.float64()
        else:
            typ = pa.string()
        fields.append((str(col), typ))
    return pa.Table.from_pandas(frame, schema=pa.schema(fields), preserve_index=False)


def unbalanced_note(selection: TripletSelection, per_pair: int) -> str:
    """The card's note on a ``fill`` selection that left pairs short ("" when none is)."""
    if not selection.short:
        return ""
    pairs = ", ".join(f"{m1} vs {m2}: {n} of {per_pair}" for (m1, m2), n in selection.short.items())
    return (f"**Unbalanced bins.** Selected with `generate select --fill`: {len(selection.short)} model pair(s) got fewer than "
            f"{per_pair} triplets, so their natural-sentence bins are not equally represented ({pairs}). "
            "Config `selection_bins` lists, per pair, model and bin, the eligible triplets, why the others "
            "are not, and how many were selected.")


def write_selection(annotated: pd.DataFrame, output: Path, *, source: str, criterion: str,
                    bins: pd.DataFrame | None = None, note: str = "") -> Path:
    """Write the selection (``annotated``: :attr:`TripletSelection.triplets`) as ``OUTPUT/triplets``;
    ``bins`` (:attr:`TripletSelection.bins`) becomes config ``selection_bins`` and ``note`` (e.g.
    :func:`unbalanced_note`) goes into the card and its description."""
    from contstim_bench.data.writer import ConfigSpec, DatasetSpec, write_dataset

    docs = {}
    for col in annotated.columns:
        docs[col] = TRIPLET_COLUMN_DOCS.get(col) or SELECTION_DOCS.get(col) or "Carried over from the input triplet table."
    selected = annotated[annotated["selected_for_human_testing"]]
    config = ConfigSpec(
        "synthetic_triplets", {"train": _table(selected), "candidates": _table(annotated)},
        f"Triplets selected by `contstim generate select` (criterion {criterion}) from {source}: split `train` "
        "holds the selected triplets, split `candidates` every input triplet with the selection columns.",
        docs)
    configs = [config]
    if bins is not None:
        configs.append(ConfigSpec(
            "selection_bins", {"train": _table(bins)},
            "Per model pair, model and bin of natural-sentence log-probabilities: the candidate triplets, the "
            "eligible ones, why the others are not, and how many were needed and selected.", BIN_DOCS))
    description = f"Selected with `contstim generate select --criterion {criterion}` from `{source}`."
    if note:
        description += " Bins are unbalanced (`generate select --fill`): see the notes."
    spec = DatasetSpec(
        name=TRIPLETS_DATASET, pretty_name="Selected synthetic controversial sentence triplets", license="other",
        description=description, citation=GOLAN_2023, sources=[source], configs=configs, notes=note)
    return write_dataset(spec, output)


@dataclass(frozen=True)
class TripletSelectionRun:
    """What :func:`select_and_write_triplets` wrote: the dataset ``folder`` and the
    :class:`~contstim_bench.generate.triplet_select.TripletSelection` (``triplets``: every input
    triplet, ``selected``, per-pair ``objective`` and solver ``reports``)."""

    folder: Path
    selection: TripletSelection


def select_and_write_triplets(triplets: str | os.PathLike, output: str | os.PathLike, *, per_pair: int = 10,
                              n_bins: int = 10, criterion: str = "controversiality",
                              solver: str = "cbc", fill: bool = False,
                              log: Callable[[str], None] | None = None) -> TripletSelectionRun:
    """Read ``triplets`` (a ``generate synthetic`` folder, a triplet parquet or published
    triplets, see :func:`~contstim_bench.generate.triplet_table.read_triplets`), choose ``per_pair``
    per model pair (:func:`~contstim_bench.generate.triplet_select.select_triplets`; ``log``
    receives the table of eligible triplets per pair and bin before solving; ``fill`` takes what
    each bin holds) and write them as ``output``/triplets, with config ``selection_bins`` and, when
    bins were left short, a note in the card."""
    frame = read_triplets(triplets).reset_index(drop=True)
    selection = select_triplets(frame, per_pair=per_pair, n_bins=n_bins, criterion=criterion, solver=solver,
                                fill=fill, log=log)
    folder = write_selection(selection.triplets, Path(output), source=str(triplets), criterion=criterion,
                             bins=selection.bins, note=unbalanced_note(selection, per_pair))
    return TripletSelectionRun(folder, selection)


def write_natural(pairs: pd.DataFrame, sentences: Sequence[str], log_probs: np.ndarray, models, output: Path,
                  pool: str, info: dict) -> Path:
    """Write selected natural pairs and the pool's scores as ``OUTPUT/natural``."""
    from contstim_bench.data.writer import ConfigSpec, DatasetSpec, write_dataset

    scores = pd.DataFrame({"sentence": list(sentences)})
    docs = {"sentence": "Pool sentence (de-duplicated, in pool order)."}
    for k, m in enumerate(models):
        scores[m.name] = log_probs[:, k]
        docs[m.name] = f"Natural-log probability under {m.name} ({m.spec})."
    configs = [
        ConfigSpec("natural_controversial_pairs", {"train": _table(pairs)},
                   "Controversial natural-sentence pairs selected by integer programming (Eq. 5-6).", NATURAL_DOCS),
        ConfigSpec("pool_scores", {"train": _table(scores)}, f"Every sentence of the pool {pool} with each "
                   "model's natural-log probability.", docs),
    ]
    spec = DatasetSpec(
        name=NATURAL_DATASET, pretty_name="Controversial natural-sentence pairs", license="other",
        description=f"Written by `contstim generate natural` from the pool {pool}: {json.dumps(info)}. Models: "
                    + ", ".join(f"`{m.name}` = `{m.spec}`" for m in models) + ".",
        citation=GOLAN_2023, sources=[pool], configs=configs)
    return write_dataset(spec, output)
