"""Device and dtype resolution, in one place for every torch-backed scorer.

``resolve_device`` and ``resolve_dtype`` turn what a user gives (``--device``, ``--dtype``, a
keyword argument: ``None``, a string, or a torch object) into a ``torch.device`` /
``torch.dtype``, and raise a ValueError that names the bad value; ``describe_device_dtype``
gives the strings recorded in a scorer's description (``"cpu"``, ``"float32"``).

torch is imported lazily, so importing this module stays cheap.
"""
from __future__ import annotations

#: accepted dtype names (lower case, optional ``torch.`` prefix) -> torch attribute
DTYPE_NAMES = {
    "float32": "float32", "fp32": "float32",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float16": "float16", "fp16": "float16", "half": "float16",
    "float64": "float64", "fp64": "float64", "double": "float64",
}
_CANONICAL = ("float32", "bfloat16", "float16", "float64")


def resolve_dtype(dtype):
    """``None`` / name / ``torch.dtype`` -> floating ``torch.dtype`` (``None`` -> float32).

    Names: float32 (fp32), bfloat16 (bf16), float16 (fp16, half), float64 (fp64, double), in
    any case and with or without a ``torch.`` prefix.  Anything else (``"float8"``,
    ``torch.int64``) raises ValueError naming the value.
    """
    import torch

    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        if not dtype.is_floating_point:
            raise ValueError(f"unknown dtype {dtype!r}: not a floating-point type; use one of "
                             f"{', '.join(_CANONICAL)}")
        return dtype
    name = DTYPE_NAMES.get(str(dtype).strip().lower().removeprefix("torch."))
    if name is None:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {', '.join(_CANONICAL)} "
                         f"(or bf16, fp16, half, fp32, fp64, double)")
    return getattr(torch, name)


def resolve_device(device):
    """``None`` -> this process's device under ``accelerate launch``, else ``cuda`` when available
    else ``cpu``; a name or ``torch.device`` otherwise.

    ValueError names a device torch does not parse, and a CUDA device (or index) that this
    machine does not have.
    """
    import torch

    if device is None:
        from .parallel import default_device

        launched = default_device()  # under accelerate launch: this process's own accelerator
        if launched is not None:
            return launched
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ValueError(f"invalid device {device!r}: {exc}") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r} requested but CUDA is not available")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device {device!r} requested but only {torch.cuda.device_count()} "
                             f"CUDA device(s) are visible")
    return dev


def describe_device_dtype(device, dtype) -> tuple[str, str]:
    """``(device, dtype)`` as recorded in descriptions: ``("cuda:0", "bfloat16")``."""
    return str(device), str(dtype).removeprefix("torch.")


def set_token_budget(max_tokens_per_batch) -> int | None:
    """``--max-tokens-per-batch``: None, or a positive int (padded tokens per forward pass);
    ValueError names anything else."""
    if max_tokens_per_batch is None:
        return None
    if isinstance(max_tokens_per_batch, bool) or not isinstance(max_tokens_per_batch, int) or max_tokens_per_batch < 1:
        raise ValueError(f"max_tokens_per_batch must be a positive integer, got {max_tokens_per_batch!r}")
    return max_tokens_per_batch
