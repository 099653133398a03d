"""Publish a results folder as a Hugging Face *dataset* repository with ``huggingface_hub``.

The repository gets ``results/<file>.json`` (the validated result files, unchanged),
``leaderboard.csv`` (the ranking rows of :mod:`.table`, one per experiment x condition x model;
verified models ranked among themselves, unverified ones among themselves, see :mod:`.policy`)
and a ``README.md`` dataset card whose YAML ``configs`` make ``datasets.load_dataset(repo,
"leaderboard")`` load the CSV.  The upload is one commit (``HfApi.create_repo(...,
repo_type="dataset", exist_ok=True)`` then ``HfApi.upload_folder``); files of the repository
that are not in the new upload are kept.  ``api`` can be any object with those two methods
(the tests pass a local stand-in for the hub).
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from .._version import __version__
from .policy import grouped_rows, load_entries
from .table import COLUMNS, rows_to_csv
from .validate import RESCORE_TOLERANCE

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def card(repo_id: str, results: list[dict], files: list[str]) -> str:
    """The dataset card (README.md) of the published results."""
    models = ", ".join(sorted({r["model"]["name"] for r in results}))
    cols = "\n".join(f"| `{k}` | {v} |" for k, v in COLUMNS.items())
    return f"""---
pretty_name: contstim-bench leaderboard results
license: mit
language:
- en
configs:
- config_name: leaderboard
  data_files:
  - split: train
    path: leaderboard.csv
---

# contstim-bench leaderboard results

Result files of the contstim-bench leaderboard (controversial sentence pairs, Golan et al. 2023),
published with contstim-bench {__version__}. Every file was validated: each score was recomputed
from the file's per-sentence log-probabilities. A result is *verified* (`verified` column) only when
its model spec was loaded and re-scored every sentence to the submitted log-probabilities; the
others are *unverified* and ranked only among themselves, never with the verified models.

- `results/*.json` ({len(files)} files): one result per model ({models}), format `contstim-bench-result`.
- `leaderboard.csv`: one row per experiment, condition and model:

| column | meaning |
|---|---|
{cols}

Load the table with `datasets.load_dataset("{repo_id}", "leaderboard")`.
"""


def stage(results_dir: str | os.PathLike, repo_id: str, out_dir: str | os.PathLike, validate: bool = True, datasets_dir=None,
          rescore: bool = True, tolerance: float = RESCORE_TOLERANCE, options=None, models_folder=None) -> Path:
    """Write the repository's content (card, CSV, results/) into ``out_dir``; returns it.
    Entries are validated and verified by :func:`.policy.load_entries`; a folder with a refused file
    is not published (ValidationError names it)."""
    entries = load_entries(results_dir, validate=validate, datasets_dir=datasets_dir, rescore=rescore,
                           tolerance=tolerance, options=options, models_folder=models_folder, strict=True)
    loaded = [(Path(c.source), c.result) for c in entries]
    out = Path(out_dir)
    (out / "results").mkdir(parents=True, exist_ok=True)
    for path, _ in loaded:
        shutil.copyfile(path, out / "results" / path.name)
    results = [r for _, r in loaded]
    (out / "leaderboard.csv").write_text(rows_to_csv(grouped_rows(entries)), encoding="utf-8")
    (out / "README.md").write_text(card(repo_id, results, [p.name for p, _ in loaded]), encoding="utf-8")
    return out


def push_results(
    results_dir: str | os.PathLike,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool = False,
    endpoint: str | None = None,
    validate: bool = True,
    datasets_dir=None,
    api=None,
    rescore: bool = True,
    tolerance: float = RESCORE_TOLERANCE,
    options=None,
    models_folder=None,
) -> str:
    """Create (if needed) dataset repo ``repo_id`` and upload the staged results in one commit.

    Returns the repository URL reported by ``create_repo``.  ValueError for a malformed repo id;
    RuntimeError naming the repository for any failure of the hub (network, offline mode,
    permissions).
    """
    if not isinstance(repo_id, str) or not REPO_ID.match(repo_id):
        raise ValueError(f"repository id {repo_id!r} must look like ORG/NAME (letters, digits, '.', '_', '-')")
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(endpoint=endpoint, token=token)
    with tempfile.TemporaryDirectory(prefix="contstim-push-") as tmp:
        folder = stage(results_dir, repo_id, tmp, validate=validate, datasets_dir=datasets_dir, rescore=rescore,
                       tolerance=tolerance, options=options, models_folder=models_folder)
        n_files = len(list((folder / "results").glob("*.json")))
        try:
            url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            api.upload_folder(
                repo_id=repo_id,
                folder_path=str(folder),
                repo_type="dataset",
                commit_message=f"contstim-bench {__version__}: {n_files} result files",
            )
        except Exception as exc:  # hub, network and offline-mode errors of any client library
            raise RuntimeError(f"pushing {results_dir} to dataset {repo_id} failed: {type(exc).__name__}: {exc}") from exc
    return str(url)
