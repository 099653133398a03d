"""Packed causal scoring (scoring/packing.py): rows without padding after a shared prefix, checked
by hand on small inputs, against the padded layout on a tiny Llama and GPT-2 (float64: to
rounding) and on real SmolLM2 stimuli (float32: within its rounding), and refused, with padded
scoring instead, for a model that lets packed sequences see each other."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from contstim_bench.scoring.causal import CausalScorer  # noqa: E402
from contstim_bench.scoring.packing import PACK_WIDTH, pack_rows, prefix_mask  # noqa: E402

from tiny_causal import SENTENCES as TEST_SENTENCES, save_tiny_gpt2, save_tiny_llama  # noqa: E402

SENTENCES = [*TEST_SENTENCES, "She told me that the train was late again."]


def test_pack_rows_by_hand():
    seqs = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [10]]
    rows = pack_rows(seqs, pad_id=0, width=5, offset=1)
    # longest first into rows of 5: [6 7 8 9 | 10], [1 2 3 | 4 5]; both full, so no padding
    assert rows.ids == [[6, 7, 8, 9, 10], [1, 2, 3, 4, 5]]
    assert rows.positions == [[1, 2, 3, 4, 1], [1, 2, 3, 1, 2]]
    assert rows.segments == [[0, 0, 0, 0, 1], [0, 0, 0, 1, 1]]
    assert rows.spans == [(1, 0), (1, 3), (0, 0), (0, 4)]
    assert rows.width == 5 and rows.fed == 10
    # a row with room left gets a padding segment of its own, positions restarting after the prefix
    rows = pack_rows([[1, 2, 3], [4]], pad_id=0, width=3)
    assert rows.ids == [[1, 2, 3], [4, 0, 0]] and rows.positions == [[0, 1, 2], [0, 0, 1]]
    assert rows.segments == [[0, 0, 0], [0, 1, 1]]
    # a sequence longer than the width is a row of its own, as wide as it is
    rows = pack_rows([[1] * 7, [2, 2]], pad_id=0, width=4)
    assert rows.width == 7 and rows.spans == [(0, 0), (1, 0)]
    # the same rows, narrowed: 9 tokens in 2 rows of at most 64 -> rows of 5 and 4, not 8 and 1
    rows = pack_rows([[1] * 3, [2] * 2, [3] * 2, [4] * 2], pad_id=0)
    assert len(rows.ids) == 1 and rows.width == 9
    # sequences of one length: no padding at all (here 3 to a row of 15, not 12 to a row of 60 and 3 left)
    rows = pack_rows([[7] * 5] * 15, pad_id=0)
    assert rows.fed == 75 and len(rows.ids) * rows.width == 75
    with pytest.raises(ValueError, match="empty sequence"):
        pack_rows([[1], []], pad_id=0)
    with pytest.raises(ValueError, match="no sequences"):
        pack_rows([], pad_id=0)


def test_pack_rows_keeps_every_token_once():
    rng = np.random.default_rng(0)
    seqs = [list(rng.integers(1, 100, size=int(n))) for n in rng.integers(1, 30, size=200)]
    rows = pack_rows(seqs, pad_id=0)
    assert rows.width <= PACK_WIDTH
    for seq, (row, start) in zip(seqs, rows.spans):
        assert rows.ids[row][start: start + len(seq)] == seq
        assert rows.positions[row][start: start + len(seq)] == list(range(len(seq)))
        assert len(set(rows.segments[row][start: start + len(seq)])) == 1
    real = sum(len(s) for s in seqs)
    assert real <= rows.fed < real * 1.05  # almost no padding


def test_prefix_mask_by_hand():
    segments = torch.tensor([[0, 0, 1, 2]])  # two sequences and a padding segment
    mask = prefix_mask(segments, 2, torch.float32)
    assert mask.shape == (1, 1, 4, 6)
    seen = (mask[0, 0] == 0).int().tolist()
    assert seen == [
        [1, 1, 1, 0, 0, 0],  # the prefix, then itself
        [1, 1, 1, 1, 0, 0],  # the prefix, its segment's earlier position, itself
        [1, 1, 0, 0, 1, 0],  # a new segment: the prefix and itself only
        [1, 1, 0, 0, 0, 1],
    ]
    assert float(mask.min()) == torch.finfo(torch.float32).min


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return {"llama": save_tiny_llama(tmp_path_factory.mktemp("llama")),
            "gpt2": save_tiny_gpt2(tmp_path_factory.mktemp("gpt2"))}


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_packed_equals_padded(folders, kind):
    """Both layouts compute the same function: to float64 rounding in float64, within float32's
    rounding in float32; token by token, token_logprobs sums to the score."""
    for dtype, atol in (("float64", 1e-10), ("float32", 1e-4)):
        packed = CausalScorer(folders[kind], cache=False, progress=False, batch_size=4, dtype=dtype)
        assert packed.packs
        padded = CausalScorer(folders[kind], cache=False, progress=False, batch_size=4, dtype=dtype, layout="padded")
        assert not padded.packs
        a, b = packed.score(SENTENCES), padded.score(SENTENCES)
        np.testing.assert_allclose(a, b, atol=atol, rtol=0)
        tokens = packed.token_logprobs(SENTENCES[3])
        assert sum(v for _, v in tokens) == pytest.approx(a[3], abs=atol)


def test_positions_fed_by_a_batch_of_continuations(folders):
    # what bench/causal.py counts: no continuation's last token; packed rows where they feed
    # fewer positions than padding, padded rows otherwise
    scorer = CausalScorer(folders["llama"], cache=False, progress=False)
    mixed = [[5, 6, 7, 8, 9, 10], [5, 6], [7, 8, 9]]  # fed 5 + 1 + 2 = 8 tokens
    assert scorer.positions_fed(1, mixed) == pack_rows([c[:-1] for c in mixed], scorer.pad_id,
                                                       width=PACK_WIDTH, offset=1).fed == 8
    assert scorer.positions_fed(1, [[5, 6, 7], [8, 9, 10]]) == 4  # one length: padded, as packed
    assert scorer.positions_fed(1, [[5], [6]]) == 0  # single tokens: read from the prefix's logits
    assert scorer.with_layout("padded").positions_fed(1, mixed) == 3 * 5


class _Leaky(torch.nn.Module):
    """A causal LM that ignores the 4-D mask and the positions it is given: packed sequences
    would read their neighbours."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.config = inner.config

    def get_input_embeddings(self):
        return self.inner.get_input_embeddings()

    @property
    def dtype(self):
        return self.inner.dtype

    def forward(self, input_ids, attention_mask=None, position_ids=None, **kw):
        if attention_mask is not None and attention_mask.dim() == 4:
            attention_mask = None
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, **kw)


def test_a_model_that_lets_packed_rows_leak_is_scored_padded(folders):
    honest = CausalScorer(folders["llama"], cache=False, progress=False, dtype="float64")
    leaky = CausalScorer(folders["llama"], cache=False, progress=False, dtype="float64")
    leaky._model = _Leaky(honest.model)
    leaky._cache_name = honest._cache_name  # the name the wrapped forward takes its cache by
    assert honest.packs and not leaky.packs
    honest = honest.with_layout("padded")
    np.testing.assert_array_equal(leaky.score(SENTENCES), honest.score(SENTENCES))
    # forced to pack anyway (white-box: no option packs without the check), the leak shows: that is what the check is for
    leaky._packs = True
    forced = leaky.score(SENTENCES)
    assert np.abs(forced - honest.score(SENTENCES)).max() > 1e-3


def test_smollm2_packed_equals_padded_on_real_stimuli(smollm2):
    """SmolLM2 on 64 main-experiment stimuli: packed and padded within its float32 rounding
    (bench/causal.py measured 5.8e-5 nats at most over 560 stimuli, the same size as either layout's distance
    from the float64 forward pass); the start token runs once for all of them."""
    from contstim_bench.data import safe_pickle
    from contstim_bench.data.sources import resolve

    probs = safe_pickle.load(resolve("contstimlang/resources/contstim_stim_probs_dict.pkl"))
    sents = sorted(str(s) for s in probs["gpt2"])[::35][:64]
    assert smollm2.packs
    a = smollm2.score(sents)
    b = smollm2.with_layout("padded").score(sents)
    np.testing.assert_allclose(a, b, atol=1e-4, rtol=0)
    assert np.all(a < 0)


def test_the_layout_is_a_spec_option(folders):
    """``?layout=padded`` (and :meth:`CausalScorer.with_layout`, which bench/causal.py uses) scores
    padded, with the packed values to float64 rounding; an unknown layout is named."""
    from contstim_bench.scoring.registry import load_scorer

    auto = load_scorer(f"hf-causal:{folders['llama']}", cache=False, progress=False, dtype="float64")
    padded = load_scorer(f"hf-causal:{folders['llama']}?layout=padded", cache=False, progress=False, dtype="float64")
    assert auto.packs and not padded.packs and padded.layout == "padded"
    np.testing.assert_allclose(auto.score(SENTENCES), padded.score(SENTENCES), atol=1e-10, rtol=0)
    view = auto.with_layout("padded")
    assert not view.packs and auto.packs and view.model is auto.model
    assert view.with_layout("auto").packs
    with pytest.raises(ValueError, match="layout must be one of auto, padded, got 'tight'"):
        load_scorer(f"hf-causal:{folders['llama']}?layout=tight", cache=False)
