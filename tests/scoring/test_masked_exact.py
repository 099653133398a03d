"""approx-ll is exact: an oracle masked LM built from an explicit joint distribution.

The oracle's logits at each masked position are the exact conditional (log-marginal) of a random
joint distribution over token sequences of the sentence's layout, given the visible tokens.  Its
chain rule is then coherent, so the mean over all word orders (``approx-ll``), every single word
order and every piece order must all equal the log joint probability of the sentence.  With an
incoherent model (a tiny random BERT) the Monte-Carlo form must match the exact mean when it
visits all orders, and agree within Monte-Carlo error otherwise.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from transformers.modeling_outputs import MaskedLMOutput

from contstim_bench.data import sources
from contstim_bench.scoring import masked
from contstim_bench.scoring.word_pieces import tokenize, whitespace_marks
from contstim_bench.data.build_contstim import POOL_SYNTHESIS

import tiny_mlm  # tests/tiny_mlm.py

NATURAL = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool


pytestmark = pytest.mark.usefixtures("one_torch_thread")


class JointOracle(torch.nn.Module):
    """Masked LM whose conditionals come from a joint over ``support`` (N x T content tokens)."""

    def __init__(self, layout: list[int], content: list[int], support: np.ndarray, prob: np.ndarray,
                 vocab: int, mask_id: int):
        super().__init__()
        self.layout_len = len(layout)
        self.content = list(content)
        self.vocab = vocab
        self.mask_id = mask_id
        self.register_buffer("support", torch.as_tensor(support, dtype=torch.long))
        self.register_buffer("prob", torch.as_tensor(prob, dtype=torch.float64))
        self.calls = 0

    def forward(self, input_ids, attention_mask=None):
        self.calls += 1
        b, length = input_ids.shape
        assert length == self.layout_len, "oracle only knows one sentence layout"
        seen = input_ids[:, self.content]  # B x T
        visible = seen != self.mask_id
        consistent = ((self.support[None] == seen[:, None]) | ~visible[:, None]).all(-1)  # B x N
        weights = consistent.double() * self.prob[None]
        logits = torch.zeros(b, length, self.vocab, dtype=torch.float64)
        for t, pos in enumerate(self.content):
            onehot = torch.nn.functional.one_hot(self.support[:, t], self.vocab).double()  # N x V
            logits[:, pos] = torch.log(weights @ onehot)  # -inf off the support
        return MaskedLMOutput(logits=logits)


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    return sources.resolve(NATURAL).read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def wordpiece(sentences):
    return tiny_mlm.train_wordpiece(sentences, 300)


@pytest.fixture(scope="module")
def short_sentence(wordpiece, sentences) -> str:
    """First 4-word prefix of a natural sentence with a multi-piece word and 5-6 tokens."""
    for s in sentences:
        cand = " ".join(s.split()[:4])
        tok = tokenize(wordpiece, cand)
        if 5 <= sum(tok.pieces) <= 6 and max(tok.pieces) >= 2:
            return cand
    raise AssertionError("no suitable sentence")


@pytest.fixture(scope="module")
def oracle(wordpiece, short_sentence):
    tok = tokenize(wordpiece, short_sentence)
    marks = whitespace_marks(wordpiece)
    rng = np.random.default_rng(0)
    choices = []
    for t in tok.content_ids:
        same = np.flatnonzero((marks.marked == marks.marked[t]) & ~marks.special)
        others = rng.choice(same[same != t], size=2, replace=False)
        choices.append([t, *others.tolist()])
    support = np.array(list(itertools.product(*choices)), dtype=np.int64)
    prob = rng.dirichlet(np.ones(len(support)))
    true_index = 0  # product() starts with the first choice at every position: the sentence
    assert tuple(support[true_index]) == tok.content_ids
    model = JointOracle(list(tok.input_ids), list(tok.content), support, prob, len(wordpiece),
                        wordpiece.mask_token_id)
    return model, float(np.log(prob[true_index])), tok


def _scorer(model, tokenizer, **kw):
    return masked.MaskedLMScorer(model, tokenizer, cache=False, progress=False, device="cpu", **kw)


@pytest.mark.parametrize("normalize", ["1", "0"])
def test_approx_ll_recovers_log_joint(oracle, wordpiece, short_sentence, normalize):
    model, log_joint, tok = oracle
    sc = _scorer(model, wordpiece, method="approx-ll", normalize=normalize)
    value = sc.score([short_sentence])[0]
    assert value == pytest.approx(log_joint, abs=1e-9)
    n = tok.n_words
    expected_rows = (1 << n) - 1 + sum((1 << k) - 2 for k in tok.pieces) * (1 << (n - 1))
    assert sc.n_model_rows == expected_rows
    assert sc.n_model_tokens == expected_rows * len(tok.input_ids)


def test_every_word_order_recovers_log_joint(oracle, wordpiece, short_sentence):
    model, log_joint, tok = oracle
    sc = _scorer(model, wordpiece, method="approx-ll")
    values = sc.order_logprobs(short_sentence, list(itertools.permutations(range(tok.n_words))))
    assert len(values) == math.factorial(tok.n_words)
    np.testing.assert_allclose(values, log_joint, atol=1e-9)


def test_every_piece_order_recovers_log_joint(oracle, wordpiece, short_sentence):
    model, log_joint, tok = oracle
    sc = _scorer(model, wordpiece, method="approx-ll")
    word = int(np.argmax(tok.pieces))
    k = tok.pieces[word]
    order = list(range(tok.n_words))[::-1]
    for piece_order in itertools.permutations(range(k)):
        value = sc.order_logprobs(short_sentence, [order], {word: piece_order})[0]
        assert value == pytest.approx(log_joint, abs=1e-9)


def test_sampled_equals_log_joint_on_oracle(oracle, wordpiece, short_sentence):
    model, log_joint, _ = oracle
    sc = _scorer(model, wordpiece, method="approx-ll-sampled", orders=10, seed=3)
    per_order = sc.sampled_order_logprobs([short_sentence])[0]
    assert per_order.shape == (10,)
    np.testing.assert_allclose(per_order, log_joint, atol=1e-9)


def test_word_completion_is_exact_conditional(oracle, wordpiece, short_sentence):
    """Completion log-probs of the oracle equal the joint's conditional of the whole word."""
    model, _, tok = oracle
    sc = _scorer(model, wordpiece, method="approx-ll", normalize="0")
    support = model.support.numpy()
    prob = model.prob.numpy()
    word = int(np.argmax(tok.pieces))
    start = sum(tok.pieces[:word])
    span = slice(start, start + tok.pieces[word])
    others = np.ones(len(support), dtype=bool)
    for t, true in enumerate(tok.content_ids):
        if not span.start <= t < span.stop:
            others &= support[:, t] == true
    words = short_sentence.split()
    candidates, expected = [], []
    for row in np.unique(support[others][:, span], axis=0):
        text = wordpiece.decode(row.tolist()).replace(" ", "")
        variant = " ".join(words[:word] + [text] + words[word + 1:])
        if tokenize(wordpiece, variant).word_tokens(word) != tuple(row.tolist()):
            continue  # this piece sequence is not how the tokenizer spells any word
        match = others & (support[:, span] == row).all(1)
        candidates.append(text)
        expected.append(np.log(prob[match].sum() / prob[others].sum()))
    assert len(candidates) >= 2
    got = sc.word_completion_logprobs(short_sentence, word, candidates)
    np.testing.assert_allclose(got, expected, atol=1e-9)


@pytest.fixture(scope="module")
def random_bert(wordpiece):
    return tiny_mlm.random_masked_lm(wordpiece, hidden=32, layers=2, seed=1, init_range=0.5).double()


def test_sampled_over_all_orders_equals_exact_mean(random_bert, wordpiece, short_sentence):
    """An incoherent model: every order differs, yet the mean of all n! chains is approx-ll."""
    exact = _scorer(random_bert, wordpiece, method="approx-ll", dtype="float64").score([short_sentence])[0]
    sampled = _scorer(random_bert, wordpiece, method="approx-ll-sampled", orders=1000, dtype="float64")
    per_order = sampled.sampled_order_logprobs([short_sentence])[0]
    assert len(per_order) == 24
    assert per_order.std() > 0.05  # the chains really disagree
    assert per_order.mean() == pytest.approx(exact, abs=1e-9)
    assert sampled.score([short_sentence])[0] == pytest.approx(exact, abs=1e-9)


def test_sampled_converges_to_exact(random_bert, wordpiece, sentences):
    """100 of the 720 orders of 6-word sentences land within 3 Monte-Carlo standard errors."""
    six = [" ".join(s.split()[:6]) for s in sentences[:60]]
    six = [s for s in six if max(tokenize(wordpiece, s).pieces) <= 2][:2]
    assert len(six) == 2
    exact = _scorer(random_bert, wordpiece, method="approx-ll", dtype="float64").score(six)
    sampled = _scorer(random_bert, wordpiece, method="approx-ll-sampled", orders=100, dtype="float64")
    for value, per_order in zip(exact, sampled.sampled_order_logprobs(six)):
        assert len(per_order) == 100
        se = per_order.std(ddof=1) / math.sqrt(len(per_order))
        assert se > 0
        assert abs(per_order.mean() - value) < 3 * se
