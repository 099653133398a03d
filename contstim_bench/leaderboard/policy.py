"""The leaderboard's trust policy: which results are listed, and where.

- A result that fails validation (schema, benchmark, log-probabilities, a recomputed score that
  does not match, a reserved reference name, a duplicate) or whose re-scored log-probabilities
  differ from the submitted ones is **refused**: it is not listed.
- A valid result is **verified** only when its model spec (pinning the revision when it has one)
  was loaded here and re-scored every sentence within the tolerance
  (:func:`.verification.verify`).  Verified results are ranked together.
- Every other valid result is **unverified** (its spec cannot be loaded here, or re-scoring was
  skipped): it is listed in a separate, labelled table with the reason, ranked only among the
  unverified results, and never compared with or ranked against a verified one.

The static site (:mod:`.site`), the Gradio app (:mod:`.app`) and the published dataset
(:mod:`.push`) all take their entries from :func:`load_entries` and their rows from
:func:`grouped_rows`.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .table import MEASURES, pairwise_matrix, panels, ranking_rows
from .identity import identity
from .validate import RESCORE_TOLERANCE, Checked, ValidationError, load_file, result_paths
from .verification import validate_and_rescore

VERIFIED_TITLE = "Verified"
UNVERIFIED_TITLE = "Unverified (not re-scored from their model spec; not ranked with the verified models)"
UNVERIFIED_NOTE = (
    "These results passed every check of their own numbers (each score recomputed from the submitted "
    "log-probabilities), but their log-probabilities could not be reproduced here from the model spec, "
    "so they could have been fitted to the human choices. They are ranked only among themselves."
)


def load_entries(results_dir: str | os.PathLike, validate: bool = True, datasets_dir=None, rescore: bool = True,
                 tolerance: float = RESCORE_TOLERANCE, options=None, log=None, models_folder=None,
                 strict: bool = False) -> list[Checked]:
    """The valid ``*.json`` of ``results_dir`` (sorted by file name), validated and, with
    ``rescore``, verified (:func:`.verification.validate_and_rescore`).

    A refused file is left out and named, with every problem, through ``log`` (all files are
    checked, so one bad file never hides or stops another); ValidationError when no file is valid,
    or, with ``strict`` (what ``push`` asks: a published folder holds no refused file), when any
    file is refused.  With ``validate=False`` nothing is checked and every entry is unverified.
    """
    folder = Path(results_dir)
    paths = result_paths(folder)
    if not validate:
        return [Checked(str(p), load_file(p), verification="unverified: the results were not validated (`leaderboard build --no-validate`)")
                for p in paths]
    checked = validate_and_rescore(paths, datasets_dir=datasets_dir, rescore_models=rescore, tolerance=tolerance,
                                   options=options, log=log, models_folder=models_folder)
    bad = [c for c in checked if not c.ok]
    good = [c for c in checked if c.ok]
    if bad and (strict or not good):
        problems = [f"{Path(c.source).name}: {p}" for c in bad for p in c.problems]
        what = "the others are valid" if good else "no file is valid"
        raise ValidationError(str(folder), problems + [f"({len(bad)} refused file(s) in {folder}; {what})"])
    for c in bad:
        if log is not None:
            log(f"leaderboard: refused {Path(c.source).name}, not listed: " + "; ".join(c.problems[:5])
                + (f" (and {len(c.problems) - 5} more)" if len(c.problems) > 5 else ""))
    return good


def grouped_rows(entries: Sequence[Checked]) -> list[dict]:
    """The ranking rows (:func:`.table.ranking_rows`) of the verified entries, then those of the
    unverified ones, each group ranked (and compared with its own leader) separately; every row
    has ``verified`` (bool) and ``verification`` (what was done, or why it is unverified)."""
    rows = []
    for verified in (True, False):
        group = [c for c in entries if c.verified is verified]
        if not group:
            continue
        notes = {identity(c.result): c.verification for c in group}
        for row in ranking_rows([c.result for c in group]):
            row["verified"] = verified
            row["verification"] = notes[row["identity"]]
            rows.append(row)
    return rows


def grouped_matrices(entries: Sequence[Checked]) -> list[dict]:
    """Pairwise significance matrices (:func:`.table.pairwise_matrix`) of every panel and measure,
    computed within the verified entries and within the unverified ones (never across); each
    matrix has ``verified`` (bool)."""
    out = []
    for verified in (True, False):
        results = [c.result for c in entries if c.verified is verified]
        if not results:
            continue
        for exp, cond in panels(results):
            for measure in MEASURES:
                matrix = pairwise_matrix(results, exp, cond, measure)
                matrix["verified"] = verified
                out.append(matrix)
    return out
