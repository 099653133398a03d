"""Which model a result is, and what the leaderboard calls it.

**Identity** (:func:`identity`): two results are the same leaderboard entry when they come from
the same weights read out the same way: the content fingerprint of the model files
(``model.fingerprint``: a hash of the weights, configuration and tokenizer files, or of the
n-gram/RNN file, or of the reference log-probabilities), the model family and scoring method, the
scorer settings that change the numbers (start token, dtype, the spec's options such as a masked
LM's ``method``/``normalize``/``orders``, in canonical form: :func:`identity_options`), and
``model.revision`` when there is one.  On a verified entry the fingerprint and revision are the
ones re-scoring computed (:func:`.verification.rescore` refuses a file that claims others).  Not part of
it: the model's name, the path or Hub id it was loaded from, the batch size, the device, and the
log-probabilities themselves (the same model evaluated with another batch size differs by about
1e-4 nats, and is still the same model).

**Display name** (:func:`display_name`): a model name, never a path.  ``model.name`` when the
user chose one (``--name``, a reference model); for a name that is the model spec
(``contstim evaluate``'s default), the spec's target: a short name or Hub id as it is
(``smollm2-135m``, ``org/model``), a local folder or file by its last component
(``hf-causal:runs/ckpt/final`` -> ``final``); options that change the numbers follow in
parentheses (``bert-base-cased (method=pll-word-l2r)``).  The path stays in ``model.spec`` and the
provenance.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import PurePosixPath, PureWindowsPath

IDENTITY_SETTINGS = ("start_token", "dtype")
"""Fields of a result's ``model`` block that change the log-probabilities and belong to identity."""
FOLDED_OPTIONS = {
    "hf-causal": {"start", "revision", "device_map", "max_memory"},
    "kenlm": {"bos", "eos"},
    "prompt": {"template", "chat", "start"},
    "precomputed": {"split", "sentences"},
}
"""Spec options that are no part of the identity's ``options``: the content fingerprint already
carries their effect (the start token, n-gram sentence boundaries, a prompt's template and chat
formatting, a reference's split), ``revision`` is a field of its own, and the others
(``device_map``, ``max_memory``) do not change the numbers."""
DEFAULT_OPTIONS = {
    "hf-masked": {"method": "approx-ll", "normalize": "auto", "orders": "100", "seed": "0"},
    "prompt": {"order": "given"},
}
"""Options that, at these values, say what leaving them out says (the defaults of
:func:`contstim_bench.scoring.masked.from_spec` and :func:`contstim_bench.scoring.prompting.from_spec`)."""
SUFFIXES = (".arpa", ".binary", ".bin", ".klm", ".npy")
"""File suffixes dropped from a file target's display name (``kenlm:models/trigram.arpa`` -> ``trigram``)."""


def _spec(result: dict) -> tuple[str, str, dict[str, str]] | None:
    from ..scoring.spec import parse_spec

    spec = result.get("model", {}).get("spec")
    try:
        return parse_spec(spec)
    except (TypeError, ValueError):
        return None


def identity_options(family: str | None, options: dict[str, str]) -> dict[str, str]:
    """The options of a spec that belong to the identity, in canonical form: those of
    :data:`FOLDED_OPTIONS` and those at their default (:data:`DEFAULT_OPTIONS`) dropped, so
    ``kenlm:x.arpa?bos=1&eos=true`` and ``kenlm:x.arpa`` are one model, as are
    ``smollm2-135m?start=<|endoftext|>`` and ``smollm2-135m``."""
    folded = FOLDED_OPTIONS.get(family or "", set())
    defaults = DEFAULT_OPTIONS.get(family or "", {})
    values = {k: _canonical_value(v) for k, v in sorted(options.items()) if k not in folded}
    return {k: v for k, v in values.items() if k not in defaults or _canonical_value(defaults[k]) != v}


_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _canonical_value(value: str) -> str:
    """An option value as the scorers read it: booleans as ``true``/``false``, integers without
    leading zeros or sign (``0100`` -> ``100``), anything else as written."""
    text = value.strip().lower()
    if text in _TRUE:
        return "true"
    if text in _FALSE:
        return "false"
    if text.lstrip("+").isdigit() and text.isascii():
        return str(int(text))
    return value


def identity_fields(result: dict) -> dict:
    """What makes a result's model the model it is (see the module docstring), as a JSON-able dict."""
    model = result.get("model", {})
    parsed = _spec(result)
    family, options = (parsed[0], parsed[2]) if parsed is not None else (None, {})
    return {
        "fingerprint": model.get("fingerprint"),
        "family": family,
        "method": model.get("method"),
        "options": identity_options(family, options),
        **{k: model.get(k) for k in IDENTITY_SETTINGS},
        "revision": model.get("revision"),
    }


def identity(result: dict) -> str:
    """sha256 (hex) of :func:`identity_fields`: equal for two results of the same model."""
    text = json.dumps(identity_fields(result), sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def describe_identity(result: dict) -> str:
    """A short human description of the identity (for messages)."""
    f = identity_fields(result)
    parts = [f"fingerprint {str(f['fingerprint'])[:12]}", f"method {f['method']}"]
    parts += [f"{k} {f[k]}" for k in IDENTITY_SETTINGS if f[k] is not None]
    parts += [f"{k}={v}" for k, v in f["options"].items()]
    if f["revision"]:
        parts.append(f"revision {f['revision']}")
    return ", ".join(parts)


def _is_path(target: str, folder: str | None, path_family: bool) -> bool:
    """Whether a spec target names a local file or folder rather than a Hub id or short name."""
    if path_family or target.startswith(("/", "./", "../", "~", ".\\")) or "\\" in target:
        return True
    if re.match(r"^[A-Za-z]:[\\/]", target) or target.count("/") > 1:
        return True
    if "/" in target:  # "org/name" is a Hub id unless it was loaded from a folder, not the Hub cache
        return folder is not None and "/snapshots/" not in folder.replace("\\", "/")
    return False


def display_name(result: dict) -> str:
    """The name the leaderboard shows for a result (see the module docstring)."""
    from ..scoring.spec import FAMILIES, format_spec

    model = result.get("model", {})
    name = str(model.get("name", ""))
    parsed = _spec(result)
    spec_names = {model.get("spec"), model.get("spec_typed")}
    if parsed is not None:  # the name contstim evaluate gives: the spec, or a precomputed model's target
        spec_names |= {format_spec(*parsed)} | ({parsed[1]} if parsed[0] == "precomputed" else set())
    if parsed is None or name not in spec_names:
        return name  # a name the user chose
    family, target, options = parsed
    if family == "precomputed":
        options = {k: v for k, v in options.items() if k != "sentences"}  # a pool array's text file: a path
    if family == "prompt":
        return name
    folder = model.get("folder") if isinstance(model.get("folder"), str) else None
    if _is_path(target, folder, FAMILIES[family].path_target):
        pure = PureWindowsPath(target) if "\\" in target else PurePosixPath(target)
        base = pure.name or target
        for suffix in SUFFIXES:
            if base.endswith(suffix) and len(base) > len(suffix):
                base = base[: -len(suffix)]
        target = base
    if options:
        target += " (" + ", ".join(f"{k}={v}" for k, v in sorted(options.items())) + ")"
    return target
