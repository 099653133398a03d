"""Publish a built dataset (parquet + card) as a Hugging Face dataset repository: what
``contstim data push --repo ORG/NAME`` runs.

:func:`stage_dataset` copies the built folder (``README.md`` card with its YAML ``configs``,
``fingerprint.json``, every ``<config>/<split>.parquet``) into a staging folder and
:func:`check_staged` checks it before anything leaves the machine:

- the card's YAML header has ``license`` and ``configs``, and every ``data_files`` path it lists
  exists; every parquet file is listed by the card (nothing unlisted is uploaded);
- every parquet file's sha256 is the one ``fingerprint.json`` records, and the content
  fingerprint recomputed from the files equals the recorded one;
- ``datasets.load_dataset(folder, config, split=...)`` loads every split with the row count
  ``fingerprint.json`` records (what a user of the pushed repository will get).

:func:`push_dataset` then uploads the staged folder in one commit with ``huggingface_hub``
(``create_repo(repo_type="dataset", exist_ok=True)`` and ``upload_folder``), or, with
``dry_run=DIR``, leaves the checked folder in ``DIR`` and uploads nothing.  The plausibility data
has no upstream licence (evaluation only, not to be redistributed): pushing it is refused.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import yaml

from .writer import FINGERPRINT_FILE, compute_fingerprint, read_fingerprint, sha256_file

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
PUBLISHABLE = {"contstim": "MIT (contstimlang)", "blimp": "CC BY 4.0 (BLiMP)"}
NOT_PUBLISHABLE = {"plausibility": "no licence is stated upstream (evaluation only, do not redistribute)"}


def card_header(card_path: Path) -> dict:
    """The YAML header of a dataset card; ValueError when it has none."""
    text = card_path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise ValueError(f"{card_path}: the dataset card has no YAML header (--- ... ---)")
    end = text.find("\n---", 4)
    if end < 0:
        raise ValueError(f"{card_path}: the YAML header is not closed by ---")
    header = yaml.safe_load(text[4:end])
    if not isinstance(header, dict):
        raise ValueError(f"{card_path}: the YAML header is not a mapping")
    return header


def stage_dataset(folder: str | os.PathLike, out_dir: str | os.PathLike) -> Path:
    """Copy the files of built dataset ``folder`` that a repository gets into ``out_dir``."""
    src, out = Path(folder), Path(out_dir)
    read_fingerprint(src)  # FileNotFoundError names a folder that is not a built dataset
    out.mkdir(parents=True, exist_ok=True)
    for name in ("README.md", FINGERPRINT_FILE):
        shutil.copyfile(src / name, out / name)
    for path in sorted(src.glob("*/*.parquet")):
        (out / path.parent.name).mkdir(exist_ok=True)
        shutil.copyfile(path, out / path.parent.name / path.name)
    return out


def check_staged(folder: str | os.PathLike) -> dict:
    """Check a staged dataset folder (see the module docstring); returns ``{"configs": {config:
    {split: rows}}, "files": [relative paths], "fingerprint": ...}``.  ValueError names the first
    problem: a card without licence or configs, a listed file that is missing, a file the card
    does not list, a sha256 or fingerprint that differs, a split whose row count differs."""
    import datasets

    folder = Path(folder)
    header = card_header(folder / "README.md")
    for key in ("license", "configs"):
        if not header.get(key):
            raise ValueError(f"{folder / 'README.md'}: the card's YAML header has no {key!r}")
    meta = read_fingerprint(folder)
    listed: dict[str, tuple[str, str]] = {}
    for cfg in header["configs"]:
        for entry in cfg.get("data_files", []):
            rel = entry["path"]
            if not (folder / rel).is_file():
                raise ValueError(f"the card lists {rel} (config {cfg['config_name']!r}, split {entry['split']!r}) "
                                 f"but {folder} has no such file")
            listed[rel] = (cfg["config_name"], entry["split"])
    present = sorted(str(p.relative_to(folder)) for p in folder.glob("*/*.parquet"))
    unlisted = [p for p in present if p not in listed]
    if unlisted:
        raise ValueError(f"{folder}: {unlisted[0]} is not listed by any config of the card")
    for rel in present:
        want = meta.get("parquet_sha256", {}).get(rel)
        got = sha256_file(folder / rel)
        if want != got:
            raise ValueError(f"{folder / rel}: sha256 {got} differs from {want} recorded in {FINGERPRINT_FILE}")
    recomputed = compute_fingerprint(folder)["fingerprint"]
    if recomputed != meta["fingerprint"]:
        raise ValueError(f"{folder}: content fingerprint {recomputed} differs from {meta['fingerprint']} "
                         f"recorded in {FINGERPRINT_FILE}")
    configs: dict[str, dict[str, int]] = {}
    for rel, (config, split) in sorted(listed.items()):
        n = datasets.load_dataset(str(folder), config, split=split).num_rows
        want = meta["rows"].get(f"{config}/{split}")
        if n != want:
            raise ValueError(f"{folder}: config {config!r} split {split!r} loads {n} rows, "
                             f"{FINGERPRINT_FILE} records {want}")
        configs.setdefault(config, {})[split] = n
    files = ["README.md", FINGERPRINT_FILE, *present]
    return {"configs": configs, "files": files, "fingerprint": meta["fingerprint"]}


def push_dataset(name: str, repo_id: str, *, datasets_dir=None, token: str | None = None, private: bool = False,
                 endpoint: str | None = None, dry_run: str | os.PathLike | None = None, api=None) -> dict:
    """Check and upload built dataset ``name`` to dataset repository ``repo_id`` in one commit.

    Returns the report of :func:`check_staged` with ``url`` (the repository, or the dry-run
    folder).  ValueError for a malformed repo id or a dataset that may not be redistributed;
    RuntimeError naming the repository for any failure of the hub.
    """
    from .load import dataset_folder

    if not isinstance(repo_id, str) or not REPO_ID.match(repo_id):
        raise ValueError(f"repository id {repo_id!r} must look like ORG/NAME (letters, digits, '.', '_', '-')")
    if name in NOT_PUBLISHABLE:
        raise ValueError(f"dataset {name!r} is not pushed: {NOT_PUBLISHABLE[name]}")
    if name not in PUBLISHABLE:
        raise ValueError(f"unknown dataset {name!r}; publishable: {', '.join(PUBLISHABLE)}")
    folder = dataset_folder(name, datasets_dir)
    if dry_run is not None:
        out = Path(dry_run)
        if out.exists() and any(out.iterdir()):
            raise ValueError(f"--dry-run {out} is not empty: give a new or empty folder")
        report = check_staged(stage_dataset(folder, out))
        return {**report, "url": str(out)}
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(endpoint=endpoint, token=token)
    with tempfile.TemporaryDirectory(prefix="contstim-data-push-") as tmp:
        staged = stage_dataset(folder, Path(tmp) / name)
        report = check_staged(staged)
        try:
            url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            api.upload_folder(repo_id=repo_id, folder_path=str(staged), repo_type="dataset",
                              commit_message=f"{name} dataset, fingerprint {report['fingerprint'][:16]}")
        except Exception as exc:  # hub, network and offline-mode errors of any client library
            raise RuntimeError(f"pushing dataset {name} to {repo_id} failed: {type(exc).__name__}: {exc}") from exc
    return {**report, "url": str(url)}
