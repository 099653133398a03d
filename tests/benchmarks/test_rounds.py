"""Rounds of the benchmark and what makes them: the held-out pool split, candidates vs references,
precomputed references in natural-pair selection, evaluation with references that score some
conditions only, simulated participants through the real server, ingestion as a round, evaluation
of a round by identifier, leaderboard validation and the site's round column groups.

Everything here runs on the real contstim data with the published reference log-probabilities
(``precomputed:``) and small models trained here; the full loop with SmolLM2 is in
``tests/benchmarks/test_rounds_e2e.py``."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import contstim_bench
from contstim_bench.analysis.evaluation import evaluate_with_panels
from contstim_bench.analysis.partial_references import evaluate_with_partial_references
from contstim_bench.cli import main as cli_main
from contstim_bench.data.build_contstim import POOL_SYNTHESIS, load_trials
from contstim_bench.data.pool_split import is_start_sentence, split_part
from contstim_bench.data.rounds import discover_rounds, load_round
from contstim_bench.data.sources import resolve
from contstim_bench.data.design_file import design_from_trials, validate_design
from contstim_bench.generate.inputs import load_pool
from contstim_bench.study import PLL_MODELS
from contstim_bench.scoring.precomputed import reference_table
from contstim_bench.scoring.run_options import RunOptions
from served import serving

ROUND = "dry1"
SIMULATOR = "electra"  # the simulated participants' choices follow precomputed:electra


# ----------------------------------------------------------------------------- held-out pool split


def test_pool_split_is_fixed_and_disjoint(tmp_path, capsys):
    lines = resolve(POOL_SYNTHESIS).read_text(encoding="utf-8").splitlines()
    start, train = split_part(lines, "start"), split_part(lines, "train")
    assert (len(lines), len(start), len(train)) == (6113, 1206, 4907)
    assert not set(start) & set(train)
    assert load_pool()[0] == start and load_pool("contstim:train")[0] == train and load_pool("contstim")[0] == lines
    # the default corpus of `contstim train` is the train part: no start sentence was seen in training
    assert cli_main(["train", "ngram", "--order", "2", "--output", str(tmp_path / "bi.arpa"), "--backend", "python"]) == 0
    out = capsys.readouterr()
    assert "4907 sentences" in out.out and "'train' part" in out.err
    from contstim_bench.scoring.registry import load_scorer

    scorer = load_scorer(f"kenlm:{tmp_path / 'bi.arpa'}", cache=False)
    # a sentence of the start part has unseen bigrams under the held-out model, a training sentence none
    seen = {tuple(w) for s in train for w in zip(["<s>"] + s.split(), s.split() + ["</s>"])}
    unseen = [s for s in start if any(b not in seen for b in zip(["<s>"] + s.split(), s.split() + ["</s>"]))]
    assert len(unseen) > 0.9 * len(set(start))
    assert np.isfinite(scorer.score(start[:5])).all()
    assert all(is_start_sentence(s) for s in start[:20]) and not any(is_start_sentence(s) for s in train[:20])


# ----------------------------------------------------------------------------- candidates vs references


@pytest.fixture(scope="module")
def trigram(tmp_path_factory) -> Path:
    """A trigram trained on the default (held-out) corpus."""
    path = tmp_path_factory.mktemp("lm") / "trigram.arpa"
    assert cli_main(["train", "ngram", "--order", "3", "--output", str(path), "--backend", "python"]) == 0
    return path


def test_pairing_errors_name_the_flags(trigram, tmp_path, capsys):
    from contstim_bench.generate.pairing import pairing

    p = pairing(candidates="new=kenlm:a,new2=kenlm:b", references="r1=kenlm:c,r2=kenlm:d,r3=kenlm:e")
    assert p.name_pairs() == [("new", "r1"), ("new", "r2"), ("new", "r3"), ("new2", "r1"), ("new2", "r2"), ("new2", "r3")]
    assert p.record()["pairing"]["candidates"] == ["new", "new2"]
    assert pairing("a=kenlm:a,b=kenlm:b,c=kenlm:c").name_pairs() == [("a", "b"), ("a", "c"), ("b", "c")]
    with pytest.raises(ValueError, match="either --models"):
        pairing("a=kenlm:a,b=kenlm:b", candidates="c=kenlm:c")
    with pytest.raises(ValueError, match="together with"):
        pairing(candidates="c=kenlm:c")
    with pytest.raises(ValueError, match=r"\['x'\] given twice in --candidates/--references"):
        pairing(candidates="x=kenlm:a", references="x=kenlm:b")
    # a lookup of published values cannot take part in the synthetic search: said before any work
    code = cli_main(["generate", "synthetic", "--candidates", f"tri=kenlm:{trigram}", "--references",
                     "gpt2=precomputed:gpt2", "--start-sentences", "1", "--output", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert code == 1 and "needs models that can score new sentences; gpt2 (precomputed:gpt2)" in err
    assert "contstim generate natural" in err and not (tmp_path / "s").exists()


def test_natural_pairs_against_precomputed_references(trigram, tmp_path, capsys):
    refs = "gpt2=precomputed:gpt2,roberta=precomputed:roberta"
    args = ["generate", "natural", "--candidates", f"tri=kenlm:{trigram}", "--references", refs, "--per-pair", "3",
            "--no-cache", "--quiet"]
    # the held-out pool has 1,197 distinct sentences; the published values cover 82 of them
    assert cli_main([*args, "--output", str(tmp_path / "refused")]) == 1
    err = capsys.readouterr().err
    assert "precomputed:gpt2: sentence" in err and "1115 of 1197 sentence(s) have no stored value" in err
    assert "--restrict-to-scorable" in err and not (tmp_path / "refused").exists()

    assert cli_main([*args, "--restrict-to-scorable", "--output", str(tmp_path / "nat")]) == 0
    out = capsys.readouterr()
    assert "restricted the pool to the 82 of 1197 sentences every model can score" in out.err
    assert "tri vs gpt2: 3 pairs" in out.out and "tri vs roberta: 3 pairs" in out.out
    pairs = pd.read_parquet(tmp_path / "nat" / "natural" / "natural_controversial_pairs" / "train.parquet")
    assert sorted(set(zip(pairs["model_1"], pairs["model_2"]))) == [("tri", "gpt2"), ("tri", "roberta")]
    gpt2 = reference_table("gpt2")
    g = pairs[pairs["model_2"] == "gpt2"]
    assert list(g["s1_log_prob_model_2"]) == [gpt2[s] for s in g["sentence1"]]  # the published values, unchanged
    record = json.loads((tmp_path / "nat" / "models.json").read_text())
    assert [(m["name"], m["role"]) for m in record["models"]] == [("tri", "candidate"), ("gpt2", "reference"),
                                                                   ("roberta", "reference")]
    scores = pd.read_parquet(tmp_path / "nat" / "natural" / "pool_scores" / "train.parquet")
    assert len(scores) == 82 and set(scores["sentence"]) <= set(gpt2)


def test_precomputed_arrays_aligned_with_the_supplied_selection_pool(tmp_path, monkeypatch):
    """The 231,725 upstream values per model are used line by line for a --pool FILE that is the
    selection pool (checked by git blob SHA-1; the file itself is not in the data here, so the
    check is pointed at a stand-in file of the same length), and never for another file."""
    from contstim_bench.data import sources
    from contstim_bench.data.build_contstim import POOL_PROBS, POOL_SELECTION
    from contstim_bench.scoring.precomputed import pool_file_log_probs

    arrays = {m: np.load(resolve(POOL_PROBS.format(model=m))) for m in ("gpt2", "trigram")}
    n = len(arrays["gpt2"])
    assert n == 231725
    stand_in = tmp_path / "pool.txt"
    stand_in.write_text("".join(f"Sentence number {i} of the pool\n" for i in range(n)), encoding="utf-8")
    assert pool_file_log_probs("gpt2", stand_in) is None  # not the selection pool
    real = sources.entry(POOL_SELECTION)
    fake = sources.SourceFile(**{**real.__dict__, "blob_sha1": sources.git_blob_sha1(stand_in), "upstream_blob_sha1": ""})
    monkeypatch.setattr(sources, "entry", lambda rel: fake if rel == POOL_SELECTION else real.__class__(**sources.manifest()[rel].__dict__))
    got = pool_file_log_probs("gpt2", stand_in)
    assert np.array_equal(got, arrays["gpt2"])
    assert pool_file_log_probs("gpt2_has_a_mouth", stand_in) is None  # no array for a PLL read-out
    short = tmp_path / "short.txt"
    short.write_text("A line\n", encoding="utf-8")
    assert pool_file_log_probs("gpt2", short) is None

    from contstim_bench.generate.natural_run import score_pool
    from contstim_bench.generate.pairing import ModelEntry

    lines = stand_in.read_text(encoding="utf-8").splitlines()
    kept, lp = score_pool(lines[:1000], [ModelEntry("gpt2", "precomputed:gpt2"), ModelEntry("trigram", "precomputed:trigram")],
                          pool_lines=lines, pool_file=str(stand_in), options=RunOptions(cache=False, progress=False),
                          log=lambda m: None)
    assert kept == lines[:1000]
    assert np.array_equal(lp[:, 0], arrays["gpt2"][:1000]) and np.array_equal(lp[:, 1], arrays["trigram"][:1000])


# ----------------------------------------------------------------------------- partial references


def test_partial_references_equal_the_full_panels_when_complete():
    trials = load_trials("pll")
    lp = {m: reference_table(m, split="pll") for m in PLL_MODELS}
    refs = {m: lp[m] for m in PLL_MODELS if m != "roberta"}
    got = evaluate_with_partial_references(trials, lp["roberta"], "roberta", refs)
    want = evaluate_with_panels(trials, lp["roberta"], "roberta", refs)
    assert got == want
    # bert loses one catch sentence: it leaves the catch-trial and all-trial panels, nothing else changes
    catch = trials[trials["trial_type"] == "natural_vs_shuffled"]["sentence2"].iloc[0]
    partial = {**refs, "bert": {s: v for s, v in refs["bert"].items() if s != catch}}
    entries, panels = evaluate_with_partial_references(trials, lp["roberta"], "roberta", partial)
    assert "bert" in panels["synthetic_vs_synthetic"]["models"] and entries["synthetic_vs_synthetic"] == want[0]["synthetic_vs_synthetic"]
    for cond in ("natural_vs_shuffled", "all"):
        assert "bert" not in panels[cond]["models"] and "bert" not in entries[cond]["head_to_head"]
        assert entries[cond]["accuracy"] == want[0][cond]["accuracy"]


# ----------------------------------------------------------------------------- a dry-run round


@pytest.fixture(scope="module")
def design_dir(tmp_path_factory) -> Path:
    """A one-group design of real pll trials (18 synthetic pairs and the 12 catch trials) written as
    `contstim generate design` writes it, with the six pll reference models (their published
    log-probabilities) as the targeted models."""
    from contstim_bench.generate.design import write_design_dataset
    from contstim_bench.data.design_scores import design_sentences, write_models_dataset
    from contstim_bench.generate.design_models import score_sentences

    full = design_from_trials(load_trials("pll"))
    catch = full[full["trial_type"] == "natural_vs_shuffled"]
    synthetic = full[full["trial_type"] == "synthetic_vs_synthetic"]
    rows = pd.concat([synthetic.iloc[::7].head(18), catch]).copy()
    rows["trial"] = range(1, len(rows) + 1)
    design = validate_design(rows)
    out = tmp_path_factory.mktemp("design")
    write_design_dataset(design.assign(experiment="dry"), out, {"source": "pll trials"})
    specs = {m: {"spec": f"precomputed:{m}", "role": None} for m in PLL_MODELS}
    write_models_dataset(specs, score_sentences(design_sentences(design), specs, options=RunOptions(cache=False, progress=False),
                                                log=lambda m: None), out)
    return out


def run_study(design_dir: Path, root: Path, *, participants: int = 8, browser_participant: bool = False) -> Path:
    """export -> serve (seeded) -> simulated participants -> ingest; returns the datasets folder."""
    exp = root / "exp"
    assert cli_main(["experiment", "export", "--design", str(design_dir), "--out", str(exp)]) == 0
    with serving(exp, root / "responses.sqlite", "--seed", "11") as url:
        assert cli_main(["experiment", "simulate", "--url", url, "--participants", str(participants), "--model",
                         f"precomputed:{SIMULATOR}", "--noise", "2", "--catch-failure-rate", "0.06", "--seed", "4"]) == 0
        if browser_participant:
            browse_one(url, participants)
    assert cli_main(["experiment", "ingest", "--db", str(root / "responses.sqlite"), "--out", str(root / "datasets"),
                     "--experiment", ROUND, "--design", str(design_dir)]) == 0
    return root / "datasets"


def browse_one(url: str, index: int) -> None:
    """One simulated participant through the real page in headless Chromium (Debian's chromium
    driven by Playwright), choosing with the same policy as the API participants."""
    from contstim_bench.experiment.simulate import Chooser, SimulationSettings
    from contstim_bench.scoring.registry import load_scorer
    from playwright.sync_api import sync_playwright

    chooser = Chooser(load_scorer(f"precomputed:{SIMULATOR}").score,
                      SimulationSettings(noise=2, catch_failure_rate=0.06, seed=4), index)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{url}?PROLIFIC_PID=browser-{index}")
        page.click("#proceed")
        trial = 1
        while True:
            page.wait_for_selector(f'#trial[data-trial="{trial}"]:not([hidden]), #end:not([hidden])')
            if page.is_visible("#end"):
                break
            rating, _ = chooser.answer(page.inner_text("#sentence-left"), page.inner_text("#sentence-right"))
            side = "left" if rating <= 3 else "right"
            page.click(f'#side-{side} button[data-rating="{rating}"]')
            trial += 1
        assert trial == 31  # every trial of the design was answered on the page
        browser.close()


@pytest.fixture(scope="module")
def study(design_dir, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("study")
    browser = os.path.exists("/usr/bin/chromium")
    datasets = run_study(design_dir, root, browser_participant=browser)
    return {"root": root, "datasets": datasets, "browser": browser}


def test_ingest_writes_a_round(study, capsys):
    rounds = discover_rounds(study["datasets"])
    assert list(rounds) == [f"contstim.{ROUND}"]
    data = load_round(rounds[f"contstim.{ROUND}"])
    meta = data.meta
    n = 9 if study["browser"] else 8
    assert meta["participants"]["total"] == n
    assert meta["version"] == "1" and meta["design"]["assignment_seed"] == 11
    assert meta["design"]["trial_types"] == {"natural_vs_shuffled": 12, "synthetic_vs_synthetic": 18}
    assert [m["name"] for m in meta["models"]] and all(m["spec"].startswith("precomputed:") for m in meta["models"])
    participants = pd.read_parquet(data.folder / "participants" / f"{ROUND}.parquet")
    excluded = participants[~participants["included"]]
    assert len(excluded) >= 1  # the simulated inattention excludes someone ...
    assert [e["participant"] for e in meta["exclusions"]] == list(excluded["participant"])
    assert all(e["reason"].startswith("catch trials: chose the natural sentence in") for e in meta["exclusions"])
    card = (data.folder / "README.md").read_text(encoding="utf-8")
    assert f"Round `contstim.{ROUND}` version 1" in card and "EXCLUDED" in card
    assert set(data.trials["participant"]) == set(participants.loc[participants["included"], "participant"])
    if study["browser"]:
        ext = pd.read_sql_query("SELECT external_id FROM participants",
                                __import__("sqlite3").connect(study["root"] / "responses.sqlite"))
        assert "browser-8" in set(ext["external_id"])


def test_evaluate_a_round_by_identifier(study, tmp_path, capsys):
    datasets = study["datasets"]
    # --experiment ROUND is the round's benchmark; the simulating model is named like its reference
    assert cli_main(["evaluate", "--model", f"precomputed:{SIMULATOR}", "--experiment", ROUND, "--datasets",
                     str(datasets), "--output", str(tmp_path / "sim"), "--quiet"]) == 0
    result = json.loads((tmp_path / "sim" / f"contstim.{ROUND}.json").read_text())
    assert result["benchmark"]["identifier"] == f"contstim.{ROUND}"
    assert result["benchmark"]["dataset_fingerprint"] == load_round(datasets / f"contstim-{ROUND}").meta["fingerprint"]
    assert result["model"]["name"] == SIMULATOR
    entry = result["experiments"][ROUND]["synthetic_vs_synthetic"]
    assert entry["selection"] == "targeted"
    # head-to-heads on the trials that target both models when there are some; the simulator wins
    # every one in which the two models disagree
    h = entry["head_to_head"]
    assert h["electra_has_a_mouth"]["selection"] == "targeted_both"
    played = {k: v for k, v in h.items() if v["n_trials"]}
    assert played and all(v["share"] > 0.5 and v["better"] == SIMULATOR for v in played.values())
    # contstim compare on the round: the same head-to-heads, from the result file and the round's references
    comparison = contstim_bench.compare_models(results=[tmp_path / "sim" / f"contstim.{ROUND}.json"],
                                               experiment=ROUND, with_references=True, datasets_dir=datasets)
    cmp = comparison["conditions"]["synthetic_vs_synthetic"]["head_to_head"][SIMULATOR]
    for other, want in h.items():
        assert (cmp[other]["share"], cmp[other]["n_trials"], cmp[other]["selection"]) == \
            (want["share"], want["n_trials"], want["selection"])
    # a model the round did not target is evaluated on every trial, by its spec
    got = contstim_bench.evaluate_model("precomputed:bert_has_a_mouth", benchmarks=[f"contstim.{ROUND}"],
                                        datasets_dir=datasets, name="pll-bert", output=tmp_path / "other")
    other = got[f"contstim.{ROUND}"]
    assert other["model"]["name"] == "pll-bert"
    assert other["experiments"][ROUND]["synthetic_vs_synthetic"]["selection"] == "all"
    # a round named as an experiment is its benchmark on the API as on the CLI (driver.asked_benchmarks)
    named = contstim_bench.evaluate_model("precomputed:bert_has_a_mouth", experiments=ROUND, datasets_dir=datasets,
                                          name="pll-bert")
    assert list(named) == [f"contstim.{ROUND}"] and named[f"contstim.{ROUND}"]["experiments"] == other["experiments"]
    with pytest.raises(ValueError, match="a round is a benchmark of its own"):
        contstim_bench.evaluate_model("precomputed:roberta", experiments=ROUND, benchmarks=["blimp"],
                                      datasets_dir=datasets)
    # the round's folder is never taken for a datasets folder of the paper's experiments
    round_folder = datasets / f"contstim-{ROUND}"
    with pytest.raises(ValueError, match=f"is the folder of the round contstim.{ROUND}"):
        contstim_bench.evaluate_model("precomputed:roberta", experiments="pll", datasets_dir=round_folder)
    assert not (round_folder / "contstim").exists()
    same = contstim_bench.evaluate_model(f"precomputed:{SIMULATOR}", benchmarks=[f"contstim.{ROUND}"],
                                         datasets_dir=round_folder)[f"contstim.{ROUND}"]
    assert same["experiments"] == result["experiments"]
    with pytest.raises(ValueError, match=r"no round contstim.nope in the datasets folder"):
        contstim_bench.evaluate_model("precomputed:roberta", benchmarks=["contstim.nope"], datasets_dir=datasets)
    assert cli_main(["benchmarks", "--datasets", str(datasets)]) == 0
    assert f"contstim.{ROUND}" in capsys.readouterr().out


def test_rerun_with_the_same_seeds_gives_the_same_round(study, design_dir, tmp_path):
    """Two runs of the simulated study with the same seeds (API participants only: a browser
    measures its own reaction times) give the same round."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = load_round(run_study(design_dir, tmp_path / "a") / f"contstim-{ROUND}")
    b = load_round(run_study(design_dir, tmp_path / "b") / f"contstim-{ROUND}")
    assert a.meta["source_db_sha256"] != b.meta["source_db_sha256"]  # another database (times of day) ...
    assert a.meta["fingerprint"] == b.meta["fingerprint"]  # ... the same round
    pd.testing.assert_frame_equal(a.trials, b.trials)
    assert a.meta["exclusions"] == b.meta["exclusions"]
    # the same round and version with other data is refused
    code = cli_main(["experiment", "ingest", "--db", str(tmp_path / "a" / "responses.sqlite"), "--out",
                     str(study["datasets"]), "--experiment", ROUND, "--min-catch-correct", "10"])
    assert code == 1


def test_leaderboard_validates_rescores_and_shows_the_round(study, tmp_path, capsys):
    from contstim_bench.leaderboard.site import build_site
    from contstim_bench.leaderboard.verification import validate_and_rescore

    datasets = study["datasets"]
    results = tmp_path / "results"
    results.mkdir()
    for model in ("roberta", SIMULATOR):
        r = contstim_bench.evaluate_model(f"precomputed:{model}", benchmarks=[f"contstim.{ROUND}"],
                                          datasets_dir=datasets)[f"contstim.{ROUND}"]
        (results / f"{model}.{ROUND}.json").write_text(json.dumps(r), encoding="utf-8")
        p = contstim_bench.evaluate_model(f"precomputed:{model}", experiments="pll")
        (results / f"{model}.pll.json").write_text(json.dumps(p), encoding="utf-8")
    checked = validate_and_rescore(sorted(results.glob("*.json")), datasets_dir=datasets, rescore_models=True)
    assert [c.problems for c in checked] == [[]] * 4
    # a tampered round score is caught by the recomputation
    bad = json.loads((results / f"roberta.{ROUND}.json").read_text())
    bad["experiments"][ROUND]["all"]["accuracy"] -= 0.01
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    [c] = validate_and_rescore([tmp_path / "bad.json"], results_dir=results, datasets_dir=datasets)
    assert any("score does not match" in p for p in c.problems), c.problems
    assert any(p.startswith("duplicate: model 'roberta'") and f"on round contstim.{ROUND}" in p for p in c.problems)
    site = build_site(results, tmp_path / "site", datasets_dir=datasets, log=lambda m: None)
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "pll (Golan et al. 2023)" in index and f"round contstim.{ROUND}" in index
    assert f"Experiment {ROUND} &middot; all" in index
    page = (site / "models" / "roberta.html").read_text(encoding="utf-8")
    assert f"round contstim.{ROUND}" in page and "pll (Golan et al. 2023)" in page


def test_a_round_absent_or_damaged_is_named_as_such(study, tmp_path):
    """A round result checked where its round is not (a leaderboard's own datasets folder) is told
    apart, by the error's type, from one whose round is there but damaged; both are refused."""
    import shutil

    from contstim_bench.data.rounds import RoundNotFound, find_round
    from contstim_bench.leaderboard.validate import check_round

    result = contstim_bench.evaluate_model(f"precomputed:{SIMULATOR}", benchmarks=[f"contstim.{ROUND}"],
                                           datasets_dir=study["datasets"])[f"contstim.{ROUND}"]
    assert check_round(result, ROUND, study["datasets"]) == []
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RoundNotFound, match=f"no round contstim.{ROUND} in the datasets folder"):
        find_round(ROUND, empty)
    assert check_round(result, ROUND, empty) == [
        f"round contstim.{ROUND} cannot be checked on this machine: it is not in this leaderboard's datasets folder"]
    damaged = tmp_path / "damaged"
    shutil.copytree(study["datasets"] / f"contstim-{ROUND}", damaged / f"contstim-{ROUND}")
    trials = next((damaged / f"contstim-{ROUND}" / "trials").glob("*.parquet"))
    pd.read_parquet(trials).iloc[1:].to_parquet(trials)  # one trial fewer
    assert check_round(result, ROUND, damaged) == [
        f"round contstim.{ROUND} cannot be checked on this machine: it is changed or unreadable"]


def test_make_results_evaluates_every_model_on_every_round(study, tmp_path):
    """`python leaderboard/make_results.py --datasets D` writes, beside a model's pll result, its
    result on every round found in D (every model on every round)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_results", Path(__file__).parents[2] / "leaderboard" / "make_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "board"
    assert module.main(["--only", "roberta", "--no-offline", "--out", str(out), "--datasets", str(study["datasets"])]) == 0
    assert sorted(p.name for p in out.glob("*.json")) == ["roberta.dry1.json", "roberta.json"]
    r = json.loads((out / "roberta.dry1.json").read_text(encoding="utf-8"))
    assert r["benchmark"]["identifier"] == f"contstim.{ROUND}" and r["model"]["name"] == "roberta"


@pytest.mark.slow
def test_a_round_is_an_lm_eval_task_of_its_own(study, tmp_path):
    """`contstim lm-eval tasks` on a datasets folder with a round writes a task contstim_<round> in
    the group, and lm-eval's simple_evaluate of it (a tiny Llama, its BOS as prefix) reports what
    the driver computes for `hf-causal:<the same folder>` on the round."""
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from contstim_bench.driver import RunOptions, evaluate
    from contstim_bench.harness_tasks.folder import write_task_folder
    from contstim_bench.harness_tasks.metrics import FIELDS, field_value, metric_name
    from tiny_causal import save_tiny_llama

    folder, names = write_task_folder(tmp_path / "tasks", study["datasets"])
    assert f"contstim_{ROUND}" in names
    assert f"  - contstim_{ROUND}" in (folder / "contstim.yaml").read_text()
    model = tmp_path / "tiny"
    save_tiny_llama(model)
    # only this folder's tasks are indexed (lm-eval's 14,000 built-in ones take 12 CPU-s): the CLI run
    # (tests/harness_tasks/test_lm_eval_tasks.py) indexes them beside ours
    out = simple_evaluate(model="hf", model_args=f"pretrained={model},prefix_token_id=0,dtype=float32,"
                          "softmax_dtype=float64", tasks=[f"contstim_{ROUND}"], device="cpu", batch_size=32,
                          task_manager=TaskManager(include_path=str(folder), include_defaults=False))
    reported = out["results"][f"contstim_{ROUND}"]
    ours = evaluate(f"hf-causal:{model}", [f"contstim.{ROUND}"], options=RunOptions(cache=False, progress=False),
                    datasets_dir=study["datasets"], log=lambda msg: None)[f"contstim.{ROUND}"]
    entries = ours["experiments"][ROUND]
    assert {"synthetic_vs_synthetic", "natural_vs_shuffled", "all"} <= set(entries)
    for cond, entry in entries.items():
        for field in FIELDS:
            want = field_value(entry, field)
            got = reported[f"{metric_name(field, cond)},none"]
            assert got == (want if want is not None else "N/A") or got == pytest.approx(want, abs=1e-9), (cond, field)


def test_a_round_is_a_brainscore_benchmark_of_its_own(study, tmp_path):
    """`contstim brainscore plugin` on a datasets folder with a round registers Golan2023.<round>-accuracy
    and -srcs, ships the round's folder as ingested, and its reference values (the round's first
    targeted model, read from the round's own log-probabilities) are what the driver computes for
    that model as a new one (under another name, so that no trial is left out as its own)."""
    from contstim_bench.brainscore_plugin import hooks
    from contstim_bench.brainscore_plugin.folder import write_plugin_folder
    from contstim_bench.driver import RunOptions, evaluate

    plugin, names = write_plugin_folder(tmp_path / "plugin", study["datasets"])
    assert names == ["Golan2023.pll-accuracy", "Golan2023.pll-srcs", f"Golan2023.{ROUND}-accuracy",
                     f"Golan2023.{ROUND}-srcs"]
    assert f"benchmark_registry['Golan2023.{ROUND}-srcs']" in (plugin / "__init__.py").read_text()
    (ident, folder), = discover_rounds(plugin / "data").items()
    assert ident == f"contstim.{ROUND}" and (folder / "round.json").read_bytes() == \
        (discover_rounds(study["datasets"])[ident] / "round.json").read_bytes()
    ref = json.loads((plugin / "reference.json").read_text())["benchmarks"]
    first = load_round(folder).meta["models"][0]
    for measure in ("accuracy", "srcs"):
        entry = ref[f"Golan2023.{ROUND}-{measure}"]
        assert entry["contstim_benchmark"] == ident and entry["reference"]["subject"] == first["name"]
        mine = evaluate(first["spec"], [ident], datasets_dir=study["datasets"], name="a new model",
                        options=RunOptions(cache=False, progress=False), log=lambda m: None)[ident]
        values = mine["experiments"][ROUND]["all"]
        assert entry["reference"]["raw"] == pytest.approx(values[measure], abs=1e-12)
        assert entry["ceiling"] == pytest.approx(values[f"{measure}_noise_ceiling"]["lower"], abs=1e-12)
    # the plugin's copy of the round is what its benchmark reads
    assert len(hooks.sentences(ident, plugin / "data")) == len(hooks.sentences(ident, study["datasets"]))
