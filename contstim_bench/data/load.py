"""Find built datasets (building them on first use) and load their configs.

Built datasets live in ``$CONTSTIM_DATASETS`` (default ``~/.cache/contstim_bench/datasets``)
unless a folder is passed explicitly.  :func:`dataset_folder` builds a missing dataset from the raw
sources first, so ``contstim evaluate`` works on a fresh machine without a separate build step.
"""
from __future__ import annotations

import os
from pathlib import Path

from .builders import build
from .paths import ENV_DATASETS, default_datasets_dir
from .verify import CorruptDatasetError, verify_dataset
from .writer import FINGERPRINT_FILE, read_fingerprint

__all__ = ["ENV_DATASETS", "CorruptDatasetError", "card_warnings", "dataset_folder", "default_datasets_dir", "fingerprint", "load_config"]


def dataset_folder(
    name: str,
    datasets_dir: str | os.PathLike | None = None,
    source: str | os.PathLike | None = None,
    build_if_missing: bool = True,
    verify: bool = True,
) -> Path:
    """Folder of built dataset ``name``; built from raw sources first when missing.

    With ``verify`` (the default) every file of the dataset is checked against its
    ``fingerprint.json`` (:func:`.verify.verify_dataset`, once per process and file state): a
    changed or damaged file raises :class:`.verify.CorruptDatasetError` naming it.  Only code that
    hashes the content itself (the leaderboard's experiment fingerprints) passes False.
    """
    root = Path(datasets_dir) if datasets_dir is not None else default_datasets_dir()
    folder = root / name
    if not (folder / FINGERPRINT_FILE).exists():
        if not build_if_missing:
            raise FileNotFoundError(
                f"dataset {name!r} is not built in {root}; run `contstim data build --out {root}`"
            )
        _build_once(name, root, source)
    if verify:
        verify_dataset(folder)
    return folder


def _build_once(name: str, root: Path, source) -> None:
    """Build dataset ``name`` into ``root`` unless another process has built it meanwhile: one
    process at a time (a file lock beside it), so that the processes of a data-parallel launch, or
    two commands started together on a fresh machine, build it once and never replace a folder
    another one is reading."""
    from filelock import FileLock

    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / f".{name}.lock")):
        if not (root / name / FINGERPRINT_FILE).exists():
            build(name, root, source=source)


def fingerprint(name: str, datasets_dir: str | os.PathLike | None = None) -> str:
    """Content fingerprint of a built dataset (:func:`.writer.dataset_fingerprint`: sha256 over
    the canonical digests of its decoded tables, the same on every machine and library version),
    after every file was verified to still match it."""
    return read_fingerprint(dataset_folder(name, datasets_dir))["fingerprint"]


def card_warnings(folder: str | os.PathLike) -> list[str]:
    """Lines of a built dataset's card (``README.md``) that start with "MISSING" (e.g. an absent
    split), without their list marker."""
    text = (Path(folder) / "README.md").read_text(encoding="utf-8")
    return [ln.strip("- ").strip() for ln in text.splitlines() if ln.lstrip("- ").startswith("MISSING")]


def load_config(
    name: str,
    config: str,
    split: str | None = None,
    datasets_dir: str | os.PathLike | None = None,
):
    """``datasets.load_dataset`` on a built dataset folder (offline, no loading script)."""
    import datasets

    folder = dataset_folder(name, datasets_dir)
    return datasets.load_dataset(str(folder), config, split=split)
