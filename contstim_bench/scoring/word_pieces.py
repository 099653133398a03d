"""Align a tokenizer's tokens with words, and classify vocabulary tokens by their whitespace mark.

Words are either the whitespace-separated words of the sentence (``unit="whitespace"``, the 8
words of the Golan et al. stimuli) or the tokenizer's own pre-tokenizer words (``unit=
"tokenizer"``, the ``word_ids`` that minicons and Kauf & Ivanova use, which also split off
punctuation).  Both come from the fast tokenizer's offsets / ``word_ids``, so WordPiece (``##``
continuation), byte-level / SentencePiece BPE (a leading-space marker such as ``Ġ`` or ``▁``)
and end-of-word BPE (``</w>`` suffix) tokenizers all work.

The whitespace mark of a token is the one property the tokenizer encodes in the token string:
"continues a word" (``##``), "starts with a space" (``Ġ``/``▁``) or "ends a word" (``</w>``).
The Golan et al. normalisations restrict the distribution at a masked position to the tokens
whose mark equals that of the token being predicted (single-token words and word starts to
word-start tokens, middles to unmarked tokens, ...).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np

WORD_UNITS = ("whitespace", "tokenizer")


@dataclass(frozen=True)
class TokenizedSentence:
    """One sentence as the model sees it.

    ``input_ids`` include the tokenizer's special tokens; ``content`` are the positions of the
    sentence's own tokens in ``input_ids`` (in order); ``pieces[w]`` is the number of content
    tokens of word ``w`` (words own contiguous runs of content tokens).
    """

    sentence: str
    input_ids: tuple[int, ...]
    content: tuple[int, ...]
    pieces: tuple[int, ...]

    @property
    def content_ids(self) -> tuple[int, ...]:
        return tuple(self.input_ids[p] for p in self.content)

    @property
    def n_words(self) -> int:
        return len(self.pieces)

    def word_tokens(self, word: int) -> tuple[int, ...]:
        """Content-token ids of word ``word``."""
        start = sum(self.pieces[:word])
        return self.content_ids[start : start + self.pieces[word]]


@dataclass(frozen=True)
class TokenLogprobs:
    """One sentence's content-token log-probabilities (natural log, float64) under a PLL method
    (:meth:`.masked.MaskedLMScorer.pll_token_logprobs`), in the order of ``tokens.content``;
    ``tokens.pieces`` groups them into words."""

    tokens: TokenizedSentence
    values: np.ndarray

    def word_sums(self) -> np.ndarray:
        """Summed log-probability of each word (float64, one per word)."""
        return np.add.reduceat(self.values, np.cumsum((0,) + self.tokens.pieces[:-1]))


def require_fast(tokenizer) -> None:
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError(
            f"{type(tokenizer).__name__} is not a fast (tokenizers-backed) tokenizer; word "
            "boundaries need its offsets and word_ids"
        )


def tokenize(tokenizer, sentence: str, unit: str = "whitespace") -> TokenizedSentence:
    """Tokenize ``sentence`` and group its content tokens into words (``unit`` see module doc)."""
    return tokenize_many(tokenizer, [sentence], unit)[0]


def tokenize_many(tokenizer, sentences: list[str], unit: str = "whitespace") -> list[TokenizedSentence]:
    """:func:`tokenize` for many sentences with one batched tokenizer call."""
    if unit not in WORD_UNITS:
        raise ValueError(f"unknown word unit {unit!r}; expected one of {WORD_UNITS}")
    require_fast(tokenizer)
    if not sentences:
        return []
    enc = tokenizer(
        list(sentences), return_offsets_mapping=True, return_special_tokens_mask=True
    )
    specials = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    return [
        _group(
            tokenizer,
            sentence,
            enc["input_ids"][i],
            enc["special_tokens_mask"][i],
            enc["offset_mapping"][i],
            enc.word_ids(i) if unit == "tokenizer" else None,
            unit,
            specials,
        )
        for i, sentence in enumerate(sentences)
    ]


def _group(tokenizer, sentence, ids, special, offsets, word_ids, unit, specials) -> TokenizedSentence:
    ids = list(ids)
    special = list(special)
    content = [i for i, s in enumerate(special) if not s]
    if not content:
        raise ValueError(f"sentence {sentence!r} has no tokens")
    for p in content:
        if ids[p] in specials:
            raise ValueError(
                f"sentence {sentence!r} contains the special token "
                f"{tokenizer.convert_ids_to_tokens(ids[p])!r}"
            )
    if unit == "tokenizer":
        words = [word_ids[p] for p in content]
        if any(w is None for w in words):
            raise ValueError(f"tokenizer gave no word id to a token of sentence {sentence!r}")
    else:
        words = _whitespace_words(sentence, [offsets[p] for p in content])
    pieces: list[int] = []
    last = object()
    seen: set = set()
    for w in words:
        if w != last:
            if w in seen:
                raise ValueError(f"word {w} of sentence {sentence!r} is split by another word")
            seen.add(w)
            pieces.append(0)
            last = w
        pieces[-1] += 1
    if unit == "whitespace":
        n_ws = len(sentence.split())
        if len(pieces) != n_ws:
            raise ValueError(
                f"sentence {sentence!r}: {n_ws} whitespace words but tokens for {len(pieces)}"
            )
    return TokenizedSentence(sentence, tuple(ids), tuple(content), tuple(pieces))


def _whitespace_words(sentence: str, offsets: list[tuple[int, int]]) -> list[int]:
    """Whitespace-word index of each content token from its character offsets."""
    char_word = np.full(len(sentence), -1, dtype=np.int64)
    for w, m in enumerate(re.finditer(r"\S+", sentence)):
        char_word[m.start() : m.end()] = w
    out: list[int | None] = []
    for start, end in offsets:
        hits = char_word[start:end]
        hits = hits[hits >= 0]
        out.append(int(hits[0]) if hits.size else None)
    # a token made only of whitespace (e.g. a lone space marker) belongs to the next word
    nxt = None
    for i in range(len(out) - 1, -1, -1):
        if out[i] is None:
            out[i] = nxt
        else:
            nxt = out[i]
    prev = None
    for i in range(len(out)):
        if out[i] is None:
            out[i] = prev
        else:
            prev = out[i]
    if any(w is None for w in out):
        raise ValueError(f"no token of sentence {sentence!r} maps to a word")
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class WhitespaceMarks:
    """Per vocabulary id: ``marked`` (carries the tokenizer's whitespace mark) and ``special``."""

    style: str  # "continuation-prefix" | "space-prefix" | "end-suffix"
    marker: str
    marked: np.ndarray
    special: np.ndarray

    def class_masks(self) -> np.ndarray:
        """``(2, V)`` bool: row 0 = unmarked non-special tokens, row 1 = marked non-special."""
        ok = ~self.special
        return np.stack([ok & ~self.marked, ok & self.marked])


def _pre_tokenizer_kinds(node) -> list[dict]:
    if not node:
        return []
    if node.get("type") == "Sequence":
        out = []
        for sub in node.get("pretokenizers", []):
            out.extend(_pre_tokenizer_kinds(sub))
        return out
    return [node]


def whitespace_marks(tokenizer) -> WhitespaceMarks:
    """Classify every vocabulary id of ``tokenizer`` by its whitespace mark.

    WordPiece (or any model with a continuing-subword prefix) marks continuations; a BPE with an
    end-of-word suffix marks word ends; byte-level and Metaspace pre-tokenizers mark word starts.
    ValueError when the tokenizer shows none of these.
    """
    require_fast(tokenizer)
    state = json.loads(tokenizer.backend_tokenizer.to_str())
    model = state.get("model", {})
    style = marker = None
    if model.get("end_of_word_suffix"):
        style, marker = "end-suffix", model["end_of_word_suffix"]
    elif model.get("continuing_subword_prefix"):
        style, marker = "continuation-prefix", model["continuing_subword_prefix"]
    else:
        for pre in _pre_tokenizer_kinds(state.get("pre_tokenizer")):
            if pre.get("type") == "ByteLevel":
                style, marker = "space-prefix", "\u0120"
                break
            if pre.get("type") == "Metaspace":
                style, marker = "space-prefix", pre.get("replacement", "\u2581")
                break
        if style is None and model.get("type") == "Unigram":
            style, marker = "space-prefix", "\u2581"
    if style is None:
        raise ValueError(
            f"cannot tell how tokenizer {getattr(tokenizer, 'name_or_path', '')!r} marks "
            "whitespace (no ## prefix, </w> suffix, byte-level or metaspace marker); "
            "use normalize=0"
        )
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    if style == "end-suffix":
        marked = np.array([t is not None and t.endswith(marker) for t in tokens])
    else:
        marked = np.array([t is not None and t.startswith(marker) for t in tokens])
    special = np.zeros(len(tokens), dtype=bool)
    keep = {tokenizer.unk_token_id}
    for i in tokenizer.all_special_ids:
        if i not in keep and 0 <= i < len(tokens):
            special[i] = True
    for i, t in enumerate(tokens):
        if t is None:
            special[i] = True
    return WhitespaceMarks(style=style, marker=marker, marked=marked, special=special)


def span_tokens(tokenizer, texts: list[str], spans: list[tuple[int, int]]) -> list[list[int]]:
    """For each text, the indices (among its non-special tokens, in order: the ``content`` of
    :class:`TokenizedSentence`) of the tokens whose characters overlap ``span`` = ``(start,
    end)``, end exclusive: the tokens of one word written into a template (Kauf & Ivanova 2023
    score a word as ``My word is "souvenir".`` and count the tokens of ``souvenir``).  ValueError
    when a span is outside its text or no token covers it."""
    require_fast(tokenizer)
    if len(texts) != len(spans):
        raise ValueError(f"{len(texts)} texts but {len(spans)} spans")
    if not texts:
        return []
    enc = tokenizer(list(texts), return_offsets_mapping=True, return_special_tokens_mask=True)
    out = []
    for i, (text, (start, end)) in enumerate(zip(texts, spans)):
        if not 0 <= start < end <= len(text):
            raise ValueError(f"span {(start, end)} is not inside {text!r}")
        content = [k for k, s in enumerate(enc["special_tokens_mask"][i]) if not s]
        hits = [j for j, k in enumerate(content)
                if enc["offset_mapping"][i][k][0] < end and enc["offset_mapping"][i][k][1] > start]
        if not hits:
            raise ValueError(f"no token of {text!r} covers characters {start}..{end - 1} ({text[start:end]!r})")
        out.append(hits)
    return out


def content_token_counts(tokenizer, texts: list[str]) -> list[int]:
    """Tokens of each text without the tokenizer's special tokens (``[CLS]``, ``<s>``, ...)."""
    if not texts:
        return []
    enc = tokenizer(list(texts), return_special_tokens_mask=True)
    return [len(m) - sum(m) for m in enc["special_tokens_mask"]]
