"""Like-for-like comparisons on the pll human data (Golan et al. 2023, Fig. S3, S4, S8b): the real
SmolLM2 against every reference model counted by hand, SmolLM2 vs Gemma-3 and vs a trigram (no
disagreement: not separable), approximate log-likelihood vs PLL equal to the Fig. S8b contrast,
and ``contstim compare`` end to end."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from contstim_bench.analysis.inference import wilcoxon_p
from contstim_bench.benchmarks.contstim import load_experiment
from contstim_bench.benchmarks.contstim_compare import compare_logprobs, experiment_sentences
from contstim_bench.cli import main as cli_main

pytestmark = pytest.mark.usefixtures("one_torch_thread")

from pinned_pll import PINNED  # noqa: E402  (tests/pinned_pll.py)

S8B_ACCURACY = {m: PINNED["synthetic_vs_synthetic"][m][0] for m in ("roberta", "electra", "bert")}
"""Fig. S8b: approximate LL's accuracy on the trials that pit it against its own PLL read-out."""


@pytest.fixture(scope="module")
def pll():
    trials, refs = load_experiment("pll")
    return trials, refs


@pytest.fixture(scope="module")
def smollm2_logprobs(pll_logprobs):
    """The real SmolLM2's log-probabilities of the pll sentences (scored once per run: conftest)."""
    return pll_logprobs["smollm2-135m"]


def by_hand(trials: pd.DataFrame, lp_a, lp_b, mask: np.ndarray):
    """(per-participant share of a's sentence among the rows of ``mask`` where a and b disagree,
    number of such rows, number of such pairs), counted on the raw trials."""
    t = trials[mask]
    ra = np.array([lp_a[y] - lp_a[x] for x, y in zip(t["sentence1"], t["sentence2"])])
    rb = np.array([lp_b[y] - lp_b[x] for x, y in zip(t["sentence1"], t["sentence2"])])
    dis = np.sign(ra) * np.sign(rb) < 0
    chose_a = ((t["rating"].to_numpy() >= 4) == (ra > 0))[dis].astype(float)
    shares = pd.Series(chose_a, index=t["participant"].to_numpy()[dis]).groupby(level=0).mean()
    return shares, int(dis.sum()), int(t["pair_id"][dis].nunique())


def test_smollm2_against_every_reference_by_hand(pll, smollm2_logprobs):
    trials, refs = pll
    cmp = compare_logprobs({"smollm2": smollm2_logprobs, **refs}, "pll")
    assert list(cmp["conditions"]) == ["synthetic_vs_synthetic", "natural_vs_shuffled", "all"]
    syn = cmp["conditions"]["synthetic_vs_synthetic"]
    mask = (trials["trial_type"] == "synthetic_vs_synthetic").to_numpy()
    counts = {}
    for ref in refs:
        h = syn["head_to_head"]["smollm2"][ref]
        shares, n_trials, n_pairs = by_hand(trials, smollm2_logprobs, refs[ref], mask)
        assert h["selection"] == "all" and h["n_pairs_selected"] == 120
        assert (h["n_trials"], h["n_pairs"]) == (n_trials, n_pairs)
        counts[ref] = n_pairs
        if n_pairs:
            assert h["share_by_unit"] == pytest.approx({str(k): v for k, v in shares.items()}, abs=1e-12)
            assert h["share"] == pytest.approx(shares.mean(), abs=1e-12)
            assert h["p"] == pytest.approx(wilcoxon_p(shares.to_numpy() - 0.5, np.zeros(len(shares))), rel=1e-9)
            back = syn["head_to_head"][ref]["smollm2"]
            assert back["share"] == pytest.approx(1 - h["share"], abs=1e-12) and back["p"] == h["p"]
        else:
            assert h["share"] is None and h["p"] is None and h["p_bh"] is None
    # SmolLM2 ranks every synthetic pair as the three approximate-LL models do, and prefers the
    # approximate-LL sentence wherever a PLL read-out disagrees
    assert counts == {"bert": 0, "roberta": 0, "electra": 0,
                      "bert_has_a_mouth": 101, "roberta_has_a_mouth": 60, "electra_has_a_mouth": 78}
    for pll_model in ("bert_has_a_mouth", "roberta_has_a_mouth", "electra_has_a_mouth"):
        h = syn["head_to_head"]["smollm2"][pll_model]
        assert h["share"] > 0.75 and h["p_bh"] < 1e-4
    assert syn["agreement"]["smollm2"]["bert"] == {"share": 1.0, "n_pairs": 120}


def test_approximate_ll_vs_pll_is_the_fig_s8b_contrast(pll):
    """On the pairs synthesised to pit a masked model's approximate LL against its PLL read-out the two
    always disagree, so the head-to-head share equals approximate LL's accuracy there (Fig. S8b)."""
    trials, refs = pll
    cmp = compare_logprobs(refs, "pll", conditions=["synthetic_vs_synthetic"])
    syn = cmp["conditions"]["synthetic_vs_synthetic"]
    panel = load_panel_accuracy(refs)
    for model, accuracy in S8B_ACCURACY.items():
        h = syn["head_to_head"][model][f"{model}_has_a_mouth"]
        assert h["selection"] == "targeted_both" and h["n_pairs"] == h["n_pairs_selected"] == 40
        assert h["n_trials"] == 1200
        assert h["share"] == pytest.approx(accuracy, abs=1e-12)
        assert h["share_by_unit"] == pytest.approx(panel[model], abs=1e-12)
        assert h["p_bh"] < 1e-5


def load_panel_accuracy(refs):
    from contstim_bench.analysis.evaluation import evaluate_logprobs

    trials = load_experiment("pll")[0]
    out = {}
    for model in S8B_ACCURACY:
        others = {m: v for m, v in refs.items() if m != model}
        entry = evaluate_logprobs(trials, refs[model], model, others, conditions=["synthetic_vs_synthetic"])
        out[model] = entry["synthetic_vs_synthetic"]["accuracy_by_unit"]
    return out


def test_smollm2_gemma_and_a_trigram_are_not_separable(tmp_path, pll, pll_logprobs):
    """Three different models that rank every pll pair the same way: no winner, zero disagreements."""
    from contstim_bench.scoring.registry import load_scorer

    arpa = tmp_path / "trigram.arpa"
    assert cli_main(["train", "ngram", "--order", "3", "--output", str(arpa), "--backend", "python"]) == 0
    sentences = experiment_sentences("pll")
    trigram = load_scorer(f"kenlm:{arpa}", cache=False)
    cmp = compare_logprobs({"smollm2": pll_logprobs["smollm2-135m"], "gemma": pll_logprobs["gemma3-270m"],
                            "trigram": dict(zip(sentences, trigram.score(sentences)))}, "pll")
    for cond, block in cmp["conditions"].items():
        assert block["bh_family_size"] == 0, cond
        for a, others in block["head_to_head"].items():
            for b, h in others.items():
                assert h["n_trials"] == 0 and h["share"] is None, (cond, a, b)
                assert block["agreement"][a][b]["share"] == 1.0


def test_compare_command_writes_tables_and_figures(tmp_path, pll, capsys):
    trials, refs = pll
    result = tmp_path / "roberta.json"
    assert cli_main(["evaluate", "--model", "precomputed:roberta", "--experiment", "pll", "--output", str(result),
                     "--no-plots", "--quiet"]) == 0
    out = tmp_path / "cmp"
    assert cli_main(["compare", "--results", str(result), "--models", "pll_bert=precomputed:bert_has_a_mouth",
                     "--condition", "synthetic_vs_synthetic", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "pll / synthetic_vs_synthetic (120 pairs)" in printed
    row = next(line for line in printed.splitlines() if line.startswith("roberta "))
    assert "0.85*** (101)" in row  # roberta vs bert's PLL read-out: 101 pairs of disagreement
    data = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    assert data["format"] == "contstim-bench-comparison" and data["models"]["pll_bert"]["spec"] == "precomputed:bert_has_a_mouth"
    # each model's settings as evaluate's result records them: the scored one's scorer, the file's model block
    evaluated = json.loads(result.read_text(encoding="utf-8"))["model"]
    assert data["models"]["roberta"] == evaluated
    from contstim_bench.benchmarks.base import describe_model
    from contstim_bench.driver import RunOptions, load_model

    scored = describe_model(load_model("precomputed:bert_has_a_mouth", RunOptions(progress=False)))
    assert data["models"]["pll_bert"] == json.loads(json.dumps(scored)) and "fingerprint" in scored
    h = data["conditions"]["synthetic_vs_synthetic"]["head_to_head"]["roberta"]["pll_bert"]
    shares, n_trials, n_pairs = by_hand(trials, refs["roberta"], refs["bert_has_a_mouth"],
                                        (trials["trial_type"] == "synthetic_vs_synthetic").to_numpy())
    assert (h["n_trials"], h["n_pairs"]) == (n_trials, n_pairs) == (3030, 101)
    assert h["share"] == pytest.approx(shares.mean(), abs=1e-12)
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["comparison.json", "head_to_head.csv", "agreement.csv", "tables.txt"]
                           + [f"pll_synthetic_vs_synthetic_{k}.{f}" for k in ("head_to_head", "agreement")
                              for f in ("png", "svg")])
    csv = pd.read_csv(out / "head_to_head.csv")
    assert len(csv) == 2 and set(csv["model"]) == {"roberta", "pll_bert"}
    svg = (out / "pll_synthetic_vs_synthetic_head_to_head.svg").read_text(encoding="utf-8")
    assert "human choices aligned with model 1" in svg and "0.85" in svg


@pytest.mark.parametrize("argv, message", [
    (["compare"], "nothing to compare: give --models, --results and/or --references"),
    (["compare", "--models", "precomputed:bert"], "a comparison needs at least two models, got 1"),
    (["compare", "--models", "precomputed:bert,precomputed:bert"], r"model name\(s\) \['bert'\] given twice in --models"),
    (["compare", "--models", "precomputed:bert,x=precomputed:roberta", "--condition", "nope"], "unknown condition 'nope'"),
])
def test_compare_errors(argv, message, tmp_path, capsys):
    assert cli_main(argv + ["--output", str(tmp_path / "o")]) == 1
    import re

    assert re.search(message, capsys.readouterr().err)


def test_compare_result_missing_sentences(tmp_path, capsys):
    result = tmp_path / "r.json"
    assert cli_main(["evaluate", "--model", "precomputed:bert", "--experiment", "pll", "--output", str(result),
                     "--no-plots", "--quiet"]) == 0
    data = json.loads(result.read_text(encoding="utf-8"))
    data["logprobs"].pop(next(iter(data["logprobs"])))
    result.write_text(json.dumps(data), encoding="utf-8")
    assert cli_main(["compare", "--results", str(result), "--references", "--output", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "has no log-probability for 1 sentence(s) of the pll experiment" in err


def test_by_item_head_to_head_by_hand(pll):
    """The head-to-head by item (sentence pairs as units), computed here from the raw trials with pandas
    and scipy alone: per pair, the share of its participants who chose RoBERTa-PLL's sentence over
    ELECTRA-PLL's; scipy's two-sided Wilcoxon (zsplit) of the shares against 0.5; BH over the by-item
    tests of the comparison's pairs. On these pairs the by-item test is weaker than the by-participant
    one (the pairs differ far more than the participants)."""
    import warnings

    from scipy.stats import false_discovery_control, wilcoxon

    trials, refs = pll
    names = ["roberta_has_a_mouth", "electra_has_a_mouth", "bert_has_a_mouth"]
    cmp = compare_logprobs({n: refs[n] for n in names}, "pll", conditions=["synthetic_vs_synthetic"])
    block = cmp["conditions"]["synthetic_vs_synthetic"]
    t = trials[(trials["trial_type"] == "synthetic_vs_synthetic").to_numpy()]
    raw = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ra = np.array([refs[a][y] - refs[a][x] for x, y in zip(t["sentence1"], t["sentence2"])])
            rb = np.array([refs[b][y] - refs[b][x] for x, y in zip(t["sentence1"], t["sentence2"])])
            dis = np.sign(ra) * np.sign(rb) < 0
            chose_a = ((t["rating"].to_numpy() >= 4) == (ra > 0))[dis].astype(float)
            items = pd.Series(chose_a, index=t["pair_id"].to_numpy()[dis]).groupby(level=0).mean()
            h = block["head_to_head"][a][b]
            assert h["share_by_item"] == pytest.approx({str(k): v for k, v in items.items()}, abs=1e-12)
            assert h["share_items"] == pytest.approx(items.mean(), abs=1e-12)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                raw[(a, b)] = float(wilcoxon(np.round(items.to_numpy() - 0.5, 12), zero_method="zsplit").pvalue)
            assert h["p_items"] == pytest.approx(raw[(a, b)], rel=1e-12)
    adjusted = dict(zip(raw, false_discovery_control(list(raw.values()), method="bh")))
    for (a, b), q in adjusted.items():
        assert block["head_to_head"][a][b]["p_items_bh"] == pytest.approx(q, rel=1e-12)
    first = block["head_to_head"]["roberta_has_a_mouth"]["electra_has_a_mouth"]
    assert (round(first["share_items"], 4), f"{first['p_items_bh']:.3g}") == (0.6358, "0.00127")
    assert first["p_items_bh"] > 100 * first["p_bh"]  # the items are the weaker evidence here
