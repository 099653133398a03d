"""Hugging Face model folders of the ``hf-causal`` family: where a target's files are, whether
the checkpoint has a causal LM head, loading it, and the files that identify it in the score cache.
"""
from __future__ import annotations

import json
from pathlib import Path

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


def causal_folder(target: str) -> Path:
    """Folder holding the model files: a local folder, or the Hub cache snapshot of an id."""
    path = Path(target).expanduser()
    if path.is_dir():
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


def load_causal_lm(folder: Path, name: str, dtype, device):
    """``AutoModelForCausalLM`` from ``folder`` in eval mode; ValueError if it has no LM head."""
    from transformers import AutoModelForCausalLM

    config = check_causal_config(folder, name)
    try:
        model, info = AutoModelForCausalLM.from_pretrained(
            folder, dtype=dtype, output_loading_info=True
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
    model.to(device)
    model.eval()
    return model


def causal_model_files(folder: Path) -> list[Path]:
    """The files that identify an ``hf-causal`` model: weights, config and tokenizer files."""
    return sorted(
        p for p in Path(folder).iterdir()
        if p.suffix in (".safetensors", ".bin") or p.name in CAUSAL_FINGERPRINT_FILES
    )

