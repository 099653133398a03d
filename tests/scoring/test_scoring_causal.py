"""Causal-LM scoring: a tiny random Llama checked against a naive per-sentence computation, the
shared-prefix sweep against one-by-one scoring, bad input, and real SmolLM2 values."""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from contstim_bench.scoring.base import ScoreCache  # noqa: E402
from contstim_bench.scoring.causal import CausalScorer  # noqa: E402

from tiny_causal import SENTENCES, naive_logprob, save_tiny_gpt2, save_tiny_llama  # noqa: E402


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny_llama"))


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    return CausalScorer(tiny_dir, cache=False, progress=False, batch_size=2)


@pytest.fixture(scope="module")
def tiny64(tiny_dir):
    """The same model in float64: its batched and unpadded forward passes agree to ~1e-13 nats on
    any machine, so the definition can be checked exactly."""
    return CausalScorer(tiny_dir, cache=False, progress=False, batch_size=2, dtype="float64")


# float32 tolerance (nats): the tiny Llama's weights are scaled x20, so sentence scores reach
# 225 nats from float32 logits; a padded batch and the unpadded naive forward round differently
# by up to ~9e-6 nats (measured with AVX2 kernels; 4e-6 with AVX512), which 1e-5 did not cover
F32_ATOL = 1e-4


def test_matches_naive_definition(tiny, tiny64):
    for scorer, atol in ((tiny64, 1e-9), (tiny, F32_ATOL)):
        got = scorer.score(SENTENCES)
        want = [naive_logprob(scorer.model, scorer.tokenizer, s, "<s>") for s in SENTENCES]
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, atol=atol, rtol=0)
        assert np.all(got < 0)


def test_first_token_is_counted(tiny):
    (one,) = tiny.score(["milk"])
    toks = tiny.tokenizer("milk", add_special_tokens=False)["input_ids"]
    ids = [tiny.start_id] + toks
    with torch.no_grad():
        lp = torch.log_softmax(tiny.model(torch.tensor([ids])).logits[0].double(), -1)
    first = float(lp[0, ids[1]])
    assert first < -0.01  # the first token's probability is part of the score
    assert one == pytest.approx(sum(float(lp[i, ids[i + 1]]) for i in range(len(toks))), abs=1e-5)
    pairs = tiny.token_logprobs("milk")
    assert pairs[0][1] == pytest.approx(first, abs=1e-5)


def test_batching_and_order_do_not_matter(tiny_dir, tiny, tiny64):
    wide = CausalScorer(tiny_dir, cache=False, progress=False, batch_size=64)
    np.testing.assert_allclose(tiny.score(SENTENCES), wide.score(SENTENCES[::-1])[::-1], atol=F32_ATOL, rtol=0)
    # float64: batching and order must not change a score beyond rounding
    wide64 = CausalScorer(tiny_dir, cache=False, progress=False, batch_size=64, dtype="float64")
    np.testing.assert_allclose(tiny64.score(SENTENCES), wide64.score(SENTENCES[::-1])[::-1], atol=1e-9, rtol=0)


def test_repeated_sentences_scored_once(tiny_dir):
    s = CausalScorer(tiny_dir, cache=False, progress=False)
    out = s.score(["A dog ran.", "The cat sat on the mat.", "A dog ran.", "A dog ran."])
    assert s.n_model_sentences == 2
    assert out[0] == out[2] == out[3]


def test_cache_hit_does_no_model_work(tiny_dir, tmp_path):
    cache = ScoreCache(tmp_path / "scores.sqlite")
    first = CausalScorer(tiny_dir, cache=cache, progress=False)
    a = first.score(SENTENCES)
    assert first.n_model_sentences == len(SENTENCES)
    second = CausalScorer(tiny_dir, cache=ScoreCache(tmp_path / "scores.sqlite"), progress=False)
    b = second.score(SENTENCES + ["A dog ran."])
    assert second.n_model_sentences == 0
    assert second._model is None  # served from the cache: the weights were never loaded
    np.testing.assert_array_equal(a, b[:-1])


def _as_converted(folder, start: str):
    """``folder`` with the conversion marker offline.py writes (its start token recorded)."""
    import json

    from contstim_bench.scoring.offline import MARKER

    (folder / MARKER).write_text(json.dumps({"name": "tiny", "start_token": start}) + "\n")
    return folder


def test_a_converted_folder_loads_its_tokenizer_only_for_sentences_not_in_the_cache(tiny_dir, tmp_path):
    """A folder with offline.py's marker: the score cache serves it without its tokenizer; the first
    sentence that is not cached loads it, and the values and the identity are those of the plain
    folder with the same start token."""
    import shutil

    folder = _as_converted(Path(shutil.copytree(tiny_dir, tmp_path / "converted")), "<s>")
    cache = ScoreCache(tmp_path / "scores.sqlite")
    first = CausalScorer(folder, cache=cache, progress=False)
    assert first._tokenizer is None and first.start_token == "<s>"
    a = first.score(SENTENCES)
    assert first._tokenizer is not None and first.start_id == first.tokenizer.get_vocab()["<s>"]
    again = CausalScorer(folder, cache=ScoreCache(tmp_path / "scores.sqlite"), progress=False)
    np.testing.assert_array_equal(again.score(SENTENCES), a)
    assert again.n_model_sentences == 0 and again._tokenizer is None and again._model is None
    plain = CausalScorer(tiny_dir, start="<s>", cache=False, progress=False)
    np.testing.assert_allclose(a, plain.score(SENTENCES), atol=F32_ATOL, rtol=0)
    assert again.fingerprint() == plain.fingerprint()  # the same files, start token and dtype


def test_a_converted_folder_names_its_problems_on_the_first_sentence_it_scores(tmp_path):
    """What a user's folder raises on construction, a folder with offline.py's marker raises when it
    first needs its tokenizer: a recorded start token outside the vocabulary, a model without its
    causal LM head."""
    wrong = CausalScorer(_as_converted(save_tiny_llama(tmp_path / "wrong"), "<nope>"), cache=False, progress=False)
    with pytest.raises(ValueError, match=r"start token '<nope>' is not a single token"):
        wrong.score(SENTENCES[:1])
    headless = CausalScorer(_as_converted(save_tiny_llama(tmp_path / "headless", head=False), "<s>"), cache=False,
                            progress=False)
    with pytest.raises(ValueError, match=r"headless.*no causal LM head.*LlamaModel"):
        headless.score(SENTENCES[:1])


def test_start_token_option_changes_scores_and_fingerprint(tiny_dir, tiny):
    other = CausalScorer(tiny_dir, start="</s>", cache=False, progress=False)
    assert other.start_token == "</s>" and tiny.start_token == "<s>"
    assert other.fingerprint() != tiny.fingerprint()
    got = other.score(SENTENCES[:2])
    want = [naive_logprob(other.model, other.tokenizer, s, "</s>") for s in SENTENCES[:2]]
    np.testing.assert_allclose(got, want, atol=F32_ATOL, rtol=0)
    assert not np.allclose(got, tiny.score(SENTENCES[:2]))


def test_eos_is_start_token_without_bos(tmp_path):
    s = CausalScorer(save_tiny_gpt2(tmp_path / "gpt2"), cache=False, progress=False)
    assert s.start_token == "<|endoftext|>"
    got = s.score(SENTENCES[:3])
    want = [naive_logprob(s.model, s.tokenizer, x, "<|endoftext|>") for x in SENTENCES[:3]]
    np.testing.assert_allclose(got, want, atol=F32_ATOL, rtol=0)


def test_sweep_equals_one_by_one(tiny):
    words = "The cat sat on the mat.".split()
    cands = ["dog", "cat", "children", "bread", "a", "milk", "store"]
    for position in (0, 2, len(words) - 1):
        swept = tiny.sweep(words, position, cands)
        one = tiny.score([" ".join(words[:position] + [c] + words[position + 1:]) for c in cands])
        np.testing.assert_allclose(swept, one, atol=1e-4, rtol=0)


def test_shared_prefix_feeds_every_token_but_the_last(tiny_dir, monkeypatch):
    """A sweep runs the prefix once, then only the candidates' tokens whose logits are scored:
    never a continuation's last token, and no forward pass at all for single-token
    continuations (the prefix's next-token distribution scores them).  Packed (the default),
    those tokens fill one row with no padding; padded (a model that does not keep packed rows
    apart), one right-padded batch.  The values are those of scoring each sentence alone
    (float64 model; the first token's log-softmax is read in float32, about 1e-6 nats here)."""
    words = "We went to the store".split()
    cands = ["park", "store", "children", "bread", "a", "milk", "morning", "train"]
    for packed in (True, False):
        s = CausalScorer(tiny_dir, cache=False, progress=False, dtype="float64", layout="auto" if packed else "padded")
        assert s.packs == packed  # the tiny Llama keeps packed rows apart: auto packs
        prefix = s.encode([" ".join(words[:4])])[0]
        conts = [s.encode([" ".join(words[:4] + [c])])[0][len(prefix):] for c in cands]
        assert {len(c) for c in conts} - {1} and 1 in {len(c) for c in conts}  # both kinds present
        multi = [c for c in conts if len(c) > 1]
        fed = []
        hook = s.model.register_forward_pre_hook(lambda mod, args, kw: fed.append(tuple(kw["input_ids"].shape)),
                                                 with_kwargs=True)
        swept = s.sweep(words, 4, cands)
        hook.remove()
        reps = -(-8 // len(prefix))  # forward passes of fewer than 8 token rows are replicated
        assert fed[0] == (reps, len(prefix))  # the prefix, once
        if packed:
            positions = sum(len(c) - 1 for c in multi)
            assert fed[1:] == [(-(-8 // positions), positions)]  # one row, real tokens only
        else:
            assert fed[1:] == [(len(multi), max(len(c) for c in multi) - 1)]
        alone = s.score([" ".join(words[:4] + [c]) for c in cands])
        np.testing.assert_allclose(swept, alone, atol=1e-5, rtol=0)


def test_shared_prefix_passes_the_cache_without_deprecated_arguments(tiny):
    """The prefix's key/value cache goes to the model under the name its ``forward`` takes
    (transformers 5.24 renamed ``past_key_values`` to ``cache`` and warns on every call given the
    old name: a synthesis run printed the FutureWarning at every attempt)."""
    words, position, cands = ["the", "cat", "sat", "on", "the", "mat"], 2, ["ran", "slept", "jumped"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning of the forward pass fails the test
        swept = tiny.sweep(words, position, cands)
    alone = tiny.score([" ".join(words[:position] + [c] + words[position + 1:]) for c in cands])
    np.testing.assert_allclose(swept, alone, atol=1e-4)


def test_next_word_logprobs(tiny):
    prefix = ["The", "cat"]
    cands = ["sat", "ran", "laughed"]
    got = tiny.next_word_logprobs(prefix, cands)
    full = tiny.score([f"The cat {c}" for c in cands])
    base = tiny.score(["The cat"])[0]
    np.testing.assert_allclose(got, full - base, atol=1e-4, rtol=0)
    # given an empty prefix: the first word's probability
    np.testing.assert_allclose(tiny.next_word_logprobs([], ["The", "A"]), tiny.score(["The", "A"]),
                               atol=1e-4, rtol=0)


def test_continuation_logprobs_multi_token_options(tiny):
    prompts = ["The cat sat on the", "We went to the"]
    options = [" mat.", " store", " park and"]
    got = tiny.continuation_logprobs(prompts, options)
    for i, p in enumerate(prompts):
        base = tiny.score([p])[0]
        want = tiny.score([p + o for o in options]) - base
        np.testing.assert_allclose(got[i], want, atol=1e-4, rtol=0)
    # one list of options per prompt (each pair's own words): the same values as one prompt at a time
    # (the first prompt's options are one token each, the second's are not: one batch and one loop)
    own = [[" the", " and"], [" park and", " mat."]]
    assert all(len(tiny.tokenizer.tokenize(o)) == 1 for o in own[0])
    per_prompt = tiny.continuation_logprobs(prompts, own)
    for i, p in enumerate(prompts):
        want = tiny.score([p + o for o in own[i]]) - tiny.score([p])[0]
        np.testing.assert_allclose(per_prompt[i], want, atol=1e-4, rtol=0)
        np.testing.assert_allclose(per_prompt[i], tiny.continuation_logprobs([p], own[i])[0], atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="one per prompt"):
        tiny.continuation_logprobs(prompts, [[" a", " b"], [" c"]])


@pytest.mark.parametrize(
    "bad, exc, words",
    [
        (["fine sentence", ""], ValueError, "sentence 1 is empty"),
        (["fine sentence", "   "], ValueError, "sentence 1 is empty"),
        (["fine", 3], TypeError, "sentence 1 is int"),
        (["fine", None], TypeError, "sentence 1 is NoneType"),
        ("a single string", TypeError, "single str"),
    ],
)
def test_bad_sentences_are_named(tiny, bad, exc, words):
    with pytest.raises(exc, match=words):
        tiny.score(bad)


def test_model_without_lm_head_is_named(tmp_path):
    folder = save_tiny_llama(tmp_path / "headless", head=False)
    with pytest.raises(ValueError, match=r"headless.*no causal LM head.*LlamaModel"):
        CausalScorer(folder, cache=False, progress=False)


def test_masked_lm_is_rejected(tmp_path):
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat"]))
    BertTokenizerFast(str(tmp_path / "vocab.txt")).save_pretrained(tmp_path / "bert")
    BertForMaskedLM(BertConfig(vocab_size=7, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32)).save_pretrained(tmp_path / "bert")
    with pytest.raises(ValueError, match=r"no causal LM head.*BertForMaskedLM.*hf-masked"):
        CausalScorer(tmp_path / "bert", cache=False, progress=False)


def test_missing_folder_and_bad_start_token(tmp_path, tiny_dir):
    with pytest.raises(FileNotFoundError, match="nope/model"):
        CausalScorer(tmp_path / "nope" / "model", cache=False)
    with pytest.raises(ValueError, match=r"start token '<nope>'"):
        CausalScorer(tiny_dir, start="<nope>", cache=False)


def test_start_token_recorded_in_the_folder_is_used(tiny_dir, tmp_path):
    """A folder whose contstim_offline.json records a start token (a converted offline model)
    scores with it; an explicit ``start`` still wins; the marker is not part of the fingerprint."""
    import json
    import shutil

    from contstim_bench.scoring.offline import MARKER

    folder = tmp_path / "converted"
    shutil.copytree(tiny_dir, folder)
    (folder / MARKER).write_text(json.dumps({"name": "tiny", "start_token": "</s>"}))
    recorded = CausalScorer(folder, cache=False, progress=False)
    explicit = CausalScorer(tiny_dir, start="</s>", cache=False, progress=False)
    assert recorded.start_token == "</s>" and recorded.describe()["start_token"] == "</s>"
    assert recorded.fingerprint() == explicit.fingerprint()
    np.testing.assert_array_equal(recorded.score(SENTENCES[:3]), explicit.score(SENTENCES[:3]))
    assert CausalScorer(folder, start="<s>", cache=False, progress=False).start_token == "<s>"

    (folder / MARKER).write_text(json.dumps({"name": "tiny"}))  # no start token recorded: BOS
    assert CausalScorer(folder, cache=False, progress=False).start_token == "<s>"
    (folder / MARKER).write_text("{not json")
    with pytest.raises(ValueError, match=MARKER):
        CausalScorer(folder, cache=False, progress=False)
    (folder / MARKER).write_text(json.dumps({"start_token": 3}))
    with pytest.raises(ValueError, match="start_token must be a non-empty string"):
        CausalScorer(folder, cache=False, progress=False)


def test_sweep_bad_input(tiny):
    with pytest.raises(ValueError, match="position 9"):
        tiny.sweep(["a", "b"], 9, ["c"])
    with pytest.raises(ValueError, match="candidate 1"):
        tiny.sweep(["a", "b"], 0, ["c", "two words"])
    with pytest.raises(TypeError, match="candidate 0 is int"):
        tiny.next_word_logprobs(["a"], [5])


# ----------------------------------------------------------------------------- real SmolLM2
# the session fixture ``smollm2`` is in conftest.py


@pytest.mark.slow
def test_smollm2_real_values(smollm2):
    sents = ["The cat sat on the mat.", "Mat the on sat cat the.", "I like to eat apples in the morning"]
    got = smollm2.score(sents)
    # pinned after checking: natural order far more probable than its reversal, and the first
    # token counts (log p("The" | <|endoftext|>) = -5.113: "The" is a common document opening)
    # (pins hold to 1e-3: SmolLM2's massive start-token activations make float32 scores move by
    # up to ~7e-5 nats between CPU kernels and batch shapes; 2.2e-5 for got[0] with AVX2 kernels)
    np.testing.assert_allclose(got, [-20.9165, -74.7117, -27.9438], atol=1e-3, rtol=0)
    toks = smollm2.token_logprobs(sents[0])
    assert [t for t, _ in toks][:2] == ["The", "Ġcat"]
    assert toks[0][1] == pytest.approx(-5.11282, abs=1e-3)
    # token_logprobs runs the sentence alone: the same forward pass as scoring it alone
    alone = smollm2.score([sents[0]])[0]
    assert math.fsum(v for _, v in toks) == pytest.approx(alone, abs=1e-9)
    assert alone == pytest.approx(got[0], abs=1e-3)  # alone vs in a batch of three
    want = naive_logprob(smollm2.model, smollm2.tokenizer, sents[2], "<|endoftext|>")
    assert got[2] == pytest.approx(want, abs=1e-3)


@pytest.mark.slow
def test_smollm2_sweep_equals_one_by_one(smollm2):
    words = "The cat sat on the mat .".split()
    cands = ["dog", "cat", "elephant", "xylophone", "a"]
    swept = smollm2.sweep(words, 1, cands)
    one = smollm2.score([" ".join([words[0], c, *words[2:]]) for c in cands])
    # key/value-cache continuation vs full forward: 2.1e-5 nats apart here (2.8e-5 with AVX2 kernels);
    # 1e-3 is the margin the package's own decisions allow (replacement.DECISION_MARGIN)
    np.testing.assert_allclose(swept, one, atol=1e-3, rtol=0)


@pytest.mark.slow
def test_converted_folder_scores_exactly_as_the_short_name(smollm2):
    """``hf-causal:<converted folder>`` uses the start token recorded at conversion
    (``<|endoftext|>``, not the tokenizer's BOS ``<|im_start|>``): same scores, same fingerprint."""
    from contstim_bench.scoring.offline import MARKER
    from contstim_bench.scoring.registry import load_scorer

    folder = smollm2.folder  # offline.model_dir("smollm2-135m"), in the session's temporary folder
    assert (folder / MARKER).is_file() and smollm2.tokenizer.bos_token == "<|im_start|>"
    by_path = load_scorer(f"hf-causal:{folder}", cache=False, progress=False)
    by_name = load_scorer("smollm2-135m", cache=False, progress=False)
    assert by_path.folder == by_name.folder == folder
    assert by_path.start_token == by_name.start_token == "<|endoftext|>"
    assert by_path.describe()["start_token"] == by_name.describe()["start_token"] == "<|endoftext|>"
    assert by_path.fingerprint() == by_name.fingerprint() == smollm2.fingerprint()
    sents = ["The cat sat on the mat.", "Mat the on sat cat the.", "I like to eat apples in the morning"]
    want = by_name.score(sents)
    np.testing.assert_array_equal(by_path.score(sents), want)
    np.testing.assert_array_equal(smollm2.score(sents), want)
