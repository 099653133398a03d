"""Publish the ``contstim`` evaluate module (``metrics/contstim``) as a Hugging Face metric Space.

The Space folder is :func:`contstim_bench.spaces.stage_metric_space`'s (the module script renamed
after the Space, its card titled after it, ``app.py``, and ``requirements.txt`` installing the
package from a wheel uploaded with the Space, a pinned git commit, or a line given as is).
:func:`push_metric` creates the Space (``repo_type="space"``, ``space_sdk="gradio"``) and uploads
the staged folder with :mod:`huggingface_hub`.  ``contstim metric push`` calls :func:`push_metric`.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from .spaces import RequirementLine, check_repo_id, package_source, stage_metric_space


def stage_metric(repo_id: str, out_dir: Path, requirement: str | None = None, *, wheel=None, git=None,
                 endpoint: str | None = None) -> Path:
    """Write the Space's files for ``repo_id`` into ``out_dir``; returns ``out_dir``.  The package
    is installed by ``requirement`` (a requirements.txt line) or from ``wheel`` / ``git``
    (see :func:`contstim_bench.spaces.package_source`)."""
    check_repo_id(repo_id)
    source = RequirementLine(requirement) if requirement else package_source(wheel, git)
    return stage_metric_space(out_dir, source, repo_id, endpoint)


def push_metric(
    repo_id: str,
    token: str | None = None,
    endpoint: str | None = None,
    private: bool = False,
    requirement: str | None = None,
    api=None,
    *,
    wheel=None,
    git: str | None = None,
) -> str:
    """Create (or reuse) the metric Space ``repo_id`` and upload the staged module; returns its URL.

    ``requirement``, ``wheel`` or ``git`` say how the Space installs the package (one of them;
    ValueError otherwise).  ``api`` is a :class:`huggingface_hub.HfApi` (default: one for
    ``endpoint``/``token``); any object with the same ``create_repo``/``upload_folder`` methods works.
    """
    with tempfile.TemporaryDirectory(prefix="contstim-metric-") as tmp:
        folder = stage_metric(repo_id, Path(tmp) / "space", requirement, wheel=wheel, git=git, endpoint=endpoint)
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(endpoint=endpoint, token=token)
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
