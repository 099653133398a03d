"""The whole loop of a new benchmark round, on real data with the offline models, as docs/rounds.md
shows it: candidate SmolLM2 against references precomputed:gpt2, precomputed:roberta and a trigram
trained on the held-out corpus -> natural and synthetic pairs -> design -> export -> serve -> 20
simulated participants whose choices follow Gemma-3-270m (a model no step of the generation saw)
-> ingest as round contstim.web2026 -> evaluate two models on the round -> leaderboard.

Kept small for a 2-core CI machine: a 400-word vocabulary, 6 start sentences, searches of at most 4
position attempts.  The loop runs in the round's folder with the relative paths of docs/rounds.md: a
synthetic search job's seed derives from the model specs (``kenlm:trigram.arpa``), so every run
searches the same way (with the folder's absolute path in the spec, each run's temporary folder gave
another search)."""
from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.data.rounds import load_round
from served import serving

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]

ROUND = "web2026"
CANDIDATE = "smollm2=smollm2-135m"
SIMULATOR = "gemma3-270m"
SEARCH = ["--start-sentences", "6", "--seed", "2", "--max-failures", "4", "--max-attempts", "4", "--threshold", "-7"]


def cli(argv: list[str]) -> tuple[int, str, str]:
    """``contstim ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


def run(argv: list[str]) -> str:
    """stdout of a command that must succeed."""
    code, out, err = cli(argv)
    assert code == 0, err[-3000:]
    return out


def study(root: Path, design: Path) -> tuple[str, str]:
    """export -> serve (seed 7) -> 20 simulated participants -> ingest; (simulate output, ingest output)."""
    run(["experiment", "export", "--design", str(design), "--out", str(root / "web")])
    with serving(root / "web", root / "responses.sqlite", "--seed", "7") as url:
        simulated = run(["experiment", "simulate", "--url", url, "--participants", "20", "--model", SIMULATOR,
                         "--noise", "1", "--catch-failure-rate", "0.08", "--seed", "1"])
    ingested = run(["experiment", "ingest", "--db", str(root / "responses.sqlite"), "--out", str(root / "datasets"),
                    "--experiment", ROUND, "--design", str(design)])
    return simulated, ingested


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    root = tmp_path_factory.mktemp("round")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        out = run_loop(Path())
    out["root"] = root
    if os.environ.get("CONTSTIM_SHOW_LOOP"):  # docs/rounds.md's output: CONTSTIM_SHOW_LOOP=1 pytest -s ...
        print(json.dumps(out, indent=1, default=str))
    return out


def run_loop(here: Path) -> dict[str, str]:
    """The commands of docs/rounds.md, run in the current folder ``here`` (relative paths); each
    command's output (stderr of the refused call) by name."""
    out = {}
    out["train"] = run(["train", "ngram", "--order", "3", "--output", "trigram.arpa"])
    trigram = "trigram=kenlm:trigram.arpa"
    refs = f"gpt2=precomputed:gpt2,roberta=precomputed:roberta,{trigram}"
    from contstim_bench.data.load import dataset_folder

    vocab = pd.read_parquet(dataset_folder("contstim") / "vocabulary" / "train.parquet")
    vocab = vocab.sort_values("frequency", ascending=False, kind="stable")
    words = pd.concat([vocab[vocab["capitalized"]].head(100), vocab[~vocab["capitalized"]].head(300)])
    words[["word", "capitalized"]].to_parquet(here / "words.parquet")
    out["natural"] = run(["generate", "natural", "--candidates", CANDIDATE, "--references", refs,
                          "--restrict-to-scorable", "--per-pair", "2", "--output", "natural", "--quiet"])
    # precomputed references cannot take part in the synthetic search: only the trigram can
    code, _, out["refused"] = cli(["generate", "synthetic", "--candidates", CANDIDATE, "--references", refs, *SEARCH,
                                   "--output", "refused"])
    assert code == 1
    out["synthetic"] = run(["generate", "synthetic", "--candidates", CANDIDATE, "--references", trigram, *SEARCH,
                            "--vocabulary", "words.parquet", "--output", "synth", "--quiet"])
    out["select"] = run(["generate", "select", "--triplets", "synth", "--per-pair", "3", "--bins", "1",
                         "--output", "selected"])
    out["design"] = run(["generate", "design", "--natural", "natural", "--triplets", "selected",
                         "--groups", "2", "--random-pairs", "2", "--catch-trials", "12", "--experiment", ROUND,
                         "--output", "design"])
    out["simulate"], out["ingest"] = study(here, here / "design")
    for model in (SIMULATOR, "smollm2-135m"):
        out[f"evaluate {model}"] = run(["evaluate", "--benchmark", f"contstim.{ROUND}", "--datasets", "datasets",
                                        "--model", model, "--output", f"results/{model}"])
    (here / "board").mkdir()
    for model in (SIMULATOR, "smollm2-135m"):
        src = here / "results" / model / f"contstim.{ROUND}.json"
        (here / "board" / f"{model}.{ROUND}.json").write_bytes(src.read_bytes())
    out["leaderboard"] = run(["leaderboard", "build", "--results", "board", "--out", "site", "--datasets", "datasets"])
    return out


def test_generation_pits_the_candidate_against_each_reference(loop):
    natural = pd.read_parquet(loop["root"] / "natural" / "natural" / "natural_controversial_pairs" / "train.parquet")
    assert sorted(set(zip(natural["model_1"], natural["model_2"]))) == [
        ("smollm2", "gpt2"), ("smollm2", "roberta"), ("smollm2", "trigram")]
    assert "needs models that can score new sentences; gpt2 (precomputed:gpt2), roberta (precomputed:roberta)" \
        in loop["refused"]
    assert "smollm2 vs trigram: 6 triplets; S1 = N in" in loop["synthetic"]
    triplets = pd.read_parquet(loop["root"] / "selected" / "triplets" / "synthetic_triplets" / "train.parquet")
    assert len(triplets) == 3 and (triplets["S1"] != triplets["N"]).all() and (triplets["S2"] != triplets["N"]).all()
    models = pd.read_parquet(loop["root"] / "design" / "models" / "models" / "train.parquet")
    assert list(models["name"]) and set(models["role"]) == {"candidate", "reference"}


def test_the_round_lists_its_exclusions(loop):
    data = load_round(loop["root"] / "datasets" / f"contstim-{ROUND}")
    meta = data.meta
    assert meta["identifier"] == f"contstim.{ROUND}" and meta["participants"]["total"] == 20
    assert {m["name"]: m["role"] for m in meta["models"]} == {
        "smollm2": "candidate", "gpt2": "reference", "roberta": "reference", "trigram": "reference"}
    assert meta["participants"]["excluded"] == len(meta["exclusions"]) >= 1
    for e in meta["exclusions"]:
        assert f"excluded {e['participant']} (group {e['group']}): {e['reason']}" in loop["ingest"]
        assert e["reason"].startswith("catch trials: chose the natural sentence in")
    # gpt2 and roberta have values for the natural sentences, not for the synthetic ones
    lp = data.logprobs.set_index("sentence")
    assert lp["smollm2"].notna().all() and lp["trigram"].notna().all() and lp["gpt2"].isna().any()


def test_the_simulating_model_wins_its_head_to_heads(loop):
    path = loop["root"] / "results" / SIMULATOR / f"contstim.{ROUND}.json"
    result = json.loads(path.read_text(encoding="utf-8"))
    name = result["model"]["name"]
    played = 0
    for cond, entry in result["experiments"][ROUND].items():
        for other, h in entry["head_to_head"].items():
            if h["n_trials"]:
                played += 1
                assert h["share"] > 0.5 and h["better"] == name, (cond, other, h["share"])
    assert played >= 4
    nat = result["experiments"][ROUND]["natural_controversial"]["head_to_head"]
    assert {"smollm2", "gpt2", "roberta", "trigram"} <= set(nat)  # precomputed references where they can score
    assert nat["gpt2"]["selection"] == "targeted_both" or nat["gpt2"]["selection"] == "all"
    smollm2 = json.loads((loop["root"] / "results" / "smollm2-135m" / f"contstim.{ROUND}.json").read_text())
    assert smollm2["model"]["name"] == "smollm2"  # the candidate, re-evaluated, is the targeted model
    assert smollm2["experiments"][ROUND]["natural_controversial"]["selection"] == "targeted"


def test_a_round_reserves_the_names_of_the_models_it_targeted(loop, tmp_path):
    """The re-evaluated candidate may use its name on the round (its log-probabilities match the
    round's); another model may not claim a targeted model's name."""
    from contstim_bench.leaderboard.validate import check_reference_name, validate_files

    board = loop["root"] / "board"
    [candidate] = validate_files([board / f"smollm2-135m.{ROUND}.json"], datasets_dir=loop["root"] / "datasets")
    assert candidate.ok, candidate.problems
    claimed = json.loads((board / f"{SIMULATOR}.{ROUND}.json").read_text(encoding="utf-8"))
    assert check_reference_name(claimed, loop["root"] / "datasets") == []
    claimed["model"]["name"] = "trigram"
    [problem] = check_reference_name(claimed, loop["root"] / "datasets")
    assert problem.startswith("model.name 'trigram' is reserved")


def test_a_result_is_analysed_once_whatever_the_name_of_its_datasets_folder(loop, monkeypatch):
    """The leaderboard build (run in the round's folder with ``--datasets datasets``) and a check
    given the folder's absolute path share one analysis of a result."""
    from contstim_bench.leaderboard.validate import recomputed_sections

    result = json.loads((loop["root"] / "board" / f"{SIMULATOR}.{ROUND}.json").read_text(encoding="utf-8"))
    absolute = recomputed_sections(result, loop["root"] / "datasets")
    monkeypatch.chdir(loop["root"])
    assert recomputed_sections(result, "datasets") is absolute
    assert absolute["experiments"] == result["experiments"]


def test_the_leaderboard_shows_the_round(loop):
    index = (loop["root"] / "site" / "index.html").read_text(encoding="utf-8")
    assert f"round contstim.{ROUND}" in index and "hf-causal:gemma3-270m" in index


def test_rerun_with_the_same_seeds_gives_the_same_dataset(loop, tmp_path):
    study(tmp_path, loop["root"] / "design")
    a = load_round(loop["root"] / "datasets" / f"contstim-{ROUND}")
    b = load_round(tmp_path / "datasets" / f"contstim-{ROUND}")
    assert a.meta["fingerprint"] == b.meta["fingerprint"] and a.meta["exclusions"] == b.meta["exclusions"]
    pd.testing.assert_frame_equal(a.trials, b.trials)
