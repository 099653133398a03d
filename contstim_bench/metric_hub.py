"""Publish the ``contstim`` evaluate module (``metrics/contstim``) as a Hugging Face metric Space.

:func:`stage_metric` writes the Space's files: the module script renamed after the Space
(``evaluate.load("ORG/NAME")`` fetches ``NAME.py``), the metric card titled ``NAME``, ``app.py``
and ``requirements.txt`` with the package requirement pinned.  :func:`push_metric` creates the
Space (``repo_type="space"``, ``space_sdk="gradio"``) and uploads the staged folder with
:mod:`huggingface_hub`.  ``contstim metric push`` calls :func:`push_metric`.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from . import metric_path
from ._version import __version__

METRIC_FILES = ("contstim.py", "README.md", "app.py", "requirements.txt")
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def stage_metric(repo_id: str, out_dir: Path, requirement: str | None = None) -> Path:
    """Write the Space's files for ``repo_id`` into ``out_dir``; returns ``out_dir``."""
    if not _REPO_ID.match(repo_id):
        raise ValueError(f"--repo must look like ORG/NAME, got {repo_id!r}")
    name = repo_id.split("/")[1]
    if not name.isidentifier():
        raise ValueError(
            f"Space name {name!r} must be a valid Python module name (letters, digits, '_'): "
            f"evaluate.load('{repo_id}') imports {name}.py"
        )
    src = Path(metric_path())
    missing = [f for f in METRIC_FILES if not (src / f).is_file()]
    if missing:
        raise FileNotFoundError(f"the evaluate module in {src} lacks {missing}")
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / "contstim.py", out_dir / f"{name}.py")
    shutil.copyfile(src / "app.py", out_dir / "app.py")
    card = (src / "README.md").read_text(encoding="utf-8")
    card = re.sub(r"(?m)^title: .*$", f"title: {name}", card, count=1)
    (out_dir / "README.md").write_text(card, encoding="utf-8")
    requirement = requirement or f"contstim-bench=={__version__}"
    lines = (src / "requirements.txt").read_text(encoding="utf-8").splitlines()
    lines = [requirement if ln.strip().startswith("contstim-bench") else ln for ln in lines]
    (out_dir / "requirements.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out_dir


def push_metric(
    repo_id: str,
    token: str | None = None,
    endpoint: str | None = None,
    private: bool = False,
    requirement: str | None = None,
    api=None,
) -> str:
    """Create (or reuse) the metric Space ``repo_id`` and upload the staged module; returns its URL.

    ``api`` is a :class:`huggingface_hub.HfApi` (default: one for ``endpoint``/``token``);
    any object with the same ``create_repo``/``upload_folder`` methods works.
    """
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(endpoint=endpoint, token=token)
    with tempfile.TemporaryDirectory(prefix="contstim-metric-") as tmp:
        folder = stage_metric(repo_id, Path(tmp) / "space", requirement)
        api.create_repo(
            repo_id=repo_id, token=token, private=private, repo_type="space", space_sdk="gradio", exist_ok=True
        )
        api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="space",
            token=token,
            commit_message="Upload the contstim metric (contstim-bench)",
        )
    base = (endpoint or "https://huggingface.co").rstrip("/")
    return f"{base}/spaces/{repo_id}"
