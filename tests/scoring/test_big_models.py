"""Options for models larger than one device, on CPU: device_map / max_memory (accelerate places
the layers), bfloat16 weights read out in float64, and revision= (resolved through the Hugging Face
cache, recorded as the result's model.revision; refused for a plain folder, which transformers
would load whatever revision was asked)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("accelerate")

from contstim_bench.scoring.hf_loading import parse_max_memory  # noqa: E402
from contstim_bench.scoring.registry import load_scorer  # noqa: E402
from tiny_causal import CORPUS, save_tiny_llama  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory, tiny):
    """A Hugging Face hub cache holding org/tiny at COMMIT (snapshot folder and refs/main)."""
    root = tmp_path_factory.mktemp("hub")
    repo = root / "models--org--tiny"
    shutil.copytree(tiny, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    return root


def test_device_map_auto_on_cpu_gives_the_same_scores(tiny):
    plain = load_scorer(f"hf-causal:{tiny}", cache=False, progress=False)
    mapped = load_scorer(f"hf-causal:{tiny}?device_map=auto&max_memory=cpu:2GiB", cache=False, progress=False)
    np.testing.assert_array_equal(plain.score(CORPUS), mapped.score(CORPUS))
    d = mapped.describe()
    assert d["device_map"] == "auto" and d["max_memory"] == {"cpu": "2GiB"} and d["device"] == "cpu"
    assert mapped.spec == f"hf-causal:{tiny}?device_map=auto&max_memory=cpu:2GiB"


def test_device_map_errors_name_the_problem(tiny):
    with pytest.raises(ValueError, match="max_memory= needs device_map="):
        load_scorer(f"hf-causal:{tiny}?max_memory=cpu:2GiB", cache=False)
    with pytest.raises(ValueError, match=r"max_memory entry 'cpu-2GiB' must be DEVICE:SIZE"):
        load_scorer(f"hf-causal:{tiny}?device_map=auto&max_memory=cpu-2GiB", cache=False)
    with pytest.raises(ValueError, match=r"device_map='everywhere': use auto, balanced"):
        load_scorer(f"hf-causal:{tiny}?device_map=everywhere", cache=False)
    assert parse_max_memory("0:20GiB, 1:18.5GB,cpu:60GiB") == {0: "20GiB", 1: "18.5GB", "cpu": "60GiB"}


def test_bfloat16_weights_read_out_in_float64(tiny):
    scorer = load_scorer(f"hf-causal:{tiny}", cache=False, progress=False, dtype="bfloat16")
    assert scorer.model.dtype == torch.bfloat16 and scorer.describe()["dtype"] == "bfloat16"
    got = scorer.score(CORPUS[:2])
    for sentence in CORPUS[:2]:
        (value,) = scorer.score([sentence])  # alone: no padding, the same forward as below
        ids = torch.tensor([[scorer.start_id, *scorer.tokenizer(sentence, add_special_tokens=False).input_ids]])
        with torch.inference_mode():
            logits = scorer.model(ids[:, :-1]).logits[0]  # bfloat16
        want = logits.double().log_softmax(-1).gather(1, ids[0, 1:, None]).sum().item()
        assert value == pytest.approx(want, abs=1e-9)  # float64 read-out of the bf16 logits
    float32 = load_scorer(f"hf-causal:{tiny}", cache=False, progress=False).score(CORPUS[:2])
    assert np.abs(got - float32).max() < 0.05 * np.abs(float32).max()  # bf16 weights: close, not equal
    assert scorer.fingerprint() != load_scorer(f"hf-causal:{tiny}", cache=False).fingerprint()


def test_revision_is_resolved_through_the_hub_cache_and_recorded(hub_cache, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub_cache))
    pinned = load_scorer(f"hf-causal:org/tiny?revision={COMMIT}", cache=False, progress=False)
    assert pinned.folder == hub_cache / "models--org--tiny" / "snapshots" / COMMIT
    assert pinned.describe()["revision"] == COMMIT
    assert load_scorer("hf-causal:org/tiny", cache=False).describe()["revision"] == COMMIT  # main -> commit
    import contstim_bench

    result = contstim_bench.evaluate_model(f"hf-causal:org/tiny?revision={COMMIT}", "pll", cache=False,
                                           progress=False, log=lambda m: None)
    assert result["model"]["revision"] == COMMIT and result["model"]["spec"] == f"hf-causal:org/tiny?revision={COMMIT}"
    with pytest.raises(FileNotFoundError, match="neither a local folder nor available"):
        load_scorer("hf-causal:org/tiny?revision=" + "f" * 40, cache=False)
    # the snapshot folder given as a path: its commit must match
    snap = pinned.folder
    assert load_scorer(f"hf-causal:{snap}?revision={COMMIT[:12]}", cache=False).describe()["revision"] == COMMIT
    with pytest.raises(ValueError, match=f"snapshot of commit {COMMIT}, not revision abc"):
        load_scorer(f"hf-causal:{snap}?revision=abc", cache=False)


def test_revision_of_a_plain_folder_is_refused(tiny):
    # transformers' from_pretrained(folder, revision=...) ignores the revision: the package refuses
    # it rather than record a revision nobody checked
    with pytest.raises(ValueError, match=r"cannot be checked for the local folder .*transformers ignores"):
        load_scorer(f"hf-causal:{tiny}?revision=v1.0", cache=False)
    assert load_scorer(f"hf-causal:{tiny}", cache=False).describe()["revision"] is None
