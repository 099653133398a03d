"""Masked-LM sentence scores (``hf-masked:<id or path>?method=...``).

Methods (all natural-log, float64, one value per sentence):

``approx-ll`` (default)
    Golan et al. (2023), Methods "Evaluating sentence-level probabilities in bidirectional
    models": the mean over **all** word orders of the chain-rule log-probability, each
    multi-piece word contributing the mean over its piece orders of the summed piece
    log-probabilities (their Eq. 1).  Computed exactly by enumerating the distinct mask
    patterns (see :mod:`.orders`), no sampling: ``2^n - 1`` masked copies for ``n`` single-piece
    words, plus ``(2^k - 2) * 2^(n-1)`` for each word of ``k`` pieces.  Only the sentence's own
    tokens count (the upstream code also multiplied in p("." | sentence); not done here).
``approx-ll-sampled``
    The paper's Monte-Carlo form: the mean over ``orders`` (100) distinct random word orders
    drawn with ``seed`` (0) (all ``n!`` when fewer), each order run as its own chain of masked
    copies.  The baseline of ``approx-ll`` (about 3x its rows for 8 single-piece words, but
    fewer when many words split into pieces); :meth:`MaskedLMScorer.sampled_order_logprobs`
    gives the per-order values.
``pll``
    Salazar et al. (2020): sum over tokens of log p(token | all other tokens).
``pll-word-l2r`` / ``pll-whole-word``
    Kauf & Ivanova (2023) Eq. 2 / 3: the later tokens of the same word (or all of its tokens)
    are masked too.
``pll-sentence-l2r``
    Kauf & Ivanova (2023) Appendix G, Eq. 4: every later token is masked too (the left context
    only; as their code, the closing special token such as ``[SEP]`` is masked as well).

Options (``?key=value``): ``method``; ``normalize`` = ``auto`` | ``1`` | ``0``: the four
whitespace-constrained normalisations of Golan et al. (each masked token's distribution is
restricted to the vocabulary tokens with the same whitespace mark as the token predicted, special
tokens excluded); ``auto`` (default) turns them on for 8-word sentences with the ``approx-ll``
methods and off otherwise; ``words`` = ``whitespace`` (default for ``approx-ll*``) | ``tokenizer``
(the tokenizer's word_ids, default for ``pll*``, as in minicons); ``orders``, ``seed`` (sampled
method); ``max_rows`` (refuse exact plans larger than this, default 65536).

The masked copies and their read-outs are built in :mod:`.masked_rows`, the log-probabilities
read out of the logits in :mod:`.masked_readout`, the model folder found and loaded in
:mod:`.hf_loading`; the mask plans themselves come from :mod:`.orders`.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from . import masked_rows
from .base import hash_files, length_sorted_batches, LoadSettings, ScoreCache, Scorer, validate_sentences
from .devices import describe_device_dtype, resolve_device, resolve_dtype
from .hf_loading import load_masked_lm, masked_folder, masked_model_files, object_fingerprint
from .masked_head import ReadoutLogits
from .masked_readout import padded_class_masks, readout_logprobs
from .orders import (
    MAX_EXACT_ROWS,
    Plan,
    order_plan,
    pll_plan,
    sampled_orders,
    sampled_plan,
    shared_exact_mean_plan,
)
from .word_pieces import WORD_UNITS, TokenizedSentence, TokenLogprobs, tokenize_many, whitespace_marks

METHODS = ("approx-ll", "approx-ll-sampled", "pll", "pll-word-l2r", "pll-whole-word", "pll-sentence-l2r")
PLL_METHODS = {"pll": "original", "pll-word-l2r": "word-l2r", "pll-whole-word": "whole-word",
               "pll-sentence-l2r": "sentence-l2r"}
"""PLL method -> its :func:`.orders.pll_plan` variant."""
OPTIONS = ("method", "normalize", "words", "orders", "seed", "max_rows")
#: option names the spec registry accepts for hf-masked
OPTION_KEYS = set(OPTIONS)
#: masked copies planned and run together (bounds memory)
_CHUNK_ROWS = 8192


def _torch():
    import torch

    return torch


class MaskedLMScorer(Scorer):
    """Sentence log-probabilities from a masked LM (any module called as
    ``model(input_ids=..., attention_mask=...)`` returning ``.logits``) and its fast tokenizer.

    ``batch_size`` counts masked copies (rows) per forward pass (default 128 on CPU, 1024 on
    CUDA); ``dtype`` None keeps the model's precision; ``device`` None picks CUDA when available.
    ``files`` (the model folder's files) identify the model in the score cache; without them the
    state dict is hashed.  ``n_model_rows`` counts the rows run so far, ``n_model_tokens`` their
    tokens (special tokens included, padding not), ``n_readouts`` the (row, position) pairs whose
    vocabulary logits were computed.
    """

    def __init__(
        self,
        model,
        tokenizer,
        *,
        method: str = "approx-ll",
        normalize: str | bool | int = "auto",
        words: str | None = None,
        orders: int = 100,
        seed: int = 0,
        max_rows: int = MAX_EXACT_ROWS,
        batch_size: int | None = None,
        device=None,
        dtype=None,
        spec: str = "",
        files: Sequence[str | os.PathLike] | None = None,
        cache: ScoreCache | None | bool = None,
        progress: bool = True,
    ):
        super().__init__(cache=cache, progress=progress)
        if method not in METHODS:
            raise ValueError(f"unknown masked-LM method {method!r}; expected one of {METHODS}")
        self.base_method = method
        self.normalize = _parse_normalize(normalize)
        words = words or ("whitespace" if method.startswith("approx") else "tokenizer")
        if words not in WORD_UNITS:
            raise ValueError(f"unknown words={words!r}; expected one of {WORD_UNITS}")
        self.words = words
        if int(orders) < 1:
            raise ValueError(f"orders must be >= 1, got {orders}")
        self.n_orders = int(orders)
        self.seed = int(seed)
        self.max_rows = int(max_rows)
        if getattr(tokenizer, "mask_token_id", None) is None:
            raise ValueError(
                f"tokenizer {getattr(tokenizer, 'name_or_path', type(tokenizer).__name__)!r} "
                "has no mask token; masked-LM scoring needs one"
            )
        self.tokenizer = tokenizer
        self.mask_id = int(tokenizer.mask_token_id)
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = getattr(getattr(model, "config", None), "pad_token_id", None)
        self.pad_id = int(pad) if pad is not None else 0
        self.device = resolve_device(device)
        float_params = [p for p in model.parameters() if p.is_floating_point()]
        if dtype is None and float_params:
            self.dtype = float_params[0].dtype  # keep the model's own precision
        else:
            self.dtype = resolve_dtype(dtype)
        if float_params:
            self.model = model.to(device=self.device, dtype=self.dtype)
        else:
            self.model = model.to(self.device)
        self.model.eval()
        self._readout = ReadoutLogits(self.model)
        self.batch_size = int(batch_size) if batch_size else (1024 if self.device.type == "cuda" else 128)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.spec = spec
        self._files = [str(f) for f in files] if files is not None else None
        self._fingerprint: str | None = None
        self._marks = None
        self._class_masks = None
        self.n_model_rows = 0
        self.n_model_tokens = 0
        self.n_readouts = 0
        parts = [method]
        if method == "approx-ll-sampled":
            parts += [f"orders={self.n_orders}", f"seed={self.seed}"]
        parts += [f"normalize={self.normalize}", f"words={self.words}"]
        self.method = ";".join(parts)

    # ----------------------------------------------------------------- provenance
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            extra = {"dtype": str(self.dtype).replace("torch.", ""), "kind": "hf-masked"}
            if self._files is not None:
                self._fingerprint = hash_files(self._files, extra)
            else:
                self._fingerprint = object_fingerprint(self.model, self.tokenizer, extra)
        return self._fingerprint

    def describe(self) -> dict:
        d = super().describe()
        device, dtype = describe_device_dtype(self.device, self.dtype)
        d.update(dtype=dtype, device=device)
        return d

    # ----------------------------------------------------------------- public API
    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        outs = self._run_plans(sentences, self._plan_for, dedupe=self.base_method != "approx-ll-sampled")
        if self.base_method == "approx-ll-sampled":
            return np.array([o.mean() for o in outs], dtype=np.float64)
        return np.array([o[0] for o in outs], dtype=np.float64)

    def sampled_order_logprobs(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """Per-order chain log-probabilities of the Monte-Carlo method (``orders`` values per
        sentence, or all ``n!`` orders when fewer); their mean is the ``approx-ll-sampled``
        score and ``std(ddof=1)/sqrt(len)`` its Monte-Carlo standard error."""
        sents = validate_sentences(sentences)

        def plan(tok: TokenizedSentence) -> Plan:
            orders = sampled_orders(tok.n_words, self.n_orders, self.seed, tok.sentence)
            return sampled_plan(tok.pieces, orders)

        return self._run_plans(sents, plan, dedupe=False)

    def order_logprobs(
        self,
        sentence: str,
        orders: Sequence[Sequence[int]],
        piece_orders: dict[int, Sequence[int]] | None = None,
    ) -> np.ndarray:
        """Chain-rule log-probability of ``sentence`` for each word order in ``orders`` (0-based
        word indices, first revealed first).  Pieces of a word are averaged over all their orders
        unless ``piece_orders[word]`` fixes one.  float64, one value per order."""
        sents = validate_sentences([sentence])
        orders = [list(o) for o in orders]
        if not orders:
            raise ValueError("orders is empty")

        def plan(tok: TokenizedSentence) -> Plan:
            p = Plan(pieces=tok.pieces, n_out=len(orders))
            for i, order in enumerate(orders):
                order_plan(tok.pieces, order, piece_orders, plan=p, out=i)
            return p

        return self._run_plans(sents, plan)[0]

    def word_completion_logprobs(
        self, sentence: str, position: int, candidates: Sequence[str]
    ) -> np.ndarray:
        """Eq. 3 regressor of Golan et al.: log p(word ``position`` = w | the other words), for each
        candidate word w, with w's own number of pieces masked (the rest of the sentence as
        given) and its pieces averaged over their orders (Eq. 1).  Natural log, float64, in
        candidate order.  Whitespace normalisation follows the scorer's ``normalize``."""
        (sentence,) = validate_sentences([sentence])
        words = sentence.split()
        if not isinstance(position, (int, np.integer)) or not 0 <= position < len(words):
            raise ValueError(f"position {position!r} is not a word index of {sentence!r} ({len(words)} words)")
        cands = list(candidates)
        for i, c in enumerate(cands):
            if not isinstance(c, str):
                raise TypeError(f"candidate {i} is {type(c).__name__}, not str: {c!r}")
            if not c or c.split() != [c]:
                raise ValueError(f"candidate {i} ({c!r}) is not a single word")
        if not cands:
            return np.zeros(0, dtype=np.float64)
        variants = [" ".join(words[:position] + [c] + words[position + 1 :]) for c in cands]
        toks = tokenize_many(self.tokenizer, variants, "whitespace")
        norm = self._normalize_for(len(words))
        rows = masked_rows.completion_rows(toks, position, self.mask_id)
        out = np.zeros(len(cands), dtype=np.float64)
        batches = length_sorted_batches([len(r) for r, _ in rows], self.batch_size)
        for batch in self._progress(batches, "word completions"):
            x, att, b_idx, pos, tok_arr, coef, outi = masked_rows.completion_batch(rows, batch, self.pad_id)
            lp = self._forward_logprobs(x, att, b_idx, pos, tok_arr, np.full(len(tok_arr), norm, dtype=bool))
            np.add.at(out, outi, coef * lp)
        return out

    # ----------------------------------------------------------------- planning
    def _normalize_for(self, n_words: int, method: str | None = None) -> bool:
        if self.normalize == "auto":
            return (method or self.base_method).startswith("approx") and n_words == 8
        return self.normalize == "1"

    def _plan_for(self, tok: TokenizedSentence) -> Plan:
        m = self.base_method
        if m == "approx-ll":
            return shared_exact_mean_plan(tok.pieces, self.max_rows)
        if m == "approx-ll-sampled":
            return sampled_plan(tok.pieces, sampled_orders(tok.n_words, self.n_orders, self.seed, tok.sentence))
        return pll_plan(tok.pieces, PLL_METHODS[m])

    def pll_token_logprobs(self, sentences: Sequence[str], method: str | None = None) -> list[TokenLogprobs]:
        """Natural-log probability of every content token of each sentence under the PLL
        ``method`` (default: the scorer's own, which must then be a PLL method), with the
        tokenized sentence (``pieces``: tokens per word) to group them.  Their sum is the
        method's sentence score.  Words are the scorer's ``words`` when it reads out a PLL
        method, else the tokenizer's (as minicons and Kauf & Ivanova); ``normalize=auto`` is off
        for PLL methods.  Not cached."""
        method = method or self.base_method
        if method not in PLL_METHODS:
            raise ValueError(f"token log-probabilities need a PLL method ({', '.join(PLL_METHODS)}), got {method!r}")
        sents = validate_sentences(sentences)
        toks = tokenize_many(self.tokenizer, sents, self._words_for(method))
        values = self._run_plans(sents, lambda tok: pll_plan(tok.pieces, PLL_METHODS[method], per_token=True),
                                 readout=method)
        return [TokenLogprobs(t, v) for t, v in zip(toks, values)]

    def _words_for(self, method: str) -> str:
        """Word unit of a read-out: the scorer's own, or the tokenizer's for a PLL method read out
        of a scorer of another method."""
        return self.words if method == self.base_method or self.base_method in PLL_METHODS else "tokenizer"

    def row_batches(self, sentences: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """The ``(input_ids, attention_mask)`` batches that scoring ``sentences`` runs through the
        model, built the same way but not run (for measuring the bare forward pass)."""
        sents = validate_sentences(sentences)
        return [
            (x, att)
            for _, _, prep in self._chunks(sents, self._plan_for, self.base_method != "approx-ll-sampled")
            for _, _, x, att in masked_rows.batches(prep, self.batch_size)
        ]

    def _chunks(self, sentences: list[str], make_plan, dedupe: bool = True, readout: str | None = None):
        """Yield ``(sentence indices, plans, prepared rows)`` in chunks of about _CHUNK_ROWS rows,
        sentences taken by decreasing token length; ``dedupe``: identical rows run once (see
        :func:`.masked_rows.prepare`); ``readout``: the method whose words and normalisation
        apply (default the scorer's)."""
        readout = readout or self.base_method
        toks = tokenize_many(self.tokenizer, sentences, self._words_for(readout))
        limit = self._max_tokens()
        for t in toks:
            if limit is not None and len(t.input_ids) > limit:
                raise ValueError(
                    f"sentence {t.sentence!r} has {len(t.input_ids)} tokens; {self.spec or 'the model'} "
                    f"accepts at most {limit}"
                )
        n_ws = [len(s.split()) for s in sentences]
        order = sorted(range(len(toks)), key=lambda i: (-len(toks[i].input_ids), i))
        i = 0
        while i < len(order):
            chunk, plans, n_rows = [], [], 0
            while i < len(order) and (not chunk or n_rows < _CHUNK_ROWS):
                plan = make_plan(toks[order[i]])
                chunk.append(order[i])
                plans.append(plan)
                n_rows += len(plan.rows)
                i += 1
            norms = [self._normalize_for(n_ws[j], readout) for j in chunk]
            prep = masked_rows.prepare([toks[j] for j in chunk], plans, norms, self.pad_id, self.mask_id, dedupe)
            yield chunk, plans, prep

    def _run_plans(self, sentences: list[str], make_plan, dedupe: bool = True,
                   readout: str | None = None) -> list[np.ndarray]:
        """Tokenize, plan, run every masked copy (length-sorted batches) and combine.
        ``dedupe``: run identical rows once (every method but the Monte-Carlo baseline, whose
        orders each run on their own rows as in the original algorithm); ``readout``: see
        :meth:`_chunks`."""
        results: list[np.ndarray | None] = [None] * len(sentences)
        bar = self._progress(None, f"{self.base_method} sentences", total=len(sentences))
        for chunk, plans, prep in self._chunks(sentences, make_plan, dedupe, readout):
            x_all, len_all, t, out_offsets, n_out = prep
            lp = np.zeros(len(t["row"]), dtype=np.float64)
            for start, end, x, att in masked_rows.batches(prep, self.batch_size):
                a, b = np.searchsorted(t["row"], [start, end])
                lp[a:b] = self._forward_logprobs(
                    x, att, t["row"][a:b] - start, t["pos"][a:b], t["tok"][a:b], t["norm"][a:b]
                )
            out = np.bincount(t["out"], weights=t["coef"] * lp, minlength=n_out)
            self.n_model_rows += len(x_all)
            self.n_model_tokens += int(len_all.sum())
            for j, o, p in zip(chunk, out_offsets, plans):
                results[j] = out[o : o + p.n_out]
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        return results  # type: ignore[return-value]

    # ----------------------------------------------------------------- context
    def context_length(self) -> int | None:
        """Most tokens one masked copy may have (special tokens included); None when unknown."""
        return self._max_tokens()

    def token_lengths(self, sentences: Sequence[str]) -> list[int]:
        """Tokens of each sentence as the model reads it (special tokens included)."""
        return [len(t.input_ids) for t in tokenize_many(self.tokenizer, list(sentences), self.words)]

    # ----------------------------------------------------------------- model
    def _max_tokens(self) -> int | None:
        """Longest input the model's position embeddings allow (None when unknown)."""
        cfg = getattr(self.model, "config", None)
        limit = getattr(cfg, "max_position_embeddings", None)
        if not isinstance(limit, int):
            return None
        if getattr(cfg, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "longformer"):
            limit -= (getattr(cfg, "pad_token_id", 1) or 0) + 1  # positions start after padding_idx
        return limit

    def _class_mask_tensor(self, vocab: int):
        """``(class masks, marked)`` of :func:`.masked_readout.padded_class_masks` as tensors on the
        scorer's device (computed once per vocabulary size)."""
        torch = _torch()
        if self._class_masks is None or self._class_masks.shape[1] != vocab:
            if self._marks is None:
                self._marks = whitespace_marks(self.tokenizer)
            masks, marked = padded_class_masks(self._marks, vocab)
            self._class_masks = torch.as_tensor(masks, device=self.device)
            self._marked = torch.as_tensor(marked, device=self.device)
        return self._class_masks, self._marked

    def _forward_logprobs(self, x, att, b_idx, pos, tok, norm) -> np.ndarray:
        """log p(tok | row) at (row b_idx, position pos) for one batch; ``norm`` selects the
        whitespace-class normalisation per target.  The vocabulary logits are computed once per
        distinct (row, position) (:class:`.masked_head.ReadoutLogits`).  float64 numpy."""
        torch = _torch()
        width = x.shape[1]
        pairs, pair = np.unique(np.asarray(b_idx) * width + np.asarray(pos), return_inverse=True)
        self.n_readouts += len(pairs)
        with torch.inference_mode():
            input_ids = torch.as_tensor(x, device=self.device)
            attention = torch.as_tensor(att, device=self.device)
            rows = torch.as_tensor(pairs // width, device=self.device)
            cols = torch.as_tensor(pairs % width, device=self.device)
            sel = self._readout(input_ids, attention, rows, cols)
            tk = torch.as_tensor(tok, device=self.device)
            lp = readout_logprobs(sel, tk, norm, self._class_mask_tensor,
                                  torch.as_tensor(pair.reshape(-1), device=self.device))
            return lp.double().cpu().numpy()

    def _progress(self, iterable, desc: str, total: int | None = None):
        if not self.progress:
            return iterable
        from ..progress import progress_bar

        if iterable is None:
            return progress_bar(total=total, desc=desc, unit="sent", leave=False)
        return progress_bar(iterable, desc=desc, leave=False)


def _parse_normalize(value) -> str:
    v = str(value).strip().lower()
    if v in ("auto",):
        return "auto"
    if v in ("1", "true", "yes", "on"):
        return "1"
    if v in ("0", "false", "no", "off"):
        return "0"
    raise ValueError(f"normalize must be auto, 1 or 0, got {value!r}")


def from_spec(target: str, options: dict[str, str], load: LoadSettings) -> MaskedLMScorer:
    """Scorer for ``hf-masked:<target>?<options>`` (see the module docstring for options)."""
    if load.kind != "hf-masked":
        raise ValueError(f"contstim_bench.scoring.masked builds hf-masked scorers, not {load.kind!r}")
    if not target:
        raise ValueError("hf-masked: needs a model id or folder, e.g. hf-masked:path/to/model?method=pll")
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise ValueError(f"hf-masked:{target}: unknown option(s) {unknown}; known: {list(OPTIONS)}")
    method = opts.get("method", "approx-ll")
    if method not in METHODS:
        raise ValueError(f"hf-masked:{target}: unknown method {method!r}; expected one of {METHODS}")

    def _int(name, default):
        try:
            return int(opts.get(name, default))
        except ValueError:
            raise ValueError(f"hf-masked:{target}: {name} must be an integer, got {opts[name]!r}") from None

    folder = masked_folder(target)
    torch_dtype = resolve_dtype(load.options.dtype)
    model, tokenizer = load_masked_lm(folder, torch_dtype)
    spec = f"hf-masked:{target}" + ("?" + "&".join(f"{k}={v}" for k, v in sorted(opts.items())) if opts else "")
    return MaskedLMScorer(
        model,
        tokenizer,
        method=method,
        normalize=opts.get("normalize", "auto"),
        words=opts.get("words"),
        orders=_int("orders", 100),
        seed=_int("seed", 0),
        max_rows=_int("max_rows", MAX_EXACT_ROWS),
        batch_size=load.options.batch_size,
        device=load.options.device,
        dtype=torch_dtype,
        spec=spec,
        files=masked_model_files(folder),
        cache=load.options.cache,
        progress=load.options.progress,
    )
