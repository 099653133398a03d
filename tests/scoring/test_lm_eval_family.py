"""The ``lm-eval:`` model family: any lm-evaluation-harness backend scores sentences as
``hf-causal`` does (in-process ``hf`` and a served ``local-completions`` model), what a backend
returns is checked, and credentials never reach a result, a cache, a log or an error."""
from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from completions_server import completions_server
from contstim_bench.cli import main as cli_main
from contstim_bench.scoring.harness_checks import BackendOutputError, check_loglikelihoods
from contstim_bench.scoring.registry import load_scorer
from contstim_bench.scoring.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "leaderboard" / "results" / "smollm2-135m.json"  # hf-causal:smollm2-135m, pll, per-sentence values
SENTENCES = ["The cat sat on the mat.", "Mat the on sat cat the.", "I found so many in things and called",
             "Colorless green ideas sleep furiously.", "He went home after the long meeting."]
SECRET = "sk-test-Zq81x7secretvalue"


def _run(*args: str, env_extra: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "contstim_bench", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=900)


@pytest.fixture(scope="module")
def shipped() -> dict:
    return json.loads(SHIPPED.read_text())


# ------------------------------------------------------------------------- in-process: hf
@pytest.mark.slow
def test_evaluate_and_score_with_lm_eval_hf_give_the_hf_causal_values(smollm2, shipped, tmp_path, capsys):
    """`contstim evaluate` and `contstim score` with lm-eval:hf on the converted SmolLM2 folder: every
    pll sentence within 1e-4 nats of the shipped hf-causal result, the same accuracy in every panel.
    Both commands run in this process (:func:`contstim_bench.cli.main`): a fresh interpreter would
    first import torch, transformers and lm-eval again (about 10 CPU-seconds)."""
    spec = f"lm-eval:hf?pretrained={smollm2.folder}"
    out = tmp_path / "lme.json"
    assert cli_main(["evaluate", "--model", spec, "--output", str(out), "--no-plots", "--quiet"]) == 0, \
        capsys.readouterr().err[-3000:]
    result = json.loads(out.read_text())
    ours, ref = result["logprobs"], shipped["logprobs"]
    assert set(ours) == set(ref) and len(ours) == 264
    diff = np.array([abs(ours[s] - ref[s]) for s in ref])
    assert diff.max() < 1e-4, diff.max()
    model = result["model"]
    assert model["backend"] == "hf" and model["start_token"] == "<|endoftext|>" and model["dtype"] == "float32"
    assert model["method"] == "causal" and model["model_args"]["softmax_dtype"] == "float64"
    panels_ours, panels_ref = result["panels"]["pll"], shipped["panels"]["pll"]
    for condition, panel in panels_ref.items():
        ref_acc = panel["models"]["hf-causal:smollm2-135m"]["accuracy"]
        assert panels_ours[condition]["models"][spec]["accuracy"] == ref_acc, condition
    assert panels_ref["all"]["models"]["hf-causal:smollm2-135m"]["accuracy"] == pytest.approx(0.8573, abs=1e-4)

    # score: the CSV of the same sentences, from the cache this time (no model work)
    lines = list(ref)[:20]
    inp = tmp_path / "s.txt"
    inp.write_text("\n".join(lines) + "\n")
    assert cli_main(["score", "--model", spec, "--input", str(inp), "--output", str(tmp_path / "s.csv"), "--quiet"]) == 0, \
        capsys.readouterr().err[-3000:]
    import pandas as pd

    table = pd.read_csv(tmp_path / "s.csv", keep_default_na=False)
    assert list(table["sentence"]) == lines
    assert np.abs(table["logprob"].to_numpy() - np.array([ref[s] for s in lines])).max() < 1e-4


def test_short_names_and_start_token_follow_hf_causal(smollm2):
    """pretrained=<short name> is the converted folder, conditioned on the packaged start token; a
    different ?start= changes the values and the identity; a start token outside the vocabulary is named."""
    direct = smollm2.score(SENTENCES)
    short = load_scorer("lm-eval:hf?pretrained=smollm2-135m", cache=False, progress=False, batch_size=8)
    values = short.score(SENTENCES)
    assert np.abs(values - direct).max() < 1e-4
    assert short.spec == "lm-eval:hf?pretrained=smollm2-135m" and short.start_token == "<|endoftext|>"
    other = load_scorer("lm-eval:hf?pretrained=smollm2-135m&start=<|im_start|>", cache=False, progress=False)
    assert other.fingerprint() != short.fingerprint()
    assert np.abs(other.score(SENTENCES[:2]) - values[:2]).min() > 0.1
    bad = load_scorer("lm-eval:hf?pretrained=smollm2-135m&start=<nope>", cache=False, progress=False)
    with pytest.raises(ValueError, match=r"start token '<nope>' is not a single token"):
        bad.score(SENTENCES[:1])


def test_unknown_and_unsuitable_backends_are_named():
    scorer = load_scorer("lm-eval:no-such-backend?pretrained=x", cache=False, progress=False)
    with pytest.raises(ValueError, match=r"lm-eval has no model type 'no-such-backend'.*local-completions"):
        scorer.score(["A sentence."])
    gguf = load_scorer("lm-eval:gguf?base_url=http://127.0.0.1:9", cache=False, progress=False)
    with pytest.raises(ValueError, match=r"backend 'gguf' \(GGUFLM\) does not condition an empty context on a start"):
        gguf.score(["A sentence."])


# ------------------------------------------------------------------- served: local-completions
def _served_spec(url: str, folder) -> str:
    return (f"lm-eval:local-completions?base_url={url}&model=smollm2&tokenizer={folder}"
            "&tokenizer_backend=huggingface&max_retries=1")


def test_served_model_scores_as_hf_causal_and_keeps_its_key_out_of_everything(smollm2, tmp_path, monkeypatch,
                                                                              caplog):
    """A served model behind an OpenAI-style completions API that needs a key: the values match
    hf-causal; the key (read from OPENAI_API_KEY) is in no result file, cache or log record."""
    from contstim_bench.scoring.cache import ScoreCache

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    cache_file = tmp_path / "scores.sqlite"
    caplog.set_level(logging.DEBUG)
    with completions_server(smollm2.model, key=SECRET) as (url, state):
        scorer = load_scorer(_served_spec(url, smollm2.folder), cache=ScoreCache(cache_file), progress=False)
        values = scorer.score(SENTENCES)
        assert state["requests"] == len(SENTENCES)  # lm-eval's API default: one sentence per request
        again = scorer.score(SENTENCES)  # from the cache: the server is not asked again
        assert state["requests"] == len(SENTENCES)
        described = json.dumps(scorer.describe())
    assert np.abs(values - smollm2.score(SENTENCES)).max() < 1e-4 and np.array_equal(values, again)
    assert scorer.start_token == "<|endoftext|>"  # recorded in the converted folder
    assert url in described and SECRET not in described
    assert SECRET.encode() not in cache_file.read_bytes()
    assert SECRET not in caplog.text


@pytest.mark.slow
def test_evaluate_a_served_model_writes_no_key_and_the_leaderboard_lists_it_unverified(smollm2, tmp_path,
                                                                                      monkeypatch, capsys):
    """`contstim evaluate` of a served model (the pll experiment, 264 sentences in batches of 32),
    in a process of its own as a user runs it: the result file, the score cache and the command's
    output hold no key; `leaderboard validate` (run in this process: it reads files and prints)
    recomputes its scores and lists it unverified without contacting the server."""
    cache_file = tmp_path / "scores.sqlite"
    env = {"OPENAI_API_KEY": SECRET, "CONTSTIM_SCORE_CACHE": str(cache_file)}
    out = tmp_path / "results" / "served.json"
    with completions_server(smollm2.model, key=SECRET) as (url, state):
        spec = _served_spec(url, smollm2.folder) + "&batch_size=32"
        proc = _run("evaluate", "--model", spec, "--output", str(out), "--no-plots", env_extra=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert state["requests"] == 9  # ceil(264 / 32)
        served_requests = state["requests"]
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        returncode = cli_main(["leaderboard", "validate", str(out)])
        check = capsys.readouterr()
        assert state["requests"] == served_requests  # the leaderboard contacted no address
    assert SECRET not in out.read_text() and SECRET.encode() not in cache_file.read_bytes()
    assert SECRET not in proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert result["model"]["backend"] == "local-completions" and result["model"]["model_args"]["base_url"] == url
    shipped = json.loads(SHIPPED.read_text())["logprobs"]
    assert max(abs(result["logprobs"][s] - shipped[s]) for s in shipped) < 1e-4
    assert returncode == 0, check.out + check.err
    assert "1 valid (0 verified, 1 unverified)" in check.err
    assert "unverified: its model spec names a served model" in check.out


def test_a_server_error_that_echoes_the_key_is_reported_without_it(smollm2, monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    with completions_server(smollm2.model, key=SECRET, mode="echo-key") as (url, _):
        scorer = load_scorer(_served_spec(url, smollm2.folder), cache=False, progress=False)
        with pytest.raises(RuntimeError) as err:
            scorer.score(SENTENCES[:1])
    assert "local-completions" in str(err.value) and "401" in str(err.value)
    assert SECRET not in str(err.value)
    assert SECRET not in caplog.text


@pytest.mark.parametrize("mode, message", [
    ("generated-only", r"returned 1 token log-probabilities for a prompt of \d+ tokens and 1 generated token"),
    ("dropped", r"returned \d+ token log-probabilities for a prompt of \d+ tokens and 1 generated token"),
    ("zeros", r"returned exactly 0.0 \(probability 1\) for sentence"),
])
def test_wrong_server_answers_are_errors_never_scores(smollm2, tmp_path, mode, message):
    """What llama-server and other servers return instead of prompt log-probabilities is refused by
    name, and nothing is cached."""
    from contstim_bench.scoring.cache import ScoreCache

    cache = ScoreCache(tmp_path / "scores.sqlite")
    with completions_server(smollm2.model, mode=mode) as (url, _):
        scorer = load_scorer(_served_spec(url, smollm2.folder), cache=cache, progress=False)
        with pytest.raises(BackendOutputError, match=message) as err:
            scorer.score(SENTENCES[:2])
    assert "lm-eval backend 'local-completions'" in str(err.value)
    assert cache.get_many(scorer.fingerprint(), "causal", SENTENCES[:2]) == {}


# ------------------------------------------------------------------------ a wrong backend object
@pytest.fixture(scope="module")
def wrong_backend():
    """An lm-eval backend registered by the test that answers ``loglikelihood`` in the way its
    ``mode`` argument names."""
    from lm_eval.api.model import TemplateLM
    from lm_eval.api.registry import register_model

    class WrongLM(TemplateLM):
        def __init__(self, mode: str = "ok", **_):
            super().__init__()
            self.mode = mode

        @property
        def eot_token_id(self):
            return 0

        def tok_encode(self, string, **kwargs):
            return [ord(c) for c in string]

        def _loglikelihood_tokens(self, requests, **kwargs):
            raise NotImplementedError  # loglikelihood itself answers below

        def loglikelihood(self, requests, disable_tqdm: bool = False):
            n = len(requests)
            answers = {"ok": [(-1.5 - i, False) for i in range(n)], "short": [(-1.0, False)] * (n - 1),
                       "nans": [(float("nan"), False)] * n, "positive": [(0.25, True)] * n,
                       "text": [("-3.0", False)] * n, "bare": [-2.0] * n}[self.mode]
            return answers

        def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError

        def generate_until(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError

    register_model("contstim-test-wrong")(WrongLM)
    return "contstim-test-wrong"


@pytest.mark.parametrize("mode, message", [
    ("short", r"returned 2 log-probabilities for 3 sentences"),
    ("nans", r"returned nan as the log-probability of sentence 'The cat sat on the mat.'"),
    ("positive", r"returned 0.25 as the log-probability of sentence .*at most 0"),
    ("text", r"returned '-3.0' \(str\) as the log-probability of sentence .*not a number"),
    ("bare", r"returned -2.0 for sentence .*not a \(log-probability, is_greedy\) pair"),
])
def test_a_backend_object_that_returns_wrong_values_is_refused(wrong_backend, mode, message):
    scorer = load_scorer(f"lm-eval:{wrong_backend}?mode={mode}", cache=False, progress=False)
    with pytest.raises(BackendOutputError, match=message) as err:
        scorer.score(SENTENCES[:3])
    assert f"lm-eval backend {wrong_backend!r}" in str(err.value)


def test_the_backend_objects_good_values_pass(wrong_backend):
    scorer = load_scorer(f"lm-eval:{wrong_backend}?mode=ok", cache=False, progress=False)
    assert scorer.score(SENTENCES[:3]).tolist() == [-1.5, -2.5, -3.5]
    assert scorer.start_token == "<token id 0>"  # no tokenizer: the backend's own prefix token


def test_check_loglikelihoods_alone():
    assert check_loglikelihoods([(-1.0, True), (np.float32(-2.5), False)], ["a", "b"], "x").tolist() == [-1.0, -2.5]
    with pytest.raises(BackendOutputError, match=r"returned NoneType None instead of a list"):
        check_loglikelihoods(None, ["a"], "x")
    with pytest.raises(BackendOutputError, match=r"returned -inf as the log-probability"):
        check_loglikelihoods([(float("-inf"), False)], ["a"], "x")


# --------------------------------------------------------------------------- credentials in specs
@pytest.mark.parametrize("spec, named", [
    (f"lm-eval:local-completions?base_url=http://127.0.0.1:9/v1/completions&api_key={SECRET}", "option 'api_key'"),
    (f"lm-eval:local-completions?auth_token={SECRET}&model=m", "option 'auth_token'"),
    (f"lm-eval:local-completions?base_url=http://user:{SECRET}@127.0.0.1:9/v1&model=m", "a URL with a user name"),
    (f"lm-eval:local-completions?base_url=https://h.example/v1?api-key%3D{SECRET}&model=m", None),
    (f"hf-causal:org/model?token={SECRET}", "option 'token'"),
])
def test_a_spec_with_a_credential_is_refused_without_quoting_it(spec, named):
    with pytest.raises(ValueError) as err:
        parse_spec(spec)
    assert SECRET not in str(err.value)
    assert "OPENAI_API_KEY" in str(err.value)
    if named:
        assert named in str(err.value)


def test_the_cli_never_prints_a_credential_from_a_spec(tmp_path):
    inp = tmp_path / "s.txt"
    inp.write_text("A sentence.\n")
    proc = _run("score", "--model", f"lm-eval:local-completions?model=m&api_key={SECRET}", "--input", str(inp),
                "--output", str(tmp_path / "o.csv"))
    assert proc.returncode == 1
    assert "option 'api_key' would carry a credential" in proc.stderr
    assert SECRET not in proc.stderr + proc.stdout


def test_leaderboard_lists_lm_eval_results_unverified_and_contacts_no_address():
    from contstim_bench.leaderboard.spec_policy import admit

    served = admit("lm-eval:local-completions?base_url=http://10.0.0.5:8000/v1/completions&model=m")
    assert not served.admitted and "served model" in served.reason
    harness = admit("lm-eval:hf?pretrained=org/model&revision=" + "a" * 40)
    assert not harness.admitted and "lm-evaluation-harness" in harness.reason
