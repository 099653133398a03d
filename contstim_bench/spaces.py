"""Ready-to-push Hugging Face Space folders: the ``contstim`` metric and the leaderboard app
(what ``contstim space metric|leaderboard --out DIR`` writes).

A Space folder holds ``app.py``, ``README.md`` (the Space's YAML header: ``sdk: gradio``,
``sdk_version``, ``app_file``) and ``requirements.txt``, whose last line installs this package
from a source that exists, never from an index that does not have it:

- :class:`WheelSource` (``--wheel FILE --repo ORG/NAME``): the wheel is copied into the folder and
  the requirement is its URL inside the Space repository
  (``contstim-bench @ https://huggingface.co/spaces/ORG/NAME/resolve/main/<wheel>``): a URL rather
  than a relative path, because the Space builder installs ``requirements.txt`` before it copies
  the rest of the repository, and a URL resolves wherever pip runs (a public Space; a private one
  needs the git form);
- :class:`GitSource` (``--git URL@COMMIT``): ``contstim-bench @ git+URL@COMMIT``, the commit given
  in full (40 hex digits) so that the Space installs exactly that revision.

The metric folder is the one ``evaluate.load("ORG/NAME")`` fetches: the module script renamed
``NAME.py``, its card titled ``NAME``.  The leaderboard folder holds the app launcher, the
``results/`` it shows, and the card.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from . import metric_path
from .provenance import repo_root

PACKAGE = "contstim-bench"
METRIC_FILES = ("contstim.py", "README.md", "app.py", "requirements.txt")
HUB = "https://huggingface.co"
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_WHEEL = re.compile(r"^contstim_bench-[^-]+-py3-none-any\.whl$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class WheelSource:
    """Install the package from ``wheel`` (a built ``contstim_bench-*.whl``), copied into the Space."""

    wheel: Path

    def requirement(self, repo_id: str | None, endpoint: str | None = None) -> str:
        if repo_id is None:
            raise ValueError("--wheel needs --repo ORG/NAME: the Space installs the wheel from its URL in that "
                             "repository (or give --git URL@COMMIT instead)")
        base = (endpoint or HUB).rstrip("/")
        return f"{PACKAGE} @ {base}/spaces/{repo_id}/resolve/main/{self.wheel.name}"


@dataclass(frozen=True)
class GitSource:
    """Install the package from ``url`` at ``commit`` (``pip install git+URL@COMMIT``)."""

    url: str
    commit: str

    def requirement(self, repo_id: str | None = None, endpoint: str | None = None) -> str:
        return f"{PACKAGE} @ git+{self.url}@{self.commit}"


@dataclass(frozen=True)
class RequirementLine:
    """A requirements.txt line given as is (``contstim metric push --requirement``)."""

    line: str

    def requirement(self, repo_id: str | None = None, endpoint: str | None = None) -> str:
        return self.line


def package_source(wheel: str | Path | None = None, git: str | None = None) -> WheelSource | GitSource:
    """The source of ``--wheel FILE`` or ``--git URL@COMMIT`` (exactly one); ValueError names a
    missing or foreign wheel, a git spec without ``@`` or with a revision that is not a full
    commit hash."""
    if (wheel is None) == (git is None):
        raise ValueError("give exactly one of --wheel FILE (a contstim_bench-*.whl built with `python -m build`) "
                         "or --git URL@COMMIT (a full 40-hex commit)")
    if wheel is not None:
        path = Path(wheel).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"wheel not found: {path} (build it with `python -m build --wheel`)")
        if not _WHEEL.match(path.name):
            raise ValueError(f"{path.name} is not a contstim-bench wheel (expected contstim_bench-<version>-py3-none-any.whl)")
        return WheelSource(path.resolve())
    url, sep, commit = str(git).rpartition("@")
    if not sep or not url:
        raise ValueError(f"--git {git!r} must be URL@COMMIT, e.g. https://github.com/ORG/contstim-bench@<40-hex commit>")
    if not _COMMIT.match(commit):
        raise ValueError(f"--git revision {commit!r} is not a full commit hash (40 lower-case hex digits): "
                         f"a branch or tag can move, a Space must install one fixed revision")
    return GitSource(url.removeprefix("git+"), commit)


def check_repo_id(repo_id: str) -> str:
    """``repo_id`` if it looks like ``ORG/NAME``; ValueError otherwise."""
    if not isinstance(repo_id, str) or not _REPO_ID.match(repo_id):
        raise ValueError(f"--repo must look like ORG/NAME, got {repo_id!r}")
    return repo_id


def gradio_sdk_version(default: str) -> str:
    """The installed gradio's version (what the folder was started with locally), else ``default``."""
    try:
        import importlib.metadata

        return importlib.metadata.version("gradio")
    except importlib.metadata.PackageNotFoundError:
        return default


def _set_yaml(card: str, key: str, value: str) -> str:
    """``card`` with the header line ``key: ...`` set to ``value`` (ValueError if the header lacks it)."""
    new, n = re.subn(rf"(?m)^{re.escape(key)}: .*$", f"{key}: {value}", card, count=1)
    if n != 1:
        raise ValueError(f"the Space card has no {key!r} line in its YAML header")
    return new


def _write_requirements(out: Path, lines: list[str], source, repo_id: str | None, endpoint: str | None) -> None:
    kept = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(("#", PACKAGE))]
    kept.append(source.requirement(repo_id, endpoint))
    (out / "requirements.txt").write_text("\n".join(kept) + "\n", encoding="utf-8")
    if isinstance(source, WheelSource):
        shutil.copyfile(source.wheel, out / source.wheel.name)


def _prepare(out_dir: str | Path) -> Path:
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out} is not empty: give `contstim space` a new or empty folder as --out")
    out.mkdir(parents=True, exist_ok=True)
    return out


def stage_metric_space(out_dir: str | Path, source, repo_id: str | None = None, endpoint: str | None = None) -> Path:
    """Write the metric Space into ``out_dir`` (new or empty); returns it.

    The script is ``NAME.py`` for ``repo_id`` ``ORG/NAME`` (``contstim.py`` without a repo id),
    since ``evaluate.load("ORG/NAME")`` imports ``NAME.py``.
    """
    name = "contstim"
    if repo_id is not None:
        name = check_repo_id(repo_id).split("/")[1]
        if not name.isidentifier():
            raise ValueError(f"Space name {name!r} must be a valid Python module name (letters, digits, '_'): "
                             f"evaluate.load('{repo_id}') imports {name}.py")
    src = Path(metric_path())
    missing = [f for f in METRIC_FILES if not (src / f).is_file()]
    if missing:
        raise FileNotFoundError(f"the evaluate module in {src} lacks {missing}")
    out = _prepare(out_dir)
    shutil.copyfile(src / "contstim.py", out / f"{name}.py")
    shutil.copyfile(src / "app.py", out / "app.py")
    card = (src / "README.md").read_text(encoding="utf-8")
    card = _set_yaml(card, "title", name)
    card = _set_yaml(card, "sdk_version", gradio_sdk_version(_yaml_value(card, "sdk_version")))
    (out / "README.md").write_text(card, encoding="utf-8")
    lines = (src / "requirements.txt").read_text(encoding="utf-8").splitlines()
    _write_requirements(out, lines, source, repo_id, endpoint)
    return out


def _yaml_value(card: str, key: str) -> str:
    m = re.search(rf"(?m)^{re.escape(key)}: (.*)$", card)
    if not m:
        raise ValueError(f"the Space card has no {key!r} line in its YAML header")
    return m.group(1).strip()


LEADERBOARD_APP = '''"""contstim-bench leaderboard (Hugging Face Space): the Gradio app of
contstim_bench.leaderboard.app over the result files in results/ next to this file.

Environment: CONTSTIM_LEADERBOARD_RESULTS (another results folder), CONTSTIM_LEADERBOARD_QUEUE
(keep valid submissions), CONTSTIM_LEADERBOARD_ALLOW_EVAL=1 (let the Submit tab evaluate model specs).
GRADIO_SERVER_NAME / GRADIO_SERVER_PORT choose where it listens.
"""
import os
from pathlib import Path

from contstim_bench.leaderboard.app import ENV_RESULTS, create_app

RESULTS = Path(os.environ.get(ENV_RESULTS, Path(__file__).resolve().parent / "results"))

demo = create_app(RESULTS)

if __name__ == "__main__":
    demo.queue(default_concurrency_limit=4).launch()
'''

LEADERBOARD_CARD = """---
title: {title}
emoji: 🗣️
colorFrom: blue
colorTo: green
sdk: gradio
sdk_version: {sdk_version}
app_file: app.py
pinned: false
license: mit
short_description: Language-model probabilities vs human judgments of controversial sentence pairs
---

# contstim-bench leaderboard

How well do a language model's sentence probabilities predict which of two sentences people judge
more likely? Models are scored on the controversial sentence pairs of Golan, Siegelman,
Kriegeskorte & Baldassano (2023) against human choices: binarised accuracy, its noise ceiling and
signed-rank cosine similarity.

The board shows the {n} validated result files of `results/`. Submit a result JSON written by
`contstim evaluate --model SPEC --output FILE` in the Submit tab: every score is recomputed from
its per-sentence log-probabilities before it is accepted.

Installed from: `{requirement}`.
"""


def stage_leaderboard_space(out_dir: str | Path, source, results_dir: str | Path | None = None,
                            repo_id: str | None = None, endpoint: str | None = None,
                            validate: bool = True, datasets_dir=None) -> Path:
    """Write the leaderboard Space into ``out_dir`` (new or empty); returns it.

    ``results_dir``: the result files it shows (default: ``leaderboard/results`` of the
    development checkout); they are validated first unless ``validate`` is False.
    """
    if results_dir is None:
        root = repo_root()
        if root is None or not (root / "leaderboard" / "results").is_dir():
            raise ValueError("give `contstim space leaderboard --results DIR`: this installation has no leaderboard/results folder")
        results_dir = root / "leaderboard" / "results"
    results_dir = Path(results_dir)
    files = sorted(results_dir.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no result files (*.json) in {results_dir}")
    if repo_id is not None:
        check_repo_id(repo_id)
    if validate:
        from .leaderboard.site import load_results

        load_results(results_dir, validate=True, datasets_dir=datasets_dir)
    out = _prepare(out_dir)
    (out / "results").mkdir()
    for f in files:
        shutil.copyfile(f, out / "results" / f.name)
    (out / "app.py").write_text(LEADERBOARD_APP, encoding="utf-8")
    requirement = source.requirement(repo_id, endpoint)
    title = repo_id.split("/")[1] if repo_id else "contstim-bench leaderboard"
    (out / "README.md").write_text(LEADERBOARD_CARD.format(
        title=title, sdk_version=gradio_sdk_version("5.0.0"), n=len(files), requirement=requirement), encoding="utf-8")
    _write_requirements(out, [], source, repo_id, endpoint)
    return out


def stage_space(kind: str, out_dir: str | Path, *, wheel=None, git=None, repo_id: str | None = None,
                endpoint: str | None = None, results_dir=None, validate: bool = True, datasets_dir=None) -> Path:
    """``contstim space KIND``: the metric (``kind="metric"``) or leaderboard Space folder."""
    source = package_source(wheel, git)
    if kind == "metric":
        return stage_metric_space(out_dir, source, repo_id, endpoint)
    if kind == "leaderboard":
        return stage_leaderboard_space(out_dir, source, results_dir, repo_id, endpoint, validate, datasets_dir)
    raise ValueError(f"unknown Space kind {kind!r}; known: metric, leaderboard")
