"""The four PLL methods (Kauf & Ivanova 2023 Eq. 1-4) against values computed by hand.

A hand-written WordPiece vocabulary fixes the tokenization of one sentence, and a "counting"
masked LM makes every log-probability a closed form: at every position its logits are 0 except
the logit of one token the sentence never uses, which equals the number of visible (unmasked,
attended) tokens of the row, c.  So each true token has log p = -log(V - 1 + e^c), and each PLL
method is a sum of such terms with the c its masking leaves, counted here by hand.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from contstim_bench.scoring import masked
from contstim_bench.scoring.orders import pll_plan

import tiny_mlm  # tests/tiny_mlm.py

SENTENCE = "The souvenir was lost by the traveler."
VOCAB = [*tiny_mlm.SPECIALS, "The", "the", "so", "##uven", "##ir", "was", "lost", "by", "traveler", "."]
V = len(VOCAB)  # 15


def f(c: int) -> float:
    """log p(a true token) when c tokens of the row are visible."""
    return -math.log(V - 1 + math.exp(c))


# [CLS] The so ##uven ##ir was lost by the traveler . [SEP]: 10 content tokens, 12 in all;
# souvenir has 3 pieces, the 7 other words 1 each.
HAND = {
    "pll": 10 * f(11),                                   # one token masked: 11 visible
    "pll-word-l2r": 7 * f(11) + f(9) + f(10) + f(11),    # so: 3 masked, ##uven: 2, ##ir: 1
    "pll-whole-word": 7 * f(11) + 3 * f(9),              # all 3 pieces of souvenir masked
    "pll-sentence-l2r": sum(f(1 + t) for t in range(10)),  # [CLS] and the t tokens to the left
}


@pytest.fixture(scope="module")
def tokenizer():
    tok = tiny_mlm.hand_wordpiece(VOCAB)
    assert tok.tokenize(SENTENCE) == ["The", "so", "##uven", "##ir", "was", "lost", "by", "the", "traveler", "."]
    return tok


def _scorer(tokenizer, method):
    model = tiny_mlm.counting_mlm(V, tokenizer.mask_token_id, target=tokenizer.pad_token_id)
    return masked.MaskedLMScorer(model, tokenizer, method=method, device="cpu", cache=False, progress=False,
                                 batch_size=5)


@pytest.mark.parametrize("method", list(HAND))
def test_pll_methods_equal_hand_values(tokenizer, method):
    got = _scorer(tokenizer, method).score([SENTENCE, "The traveler was lost."])
    assert got[0] == pytest.approx(HAND[method], abs=1e-12)
    # 5 content tokens, single-piece words: every method but sentence-l2r sees 6 of 7 tokens
    short = 5 * f(6) if method != "pll-sentence-l2r" else sum(f(1 + t) for t in range(5))
    assert got[1] == pytest.approx(short, abs=1e-12)


def test_sentence_l2r_masks_the_closing_token(tokenizer):
    """Left context only: with [SEP] visible the sum would be over f(2 + t)."""
    value = _scorer(tokenizer, "pll-sentence-l2r").score([SENTENCE])[0]
    assert value != pytest.approx(sum(f(2 + t) for t in range(10)), abs=1e-6)
    plan = pll_plan((1, 3, 1, 1, 1, 1, 1, 1), "sentence-l2r")
    assert plan.mask_trailing and len(plan.rows) == 10
    assert [int(r.sum()) for r in plan.rows] == list(range(10, 0, -1))


@pytest.mark.parametrize("method", list(HAND))
def test_pll_token_logprobs_sum_to_the_sentence_score(tokenizer, method):
    sc = _scorer(tokenizer, "approx-ll")  # any scorer reads out any PLL method per token
    (tl,) = sc.pll_token_logprobs([SENTENCE], method)
    assert tl.tokens.pieces == (1, 3, 1, 1, 1, 1, 1, 1)
    assert tl.values.sum() == pytest.approx(HAND[method], abs=1e-12)
    words = tl.word_sums()
    assert words.shape == (8,)
    if method == "pll-word-l2r":
        np.testing.assert_allclose(words[1], f(9) + f(10) + f(11), atol=1e-12)


def test_pll_token_logprobs_refuses_other_methods(tokenizer):
    with pytest.raises(ValueError, match="token log-probabilities need a PLL method"):
        _scorer(tokenizer, "approx-ll").pll_token_logprobs([SENTENCE])


def test_pll_token_logprobs_of_another_scorer_use_the_pll_conventions(tokenizer):
    """An approx-ll scorer normalises 8-word sentences and splits on whitespace; its PLL
    read-outs do neither (tokenizer words, no normalisation), as a pll scorer's."""
    eight = "The souvenir was lost by the traveler ."  # 8 whitespace words
    (tl,) = _scorer(tokenizer, "approx-ll").pll_token_logprobs([eight], "pll-word-l2r")
    assert tl.values.sum() == pytest.approx(_scorer(tokenizer, "pll-word-l2r").score([eight])[0], abs=1e-12)
    assert tl.values.sum() == pytest.approx(HAND["pll-word-l2r"], abs=1e-12)


def test_only_masked_scorers_read_out_pll_tokens(tokenizer):
    """A causal scorer's own ``token_logprobs(sentence)`` is not the PLL read-out protocol."""
    from contstim_bench.scoring.causal import CausalScorer
    from contstim_bench.scoring.protocols import PLLTokenScorer, Tokenized

    assert isinstance(_scorer(tokenizer, "pll"), PLLTokenScorer)
    causal = object.__new__(CausalScorer)
    causal.tokenizer = tokenizer
    assert not isinstance(causal, PLLTokenScorer) and isinstance(causal, Tokenized)
