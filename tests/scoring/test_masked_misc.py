"""Masked-LM scoring: order weights, the whitespace normalisations, word completions, errors, cache."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformers.modeling_outputs import MaskedLMOutput

from contstim_bench.data import sources
from contstim_bench.scoring import masked, orders
from contstim_bench.scoring.base import LoadSettings, ScoreCache
from contstim_bench.scoring.run_options import RunOptions
from contstim_bench.scoring.word_pieces import tokenize, whitespace_marks
from contstim_bench.data.build_contstim import POOL_SYNTHESIS

import tiny_mlm  # tests/tiny_mlm.py

NATURAL = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return sources.resolve(NATURAL).read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def wordpiece(corpus):
    return tiny_mlm.train_wordpiece(corpus, 300)


@pytest.fixture(scope="module")
def eow_bpe(corpus):
    return tiny_mlm.train_end_of_word_bpe(corpus, 300)


@pytest.fixture(scope="module")
def tiny_dir(wordpiece, tmp_path_factory):
    model = tiny_mlm.random_masked_lm(wordpiece, hidden=16, layers=1, heads=2, seed=5, init_range=0.3)
    return str(tiny_mlm.save(model, wordpiece, tmp_path_factory.mktemp("tiny")))


class UniformLM(torch.nn.Module):
    """Zero logits everywhere: every conditional is uniform over the allowed vocabulary."""

    def __init__(self, vocab: int):
        super().__init__()
        self.vocab = vocab
        self.register_buffer("dummy", torch.zeros(1, dtype=torch.float64))

    def forward(self, input_ids, attention_mask=None):
        return MaskedLMOutput(logits=torch.zeros(*input_ids.shape, self.vocab, dtype=torch.float64))


def _scorer(model, tokenizer, **kw):
    return masked.MaskedLMScorer(model, tokenizer, cache=False, progress=False, device="cpu", **kw)


# ----------------------------------------------------------------------------- order arithmetic
@pytest.mark.parametrize("n", range(1, 9))
def test_order_weights_are_a_distribution(n):
    assert sum(math.comb(n - 1, s) * orders.order_weight(n, s) for s in range(n)) == pytest.approx(1.0)


@pytest.mark.parametrize("pieces", [(1,), (1, 1, 1), (2, 1, 3), (1,) * 8, (1, 2, 1, 1, 1, 1, 1, 1)])
def test_exact_plan_counts_and_weights(pieces):
    plan = orders.exact_mean_plan(pieces)
    assert len(plan.rows) == orders.exact_row_count(pieces)
    # every token is predicted exactly once per order, so its weights sum to one
    per_token = np.bincount(plan.token, weights=plan.coef, minlength=plan.n_tokens)
    np.testing.assert_allclose(per_token, 1.0)
    # no row reveals a token it predicts
    rows = plan.row_matrix()
    assert rows[plan.row, plan.token].all()


def test_sampled_orders_are_seeded_and_distinct():
    a = orders.sampled_orders(8, 100, 0, "a sentence")
    assert a == orders.sampled_orders(8, 100, 0, "a sentence")
    assert a != orders.sampled_orders(8, 100, 1, "a sentence")
    assert len(set(a)) == 100 and all(sorted(o) == list(range(8)) for o in a)
    assert len(orders.sampled_orders(4, 100, 0, "x")) == 24  # all 4! orders when fewer than asked


# ----------------------------------------------------------------------------- normalisations
@pytest.mark.parametrize("family", ["wordpiece", "eow_bpe"])
def test_normalisation_closed_form(request, corpus, family):
    """Uniform logits: normalised log-prob = -sum log |tokens with the same whitespace mark|."""
    tok = request.getfixturevalue(family)
    marks = whitespace_marks(tok)
    assert marks.style == {"wordpiece": "continuation-prefix", "eow_bpe": "end-suffix"}[family]
    eight = corpus[0]
    ids = tokenize(tok, eight).content_ids
    allowed = ~marks.special
    sizes = [int((allowed & (marks.marked == marks.marked[i])).sum()) for i in ids]
    model = UniformLM(len(tok))
    for method in ("approx-ll", "pll-word-l2r"):
        on = _scorer(model, tok, method=method, normalize="1").score([eight])[0]
        off = _scorer(model, tok, method=method, normalize="0").score([eight])[0]
        assert on == pytest.approx(-sum(math.log(s) for s in sizes), abs=1e-9)
        assert off == pytest.approx(-len(ids) * math.log(len(tok)), abs=1e-9)
    # auto: on for the 8-word sentence, off for a 4-word one
    auto = _scorer(model, tok, method="approx-ll")
    four = " ".join(eight.split()[:4])
    n4 = len(tokenize(tok, four).content_ids)
    got = auto.score([eight, four])
    assert got[0] == pytest.approx(-sum(math.log(s) for s in sizes), abs=1e-9)
    assert got[1] == pytest.approx(-n4 * math.log(len(tok)), abs=1e-9)


def test_byte_level_marks_word_starts():
    tok = tiny_mlm.smollm2_bpe_with_mask()
    marks = whitespace_marks(tok)
    assert marks.style == "space-prefix" and marks.marker == "\u0120"
    ids = tokenize(tok, "It seems like that studio just gets it").content_ids
    assert [bool(marks.marked[i]) for i in ids] == [False] + [True] * 7
    assert marks.special[tok.mask_token_id]


# ----------------------------------------------------------------------------- word completions
def test_word_completions_equal_direct_computation(tiny_dir, corpus):
    sc = masked.from_spec(tiny_dir, {"method": "approx-ll", "normalize": "0"},
                          LoadSettings("hf-masked", RunOptions(device="cpu", cache=False, progress=False)))
    tok, model = sc.tokenizer, sc.model
    sentence = " ".join(corpus[1].split()[:5])
    words = sentence.split()
    position = 2
    by_k: dict[int, list[str]] = {1: [], 2: []}
    for w in dict.fromkeys(" ".join(corpus[:50]).split()):
        k = tokenize(tok, " ".join(words[:position] + [w] + words[position + 1:])).pieces[position]
        if k in by_k and len(by_k[k]) < 3:
            by_k[k].append(w)
    candidates = by_k[1] + by_k[2]
    pieces = [1] * len(by_k[1]) + [2] * len(by_k[2])
    assert pieces == [1, 1, 1, 2, 2, 2]

    def logp(ids, pos, target):
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids])).logits[0, pos].double()
        return float(torch.log_softmax(out, -1)[target])

    want = []
    for c, k in zip(candidates, pieces):
        t = tokenize(tok, " ".join(words[:position] + [c] + words[position + 1:]))
        start = sum(t.pieces[:position])
        pos = [t.content[start + j] for j in range(k)]
        ids = list(t.input_ids)
        masked_ids = list(ids)
        for p in pos:
            masked_ids[p] = tok.mask_token_id
        if k == 1:
            want.append(logp(masked_ids, pos[0], ids[pos[0]]))
            continue
        a, b = pos[:2]
        reveal_a = list(masked_ids)
        reveal_a[a] = ids[a]
        reveal_b = list(masked_ids)
        reveal_b[b] = ids[b]
        want.append(0.5 * (logp(masked_ids, a, ids[a]) + logp(reveal_a, b, ids[b]))
                    + 0.5 * (logp(masked_ids, b, ids[b]) + logp(reveal_b, a, ids[a])))
    got = sc.word_completion_logprobs(sentence, position, candidates)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_word_completion_bad_input(tiny_dir):
    sc = masked.from_spec(tiny_dir, {}, LoadSettings("hf-masked", RunOptions(device="cpu", cache=False, progress=False)))
    with pytest.raises(ValueError, match="position 9"):
        sc.word_completion_logprobs("a b c", 9, ["x"])
    with pytest.raises(ValueError, match="not a single word"):
        sc.word_completion_logprobs("a b c", 1, ["two words"])
    with pytest.raises(TypeError, match="candidate 0"):
        sc.word_completion_logprobs("a b c", 1, [3])


# ----------------------------------------------------------------------------- errors
def test_bad_sentences(tiny_dir):
    sc = masked.from_spec(tiny_dir, {"method": "pll"}, LoadSettings("hf-masked", RunOptions(device="cpu", cache=False, progress=False)))
    with pytest.raises(ValueError, match="sentence 1 is empty"):
        sc.score(["fine words", "  "])
    with pytest.raises(TypeError, match="sentence 0 is int"):
        sc.score([3])
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        sc.score(["a [MASK] here"])


def test_bad_specs(tiny_dir, tmp_path):
    kw = dict(kind="hf-masked", options=RunOptions(device="cpu", cache=False, progress=False))  # LoadSettings fields
    with pytest.raises(ValueError, match="unknown method 'plll'"):
        masked.from_spec(tiny_dir, {"method": "plll"}, LoadSettings(**kw))
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['order'\]"):
        masked.from_spec(tiny_dir, {"order": "3"}, LoadSettings(**kw))
    with pytest.raises(ValueError, match="normalize must be"):
        masked.from_spec(tiny_dir, {"normalize": "maybe"}, LoadSettings(**kw))
    with pytest.raises(FileNotFoundError, match="no such model folder"):
        masked.from_spec(str(tmp_path / "absent"), {}, LoadSettings(**kw))
    with pytest.raises(ValueError, match="not 'hf-causal'"):
        masked.from_spec(tiny_dir, {}, LoadSettings("hf-causal"))
    sc = masked.from_spec(tiny_dir, {"max_rows": "100"}, LoadSettings(**kw))
    with pytest.raises(ValueError, match="approx-ll-sampled"):
        sc.score(["one two three four five six seven eight"])


def test_model_without_mlm_head(wordpiece, tmp_path):
    from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel

    cfg = dict(vocab_size=len(wordpiece), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
               intermediate_size=32)
    BertModel(BertConfig(**cfg)).save_pretrained(tmp_path / "headless")
    wordpiece.save_pretrained(tmp_path / "headless")
    with pytest.raises(ValueError, match="no trained masked-LM head"):
        masked.from_spec(str(tmp_path / "headless"), {}, LoadSettings("hf-masked", RunOptions(cache=False)))
    GPT2LMHeadModel(GPT2Config(vocab_size=len(wordpiece), n_embd=16, n_layer=1, n_head=2)).save_pretrained(tmp_path / "gpt2")
    wordpiece.save_pretrained(tmp_path / "gpt2")
    with pytest.raises(ValueError, match="'gpt2' has no masked-LM head"):
        masked.from_spec(str(tmp_path / "gpt2"), {}, LoadSettings("hf-masked", RunOptions(cache=False)))


def test_tokenizer_without_mask_token(corpus):
    from transformers import PreTrainedTokenizerFast

    tok = tiny_mlm.train_wordpiece(corpus[:200], 200)
    bare = PreTrainedTokenizerFast(tokenizer_object=tok.backend_tokenizer, unk_token="[UNK]", pad_token="[PAD]")
    with pytest.raises(ValueError, match="has no mask token"):
        _scorer(UniformLM(len(bare)), bare, method="pll")


def test_rows_and_tokens_counted(wordpiece, corpus):
    # two sentences of different token lengths, run in one padded batch: the counters hold the
    # rows each plan runs and their real tokens (special tokens in, padding out)
    sents = sorted(corpus[:40], key=lambda s: len(tokenize(wordpiece, s).input_ids))
    short, long = sents[0], sents[-1]
    toks = [tokenize(wordpiece, s) for s in (short, long)]
    assert len(toks[0].input_ids) < len(toks[1].input_ids)
    for method, rows_of in (("pll", lambda t: sum(t.pieces)),
                            ("approx-ll-sampled", lambda t: 3 * sum((1 << k) - 1 for k in t.pieces))):
        kw = {"orders": 3, "seed": 0} if method == "approx-ll-sampled" else {}
        sc = _scorer(UniformLM(len(wordpiece)), wordpiece, method=method, **kw)
        sc.score([short, long])
        assert sc.n_model_rows == sum(rows_of(t) for t in toks)
        assert sc.n_model_tokens == sum(rows_of(t) * len(t.input_ids) for t in toks)


# ----------------------------------------------------------------------------- cache
def test_cache_skips_model_work(tiny_dir, corpus, tmp_path):
    cache = ScoreCache(tmp_path / "scores.sqlite")
    spec = {"method": "approx-ll-sampled", "orders": "5", "seed": "2"}
    first = masked.from_spec(tiny_dir, spec, LoadSettings("hf-masked", RunOptions(device="cpu", cache=cache, progress=False)))
    a = first.score(corpus[:2] + corpus[:1])
    assert first.n_model_sentences == 2 and first.n_model_rows > 0
    second = masked.from_spec(tiny_dir, spec, LoadSettings("hf-masked", RunOptions(device="cpu", cache=cache, progress=False)))
    b = second.score(corpus[:2])
    assert second.n_model_rows == 0
    np.testing.assert_array_equal(a[:2], b)
    assert a[2] == a[0]
    other = masked.from_spec(tiny_dir, dict(spec, seed="3"), LoadSettings("hf-masked", RunOptions(device="cpu", cache=cache, progress=False)))
    assert other.method != first.method
    assert "orders=5" in first.method and "seed=2" in first.method
