"""The pll-properties benchmark (Kauf & Ivanova 2023 §4-5, Table 2) on real EventsAdapt sentences:
every score of a "counting" masked LM computed by hand, a causal trigram's scores through the same
path, the report items (Figs. 3A, 3B, 4, Table 2), their figures' keys, and the door."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from contstim_bench.analysis.pll_properties import TEMPLATES
from contstim_bench.benchmarks.pll_properties import FORMAT, PLL_METRICS, measure, read_frequencies
from contstim_bench.benchmarks.pll_properties_report import kauf_ivanova_items
from contstim_bench.scoring import masked

import tiny_mlm  # tests/tiny_mlm.py

VOCAB = [*tiny_mlm.SPECIALS, "The", "the", "ra", "##ider", "caught", "ill", "##ness", "was", "by", ".",
         "My", "word", "is", '"', "travel", "##er", "lost", "so", "##uven", "##ir"]
V = len(VOCAB)  # 25
FREQ = {"the": 3.0, "raider": 1.0, "caught": 2.0, "illness": 0.5}


def f(c: int) -> float:
    """log p of a true token of the counting masked LM when c tokens of the row are visible."""
    return -math.log(V - 1 + math.exp(c))


@pytest.fixture(scope="module")
def sentences(raw_data_dir) -> list[str]:
    """The first three EventsAdapt sentences (item 1)."""
    from contstim_bench.data.plausibility_raw import EA_SENTENCES, read_csv, resolve

    got = list(read_csv(resolve(EA_SENTENCES, raw_data_dir)).Sentence[:3])
    assert got == ["The raider caught the illness.", "The illness caught the raider.",
                   "The illness was caught by the raider."]
    return got


@pytest.fixture(scope="module")
def scorer():
    tok = tiny_mlm.hand_wordpiece(VOCAB)
    model = tiny_mlm.counting_mlm(V, tok.mask_token_id, target=tok.pad_token_id)
    return masked.MaskedLMScorer(model, tok, method="approx-ll", device="cpu", cache=False, progress=False)


def _envelope(sections: dict, spec: str, template: str) -> dict:
    return {"format": FORMAT, "model": {"spec": spec, "name": spec}, **sections,
            "benchmark": {"template": template, "frequency_source": "mapping", "limit": None}}


@pytest.fixture(scope="module")
def masked_result(scorer, sentences) -> dict:
    return _envelope(measure(scorer, sentences, frequencies=FREQ), "counting-mlm", TEMPLATES["my-word-is"])


def _col(section: dict, name: str) -> list:
    i = section["columns"].index(name)
    return [row[i] for row in section["rows"]]


def test_sentence_scores_by_hand(masked_result):
    """[CLS] The ra ##ider caught the ill ##ness . [SEP]: 8 content tokens, two words of 2 pieces;
    the passive sentence has 10.  c = visible tokens of the row (the module docstring)."""
    sent = masked_result["sentences"]
    assert _col(sent, "n_tokens") == [8, 8, 10] and _col(sent, "n_words") == [5, 5, 7]
    hand = {"pll": [8 * f(9), 8 * f(9), 10 * f(11)],
            "pll-word-l2r": [6 * f(9) + 2 * f(8), 6 * f(9) + 2 * f(8), 8 * f(11) + 2 * f(10)],
            "pll-whole-word": [4 * f(9) + 4 * f(8), 4 * f(9) + 4 * f(8), 6 * f(11) + 4 * f(10)],
            "pll-sentence-l2r": [sum(f(1 + t) for t in range(n)) for n in (8, 8, 10)]}
    assert masked_result["metrics"] == list(PLL_METRICS)
    for m, want in hand.items():
        np.testing.assert_allclose(_col(sent, m), want, atol=1e-12, err_msg=m)
    # 2 distinct lengths, the longer sentence less probable: R = +1 for every metric
    for m in PLL_METRICS:
        assert masked_result["analysis"][m]["length_tokens"]["r"] == pytest.approx(1.0)
        assert masked_result["analysis"][m]["length_words"]["r"] == pytest.approx(1.0)


def test_word_scores_and_frequency_by_hand(masked_result):
    """'My word is "raider".' = My word is " ra ##ider " . (8 content tokens, the word at 4-5);
    'My word is "the".' has 7 with the word at 4."""
    words = masked_result["words"]
    assert _col(words, "word") == ["by", "caught", "illness", "raider", "the", "was"]
    assert _col(words, "n_tokens") == [1, 1, 2, 2, 1, 1]
    i, j = 3, 4  # raider, the
    hand = {"pll": (2 * f(9), f(8)), "pll-word-l2r": (f(8) + f(9), f(8)), "pll-whole-word": (2 * f(8), f(8)),
            "pll-sentence-l2r": (f(5) + f(6), f(5))}
    for m, (raider, the) in hand.items():
        assert _col(words, m)[i] == pytest.approx(raider, abs=1e-12) and _col(words, m)[j] == pytest.approx(the, abs=1e-12)
    assert words["n_with_frequency"] == 4
    # Pearson of (2.0, 0.5, 1.0, 3.0) with the PLL-original scores of caught, illness, raider, the
    x = np.array([2.0, 0.5, 1.0, 3.0])
    y = np.array([f(8), 2 * f(9), 2 * f(9), f(8)])
    dx, dy = x - x.mean(), y - y.mean()
    r = (dx * dy).sum() / math.sqrt((dx ** 2).sum() * (dy ** 2).sum())
    assert masked_result["analysis"]["pll"]["frequency"]["r"] == pytest.approx(r, abs=1e-12)


def test_oov_ratio_by_hand(masked_result):
    """17 word occurrences in the three sentences; raider and illness (3 each) split in two."""
    oov = masked_result["oov"]
    assert (oov["n_words"], oov["n_split"], oov["n_types"], oov["n_split_types"]) == (17, 6, 6, 2)
    assert oov["ratio"] == pytest.approx(6 / 17)


@pytest.fixture(scope="module")
def trigram(kn_trigram):
    from contstim_bench.scoring.registry import load_scorer

    return load_scorer(f"kenlm:{kn_trigram}", cache=False, progress=False)


def test_causal_model_through_the_same_path(trigram, sentences):
    """A causal model gives one metric, its log-probabilities; a word's score in a template is
    log p(text up to the word's end) - log p(text before it), its own score without a template."""
    plain = measure(trigram, sentences, template=TEMPLATES["none"], frequencies=FREQ)
    assert plain["metrics"] == ["logprob"] and plain["oov"] is None
    np.testing.assert_allclose(_col(plain["sentences"], "logprob"), trigram.score(sentences), atol=0)
    assert _col(plain["sentences"], "n_tokens") == [None] * 3
    np.testing.assert_allclose(_col(plain["words"], "logprob"), trigram.score(_col(plain["words"], "word")), atol=0)
    ctx = measure(trigram, sentences, frequencies=FREQ)
    raider = _col(ctx["words"], "logprob")[3]
    assert raider == pytest.approx(trigram.score(['My word is "raider'])[0] - trigram.score(['My word is "'])[0])
    assert set(plain["analysis"]["logprob"]) == {"length_words", "frequency"}


def test_items_against_a_causal_reference(masked_result, trigram, sentences):
    causal = _envelope(measure(trigram, sentences, frequencies=FREQ), "trigram", TEMPLATES["my-word-is"])
    report = kauf_ivanova_items(masked_result, reference=causal)
    items = {i["id"]: i for i in report["items"]}
    assert list(items) == ["KI-F3A", "KI-F3B", "KI-F4", "KI-F2", "KI-F5", "KI-F6", "KI-F2P", "KI-T2"] and report["skipped"] == {}
    # Fig. 3A: the causal panel first, then the four PLL metrics
    assert [p["label"] for p in items["KI-F3A"]["data"]["panels"]] == [
        "LL", "PLL-original", "PLL-word-l2r", "PLL-whole-word", "PLL-sentence-l2r"]
    # Fig. 4: Pearson of the masked scores against the trigram's, by hand
    x = np.asarray(trigram.score(sentences))
    for panel in items["KI-F4"]["data"]["panels"]:
        y = np.asarray(_col(masked_result["sentences"], panel["metric"]))
        dx, dy = x - x.mean(), y - y.mean()
        r = (dx * dy).sum() / math.sqrt((dx ** 2).sum() * (dy ** 2).sum())
        assert panel["pearson"]["r"] == pytest.approx(r, abs=1e-12)
    # Table 2: the masked model's tokenizer (the trigram has none), then the paper's 9 rows
    rows = items["KI-T2"]["data"]["rows"]
    assert [(r["model"], r["n_words"], r["n_split"]) for r in rows] == [("counting-mlm", 17, 6)]
    assert {(p["dataset"], p["model"]): p["percent"] for p in items["KI-T2"]["data"]["paper"]}[
        ("EventsAdapt", "BERT")] == 19.6
    alone = kauf_ivanova_items(masked_result)
    assert "KI-F4" in alone["skipped"] and "KI-F4" not in {i["id"] for i in alone["items"]}
    with pytest.raises(ValueError, match="must be a causal"):
        kauf_ivanova_items(causal, reference=masked_result)
    with pytest.raises(ValueError, match="must be a contstim-bench-pll-properties result"):
        kauf_ivanova_items({"format": "contstim-bench-blimp"})


@pytest.mark.slow
def test_figures_have_a_key_for_every_mark(masked_result, trigram, sentences, tmp_path):
    from contstim_bench.report.figures import pyplot, save_figure
    from contstim_bench.report.kauf_ivanova import FIGURES, oov_table

    causal = _envelope(measure(trigram, sentences, frequencies=FREQ), "trigram", TEMPLATES["my-word-is"])
    for item in kauf_ivanova_items(masked_result, reference=causal)["items"]:
        if item["kind"] == "oov_table":
            table = oov_table(item)
            assert table["rows"][0][:5] == ["counting-mlm", "EventsAdapt", 17, 6, round(600 / 17, 2)]
            continue
        fig = FIGURES[item["kind"]](item)
        keys = {t.get_text() for legend in fig.legends for t in legend.get_texts()}
        marks = {"pll_length": {"sentence (x jittered by < 0.15)", "least-squares fit"},
                 "pll_frequency": {"word of 1 token", "word of 2 tokens", "least-squares fit"},
                 "pll_causal": {"sentence", "least-squares fit"},
                 "pll_inflation_sentence": {"token PLL score", "mean token PLL score",
                                            f"tokens of \u201c{item['data'].get('word')}\u201d"},
                 "pll_inflation_positions": {"PLL-original", "PLL-word-l2r"}}[item["kind"]]
        if item["id"] == "KI-F2":
            assert fig.axes[0].get_title() == f"PLL-original\nsentence PLL score {9 * f(10):.2f}, mean {f(10):.2f}"
        assert marks <= keys, item["id"]
        if item["kind"] == "pll_length":
            assert fig.axes[1].get_title() == "counting-mlm | PLL-original\nR=1.00 ***"
            (png,) = save_figure(fig, tmp_path, item["id"], ("png",))
            assert png.stat().st_size > 10_000
        else:
            pyplot().close(fig)


def test_score_inflation_by_hand(masked_result):
    """Kauf & Ivanova's Fig. 2 (KI-F2) on the counting masked LM (c = visible tokens of the row):
    [CLS] The travel ##er lost the so ##uven ##ir . [SEP], 11 positions.  PLL-original sees 10 for
    every token; PLL-word-l2r masks a word's later tokens too (travel: 9, so: 8, ##uven: 9);
    PLL-whole-word all of them (traveler: 9, souvenir: 8); PLL-sentence-l2r sees [CLS] and the
    tokens before (1 + k for the k-th).  KI-F2P, over the words of 'My word is "X".' (10 positions
    for a two-token word, 9 for one): PLL-original 9, 9 for illness and raider, PLL-word-l2r 8, 9,
    PLL-whole-word 8, 8, PLL-sentence-l2r 5, 6 (the word at content positions 4-5); 8, 8, 8, 5 for
    the four one-token words."""
    tokens = masked_result["word_tokens"]
    assert tokens["pieces"] == [["by"], ["caught"], ["ill", "##ness"], ["ra", "##ider"], ["the"], ["was"]]
    np.testing.assert_allclose(tokens["values"]["pll-word-l2r"][2], [f(8), f(9)], atol=1e-12)
    made = kauf_ivanova_items(masked_result)
    found = {i["id"]: i for i in made["items"]}
    fig2 = found["KI-F2"]["data"]
    assert fig2["pieces"] == ["The", "travel", "##er", "lost", "the", "so", "##uven", "##ir", "."]
    assert fig2["word"] == "souvenir" and fig2["word_tokens"] == [5, 6, 7]
    hand = {"pll": [f(10)] * 9,
            "pll-word-l2r": [f(10), f(9), f(10), f(10), f(10), f(8), f(9), f(10), f(10)],
            "pll-whole-word": [f(10), f(9), f(9), f(10), f(10), f(8), f(8), f(8), f(10)],
            "pll-sentence-l2r": [f(1 + k) for k in range(9)]}
    for m, want in hand.items():
        np.testing.assert_allclose(fig2["values"][m], want, atol=1e-12, err_msg=m)
    assert [found[k]["data"]["word"] for k in ("KI-F5", "KI-F6")] == ["carnivore", "hooligan"]
    by_hand = {(1, 1): {"pll": f(8), "pll-word-l2r": f(8), "pll-whole-word": f(8), "pll-sentence-l2r": f(5)},
               (2, 1): {"pll": f(9), "pll-word-l2r": f(8), "pll-whole-word": f(8), "pll-sentence-l2r": f(5)},
               (2, 2): {"pll": f(9), "pll-word-l2r": f(9), "pll-whole-word": f(8), "pll-sentence-l2r": f(6)}}
    rows = found["KI-F2P"]["data"]["rows"]
    assert len(rows) == 3 * 4
    for r in rows:
        assert r["mean"] == pytest.approx(by_hand[(r["n_tokens"], r["position"])][r["metric"]], abs=1e-12)
        assert r["n_words"] == (4 if r["n_tokens"] == 1 else 2)
    assert made["skipped"].keys().isdisjoint({"KI-F2", "KI-F5", "KI-F6", "KI-F2P"})
    bare = {k: v for k, v in masked_result.items() if k != "inflation_examples"}
    assert "re-run the benchmark" in kauf_ivanova_items(bare)["skipped"]["KI-F2"]


def test_word_tokens_are_validated(masked_result):
    from contstim_bench.results.schema import _check_word_tokens
    from contstim_bench.results.checks import Problems

    def problems(result):
        found = Problems()
        _check_word_tokens(result, found)
        return list(found)

    assert problems(masked_result) == []
    bad = json.loads(json.dumps(masked_result))
    bad["word_tokens"]["values"]["pll"][2] = [f(9)]
    assert problems(bad) == ["result.word_tokens.values.pll[2]: expected one finite log-probability <= 0 per token "
                             "of the word"]
    bad = json.loads(json.dumps(masked_result))
    bad["word_tokens"]["pieces"].pop()
    assert problems(bad) == ["result.word_tokens.pieces: has 5 words, words has 6"]
    from contstim_bench.results.schema import _check_inflation_examples

    found = Problems()
    bad = json.loads(json.dumps(masked_result))
    bad["inflation_examples"][0]["values"]["pll"][3] = 0.5
    bad["inflation_examples"][1]["word_tokens"] = [99]
    _check_inflation_examples(bad, found)
    assert list(found) == ["result.inflation_examples[0].values.pll: expected one finite log-probability <= 0 per piece",
                           "result.inflation_examples[1].word_tokens: expected positions among the pieces"]


def test_frequency_file_as_the_paper(tmp_path):
    """ln(count + 1), words of count 0 left out (their Laplace smoothing, then exclusion)."""
    path = tmp_path / "counts.tsv"
    path.write_text("word\tcount\nThe\t99\nzyx\t0\nraider\t6\n", encoding="utf-8")
    assert read_frequencies(path) == {"the": math.log(100), "raider": math.log(7)}
    path.write_text("word,count\nthe,-1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2: count '-1' is not a number >= 0"):
        read_frequencies(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="needs the columns word and count"):
        read_frequencies(path)


@pytest.mark.slow
def test_the_door(datasets, tmp_path):
    """``evaluate(spec, ["pll-properties"])`` loads an hf-masked folder, runs on the first sentences
    of the built EventsAdapt config, writes a result the one validator knows, and its summary."""
    from contstim_bench.driver import evaluate
    from contstim_bench.report import summary
    from contstim_bench.results.schema import validate_result

    tok = tiny_mlm.hand_wordpiece(VOCAB)
    folder = tiny_mlm.save(tiny_mlm.random_masked_lm(tok, hidden=8, layers=1, heads=1), tok, tmp_path / "mlm")
    out = tmp_path / "r.json"
    results = evaluate(f"hf-masked:{folder}", ["pll-properties"], datasets_dir=datasets, output=out,
                       benchmark_options={"limit": 3, "frequencies": FREQ}, log=lambda m: None)
    result = json.loads(out.read_text(encoding="utf-8"))
    validate_result(result)
    assert result == json.loads(json.dumps(results["pll-properties"]))
    assert result["benchmark"]["identifier"] == "pll-properties" and result["benchmark"]["limit"] == 3
    assert _col(result["sentences"], "sentence") == ["The raider caught the illness.", "The illness caught the raider.",
                                                     "The illness was caught by the raider."]
    assert _col(result["sentences"], "n_tokens") == [8, 8, 10]
    text = summary(result)
    assert "PLL-word-l2r" in text and "out-of-vocabulary ratio (Table 2): 35.29%" in text
    # its page: Figs. 3A/3B and Table 2 drawn, Fig. 4 named as needing a causal model's result
    from contstim_bench.cli import main as cli_main

    assert cli_main(["report", str(out), "--out", str(tmp_path / "pages")]) == 0
    (page,) = [p for p in (tmp_path / "pages").glob("*.html") if p.name != "index.html"]
    html = page.read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") >= 2
    assert "Figure 3A: sentence length and negative (P)LL" in html and "Table 2: out-of-vocabulary ratio" in html
    assert "35.29" in html and "needs the pll-properties result of a causal model as the reference" in html
    assert "PLL-word-l2r length R" in (tmp_path / "pages" / "index.html").read_text(encoding="utf-8")


def test_items_for_several_results(masked_result, trigram, sentences):
    """Each masked result is drawn against the first causal one; Table 2 gathers every tokenizer."""
    from contstim_bench.benchmarks.pll_properties_report import items_for_results

    causal = _envelope(measure(trigram, sentences, frequencies=FREQ), "trigram", TEMPLATES["my-word-is"])
    other = {**masked_result, "model": {"spec": "hf-masked:other", "name": "other"}}
    pages = items_for_results([{"format": "contstim-bench-blimp"}, masked_result, causal, other])
    assert [p["model"] for p in pages] == ["counting-mlm", "trigram", "other"]
    first = {i["id"]: i for i in pages[0]["items"]}
    assert first["KI-F4"]["data"]["causal_model"] == "trigram"
    assert [r["model"] for r in first["KI-T2"]["data"]["rows"]] == ["counting-mlm", "other"]
    assert "KI-F4" in pages[1]["skipped"]


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_byte_level_word_scores(sentences):
    """SmolLM2's byte-level BPE with a tiny random RoBERTa: in 'My word is "raider".' = My Ġword Ġis
    Ġ" ra ider ". the word is tokens 4-5 (the closing quote merges with the full stop), its score the
    sum of their values in the template sentence, under every metric."""
    tok = tiny_mlm.smollm2_bpe_with_mask()
    assert tok.tokenize('My word is "raider".') == ["My", "Ġword", "Ġis", 'Ġ"', "ra", "ider", '".']
    model = tiny_mlm.random_masked_lm(tok, arch="roberta", hidden=16, layers=1, heads=2, seed=3, init_range=0.2)
    sc = masked.MaskedLMScorer(model, tok, method="pll", device="cpu", cache=False, progress=False)
    got = measure(sc, sentences, frequencies=FREQ)
    words = got["words"]
    i = _col(words, "word").index("raider")
    assert _col(words, "n_tokens")[i] == 2
    for m in PLL_METRICS:
        (tl,) = sc.pll_token_logprobs(['My word is "raider".'], m)
        assert _col(words, m)[i] == pytest.approx(tl.values[4] + tl.values[5], abs=1e-9)
        np.testing.assert_allclose(_col(got["sentences"], m), [t.values.sum() for t in sc.pll_token_logprobs(sentences, m)],
                                   atol=1e-9)
    assert _col(got["sentences"], "n_tokens") == [7, 7, 9]  # The Ġra ider Ġcaught Ġthe Ġillness .
