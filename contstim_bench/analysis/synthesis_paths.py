"""Fig. 2 of Golan et al. (2023): synthesising a controversial pair, drawn in the plane of the two
models' sentence probabilities against natural sentences.

The paper's panel: for a model pair (m1, m2), natural sentences as small open dots (500 drawn at
random, each at its percentile of log p under m1 and under m2), the start sentence N as a big
open dot, and the two synthetic sentences as closed dots with arrows from N: S1 (made to keep
m1's probability and lower m2's) and S2 (the reverse).  A synthesis run records more: every
accepted word replacement with both models' log-probabilities after it, so the path from N to
each synthetic sentence is drawn too.

:func:`synthesis_panel` computes the panel from one model pair's triplet rows (the job records
of ``contstim generate synthetic``); the natural sentences are the run's start sentences of that
pair, and percentiles are taken among them (the paper took them among its 231,725-sentence
natural pool, whose log-probabilities a run does not compute).  All log-probabilities are
natural logs.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def percentile(reference: np.ndarray, values) -> np.ndarray:
    """The percentile of each value among ``reference``: 100 x the share of reference values at
    most the value (the paper's code: ``np.mean(p >= p_vec) * 100``)."""
    ref = np.sort(np.asarray(reference, dtype=np.float64))
    if ref.size == 0:
        raise ValueError("no reference values to take percentiles among")
    return 100.0 * np.searchsorted(ref, np.asarray(values, dtype=np.float64), side="right") / ref.size


def synthesis_path(row: Mapping, which: str) -> list[tuple[float, float]]:
    """``[(log p(s | m1), log p(s | m2)), ...]`` from N through every accepted replacement to
    ``which`` ("S1" or "S2") of one triplet row (columns ``lp_N_given_m1`` ... and the search's
    ``history_S1``/``history_S2``: each step's ``lp_accept`` and ``lp_reject``).  ValueError when
    the last step does not end at the recorded synthetic sentence."""
    if which not in ("S1", "S2"):
        raise ValueError(f"which must be 'S1' or 'S2', got {which!r}")
    history = row.get(f"history_{which}")
    if history is None:
        raise ValueError(f"the triplet row has no history_{which} (the replacements of the search): a run's job "
                         "records have it, the published triplet table does not")
    points = [(float(row["lp_N_given_m1"]), float(row["lp_N_given_m2"]))]
    for step in history:  # S1 is accepted by m1 (x) and rejected by m2 (y); S2 the reverse
        acc, rej = float(step["lp_accept"]), float(step["lp_reject"])
        points.append((acc, rej) if which == "S1" else (rej, acc))
    end = (float(row[f"lp_{which}_given_m1"]), float(row[f"lp_{which}_given_m2"]))
    if not np.allclose(points[-1], end, rtol=0, atol=1e-9):
        raise ValueError(f"the replacements of {which} end at {points[-1]}, not at its recorded log-probabilities {end}")
    return points


def synthesis_panel(rows: Sequence[Mapping], illustrated: int | None = None) -> dict:
    """Fig. 2's panel for one model pair: ``rows`` are its triplet rows (same ``m1``, ``m2``);
    ``illustrated`` the position in ``rows`` of the triplet drawn (default: the most controversial,
    the largest ``controversiality``, Eq. 4).

    Returns ``models`` [m1, m2], ``natural`` (every start sentence with its log-probabilities and
    percentiles), ``triplet`` (N, S1, S2 and the two paths, each point as log-probabilities and
    percentiles) and ``reference`` (what the percentiles are taken among).
    """
    if not rows:
        raise ValueError("no triplet rows for the panel")
    pairs = {(r["m1"], r["m2"]) for r in rows}
    if len(pairs) != 1:
        raise ValueError(f"the rows are of several model pairs {sorted(pairs)}; give one pair's rows")
    m1, m2 = next(iter(pairs))
    if illustrated is None:
        illustrated = int(np.argmax([float(r["controversiality"]) for r in rows]))
    row = rows[illustrated]
    natural_x = np.array([float(r["lp_N_given_m1"]) for r in rows])
    natural_y = np.array([float(r["lp_N_given_m2"]) for r in rows])

    def placed(points: Sequence[tuple[float, float]]) -> dict:
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        return {"logprob": [[x, y] for x, y in zip(xs, ys)],
                "percentile": [[float(a), float(b)] for a, b in zip(percentile(natural_x, xs), percentile(natural_y, ys))]}

    return {
        "models": [m1, m2],
        "reference": f"the {len(rows)} natural start sentences of the run for this model pair",
        "natural": {"sentences": [r["N"] for r in rows], **placed(list(zip(natural_x, natural_y)))},
        "triplet": {
            "N": row["N"], "S1": row["S1"], "S2": row["S2"], "N_idx": int(row.get("N_idx", -1)),
            "controversiality": float(row["controversiality"]),
            "path_S1": placed(synthesis_path(row, "S1")),
            "path_S2": placed(synthesis_path(row, "S2")),
        },
    }
