"""Causal (autoregressive) language models: ``hf-causal:<id, folder or offline short name>``.

The score of a sentence is the sum over its tokens of the **natural-log** probability of each
token given the tokens before it, *including the first token*, which is conditioned on the
model's start token: ``log p(w_1 .. w_n) = sum_i log p(w_i | <start>, w_1 .. w_{i-1})``.
The start token is, in order: ``?start=<token>``; the ``start_token`` recorded in the folder's
``contstim_offline.json`` (:data:`.offline.MARKER`: the offline models record the token they
were trained with, so ``hf-causal:<converted folder>`` scores exactly as the short name); the
tokenizer's BOS token; its EOS token (GPT-2 style models are trained with ``<|endoftext|>``
between documents).  No end-of-sentence token is scored.

Sentences are tokenised without special tokens, grouped into length-sorted batches (at most
``batch_size`` sentences, and at most ``max_tokens_per_batch`` padded tokens when that is given)
and run under :func:`torch.inference_mode`.  The last token of a sequence is never fed (its
logits predict nothing that is scored).  When the model keeps packed sequences apart (checked
once on loading), the start token runs once and a batch's sentences after it share its key/value
cache, packed one after the other into rows without padding where that feeds fewer positions
(:mod:`.packing`), else right-padded after it; otherwise each sentence is padded on the right with
its own start token.  Padding never changes a value: an attention mask keeps real tokens at their
positions and away from the padding.  Per-token log-probabilities are logit minus log-sum-exp,
read out in float64 when the weights are bfloat16/float16 (float32 or better otherwise), and
summed in float64.

Spec options: ``start=<token>``; ``revision=<branch, tag or commit>`` of a Hub id (recorded as
the resolved commit in the scorer's description, hence in ``model.revision`` of a result; a
local folder has no revision transformers checks, so it is refused unless the folder is a Hub
cache snapshot of that commit); ``device_map=auto|balanced|sequential|<device>`` to spread a
model larger than one device over the GPUs and the CPU, with ``max_memory=0:20GiB,cpu:60GiB``;
``layout=auto|padded``: ``auto`` (default) packs when the model keeps packed rows apart,
``padded`` never packs (the two agree to float rounding: :meth:`CausalScorer.with_layout`, which
``bench/causal.py`` times and compares them by).

For the synthetic-sentence search the scorer also offers :meth:`CausalScorer.sweep` (the
sentence with each candidate word at one position, the shared prefix computed once and its
key/value cache reused) and :meth:`CausalScorer.next_word_logprobs`; these and
``continuation_logprobs`` live in :mod:`.causal_prefix`.  Finding, checking and loading the model
folder is :mod:`.hf_loading`'s.
"""
from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .base import hash_files, length_sorted_batches, LoadSettings, ScoreCache, Scorer, validate_sentences
from .kv_cache import tile_cache
from .causal_prefix import SharedPrefixScoring
from .lockstep import Lockstep
from .merged_passes import ForwardRequest, run_alone
from .packing import replicas
from .devices import describe_device_dtype, resolve_device, resolve_dtype, set_token_budget
from .spec import format_spec
from .hf_loading import (
    cache_argument,
    causal_folder,
    causal_model_files,
    check_causal_config,
    check_device_map,
    load_causal_lm,
    load_tokenizer,
    parse_max_memory,
    recorded_start_token,
    snapshot_commit,
)

OPTION_KEYS = frozenset({"start", "revision", "device_map", "max_memory", "layout"})
DEFAULT_BATCH_SIZE = 32
LAYOUTS = ("auto", "padded")
"""How sentences and continuations are laid out in a forward pass: ``auto`` packs them into rows
(:mod:`.packing`) when the model keeps packed rows apart (:attr:`CausalScorer.packs`), ``padded``
right-pads them always."""


def check_layout(layout: str) -> None:
    """ValueError naming ``layout`` when it is none of :data:`LAYOUTS`."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")


class CausalScorer(SharedPrefixScoring, Scorer):
    """Sentence log-probabilities from a Hugging Face causal LM (see module docstring)."""

    method = "causal"

    def __init__(
        self,
        model_path: str | os.PathLike,
        *,
        start: str | None = None,
        device=None,
        dtype=None,
        batch_size: int | None = None,
        cache: ScoreCache | None | bool = None,
        progress: bool = True,
        spec: str | None = None,
        name: str | None = None,
        revision: str | None = None,
        device_map: str | None = None,
        max_memory: dict | None = None,
        max_tokens_per_batch: int | None = None,
        layout: str = "auto",
    ):
        super().__init__(cache=cache, progress=progress)
        import torch

        check_layout(layout)

        self.folder = causal_folder(str(model_path), revision)
        self.name = name or str(model_path)
        self.spec = spec or f"hf-causal:{model_path}"
        #: the commit the weights come from (a Hub cache snapshot's), None for a plain folder
        self.revision = snapshot_commit(self.folder)
        self.device_map = check_device_map(device_map)
        if max_memory is not None and not self.device_map:
            raise ValueError("max_memory= needs device_map= (e.g. ?device_map=auto&max_memory=0:20GiB,cpu:60GiB)")
        self.max_memory = max_memory
        self.device = resolve_device(device) if not self.device_map else torch.device("cpu")
        self.dtype = resolve_dtype(dtype)
        self.batch_size = int(batch_size or DEFAULT_BATCH_SIZE)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        #: sentences per batch when a token budget is set: only the count the user gave limits it
        self._count_cap = int(batch_size) if batch_size else None
        self.max_tokens_per_batch = set_token_budget(max_tokens_per_batch)
        self._model = None  # loaded on first use: a run served from the cache never loads it
        self._cache_name = "past_key_values"  # the model's name for a key/value cache, set on loading
        self._tokenizer = None
        self._start_id: int | None = None  # resolved with the tokenizer (_load_tokenizer)
        self._pad_id: int | None = None
        #: the start token recorded by the folder's conversion marker (read only when none is given)
        recorded = recorded_start_token(self.folder) if start is None else None
        self.start_token = start if start is not None else recorded
        if recorded is None:
            # a folder of the user's: checked now, so that a wrong folder or start token is named
            # before any work (config, tokenizer, the start token in its vocabulary)
            self._load_tokenizer()
        # else: a folder converted by offline.py, whose marker records the packaged model's start
        # token: the checks and the tokenizer (about 2 CPU-s of imports, Gemma-3's tokenizer 4 more)
        # wait for the first sentence that is not in the score cache (the identity needs neither),
        # so that a run served from the cache loads no tokenizer; they raise the same errors then
        self.layout = layout
        #: whether rows are packed: False for the padded layout, else checked on the loaded model
        self._packs: bool | None = False if layout == "padded" else None
        self._start: tuple | None = None
        self._fixed_prefix_states: dict[tuple[int, ...], dict] = {}
        self._fixed_counts: dict[str, int] = {}
        self._forget_kept_state()
        self._fingerprint: str | None = None
        self._context: int | None = None
        self._torch = torch
        self._lockstep: Lockstep | None = None  # set in a view (lockstep_view)
        self._alone = 0  # > 0 while a canonical score is computed (its passes are not merged)

    def _load_tokenizer(self):
        """The tokenizer (shared in the process: hf_loading.load_tokenizer), loaded once after the
        config check, with the start token resolved and checked against its vocabulary, and the
        padding id."""
        if self._tokenizer is not None:
            return self._tokenizer
        check_causal_config(self.folder, self.name)
        tokenizer = load_tokenizer(self.folder)
        if self.start_token is None:
            self.start_token = tokenizer.bos_token or tokenizer.eos_token
        if not self.start_token:
            raise ValueError(
                f"model {self.name}: the tokenizer has neither a BOS nor an EOS token; give the "
                f"start token with ?start=<token>"
            )
        vocab = tokenizer.get_vocab()
        if self.start_token not in vocab:
            raise ValueError(
                f"model {self.name}: start token {self.start_token!r} is not a single token of "
                f"its vocabulary"
            )
        self._start_id = int(vocab[self.start_token])
        self._pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self._start_id)
        self._tokenizer = tokenizer
        return tokenizer

    @property
    def tokenizer(self):
        """The model's tokenizer (loaded, and the start token checked, on first access)."""
        return self._load_tokenizer()

    @tokenizer.setter
    def tokenizer(self, tokenizer) -> None:
        self._tokenizer = tokenizer

    @property
    def start_id(self) -> int:
        """Vocabulary id of :attr:`start_token`."""
        self._load_tokenizer()  # resolves and checks the start token
        return self._start_id

    @property
    def pad_id(self) -> int:
        """Id the batches are padded with: the tokenizer's pad token, else the start token."""
        self._load_tokenizer()
        return self._pad_id

    @property
    def model(self):
        """The ``AutoModelForCausalLM`` (loaded on first access)."""
        if self._model is None:
            self._model = load_causal_lm(self.folder, self.name, self.dtype, self.device, self.device_map,
                                         self.max_memory)
            if self.device_map:  # inputs go where the embedding layer was placed
                self.device = self._model.get_input_embeddings().weight.device
            self._cache_name = cache_argument(self._model)
        return self._model

    @property
    def packs(self) -> bool:
        """Whether sentences and continuations are scored packed into rows without padding
        (:mod:`.packing`): checked once, on the loaded model, to keep packed sequences apart."""
        if self._packs is None:
            self._packs = self._check_packing()
        return self._packs

    # ----------------------------------------------------------------------------- identity
    def fingerprint(self) -> str:
        """sha256 of weights + config + tokenizer files, the start token and the dtype."""
        if self._fingerprint is None:
            self._fingerprint = hash_files(
                causal_model_files(self.folder),
                extra={"start": self.start_token, "dtype": str(self.dtype), "kind": "hf-causal"},
            )
        return self._fingerprint

    def describe(self) -> dict:
        d = super().describe()
        device, dtype = describe_device_dtype(self.device, self.dtype)
        d.update(
            {
                "model": self.name,
                "folder": str(self.folder),
                "start_token": self.start_token,
                "dtype": dtype,
                "device": device,
                "batch_size": self.batch_size,
                "revision": self.revision,
            }
        )
        if self.device_map:
            d["device_map"] = self.device_map
            if self.max_memory:
                d["max_memory"] = {str(k): v for k, v in self.max_memory.items()}
        if self.max_tokens_per_batch:
            d["max_tokens_per_batch"] = self.max_tokens_per_batch
        return d

    # ---------------------------------------------------------------------------- context
    def context_length(self) -> int | None:
        """Most tokens the model reads at once (start token included): the smaller of the
        config's ``max_position_embeddings``/``n_positions`` and the tokenizer's
        ``model_max_length`` when set; None when neither is known (read without loading weights)."""
        if self._context is None:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(self.folder)
            limits = [v for v in (getattr(config, "max_position_embeddings", None), getattr(config, "n_positions", None))
                      if isinstance(v, int) and v > 0][:1]
            tok_max = getattr(self.tokenizer, "model_max_length", None)
            if isinstance(tok_max, int) and 0 < tok_max < 10**7:
                limits.append(tok_max)
            self._context = min(limits) if limits else 0
        return self._context or None

    def token_lengths(self, sentences: Sequence[str]) -> list[int]:
        """Tokens of each sentence as scored (start token included)."""
        return [len(seq) for seq in self.encode(sentences)]

    # ---------------------------------------------------------------------------- tokenising
    def encode(self, sentences: Sequence[str]) -> list[list[int]]:
        """Token ids of each text (no special tokens), with the start token prepended."""
        ids = self.tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
        out = []
        for text, seq in zip(sentences, ids):
            if not seq:
                raise ValueError(f"model {self.name}: text {text!r} has no tokens")
            out.append([self.start_id, *seq])
        return out

    def _pad(self, seqs: list[list[int]]):
        torch = self._torch
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, seq in enumerate(seqs):
            ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, : len(seq)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _forward(self, ids, mask, cache=None, want_cache: bool = False):
        """Logits of a padded batch (optionally continuing ``cache``, which it extends).

        CPU BLAS kernels switch algorithm for matrices of fewer than a few rows, and models with
        massive activations on the start token (SmolLM2: ~2e4) then round differently by up to
        ~1e-4 nats.  A batch of fewer than ``MIN_TOKEN_ROWS`` token rows is therefore replicated to at
        least that many rows and the first copy returned, so that every forward pass uses the
        same kernels and scores do not depend on how sentences were batched.
        """
        n = ids.shape[0]
        reps = replicas(ids.numel())
        if reps > 1:
            ids = ids.repeat(reps, 1)
            mask = mask.repeat(reps, 1)
            if cache is not None:
                if cache.get_seq_length() > 0:
                    tile_cache(cache, reps)
        logits, cache = self._run_model(ids, mask, cache=cache, want_cache=want_cache)
        return (logits[:n], cache) if want_cache else logits[:n]

    def _run_model(self, ids, mask, positions=None, cache=None, want_cache: bool = False):
        """(logits, key/value cache or None) of one forward pass.  In a view of a
        :class:`.lockstep.Lockstep` the pass is sent to it (merged with other tasks' passes),
        except while a canonical score is computed (:meth:`_score_ids`), which runs alone."""
        request = ForwardRequest(self.model, ids, mask, positions, cache, want_cache, alone=self._alone > 0,
                                 cache_name=self._cache_name, budget=self.max_tokens_per_batch)
        if self._lockstep is not None:
            return self._lockstep.forward(request)
        return run_alone(request)

    def lockstep_view(self, lockstep: Lockstep) -> "CausalScorer":
        """A view of this scorer for one task of ``lockstep``: the same model, tokenizer, start
        token state and score cache, its own kept prefix states and evaluation counts, and its
        forward passes merged with the other tasks' (canonical scores excepted).  A model whose
        passes cannot be merged gets a view whose passes run alone: one that does not keep packed
        rows apart, one with a sliding attention window, and 16-bit weights, whose merged passes
        round differently by up to tenths of a nat (measured on SmolLM2 in bfloat16: enough to
        change a search's decisions, which float32's ~1e-5 nats never do at the 1e-3 margin)."""
        torch = self._torch
        self.model  # noqa: B018 - loaded, checked and the start token run here, shared by the views
        mergeable = (self.packs and self._packing_window() is None
                     and self.model.dtype in (torch.float32, torch.float64))
        self._start_state()
        view = self._view()
        view._start = self._start
        view._lockstep = lockstep if mergeable else None
        return view

    def _view(self) -> "CausalScorer":
        """A copy sharing the model, tokenizer and score cache, with its own kept prefix states and
        evaluation counts, no start state and no lockstep."""
        view = copy.copy(self)
        view._forget_kept_state()
        view._alone = 0
        view._lockstep = None
        return view

    def _forget_kept_state(self) -> None:
        """No start token's state (:meth:`_start_state`: its key/value cache and next-token
        log-softmax), no kept prefix state (:meth:`_fixed_prefix_state`: prefix token ids -> state,
        most recently used last), evaluation counts at 0 (:meth:`evaluation_counts`)."""
        self._start = None
        self._fixed_prefix_states = {}
        self._fixed_counts = {"sweep": 0, "next_word": 0, "bounded": 0}

    def with_layout(self, layout: str) -> "CausalScorer":
        """A view of this scorer (the same model, tokenizer and score cache) that lays its rows out
        as ``layout`` says (:data:`LAYOUTS`; the spec option ``layout=``), its start token's state
        computed again for the model as it is then (e.g. after ``model.double()``)."""
        check_layout(layout)
        view = self._view()
        view.layout = layout
        view._packs = False if layout == "padded" else (self._packs if self.layout == "auto" else None)
        return view

    def _token_logprobs64(self, logits, targets):
        """log p(target) per position for sentence scores: as :meth:`_token_logprobs`, but read out
        in float64 when the logits are bfloat16/float16 (their few mantissa bits would otherwise
        round the log-sum-exp)."""
        if logits.dtype in (self._torch.float16, self._torch.bfloat16):
            logits = logits.double()
        return self._token_logprobs(logits, targets)

    def _token_logprobs(self, logits, targets):
        """log p(target) per position: gathered logit minus log-sum-exp (float32 or wider)."""
        if logits.dtype in (self._torch.float16, self._torch.bfloat16):
            logits = logits.float()
        picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        return picked - logits.logsumexp(-1)

    # ------------------------------------------------------------------------------- scoring
    def _batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Length-sorted batches: ``batch_size`` sentences, or the token budget when one is set."""
        if self.max_tokens_per_batch:
            return length_sorted_batches(lengths, self._count_cap, self.max_tokens_per_batch)
        return length_sorted_batches(lengths, self.batch_size)

    def plan_batches(self, sentences: Sequence[str]) -> list[list[int]]:
        """The batches :meth:`_score_unique` forms for ``sentences`` (indices into them)."""
        return self._batches([len(s) - 1 for s in self.encode(sentences)])

    def _score_ids(self, seqs: list[list[int]], desc: str = "scoring") -> np.ndarray:
        """Sum of log p(token | previous) over tokens 1.. of each id sequence (float64).

        A batch of :meth:`_batches` (over the fed lengths) feeds every token but the last of each
        sequence.  When :attr:`packs`, the start token runs once (:meth:`_start_state`) and the
        batch's sequences after it are packed into rows that share its key/value cache, so no
        padding and no second start token is fed; else they are right-padded."""
        torch = self._torch
        from ..progress import progress_bar

        out = np.empty(len(seqs), dtype=np.float64)
        batches = self._batches([len(s) - 1 for s in seqs])
        self.model  # noqa: B018 - load the weights first: their loading bar is not nested in ours
        packed = self.packs
        bar = progress_bar(total=len(seqs), desc=f"{self.name}: {desc}", unit="sent",
                           disable=not self.progress, leave=False)
        with torch.inference_mode(), self._canonical():
            for batch in batches:
                chosen = [seqs[i] for i in batch]
                try:
                    if packed and all(s[0] == self.start_id for s in chosen):
                        cache, next_lp = self._start_state()
                        out[batch] = self._continuation_totals(cache, 1, next_lp, [s[1:] for s in chosen], wide=True)
                    else:
                        out[batch] = self._padded_sums(chosen)
                except IndexError as exc:  # learned absolute positions end at the context length
                    limit = self.context_length()
                    longest = max(len(s) for s in chosen)
                    if limit is None or longest - 1 <= limit:
                        raise
                    raise ValueError(
                        f"model {self.name}: a text of {longest} tokens (start token included) "
                        f"is longer than the model's context of {limit} tokens, which it cannot score"
                    ) from exc
                bar.update(len(batch))
        bar.close()
        return out

    @contextlib.contextmanager
    def _canonical(self):
        """Within: canonical scores, whose passes run alone in a lockstep (:meth:`_run_model`)."""
        self._alone += 1
        try:
            yield
        finally:
            self._alone -= 1

    def _padded_sums(self, seqs: list[list[int]]) -> np.ndarray:
        """Scores of one batch, right-padded (every token but the last fed)."""
        ids, mask = self._pad(seqs)
        logits = self._forward(ids[:, :-1], mask[:, :-1])
        tok = self._token_logprobs64(logits, ids[:, 1:]).double() * mask[:, 1:]
        return tok.sum(-1).cpu().numpy()

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        return self._score_ids(self.encode(sentences))

    def token_logprobs(self, sentence: str) -> list[tuple[str, float]]:
        """(token, natural-log probability) of each token of one sentence, for inspection."""
        torch = self._torch
        (sent,) = validate_sentences([sentence])
        (seq,) = self.encode([sent])
        ids, mask = self._pad([seq])
        with torch.inference_mode():
            if self.packs:  # as the sentence is scored alone: right-padded after the start token's cache
                cache, next_lp = self._start_state()
                rest = (self._padded_rest(cache, 1, [seq[1:]], self._token_logprobs64)[0].cpu().numpy()
                        if len(seq) > 2 else [])
                lp = np.concatenate([[float(next_lp[seq[1]])], rest])
            else:
                logits = self._forward(ids[:, :-1], mask[:, :-1])
                lp = self._token_logprobs64(logits, ids[:, 1:])[0].double().cpu().numpy()
        toks = self.tokenizer.convert_ids_to_tokens(seq[1:])
        return list(zip(toks, lp.tolist()))


def from_spec(target: str, options: dict[str, str], load: LoadSettings) -> CausalScorer:
    """Factory of ``hf-causal:<target>?start=<token>&revision=<rev>&device_map=auto&max_memory=...&layout=padded``
    (target: Hub id, folder or short name)."""
    from . import offline

    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for hf-causal; accepted: {sorted(OPTION_KEYS)}")
    start = options.get("start")
    path: str | Path = target
    name = target
    if target in offline.OFFLINE_MODELS:
        path = offline.model_dir(target, progress=load.options.progress)
        packaged = offline.OFFLINE_MODELS[target].start_token
        if start is None and recorded_start_token(path) != packaged:
            start = packaged  # else the folder's marker gives it (and the scorer defers its checks)
    spec = format_spec(load.kind, target, options)
    run = load.options
    return CausalScorer(
        path, start=start, device=run.device, dtype=run.dtype, batch_size=run.batch_size, cache=run.cache,
        progress=run.progress, spec=spec, name=name, revision=options.get("revision"),
        device_map=options.get("device_map"), max_memory=parse_max_memory(options.get("max_memory")),
        max_tokens_per_batch=run.max_tokens_per_batch, layout=options.get("layout", "auto"),
    )
