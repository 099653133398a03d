"""The benchmark as a Brain-Score Language plugin (contstim_bench.brainscore_plugin), run in Brain-Score.

`brainscore-language` 2.3.0 is installed in an environment of its own (numpy<2, transformers<5;
scripts/build_brainscore_venv.sh, built once per machine), the written plugin is placed where
Brain-Score finds a benchmark (a folder of `brainscore_language/benchmarks/`, in a light environment
layered over the cached one with its own copy of that package: tests/brainscore_env.py),
`load_benchmark` loads it (Brain-Score runs `pip install
-r` of its requirements.txt, as it does for any plugin) and Brain-Score's own Hugging Face subject
reads the sentences: a tiny GPT-2 made there by transformers 4, with a tokenizer that adds its
start token.  Its raw accuracy and SRCS on pll are those `contstim evaluate` computes for the same
folder with transformers 5 (1e-6), and so are the standard errors and ceilings; the plugin's own
test passes there; a subject answering NaN is refused by name."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from contstim_bench.brainscore_plugin.folder import write_plugin_folder

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def brainscore_python(tmp_path_factory, plugin) -> Path:
    """The python of a layer over Brain-Score's cached environment (built on first use, a few
    minutes), the plugin copied into its brainscore_language/benchmarks/ as a user installs one."""
    import brainscore_env

    try:
        base = brainscore_env.built()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    python = brainscore_env.layer(tmp_path_factory.mktemp("bs") / "brainscore-env", base)
    benchmarks = Path(run_in_brainscore(python, "import brainscore_language, os; "
                                        "print(os.path.dirname(brainscore_language.__file__))").strip()) / "benchmarks"
    assert python.parent.parent in benchmarks.parents  # the layer's copy, not the cached environment's
    shutil.copytree(plugin, benchmarks / "golan2023")
    return python


@pytest.fixture(scope="module")
def plugin(tmp_path_factory, datasets) -> Path:
    notes: list[str] = []
    folder, names = write_plugin_folder(tmp_path_factory.mktemp("plugin") / "out", datasets, log=notes.append)
    assert names == ["Golan2023.pll-accuracy", "Golan2023.pll-srcs"]  # the main experiment's data is absent
    assert any("no benchmark for the main experiment" in n for n in notes)
    return folder


def run_in_brainscore(python: Path, code: str, *args: str, timeout: int = 900) -> str:
    """``code`` run by the layer's python (its pip first on PATH: Brain-Score runs ``pip install -r``
    of the plugin's requirements.txt); its stdout (AssertionError with its stderr when it fails)."""
    env = {**os.environ, "PYTHONPATH": str(TESTS),
           "PATH": os.pathsep.join([str(python.parent), os.environ.get("PATH", "")]),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True, env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


MAKE_AND_SCORE = """
import json, sys
import brainscore_env
import contstim_bench
from brainscore_language import load_benchmark
from brainscore_language.model_helpers.huggingface import HuggingfaceSubject

brainscore_env.save_subject_model(sys.argv[1], start_token=sys.argv[2] == "start-token")
assert contstim_bench.__file__.startswith(sys.argv[3]), contstim_bench.__file__  # this checkout's package
subject = HuggingfaceSubject(model_id=sys.argv[1], region_layer_mapping={})
out = {}
for ident in sys.argv[4:]:
    benchmark = load_benchmark(ident)
    score = benchmark(subject)
    out[ident] = {"score": float(score), "raw": float(score.raw), "ceiling": float(score.ceiling),
                  "error": score.attrs["error"], "ceiling_upper": score.attrs["ceiling_upper"],
                  "units": score.attrs["units"], "bibtex": benchmark.bibtex,
                  "result": json.loads(score.attrs["contstim_result"])}
print(json.dumps(out))
"""


def make_and_score(python: Path, folder: Path, start: str,
                   benchmarks: tuple[str, ...] = ("Golan2023.pll-accuracy", "Golan2023.pll-srcs")) -> dict:
    """A tiny GPT-2 saved to ``folder`` by transformers 4 (its tokenizer adding a start token, or
    not), scored by the plugin's ``benchmarks`` in Brain-Score: one process (each start imports
    Brain-Score, torch and transformers 4 again, about 6 CPU-s)."""
    return json.loads(run_in_brainscore(python, MAKE_AND_SCORE, str(folder), start, str(REPO / "contstim_bench"),
                                        *benchmarks).splitlines()[-1])


@pytest.fixture(scope="module")
def subject_model(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("subject") / "tiny-gpt2-bos"


@pytest.fixture(scope="module")
def brainscore_scores(brainscore_python, subject_model) -> dict:
    return make_and_score(brainscore_python, subject_model, "start-token")


def test_brainscore_gives_contstim_evaluate_values(brainscore_scores, subject_model, datasets, plugin):
    from contstim_bench.driver import RunOptions, evaluate

    # the same folder, read by transformers 5 and scored as `contstim evaluate` scores it (its start token first)
    mine = evaluate(f"hf-causal:{subject_model}", ["contstim.pll"], datasets_dir=datasets,
                    options=RunOptions(cache=False, progress=False), log=lambda m: None)["contstim.pll"]
    entry = mine["experiments"]["pll"]["all"]
    for measure in ("accuracy", "srcs"):
        got = brainscore_scores[f"Golan2023.pll-{measure}"]
        assert got["raw"] == pytest.approx(entry[measure], abs=1e-6)
        assert got["error"] == pytest.approx(entry[f"{measure}_stderr"], abs=1e-6)
        assert got["ceiling"] == pytest.approx(entry[f"{measure}_noise_ceiling"]["lower"], abs=1e-12)
        assert got["ceiling_upper"] == pytest.approx(entry[f"{measure}_noise_ceiling"]["upper"], abs=1e-12)
        assert got["units"] == entry["n_units"] == 30
        # Brain-Score's ceiling_normalize: over the lower ceiling, clipped to [0, 1]
        assert got["score"] == pytest.approx(min(1.0, max(0.0, got["raw"] / got["ceiling"])), abs=1e-12)
        assert "golan2023testing" in got["bibtex"]
    # a subject of its own, not the reference subject the plugin's test uses
    reference = json.loads((plugin / "reference.json").read_text())["benchmarks"]["Golan2023.pll-srcs"]
    assert abs(brainscore_scores["Golan2023.pll-srcs"]["raw"] - reference["reference"]["raw"]) > 0.01
    # every sentence's log-probability agrees (float32 sums of Brain-Score against the package's float64)
    theirs = brainscore_scores["Golan2023.pll-accuracy"]["result"]["logprobs"]
    assert set(theirs) == set(mine["logprobs"]) and len(theirs) == 264
    assert max(abs(theirs[s] - mine["logprobs"][s]) for s in theirs) < 1e-3


def test_the_plugins_own_test_passes_in_brainscore(brainscore_python):
    """The plugin's test.py (a subject reading with RoBERTa's published log-probabilities must score
    what the package computed when it wrote the plugin), run by pytest in Brain-Score's environment."""
    out = run_in_brainscore(brainscore_python,
                            "import sys, pytest; import brainscore_language.benchmarks.golan2023.test as t; "
                            "print(t.__file__, flush=True); "
                            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', t.__file__]))")
    test = out.splitlines()[0]
    assert test.endswith(os.path.join("brainscore_language", "benchmarks", "golan2023", "test.py"))
    assert Path(brainscore_python).parent.parent in Path(test).parents  # the copy placed in the layer
    assert "2 passed" in out


BAD_SUBJECT = """
import json, sys
from brainscore_core.supported_data_standards.brainio.assemblies import BehavioralAssembly
from brainscore_language import load_benchmark
from brainscore_language.artificial_subject import ArtificialSubject

class BadSubject(ArtificialSubject):
    def __init__(self, value):
        self.value = value
    def identifier(self):
        return "bad-subject"
    def start_behavioral_task(self, task):
        pass
    def digest_text(self, text):
        bits = float(self.value) if text == sys.argv[1] else 10.0 + len(text) / 7
        return {"behavior": BehavioralAssembly([bits], coords={"stimulus": ("presentation", [text])},
                                               dims=["presentation"])}

benchmark = load_benchmark("Golan2023.pll-accuracy")
errors = {}
for value in sys.argv[2:]:
    try:
        benchmark(BadSubject(value))
    except ValueError as exc:
        errors[value] = str(exc)
print(json.dumps(errors))
"""


def test_a_subject_without_a_reading_time_is_named(brainscore_python, datasets):
    from contstim_bench.brainscore_plugin.hooks import sentences

    sentence = sentences("contstim.pll", datasets)[7]
    values = ["nan", "inf", "-3"]
    errors = json.loads(run_in_brainscore(brainscore_python, BAD_SUBJECT, sentence, *values).splitlines()[-1])
    assert sorted(errors) == sorted(values)  # each refused
    for value, message in errors.items():
        assert repr(sentence) in message and "expected a finite number of bits >= 0" in message
        assert ("tokenizer adds no start token" in message) == (value == "nan")


def test_without_a_start_token_brainscore_leaves_the_first_token_out(brainscore_python, tmp_path, datasets):
    """What the benchmark states for a tokenizer that adds no start token: Brain-Score's subject
    scores log P(w2 ... wn | w1), computed here by hand from the model's float64 log-softmax, not the
    package's log P(w1 ... wn | start token)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from contstim_bench.driver import RunOptions, evaluate

    folder = tmp_path / "tiny-gpt2-no-start"
    got = make_and_score(brainscore_python, folder, "no-start-token", ("Golan2023.pll-accuracy",))
    theirs = got["Golan2023.pll-accuracy"]["result"]["logprobs"]
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder).eval()
    sentences = sorted(theirs)[:40]
    with torch.no_grad():
        for sentence in sentences:
            ids = tokenizer(sentence, add_special_tokens=False, return_tensors="pt")["input_ids"]
            logp = torch.log_softmax(model(ids).logits[0].double(), dim=-1)
            by_hand = logp[:-1].gather(1, ids[0, 1:, None]).sum().item()
            assert theirs[sentence] == pytest.approx(by_hand, abs=1e-3), sentence
    mine = evaluate(f"hf-causal:{folder}", ["contstim.pll"], datasets_dir=datasets,
                    options=RunOptions(cache=False, progress=False), log=lambda m: None)["contstim.pll"]
    gaps = np.array([theirs[s] - mine["logprobs"][s] for s in theirs])
    assert np.mean(np.abs(gaps)) > 2.0 and np.mean(gaps) > 0  # the first token's log-probability, left out
    theirs_srcs = got["Golan2023.pll-accuracy"]["result"]["experiments"]["pll"]["all"]["srcs"]
    assert theirs_srcs != pytest.approx(mine["experiments"]["pll"]["all"]["srcs"], abs=1e-3)
