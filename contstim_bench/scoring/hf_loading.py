"""Hugging Face model folders of the ``hf-causal`` and ``hf-masked`` families: where a target's
files are, whether the checkpoint has the head the family needs, loading it, and the files (or,
for a model given as an object, the tensors) that identify it in the score cache.

The two families resolve a target differently: ``hf-causal`` (:func:`causal_folder`) downloads a
Hub id it does not find in the cache (config, tokenizer and weight files only) and treats a
target with more than one ``/`` as a path; ``hf-masked`` (:func:`masked_folder`) accepts only a
local folder or a model already in the Hugging Face cache.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from . import file_memo
from .offline import MARKER


# --------------------------------------------------------------------------- hf-causal

#: the non-weight files that identify an hf-causal model (with every *.safetensors / *.bin)
CAUSAL_FINGERPRINT_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
    "spiece.model",
    "added_tokens.json",
)


def _looks_like_path(target: str) -> bool:
    """A local path rather than a Hub id (``name`` or ``org/name``)."""
    return target.startswith((".", "/", "~")) or target.count("/") > 1 or "\\" in target


_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def snapshot_commit(folder: Path) -> str | None:
    """The commit of a Hugging Face cache snapshot folder (``.../snapshots/<40-hex commit>``),
    None for any other folder."""
    folder = Path(folder)
    return folder.name if folder.parent.name == "snapshots" and _COMMIT.match(folder.name) else None


def check_local_revision(folder: Path, revision: str | None, spec: str) -> None:
    """A local folder has no revision that transformers checks (``from_pretrained(folder,
    revision=...)`` ignores it), so ``?revision=`` on a folder is accepted only for a Hub cache
    snapshot whose commit starts with it; ValueError otherwise."""
    if revision is None:
        return
    commit = snapshot_commit(folder)
    if commit is None:
        raise ValueError(
            f"{spec}: revision={revision} cannot be checked for the local folder {folder} (transformers ignores "
            f"revision= for local folders); drop ?revision= or give the Hub id (e.g. org/name?revision=...)")
    if not commit.startswith(revision):
        raise ValueError(f"{spec}: the folder {folder} is the snapshot of commit {commit}, not revision {revision}")


def causal_folder(target: str, revision: str | None = None) -> Path:
    """Folder holding the model files: a local folder, or the Hub cache snapshot of an id at
    ``revision`` (a branch, tag or commit; None: the default branch)."""
    path = Path(target).expanduser()
    if path.is_dir():
        check_local_revision(path, revision, f"hf-causal:{target}")
        return path
    if path.exists():
        raise FileNotFoundError(
            f"hf-causal target {target} is a file; give the model folder (config.json, weights)"
        )
    if _looks_like_path(target):
        raise FileNotFoundError(f"model folder not found: {target}")
    from huggingface_hub import snapshot_download

    try:
        return Path(
            snapshot_download(
                target,
                revision=revision,
                allow_patterns=["*.json", "*.safetensors", "*.bin", "*.txt", "*.model"],
                ignore_patterns=["*onnx*", "*flax*", "*tf_model*", "*msgpack*", "*.h5"],
            )
        )
    except Exception as exc:  # offline without a cached copy, unknown repo, no network
        raise FileNotFoundError(
            f"model {target!r} is neither a local folder nor available from the Hugging Face "
            f"Hub cache ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        ) from None


def recorded_start_token(folder: Path) -> str | None:
    """The ``start_token`` recorded in ``folder/contstim_offline.json`` (a converted offline
    model), or None without that file; ValueError names a marker file that cannot be read."""
    marker = Path(folder) / MARKER
    if not marker.is_file():
        return None
    try:
        meta = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{marker}: not a readable JSON file ({exc})") from None
    start = meta.get("start_token") if isinstance(meta, dict) else None
    if start is None:
        return None
    if not isinstance(start, str) or not start:
        raise ValueError(f"{marker}: start_token must be a non-empty string, got {start!r}")
    return start


def _is_causal_lm_architecture(arch: str) -> bool:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    names = set()
    for value in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values():
        names.update(value if isinstance(value, (list, tuple)) else [value])
    return arch in names or arch.endswith("ForCausalLM") or arch.endswith("LMHeadModel")


def check_causal_config(folder: Path, name: str):
    """The model's config; ValueError when its architecture has no causal LM head."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(folder)
    archs = list(getattr(config, "architectures", None) or [])
    if archs and not any(_is_causal_lm_architecture(a) for a in archs):
        raise ValueError(
            f"model {name} has no causal LM head (architectures {archs}); hf-causal needs a "
            f"*ForCausalLM / *LMHeadModel checkpoint (masked LMs: use hf-masked:)"
        )
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(f"model {name} is an encoder-decoder model, not a causal LM")
    return config


def parse_max_memory(text: str | None) -> dict | None:
    """``?max_memory=0:20GiB,1:20GiB,cpu:60GiB`` -> ``{0: "20GiB", 1: "20GiB", "cpu": "60GiB"}``
    (what ``from_pretrained(max_memory=...)`` takes); ValueError names a malformed entry."""
    if text is None:
        return None
    out: dict = {}
    for item in text.split(","):
        key, sep, size = item.strip().partition(":")
        if not sep or not re.fullmatch(r"\d+(\.\d+)?\s*(GiB|GB|MiB|MB|KiB|KB|B)", size.strip()):
            raise ValueError(f"max_memory entry {item!r} must be DEVICE:SIZE, e.g. 0:20GiB or cpu:60GiB")
        key = key.strip()
        if key.isdigit():
            out[int(key)] = size.strip()
        elif key in ("cpu", "disk", "mps"):
            out[key] = size.strip()
        else:
            raise ValueError(f"max_memory device {key!r} must be a GPU index (0, 1, ...), cpu or disk")
    return out


DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")


def check_device_map(device_map: str | None) -> str | None:
    """``?device_map=``: auto, balanced, balanced_low_0, sequential or one device (cpu, cuda:1);
    ValueError otherwise."""
    if device_map is None or device_map in DEVICE_MAPS:
        return device_map
    import torch

    try:
        torch.device(device_map)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"device_map={device_map!r}: use {', '.join(DEVICE_MAPS)} or a device (cpu, cuda:0)") from None
    return device_map


def load_causal_lm(folder: Path, name: str, dtype, device, device_map: str | None = None,
                   max_memory: dict | None = None):
    """``AutoModelForCausalLM`` from ``folder`` in eval mode; ValueError if it has no LM head.

    ``device_map`` (``"auto"`` ...) lets accelerate place the layers over the GPUs and the CPU
    (within ``max_memory`` per device) instead of moving the whole model to ``device``."""
    from transformers import AutoModelForCausalLM

    config = check_causal_config(folder, name)
    # a copy: from_pretrained rewrites the sizes of the dict it gets in place
    placement = {"device_map": device_map, "max_memory": dict(max_memory) if max_memory else None} if device_map else {}
    try:
        model, info = AutoModelForCausalLM.from_pretrained(
            folder, dtype=dtype, output_loading_info=True, **placement
        )
    except ValueError as exc:
        if "Unrecognized configuration class" in str(exc):
            raise ValueError(
                f"model {name} ({type(config).__name__}) has no causal LM head; "
                f"hf-causal needs a causal LM (masked LMs: use hf-masked:)"
            ) from None
        raise
    missing = [k for k in info.get("missing_keys", []) if "lm_head" in k or "embed_out" in k]
    if missing and not getattr(model.config, "tie_word_embeddings", False):
        raise ValueError(f"model {name} has no trained LM head (missing weights {missing[:3]})")
    if not device_map:
        model.to(device)
    model.eval()
    return model


def load_tokenizer(folder: Path):
    """``AutoTokenizer.from_pretrained(folder)``, loaded once per process while the folder's files
    stay the same (:func:`.file_memo.shared`; Gemma-3's takes about 4 CPU-seconds): the scorers
    of one model share it and never change it."""
    from transformers import AutoTokenizer

    files = sorted(p for p in Path(folder).iterdir() if p.is_file())
    return file_memo.shared("tokenizer", [Path(folder), *files], lambda: AutoTokenizer.from_pretrained(folder))


def causal_model_files(folder: Path) -> list[Path]:
    """The files that identify an ``hf-causal`` model: weights, config and tokenizer files."""
    return sorted(
        p for p in Path(folder).iterdir()
        if p.suffix in (".safetensors", ".bin") or p.name in CAUSAL_FINGERPRINT_FILES
    )


# --------------------------------------------------------------------------- hf-masked

def masked_folder(target: str) -> Path:
    """Folder holding the model files: a local folder, or the Hub cache snapshot of an id
    already downloaded (nothing is downloaded)."""
    path = Path(target).expanduser()
    if path.exists():
        if not path.is_dir():
            raise FileNotFoundError(f"hf-masked:{target}: not a model folder")
        return path
    if target.startswith((".", "/", "~")):
        raise FileNotFoundError(f"hf-masked:{target}: no such model folder")
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(target, local_files_only=True))
    except Exception as exc:  # offline and not cached, or not a repo id
        raise FileNotFoundError(
            f"hf-masked:{target}: neither a local folder nor a cached Hugging Face model "
            f"({type(exc).__name__}); download it first or give a path"
        ) from None


def load_masked_lm(folder: Path, dtype):
    """(model, tokenizer) from a local folder; ValueError when there is no trained MLM head."""
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

    config = AutoConfig.from_pretrained(folder)
    try:
        model, info = AutoModelForMaskedLM.from_pretrained(folder, dtype=dtype, output_loading_info=True)
    except ValueError as exc:
        raise ValueError(
            f"{folder}: model type {config.model_type!r} has no masked-LM head "
            f"(AutoModelForMaskedLM cannot load it: {str(exc).splitlines()[0]})"
        ) from None
    missing = sorted(info.get("missing_keys", []))
    if missing:
        raise ValueError(
            f"{folder}: checkpoint has no trained masked-LM head (missing weights: "
            f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''})"
        )
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return model, tokenizer


def masked_model_files(folder: Path) -> list[Path]:
    """The files that identify an ``hf-masked`` model: every file of its folder (sub-folders
    included), except those under a ``.cache`` folder."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and ".cache" not in p.parts)


def object_fingerprint(model, tokenizer, extra: dict) -> str:
    """sha256 over a model's state dict and its tokenizer's serialisation."""
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    h.update((backend.to_str() if backend is not None else repr(tokenizer)).encode())
    h.update(json.dumps(extra, sort_keys=True).encode())
    return h.hexdigest()


def cache_argument(model) -> str:
    """The name under which ``model.forward`` takes a key/value cache: ``cache`` where
    transformers has renamed it (5.24 warns on every call given ``past_key_values``, which it
    removes in 5.40), ``past_key_values`` in earlier 5.x releases."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
