"""Each run option given to each door reaches the scorer's loading (not only its parser):
``--device``, ``--dtype``, ``--batch-size``, ``--max-tokens-per-batch``, ``--threads`` and
``--no-cache`` on ``contstim evaluate``, ``score``, ``compare``, ``blimp`` (several methods),
``plausibility``, ``generate natural|synthetic|pool``, ``experiment simulate`` and ``leaderboard
add`` (re-scoring),
and the same options on ``evaluate_model``, ``score_sentences`` and ``compare_models``.

The registry's ``load_scorer``, the one builder every door calls (the driver, generation,
simulation), is replaced by a recorder that stops the door there; what it records is the run
options a model would have been built with (that ``load_scorer`` applies them, torch's threads
included, is :func:`test_the_builder_applies_the_options`).  (``compare`` once parsed ``--max-tokens-per-batch`` and
dropped it; generation once ignored ``threads`` and replaced a ScoreCache passed to it by the
default one.)"""
from __future__ import annotations

import pytest
import torch

import contstim_bench
from contstim_bench import driver
from contstim_bench.cli import main as cli_main
from contstim_bench.scoring import registry

SPEC = "hf-causal:org/some-model"
CLI_OPTIONS = ["--device", "cpu", "--dtype", "bfloat16", "--batch-size", "3", "--max-tokens-per-batch", "77",
               "--threads", "2"]
API_OPTIONS = {"device": "cpu", "dtype": "bfloat16", "batch_size": 3, "max_tokens_per_batch": 77, "threads": 2,
               "cache": False}


class Reached(ValueError):
    """The door got as far as loading the model (a ValueError, so that the CLI reports it)."""


@pytest.fixture()
def recorded(monkeypatch):
    calls: list[dict] = []

    def record(spec, options=None, *, datasets_dir=None, **changes):
        from dataclasses import fields, replace

        given = replace(options or driver.RunOptions(), **changes)
        calls.append({"spec": str(spec), **{f.name: getattr(given, f.name) for f in fields(given)}})
        raise Reached(str(spec))

    before = torch.get_num_threads()
    monkeypatch.setattr(registry, "load_scorer", record)
    yield calls
    torch.set_num_threads(before)


WANT = {"device": "cpu", "dtype": "bfloat16", "batch_size": 3, "max_tokens_per_batch": 77, "threads": 2}


def _reached(calls, *, cache=None, n=1):
    assert len(calls) == n, calls
    for call in calls:
        assert {k: call[k] for k in WANT} == WANT
        assert call["spec"].startswith(SPEC)
        if cache is not None:
            assert call["cache"] is cache


@pytest.mark.parametrize("door", [
    ["evaluate", "--model", SPEC, "--experiment", "pll", "--no-plots"],
    ["compare", "--models", f"a={SPEC},b={SPEC}?start=x", "--experiment", "pll"],
], ids=lambda d: d[0])
def test_every_command_passes_its_options_to_the_loader(door, recorded, datasets, tmp_path, capsys):
    args = door + CLI_OPTIONS + ["--datasets", str(datasets), "--output", str(tmp_path / "out")]
    assert cli_main(args) == 1
    assert "Reached" in capsys.readouterr().err
    _reached(recorded)


def test_score_passes_its_options_and_no_cache(recorded, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("A sentence.\n", encoding="utf-8")
    assert cli_main(["score", "--model", SPEC, "--input", str(tmp_path / "in.txt"), "--output",
                     str(tmp_path / "out.csv"), "--no-cache", *CLI_OPTIONS]) == 1
    assert "Reached" in capsys.readouterr().err
    _reached(recorded, cache=False)


def test_blimp_with_several_methods_passes_its_options(recorded, datasets, tmp_path, capsys):
    """``evaluate_variants`` loads the first method's model with the options (the recorder stops it)."""
    assert cli_main(["blimp", "--model", "hf-masked:org/some-model", "--method", "pll", "--method", "pll-word-l2r",
                     *CLI_OPTIONS[:6], "--threads", "2", "--datasets", str(datasets), "--output",
                     str(tmp_path / "out")]) == 1
    assert "Reached" in capsys.readouterr().err
    assert len(recorded) == 1 and recorded[0]["spec"].startswith("hf-masked:org/some-model?method=pll")
    assert {k: recorded[0][k] for k in ("device", "dtype", "batch_size", "threads")} == \
        {"device": "cpu", "dtype": "bfloat16", "batch_size": 3, "threads": 2}


@pytest.mark.parametrize("door", ["evaluate_model", "score_sentences", "compare_models"])
def test_every_api_function_passes_its_options_to_the_loader(door, recorded, datasets):
    with pytest.raises(Reached):
        if door == "evaluate_model":
            contstim_bench.evaluate_model(SPEC, "pll", datasets_dir=datasets, log=lambda m: None, **API_OPTIONS)
        elif door == "score_sentences":
            contstim_bench.score_sentences(SPEC, ["A sentence."], **API_OPTIONS)
        else:
            contstim_bench.compare_models(f"a={SPEC}", datasets_dir=datasets, log=lambda m: None, **API_OPTIONS)
    _reached(recorded, cache=False)


def test_options_whole_or_by_field(recorded, datasets):
    """``options=RunOptions(...)`` with a field replaced by a keyword; an unknown field is named."""
    with pytest.raises(Reached):
        contstim_bench.score_sentences(SPEC, ["A sentence."], options=driver.RunOptions(**{**API_OPTIONS,
                                                                                            "batch_size": 9}),
                                       batch_size=3)
    _reached(recorded, cache=False)
    with pytest.raises(TypeError, match=r"unknown run option\(s\) batchsize; the options of RunOptions: device, "
                                        r"dtype, batch_size"):
        contstim_bench.evaluate_model(SPEC, "pll", batchsize=3)


def test_a_comparison_gives_the_token_budget_to_the_models_that_take_it(recorded, datasets):
    """``compare --references --max-tokens-per-batch N`` (a causal candidate against the paper's
    precomputed references): the budget goes to the causal model only; a comparison of models
    none of which takes one is refused before any model loads (a fresh-clone user found that the
    references' refusal made the two impossible together)."""
    with pytest.raises(Reached):
        contstim_bench.compare_models(f"ref=precomputed:roberta,a={SPEC}", datasets_dir=datasets, log=lambda m: None,
                                      max_tokens_per_batch=77)
    assert recorded[0]["spec"] == "precomputed:roberta" and recorded[0]["max_tokens_per_batch"] is None
    recorded.clear()
    with pytest.raises(ValueError, match=r"applies to hf-causal models; none of the compared models is one"):
        contstim_bench.compare_models("precomputed:roberta,precomputed:electra", datasets_dir=datasets,
                                      log=lambda m: None, max_tokens_per_batch=77)
    assert recorded == []


POOL = ["The cat sat on the mat.", "A dog ran in the park.", "We went to the store to buy some bread.",
        "She told me that the train was late again.", "I like to eat apples in the morning.",
        "The children laughed in the park today."]


@pytest.mark.parametrize("door", ["natural", "synthetic", "design", "pool"])
def test_generation_passes_its_options_whole(door, recorded, datasets, tmp_path):
    """The generation functions take the run options whole: threads, device, dtype, batch size,
    token budget and the very ScoreCache passed reach the loader (the pool reads vocabularies
    only: no cache)."""
    from contstim_bench.scoring.base import ScoreCache

    cache = ScoreCache(tmp_path / "scores.sqlite")
    options = driver.RunOptions(**{**API_OPTIONS, "cache": cache})
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(POOL) + "\n", encoding="utf-8")
    with pytest.raises(Reached):
        if door == "natural":
            from contstim_bench.generate.natural_run import select_natural

            select_natural(f"a={SPEC},b={SPEC}?start=x", tmp_path / "out", pool=str(pool), options=options,
                           datasets_dir=datasets, log=lambda m: None)
        elif door == "synthetic":
            from contstim_bench.generate.synthetic_run import synthesize

            synthesize(tmp_path / "out", f"a={SPEC},b={SPEC}?start=x", 2, pool=str(pool), options=options,
                       datasets_dir=datasets, lockstep=1)
        elif door == "design":
            from contstim_bench.generate.design_models import score_sentences

            score_sentences(POOL, {"a": {"spec": SPEC}}, datasets_dir=datasets, options=options, log=lambda m: None)
        else:
            from contstim_bench.generate.pool import make_pool

            make_pool([str(pool)], tmp_path / "pool-out.txt", models=f"a={SPEC}", vocabulary="none",
                      datasets_dir=datasets, options=options)
    _reached(recorded, cache=False if door == "pool" else cache)


SHIPPED = __import__("pathlib").Path(__file__).resolve().parents[2] / "leaderboard" / "results"


@pytest.mark.parametrize("door", ["plausibility", "generate-natural", "generate-synthetic", "generate-pool",
                                  "experiment-simulate", "leaderboard-add"])
def test_the_other_commands_pass_their_options_to_the_loader(door, recorded, datasets, tmp_path, capsys, monkeypatch):
    """Every other command that loads a model, from its flags to the constructed scorer: the
    plausibility benchmark, the three generation commands, the simulated participants (their
    server answered by a stand-in: the model loads after it answers) and the leaderboard's
    re-scoring of a submitted result (its own spec, the maintainer's options)."""
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(POOL) + "\n", encoding="utf-8")
    pair = f"a={SPEC},b={SPEC}?start=x"
    argv = {
        "plausibility": ["plausibility", "--model", SPEC, "--output", str(tmp_path / "p.json")],
        "generate-natural": ["generate", "natural", "--models", pair, "--pool", str(pool), "--output", str(tmp_path / "n")],
        "generate-synthetic": ["generate", "synthetic", "--models", pair, "--start-sentences", "2", "--pool", str(pool),
                               "--lockstep", "1", "--output", str(tmp_path / "s")],
        "generate-pool": ["generate", "pool", "--corpus", str(pool), "--models", f"a={SPEC}", "--vocabulary", "none",
                          "--out", str(tmp_path / "pool-out.txt")],
        "experiment-simulate": ["experiment", "simulate", "--url", "http://127.0.0.1:9/", "--participants", "1",
                                "--model", SPEC],
        "leaderboard-add": ["leaderboard", "add", str(SHIPPED / "smollm2-135m.json"), "--results", str(tmp_path / "r"),
                            "--rescore"],
    }[door]
    if door == "experiment-simulate":
        from contstim_bench.experiment import simulate

        monkeypatch.setattr(simulate.ApiClient, "call", lambda self, method, path, *a, **k: {})
    cli_main(argv + CLI_OPTIONS + ["--datasets", str(datasets)])
    assert recorded, capsys.readouterr().err[-2000:]
    for call in recorded:
        assert {k: call[k] for k in WANT} == WANT, (door, call)
        assert call["spec"] == "hf-causal:smollm2-135m" if door == "leaderboard-add" else call["spec"].startswith(SPEC)


def test_the_builder_applies_the_options(kn_trigram, tmp_path):
    """``load_scorer`` itself applies what the recorder above only records: torch's threads, the
    very ScoreCache given, the progress flag; a keyword that is no run option is a TypeError."""
    from contstim_bench.scoring.base import ScoreCache

    before = torch.get_num_threads()
    cache = ScoreCache(tmp_path / "scores.sqlite")
    try:
        scorer = registry.load_scorer(f"kenlm:{kn_trigram}", driver.RunOptions(threads=1, cache=cache, progress=False))
        assert torch.get_num_threads() == 1 and scorer.cache is cache and scorer.progress is False
        scorer = registry.load_scorer(f"kenlm:{kn_trigram}", cache=False, threads=2)
        assert torch.get_num_threads() == 2 and scorer.cache is None
        with pytest.raises(TypeError, match="batch: not a run option"):
            registry.load_scorer(f"kenlm:{kn_trigram}", batch=3)
    finally:
        torch.set_num_threads(before)
