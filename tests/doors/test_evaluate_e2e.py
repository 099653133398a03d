"""``contstim evaluate`` end to end with a causal model: the default-model wiring (the short name
``smollm2-135m`` resolved to a tiny random Llama built here, so no 135M model runs in the
tests), result file and provenance, the comparison table checked against an independent
computation, API == CLI, the second run served from the score cache, and the
evaluate-module example of docs/evaluate.md with a model the user scores themselves."""
from __future__ import annotations

import importlib.metadata
import json
import subprocess

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import contstim_bench  # noqa: E402
from contstim_bench.cli import main as cli_main  # noqa: E402
from contstim_bench.benchmarks.contstim import load_experiment, recompute, recompute_panels  # noqa: E402
from contstim_bench.results import validate_result  # noqa: E402
from contstim_bench.scoring.spec import DEFAULT_MODEL  # noqa: E402
from contstim_bench.scoring import offline  # noqa: E402

START = offline.OFFLINE_MODELS[DEFAULT_MODEL].start_token  # "<|endoftext|>"

DOCS_EXAMPLE = '''
import evaluate

import contstim_bench
from contstim_bench.data.load import load_config

trials = load_config("contstim", "trials", "pll").to_dict()  # one row per participant x trial
sentences = list(dict.fromkeys(trials["sentence1"] + trials["sentence2"]))  # 264, in contstim evaluate's order
lp = dict(zip(sentences, contstim_bench.score_sentences("smollm2-135m", sentences)))

contstim = evaluate.load(contstim_bench.metric_path())
columns = ["participant", "group", "pair_id", "sentence1", "sentence2", "trial_type",
           "sentence1_accept_model", "sentence1_reject_model",
           "sentence2_accept_model", "sentence2_reject_model"]
scores = contstim.compute(
    predictions=[lp[b] - lp[a] for a, b in zip(trials["sentence1"], trials["sentence2"])],
    references=trials["rating"],
    model_name="smollm2-135m",
    **{c: trials[c] for c in columns},
)
for condition, s in scores.items():
    print(f"{condition:<24} accuracy {s['accuracy']:.3f} "
          f"(noise ceiling {s['accuracy_noise_ceiling']['lower']:.3f}-{s['accuracy_noise_ceiling']['upper']:.3f}), "
          f"SRCS {s['srcs']:.3f}")
'''
"""The worked example of docs/evaluate.md (evaluate-module route): keep the two identical."""


def _tiny_causal_lm(folder, sentences):
    """A random 2-layer Llama with a byte-level BPE tokenizer trained on ``sentences``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=[START], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(sentences, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=START)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         bos_token_id=None, eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(20.0 if p.dim() > 1 else 1.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Private datasets + score cache; the default short name resolves to a tiny model."""
    root = tmp_path_factory.mktemp("e2e")
    datasets = root / "datasets"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTSTIM_DATASETS", str(datasets))
        mp.setenv("CONTSTIM_SCORE_CACHE", str(root / "scores.sqlite"))
        trials, _ = load_experiment("pll", datasets)
        sentences = list(dict.fromkeys(list(trials["sentence1"]) + list(trials["sentence2"])))
        tiny = _tiny_causal_lm(root / "tiny", sentences)
        real_model_dir = offline.model_dir

        def model_dir(name, *, progress=True):
            return tiny if name == DEFAULT_MODEL else real_model_dir(name, progress=progress)

        mp.setattr(offline, "model_dir", model_dir)
        yield {"root": root, "datasets": datasets, "tiny": tiny, "trials": trials}


@pytest.fixture(scope="module")
def first_run(env):
    """``contstim evaluate --datasets D`` (no --model, no --output) in an empty folder."""
    import contextlib
    import io
    import os

    work = env["root"] / "work"
    work.mkdir()
    out, err = io.StringIO(), io.StringIO()
    cwd, threads = os.getcwd(), torch.get_num_threads()
    os.chdir(work)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(["evaluate", "--datasets", str(env["datasets"]), "--threads", "1"])
        assert torch.get_num_threads() == 1
    finally:
        os.chdir(cwd)
        torch.set_num_threads(threads)
    assert code == 0, err.getvalue()
    path = work / "results" / f"{DEFAULT_MODEL}.json"
    return {"work": work, "path": path, "result": json.loads(path.read_text(encoding="utf-8")),
            "stdout": out.getvalue(), "stderr": err.getvalue()}


def test_default_model_run(env, first_run):
    result, err = first_run["result"], first_run["stderr"]
    assert result["model"]["spec"] == f"hf-causal:{DEFAULT_MODEL}" == result["model"]["name"]
    assert result["model"]["spec_typed"] == DEFAULT_MODEL
    assert result["model"]["method"] == "causal" and result["model"]["start_token"] == START
    assert list(result["experiments"]) == ["pll"]
    assert "contstim_Aug2021_n100_results_anon.csv" in result["skipped_experiments"]["main"]
    note = [line for line in err.splitlines() if line.startswith("note: experiment 'main' skipped")]
    assert len(note) == 1 and "contstim_Aug2021_n100_results_anon.csv" in note[0] and "rebuild" not in note[0]
    # said once: in the summary (stdout), not again on stderr
    assert "scored 264 sentences (0 from cache)" in first_run["stdout"] and "scored 264" not in err
    assert result["scoring"]["n_model_sentences"] == 264 and len(result["logprobs"]) == 264
    plots = sorted(p.name for p in (first_run["work"] / "results" / f"{DEFAULT_MODEL}_plots").iterdir())
    best = max(result["experiments"]["pll"]["all"]["comparisons"].items(), key=lambda kv: (kv[1]["accuracy"], kv[1]["srcs"]))[0]
    assert plots == sorted(f"pll_{kind}.{fmt}" for kind in ("accuracy", "srcs", f"scatter_{best}") for fmt in ("png", "svg"))
    assert "experiment pll" in first_run["stdout"] and "vs reference models" in first_run["stdout"]
    assert f"wrote the result to results/{DEFAULT_MODEL}.json" in err


def test_result_schema_and_provenance(env, first_run):
    from contstim_bench.data.load import fingerprint

    result = first_run["result"]
    validate_result(result)
    model = result["model"]
    assert model["dtype"] == "float32" and model["device"] == "cpu" and len(model["fingerprint"]) == 64
    prov = result["provenance"]
    assert prov["device"] == "cpu" and prov["dtype"] == "float32"
    for lib in ("torch", "transformers", "datasets"):
        assert prov["libraries"][lib] == importlib.metadata.version(lib)
    assert prov["package_version"] == contstim_bench.__version__
    root = contstim_bench.repo_root()
    if root is not None and (root / ".git").exists():
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        assert prov["git_commit"] == head
    assert prov["dataset_fingerprint"] == result["benchmark"]["dataset_fingerprint"] == fingerprint("contstim", env["datasets"])
    assert json.loads(json.dumps(recompute(result, env["datasets"]))) == result["experiments"]
    assert json.loads(json.dumps(recompute_panels(result, env["datasets"]))) == result["panels"]


def test_logprobs_are_the_models(env, first_run):
    """Three sentences scored here by hand (start token, then every token) match the result."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(env["tiny"])
    model = AutoModelForCausalLM.from_pretrained(env["tiny"]).eval()
    start = tokenizer.convert_tokens_to_ids(START)
    for sentence in list(first_run["result"]["logprobs"])[:3]:
        ids = torch.tensor([[start] + tokenizer(sentence, add_special_tokens=False).input_ids])
        with torch.inference_mode():
            logp = model(ids).logits[0, :-1].double().log_softmax(-1)
        expected = logp.gather(1, ids[0, 1:, None]).sum().item()
        assert first_run["result"]["logprobs"][sentence] == pytest.approx(expected, abs=1e-3)


def test_comparison_table_independently(env, first_run):
    """Accuracy per participant, deltas, head-to-head shares and the BH-adjusted Wilcoxon p-values
    of the paper's two families recomputed by hand."""
    from itertools import combinations

    from scipy.stats import false_discovery_control, wilcoxon

    result = first_run["result"]
    trials, refs = load_experiment("pll", env["datasets"])
    name = result["model"]["name"]
    models = {name: result["logprobs"], **refs}

    def ratios(lp, t):
        return np.array([lp[b] - lp[a] for a, b in zip(t["sentence1"], t["sentence2"])])

    def per_participant(lp, mask):
        t = trials[mask]
        ratio = ratios(lp, t)
        correct = (ratio > 0) == (t["rating"].to_numpy() >= 4)
        correct = np.where(ratio == 0, 0.5, correct)
        return t.assign(c=correct).groupby("participant")["c"].mean().sort_index()

    entry = result["experiments"]["pll"]["all"]
    everything = np.ones(len(trials), dtype=bool)
    acc = {m: per_participant(lp, everything) for m, lp in models.items()}
    mine = acc[name]
    assert entry["accuracy"] == pytest.approx(mine.mean(), abs=1e-12)
    assert entry["accuracy_by_unit"] == pytest.approx({str(k): v for k, v in mine.items()}, abs=1e-12)
    # family 1: every model of the panel vs the lower ceiling (all on the same trials here)
    ceiling = entry["accuracy_noise_ceiling"]["lower_by_unit"]
    lower = [ceiling[str(u)] for u in mine.index]
    raw = [wilcoxon(acc[m].to_numpy(), lower, zero_method="zsplit").pvalue for m in models]
    assert entry["p_vs_lower_ceiling"]["accuracy"] == pytest.approx(false_discovery_control(raw, method="bh")[0], rel=1e-9)
    # family 2: every pair of models (all 21 compared on the same trials)
    pairs = list(combinations(models, 2))
    raw = [1.0 if np.array_equal(acc[a], acc[b]) else
           wilcoxon(acc[a].to_numpy(), acc[b].to_numpy(), zero_method="zsplit").pvalue for a, b in pairs]
    adjusted = dict(zip(pairs, false_discovery_control(raw, method="bh")))
    assert entry["bh_families"]["comparisons"]["size"] == len(pairs) == 21
    for ref, comp in entry["comparisons"].items():
        theirs = acc[ref]
        assert comp["basis"] == "same_trials" and comp["selection"] == "all"
        assert comp["accuracy"] == pytest.approx(theirs.mean(), abs=1e-12)
        assert comp["accuracy_delta"] == pytest.approx((mine - theirs).mean(), abs=1e-12)
        assert comp["accuracy_p_bh"] == pytest.approx(adjusted[(name, ref)], rel=1e-9)
        assert comp["accuracy_significant"] == (adjusted[(name, ref)] < 0.05)
        assert comp["accuracy_better"] == (name if comp["accuracy_delta"] > 0 else ref if comp["accuracy_delta"] < 0 else "tie")
    # head-to-head on the synthetic pairs: the new model meets each reference on every synthetic trial
    syn = (trials["trial_type"] == "synthetic_vs_synthetic").to_numpy()
    t = trials[syn]
    for ref, h in result["experiments"]["pll"]["synthetic_vs_synthetic"]["head_to_head"].items():
        ra, rb = ratios(models[name], t), ratios(refs[ref], t)
        dis = np.sign(ra) * np.sign(rb) < 0
        assert h["selection"] == "all" and h["n_pairs_selected"] == 120
        assert h["n_trials"] == int(dis.sum()) and h["n_pairs"] == t["pair_id"][dis].nunique()
        if dis.any():
            chose = ((t["rating"].to_numpy() >= 4) == (ra > 0))[dis]
            shares = pd.Series(chose.astype(float), index=t["participant"].to_numpy()[dis]).groupby(level=0).mean()
            assert h["share"] == pytest.approx(shares.mean(), abs=1e-12)
        else:
            assert h["share"] is None and h["better"] is None
    # the new model is targeted by no synthetic trial: it is not compared on per-unit scores with the
    # references there (they are evaluated on other trials); each reference keeps its own selection in
    # the panel: the pinned value of the paper's follow-up experiment
    assert result["experiments"]["pll"]["synthetic_vs_synthetic"]["comparisons"] == {}
    roberta = result["panels"]["pll"]["synthetic_vs_synthetic"]["models"]["roberta"]
    assert roberta["selection"] == "targeted" and roberta["accuracy"] == pytest.approx(0.8041666666666667, abs=1e-12)


def test_second_run_is_served_from_the_cache(env, first_run, capsys, monkeypatch):
    monkeypatch.chdir(first_run["work"])
    out = first_run["work"] / "again.json"
    assert cli_main(["evaluate", "--datasets", str(env["datasets"]), "--output", str(out), "--no-plots"]) == 0
    captured = capsys.readouterr()
    assert "scored 264 sentences (264 from cache)" in captured.out and "scored 264" not in captured.err
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["scoring"]["n_model_sentences"] == 0 and again["scoring"]["n_from_cache"] == 264
    assert again["logprobs"] == first_run["result"]["logprobs"]
    assert again["experiments"] == first_run["result"]["experiments"]
    assert not (first_run["work"] / "again_plots").exists()


def test_api_equals_cli(env, first_run, tmp_path):
    from contstim_bench.scoring.base import ScoreCache

    messages = []
    threads = torch.get_num_threads()
    try:  # the CLI ran with --threads 1: the same kernels give the same floats
        api = contstim_bench.evaluate_model(
            experiments="pll", datasets_dir=env["datasets"], cache=ScoreCache(tmp_path / "fresh.sqlite"),
            output=tmp_path / "api.json", plots=True, log=messages.append, progress=False, threads=1,
        )
    finally:
        torch.set_num_threads(threads)
    cli = first_run["result"]
    assert api["scoring"]["n_model_sentences"] == 264  # a fresh cache: the model really ran
    for key in ("model", "benchmark", "experiments", "panels", "logprobs"):
        assert json.loads(json.dumps(api[key])) == cli[key], key
    assert "skipped_experiments" not in api  # pll was asked for explicitly
    assert {k: v for k, v in api["provenance"].items() if k != "created"} == \
        {k: v for k, v in cli["provenance"].items() if k != "created"}
    assert json.loads((tmp_path / "api.json").read_text(encoding="utf-8")) == json.loads(json.dumps(api))
    assert len(list((tmp_path / "api_plots").glob("*.png"))) == 3
    assert any(m.startswith("wrote 6 figures to") for m in messages)


@pytest.mark.parametrize(
    "kwargs,exc,message",
    [
        ({"spec": 42}, TypeError, "spec must be a model spec string or a Scorer, got int"),
        ({"experiments": "nope"}, ValueError, "unknown experiment 'nope'; known: main, pll, all, or a round of the "
                                              "datasets folder"),  # as --experiment nope
        ({"scatter_reference": "gpt3"}, ValueError, "unknown scatter reference model 'gpt3'"),
        ({"plots": True}, ValueError, "plots=True puts the figures next to the result file: give output too"),
        ({"threads": 0}, ValueError, "threads must be a positive integer, got 0"),
        ({"spec": "hf-causal:/nonexistent/model"}, FileNotFoundError, "model folder not found: /nonexistent/model"),
    ],
)
def test_api_bad_input(env, kwargs, exc, message):
    with pytest.raises(exc, match=message):
        contstim_bench.evaluate_model(**{"datasets_dir": env["datasets"], **kwargs})


def test_docs_evaluate_module_example(env, first_run, capsys, monkeypatch):
    """The example of docs/evaluate.md as written (``smollm2-135m`` is the tiny model here), scored afresh with
    an empty score cache, gives the numbers of ``contstim evaluate`` for the same model."""
    monkeypatch.setenv("CONTSTIM_DATASETS", str(env["datasets"]))
    monkeypatch.setenv("CONTSTIM_SCORE_CACHE", str(env["root"] / "readme-scores.sqlite"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the CLI run used --threads 1
    namespace: dict = {}
    try:
        exec(compile(DOCS_EXAMPLE, "docs/evaluate.md example", "exec"), namespace)
    finally:
        torch.set_num_threads(threads)
    scores, lp = namespace["scores"], namespace["lp"]
    printed = capsys.readouterr().out
    evaluated = first_run["result"]
    assert len(lp) == 264 and list(lp) == list(evaluated["logprobs"])  # the same sentences, in the same order
    assert max(abs(lp[s] - v) for s, v in evaluated["logprobs"].items()) <= 1e-6
    package = evaluated["experiments"]["pll"]
    assert list(scores) == list(package)
    for cond, s in scores.items():
        for key in ("accuracy", "srcs", "n_trials", "selection"):
            assert s[key] == pytest.approx(package[cond][key], abs=1e-6), (cond, key)
        assert s["accuracy_noise_ceiling"] == package[cond]["accuracy_noise_ceiling"]
        assert f"{cond:<24} accuracy {s['accuracy']:.3f}" in printed
    page = (contstim_bench.repo_root() or env["root"]) / "docs" / "evaluate.md"
    if page.is_file():
        assert DOCS_EXAMPLE.strip() in page.read_text(encoding="utf-8"), \
            "the example of docs/evaluate.md differs from the tested one"


def test_score_sentences(env, first_run, tmp_path):
    """The batched scoring call: float64 natural-log probabilities in input order, repeats once,
    the evaluate run's values from the shared cache, bad input named."""
    from contstim_bench.scoring.base import ScoreCache

    logprobs = first_run["result"]["logprobs"]
    some = list(logprobs)[:5]
    cache = ScoreCache(tmp_path / "cache.sqlite")
    values = contstim_bench.score_sentences(DEFAULT_MODEL, some[::-1] + some[:1], datasets_dir=env["datasets"],
                                            cache=cache, progress=False)
    assert values.dtype == np.float64 and values.shape == (6,)
    assert values[:5].tolist() == pytest.approx([logprobs[s] for s in some[::-1]], abs=1e-3)  # other batches
    assert values[5] == values[4]
    cached = contstim_bench.score_sentences(DEFAULT_MODEL, some, datasets_dir=env["datasets"], progress=False)
    assert cached.tolist() == [logprobs[s] for s in some]  # the default cache holds the evaluate run's floats
    with pytest.raises(ValueError, match="give a model spec"):
        contstim_bench.score_sentences(None, some)
    with pytest.raises(TypeError, match="got a single str"):
        contstim_bench.score_sentences(DEFAULT_MODEL, "one sentence", datasets_dir=env["datasets"])
    with pytest.raises(ValueError, match="prompt scorers give plausibility judgments"):
        contstim_bench.score_sentences(f"prompt:hf-causal:{env['tiny']}?template=likert", some)
