"""contstim_bench.scoring.devices: the one device/dtype resolution every torch scorer uses."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from contstim_bench.scoring import causal, masked, rnn  # noqa: E402
from contstim_bench.scoring.devices import describe_device_dtype, resolve_device, resolve_dtype  # noqa: E402


@pytest.mark.parametrize(
    "given, want",
    [
        (None, torch.float32), ("float32", torch.float32), ("fp32", torch.float32), ("FP32", torch.float32),
        ("torch.float32", torch.float32), ("bfloat16", torch.bfloat16), ("bf16", torch.bfloat16),
        ("float16", torch.float16), ("fp16", torch.float16), ("half", torch.float16),
        ("float64", torch.float64), ("fp64", torch.float64), ("double", torch.float64),
        (torch.bfloat16, torch.bfloat16), (torch.float64, torch.float64),
    ],
)
def test_resolve_dtype(given, want):
    assert resolve_dtype(given) is want


@pytest.mark.parametrize("bad", ["float8", "int64", "", torch.int64, torch.bool])
def test_resolve_dtype_names_a_bad_value(bad):
    with pytest.raises(ValueError, match=f"unknown dtype {bad!r}".replace("(", r"\(").replace(")", r"\)")):
        resolve_dtype(bad)


def test_resolve_device():
    default = resolve_device(None)
    assert default.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    with pytest.raises(ValueError, match="invalid device 'nonsense'"):
        resolve_device("nonsense")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")
    else:
        with pytest.raises(ValueError, match="CUDA device"):
            resolve_device(f"cuda:{torch.cuda.device_count()}")


def test_describe_device_dtype():
    assert describe_device_dtype(torch.device("cpu"), torch.bfloat16) == ("cpu", "bfloat16")


def test_every_scorer_uses_the_one_resolution():
    for module in (causal, masked, rnn):
        assert module.resolve_dtype is resolve_dtype and module.resolve_device is resolve_device
