"""Causal (autoregressive) language models: ``hf-causal:<id, folder or offline short name>``.

The score of a sentence is the sum over its tokens of the **natural-log** probability of each
token given the tokens before it, *including the first token*, which is conditioned on the
model's start token: ``log p(w_1 .. w_n) = sum_i log p(w_i | <start>, w_1 .. w_{i-1})``.
The start token is, in order: ``?start=<token>``; the ``start_token`` recorded in the folder's
``contstim_offline.json`` (:data:`.offline.MARKER`: the offline models record the token they
were trained with, so ``hf-causal:<converted folder>`` scores exactly as the short name); the
tokenizer's BOS token; its EOS token (GPT-2 style models are trained with ``<|endoftext|>``
between documents).  No end-of-sentence token is scored.

Sentences are tokenised without special tokens, grouped into length-sorted batches, padded on
the right (with an attention mask, so real tokens keep their positions and never attend to the
padding) and run under :func:`torch.inference_mode`; per-token log-probabilities (logit minus
log-sum-exp, in float32 or better) are summed in float64.

For the synthetic-sentence search the module also offers :meth:`CausalScorer.sweep` (the
sentence with each candidate word at one position, the shared prefix computed once and its
key/value cache reused) and :meth:`CausalScorer.next_word_logprobs`.
"""
from __future__ import annotations

import copy
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .base import Scorer, ScoreCache, hash_files, length_sorted_batches, validate_sentences
from .devices import describe_device_dtype, resolve_device, resolve_dtype
from .offline import MARKER

OPTION_KEYS = frozenset({"start"})
DEFAULT_BATCH_SIZE = 32
_MIN_ROWS = 8  # see CausalScorer._forward
_FINGERPRINT_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
    "spiece.model",
    "added_tokens.json",
)


def _looks_like_path(target: str) -> bool:
    """A local path rather than a Hub id (``name`` or ``org/name``)."""
    return target.startswith((".", "/", "~")) or target.count("/") > 1 or "\\" in target


def _local_folder(target: str) -> Path:
    """Folder holding the model files: a local folder, or the Hub cache snapshot of an id."""
    path = Path(target).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise FileNotFoundError(
            f"hf-causal target {target} is a file; give the model folder (config.json, weights)"
        )
    if _looks_like_path(target):
        raise FileNotFoundError(f"model folder not found: {target}")
    from huggingface_hub import snapshot_download

    try:
        return Path(
            snapshot_download(
                target,
                allow_patterns=["*.json", "*.safetensors", "*.bin", "*.txt", "*.model"],
                ignore_patterns=["*onnx*", "*flax*", "*tf_model*", "*msgpack*", "*.h5"],
            )
        )
    except Exception as exc:  # offline without a cached copy, unknown repo, no network
        raise FileNotFoundError(
            f"model {target!r} is neither a local folder nor available from the Hugging Face "
            f"Hub cache ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        ) from None


def recorded_start_token(folder: Path) -> str | None:
    """The ``start_token`` recorded in ``folder/contstim_offline.json`` (a converted offline
    model), or None without that file; ValueError names a marker file that cannot be read."""
    marker = Path(folder) / MARKER
    if not marker.is_file():
        return None
    try:
        meta = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{marker}: not a readable JSON file ({exc})") from None
    start = meta.get("start_token") if isinstance(meta, dict) else None
    if start is None:
        return None
    if not isinstance(start, str) or not start:
        raise ValueError(f"{marker}: start_token must be a non-empty string, got {start!r}")
    return start


def _is_causal_lm_architecture(arch: str) -> bool:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    names = set()
    for value in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values():
        names.update(value if isinstance(value, (list, tuple)) else [value])
    return arch in names or arch.endswith("ForCausalLM") or arch.endswith("LMHeadModel")


def check_causal_config(folder: Path, name: str):
    """The model's config; ValueError when its architecture has no causal LM head."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(folder)
    archs = list(getattr(config, "architectures", None) or [])
    if archs and not any(_is_causal_lm_architecture(a) for a in archs):
        raise ValueError(
            f"model {name} has no causal LM head (architectures {archs}); hf-causal needs a "
            f"*ForCausalLM / *LMHeadModel checkpoint (masked LMs: use hf-masked:)"
        )
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(f"model {name} is an encoder-decoder model, not a causal LM")
    return config


def load_causal_lm(folder: Path, name: str, dtype, device):
    """``AutoModelForCausalLM`` from ``folder`` in eval mode; ValueError if it has no LM head."""
    from transformers import AutoModelForCausalLM

    config = check_causal_config(folder, name)
    try:
        model, info = AutoModelForCausalLM.from_pretrained(
            folder, dtype=dtype, output_loading_info=True
        )
    except ValueError as exc:
        if "Unrecognized configuration class" in str(exc):
            raise ValueError(
                f"model {name} ({type(config).__name__}) has no causal LM head; "
                f"hf-causal needs a causal LM (masked LMs: use hf-masked:)"
            ) from None
        raise
    missing = [k for k in info.get("missing_keys", []) if "lm_head" in k or "embed_out" in k]
    if missing and not getattr(model.config, "tie_word_embeddings", False):
        raise ValueError(f"model {name} has no trained LM head (missing weights {missing[:3]})")
    model.to(device)
    model.eval()
    return model


class CausalScorer(Scorer):
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
    ):
        super().__init__(cache=cache, progress=progress)
        import torch

        self.folder = _local_folder(str(model_path))
        self.name = name or str(model_path)
        self.spec = spec or f"hf-causal:{model_path}"
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype)
        self.batch_size = int(batch_size or DEFAULT_BATCH_SIZE)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        from transformers import AutoTokenizer

        check_causal_config(self.folder, self.name)
        self.tokenizer = AutoTokenizer.from_pretrained(self.folder)
        self._model = None  # loaded on first use: a run served from the cache never loads it
        self.start_token = start if start is not None else (
            recorded_start_token(self.folder) or self.tokenizer.bos_token or self.tokenizer.eos_token
        )
        if not self.start_token:
            raise ValueError(
                f"model {self.name}: the tokenizer has neither a BOS nor an EOS token; give the "
                f"start token with ?start=<token>"
            )
        vocab = self.tokenizer.get_vocab()
        if self.start_token not in vocab:
            raise ValueError(
                f"model {self.name}: start token {self.start_token!r} is not a single token of "
                f"its vocabulary"
            )
        self.start_id = int(vocab[self.start_token])
        self.pad_id = int(
            self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.start_id
        )
        self._fingerprint: str | None = None
        self._torch = torch

    @property
    def model(self):
        """The ``AutoModelForCausalLM`` (loaded on first access)."""
        if self._model is None:
            self._model = load_causal_lm(self.folder, self.name, self.dtype, self.device)
        return self._model

    # ----------------------------------------------------------------------------- identity
    def fingerprint(self) -> str:
        """sha256 of weights + config + tokenizer files, the start token and the dtype."""
        if self._fingerprint is None:
            files = sorted(
                p for p in self.folder.iterdir()
                if p.suffix in (".safetensors", ".bin") or p.name in _FINGERPRINT_FILES
            )
            self._fingerprint = hash_files(
                files, extra={"start": self.start_token, "dtype": str(self.dtype), "kind": "hf-causal"}
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
            }
        )
        return d

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
        ~1e-4 nats.  A batch of fewer than ``_MIN_ROWS`` token rows is therefore replicated to at
        least that many rows and the first copy returned, so that every forward pass uses the
        same kernels and scores do not depend on how sentences were batched.
        """
        torch = self._torch
        n = ids.shape[0]
        reps = -(-_MIN_ROWS // ids.numel()) if ids.numel() < _MIN_ROWS else 1
        if reps > 1:
            ids = ids.repeat(reps, 1)
            mask = mask.repeat(reps, 1)
            if cache is not None:
                if cache.get_seq_length() > 0:
                    _tile_cache(cache, reps)
        use_cache = want_cache or cache is not None
        out = self.model(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=use_cache)
        if want_cache:
            return out.logits[:n], out.past_key_values
        return out.logits[:n]

    def _token_logprobs(self, logits, targets):
        """log p(target) per position: gathered logit minus log-sum-exp (float32 or wider)."""
        if logits.dtype in (self._torch.float16, self._torch.bfloat16):
            logits = logits.float()
        picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        return picked - logits.logsumexp(-1)

    # ------------------------------------------------------------------------------- scoring
    def _score_ids(self, seqs: list[list[int]], desc: str = "scoring") -> np.ndarray:
        """Sum of log p(token | previous) over tokens 1.. of each id sequence (float64)."""
        torch = self._torch
        from tqdm.auto import tqdm

        out = np.empty(len(seqs), dtype=np.float64)
        batches = length_sorted_batches([len(s) for s in seqs], self.batch_size)
        bar = tqdm(total=len(seqs), desc=f"{self.name}: {desc}", unit="sent",
                   disable=not self.progress, file=None, leave=False)
        with torch.inference_mode():
            for batch in batches:
                ids, mask = self._pad([seqs[i] for i in batch])
                logits = self._forward(ids, mask)
                tok = self._token_logprobs(logits[:, :-1], ids[:, 1:]).double()
                tok = tok * mask[:, 1:]
                out[batch] = tok.sum(-1).cpu().numpy()
                bar.update(len(batch))
        bar.close()
        return out

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        return self._score_ids(self.encode(sentences))

    def token_logprobs(self, sentence: str) -> list[tuple[str, float]]:
        """(token, natural-log probability) of each token of one sentence, for inspection."""
        torch = self._torch
        (sent,) = validate_sentences([sentence])
        (seq,) = self.encode([sent])
        ids, mask = self._pad([seq])
        with torch.inference_mode():
            logits = self._forward(ids, mask)
            lp = self._token_logprobs(logits[:, :-1], ids[:, 1:])[0].double().cpu().numpy()
        toks = self.tokenizer.convert_ids_to_tokens(seq[1:])
        return list(zip(toks, lp.tolist()))

    # ------------------------------------------------------------------ shared-prefix scoring
    def _prefix_state(self, prefix: list[int]):
        """Run ``prefix`` once: (sum of its log-probs after the start token, cache, last logits)."""
        torch = self._torch
        ids = torch.tensor([prefix], dtype=torch.long, device=self.device)
        logits, cache = self._forward(ids, torch.ones_like(ids), want_cache=True)
        if _cache_batch(cache) > 1:  # _forward replicated the row
            cache.batch_select_indices(torch.tensor([0], device=self.device))
        lp = 0.0
        if len(prefix) > 1:
            lp = float(self._token_logprobs(logits[:, :-1], ids[:, 1:]).double().sum())
        return lp, cache, logits[:, -1]

    def _continuation_logprobs(
        self, prefix: list[int], conts: list[list[int]], desc: str
    ) -> tuple[float, np.ndarray]:
        """(log p(prefix tokens after the start token), log p(cont | prefix) per continuation).

        The prefix runs once; its key/value cache is copied and repeated across each batch of
        continuations, which are right-padded so that their positions follow the prefix's.
        An empty continuation scores 0.  float64 sums.
        """
        torch = self._torch
        from tqdm.auto import tqdm

        out = np.zeros(len(conts), dtype=np.float64)
        plen = len(prefix)
        with torch.inference_mode():
            prefix_lp, cache, last = self._prefix_state(prefix)
            last_lp = torch.log_softmax(last.float(), -1)[0]  # (V,): first continuation token
            nonempty = [i for i, c in enumerate(conts) if c]
            batches = length_sorted_batches([len(conts[i]) for i in nonempty], self.batch_size)
            bar = tqdm(total=len(nonempty), desc=f"{self.name}: {desc}", unit="cand",
                       disable=not self.progress, leave=False)
            for batch in batches:
                idx = [nonempty[i] for i in batch]
                ids, mask = self._pad([conts[i] for i in idx])
                total = last_lp[ids[:, 0]].double()
                if ids.shape[1] > 1:
                    batch_cache = copy.deepcopy(cache)
                    batch_cache.batch_repeat_interleave(len(idx))
                    ones = torch.ones((len(idx), plen), dtype=mask.dtype, device=self.device)
                    logits = self._forward(ids, torch.cat([ones, mask], 1), batch_cache)
                    rest = self._token_logprobs(logits[:, :-1], ids[:, 1:]).double() * mask[:, 1:]
                    total = total + rest.sum(-1)
                out[idx] = total.cpu().numpy()
                bar.update(len(idx))
            bar.close()
        return prefix_lp, out

    def _shared_prefix_scores(self, texts: list[str], desc: str) -> np.ndarray:
        """Whole-text log-probabilities of texts sharing a prefix, the common tokens run once.

        The shared prefix is the longest common prefix of the token ids (start token included),
        so the result equals scoring each text alone whatever the tokenizer does at the boundary.
        """
        seqs = self.encode(texts)
        n = min(len(s) for s in seqs)
        common = 1
        while common < n and all(s[common] == seqs[0][common] for s in seqs):
            common += 1
        prefix_lp, conts = self._continuation_logprobs(seqs[0][:common], [s[common:] for s in seqs], desc)
        return prefix_lp + conts

    def continuation_logprobs(
        self, prompts: Sequence[str], options: Sequence[str], *, add_start: bool = True
    ) -> np.ndarray:
        """log p(option | prompt) for every prompt x option: float64 array (n_prompts, n_options).

        The option text is appended to the prompt verbatim (give ``" Yes"`` for a space-separated
        answer).  The option's tokens are those of ``prompt + option`` after the prompt's own
        tokens.  When every option is a single token after every prompt (the usual case for
        answer labels such as " 1" or " Yes") all prompts run in length-sorted batches and the
        answers are read from the last position's next-token distribution; otherwise each prompt
        runs once and its key/value cache is shared by its options.  ``add_start=False`` leaves
        out the start token (for chat-formatted prompts that carry their own special tokens).
        """
        prompts = list(prompts)
        options = list(options)
        if not prompts or not options:
            raise ValueError("continuation_logprobs needs at least one prompt and one option")
        for i, o in enumerate(options):
            if not isinstance(o, str) or not o:
                raise ValueError(f"option {i} ({o!r}) must be a non-empty str")
        head = [self.start_id] if add_start else []
        enc = self.tokenizer
        prompt_ids = [head + x for x in enc(prompts, add_special_tokens=False)["input_ids"]]
        full = enc([p + o for p in prompts for o in options], add_special_tokens=False)["input_ids"]
        k = len(options)
        single = True
        targets: list[list[int]] = []
        for i, p_ids in enumerate(prompt_ids):
            row = []
            for j in range(k):
                f = head + full[i * k + j]
                if len(f) != len(p_ids) + 1 or f[: len(p_ids)] != p_ids:
                    single = False
                row.append(f[-1])
            targets.append(row)
        out = np.empty((len(prompts), k), dtype=np.float64)
        if single:
            out[:] = self._next_token_logprobs(prompt_ids, targets)
            return out
        torch = self._torch
        for i, p_ids in enumerate(prompt_ids):
            seqs = [head + full[i * k + j] for j in range(k)]
            n = min(len(x) for x in seqs)
            common = 0
            while common < n and all(x[common] == seqs[0][common] for x in seqs):
                common += 1
            common = max(common, 1)
            prefix_lp, conts = self._continuation_logprobs(
                seqs[0][:common], [x[common:] for x in seqs], "options"
            )
            if seqs[0][:common] == p_ids:
                out[i] = conts
            else:  # the options change the prompt's last tokens: subtract the prompt's score
                with torch.inference_mode():
                    base = self._score_ids([p_ids], "prompt")[0] if len(p_ids) > 1 else 0.0
                out[i] = prefix_lp + conts - base
        return out

    def _next_token_logprobs(self, seqs: list[list[int]], targets: list[list[int]]) -> np.ndarray:
        """log p(next token = t | seq) for each seq and each of its target ids (float64)."""
        torch = self._torch
        from tqdm.auto import tqdm

        out = np.empty((len(seqs), len(targets[0])), dtype=np.float64)
        bar = tqdm(total=len(seqs), desc=f"{self.name}: prompts", unit="prompt",
                   disable=not self.progress, leave=False)
        with torch.inference_mode():
            for batch in length_sorted_batches([len(x) for x in seqs], self.batch_size):
                ids, mask = self._pad([seqs[i] for i in batch])
                logits = self._forward(ids, mask)
                last = mask.sum(1) - 1
                rows = logits[torch.arange(len(batch), device=self.device), last].float()
                lp = torch.log_softmax(rows, -1)
                tgt = torch.tensor([targets[i] for i in batch], dtype=torch.long, device=self.device)
                out[batch] = lp.gather(1, tgt).double().cpu().numpy()
                bar.update(len(batch))
        bar.close()
        return out

    def sweep(self, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
        """log p(sentence with ``words[position]`` replaced by each candidate), float64.

        Sentences are the words joined by single spaces.  The tokens shared by every candidate
        sentence (the prefix before ``position``) are run once and their key/value cache reused,
        so the result equals :meth:`score` of each replaced sentence (up to float rounding)
        without the cost of re-running the prefix.  Not cached.
        """
        words = list(words)
        if not words:
            raise ValueError("sweep: empty word list")
        for i, w in enumerate(words):
            if not isinstance(w, str) or not w.strip() or any(ch.isspace() for ch in w):
                raise ValueError(f"sweep: word {i} ({w!r}) must be a non-empty str without spaces")
        if not 0 <= position < len(words):
            raise ValueError(f"sweep: position {position} outside 0..{len(words) - 1}")
        cands = _check_words(candidates, "candidate")
        texts = [" ".join(words[:position] + [c] + words[position + 1:]) for c in cands]
        return self._shared_prefix_scores(texts, "sweep")

    def next_word_logprobs(self, prefix_words: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """log p(candidate word | start token + prefix words), summed over the word's tokens.

        Computed as log p(prefix + " " + word) - log p(prefix) with the prefix run once (exactly
        the sum over the candidate's tokens when the tokenizer splits at the space).  An empty
        prefix gives the probability of the word as the first word of a sentence.
        """
        prefix_words = list(prefix_words)
        for i, w in enumerate(prefix_words):
            if not isinstance(w, str) or not w.strip():
                raise ValueError(f"next_word_logprobs: prefix word {i} ({w!r}) is not a non-empty str")
        cands = _check_words(candidates, "candidate")
        prefix_text = " ".join(prefix_words)
        texts = [f"{prefix_text} {c}" if prefix_text else c for c in cands]
        if not prefix_text:
            return self._shared_prefix_scores(texts, "next word")
        (p_ids,) = self.encode([prefix_text])
        seqs = self.encode(texts)
        if all(len(x) > len(p_ids) and x[: len(p_ids)] == p_ids for x in seqs):
            # the usual case: the word's tokens follow the prefix's tokens unchanged
            return self._continuation_logprobs(p_ids, [x[len(p_ids):] for x in seqs], "next word")[1]
        totals = self._shared_prefix_scores(texts, "next word")
        return totals - self._score_ids([p_ids], "prefix")[0]


def _cache_batch(cache) -> int:
    for layer in cache.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            return int(layer.keys.shape[0])
    return 0


def _tile_cache(cache, reps: int) -> None:
    """Repeat a key/value cache ``reps`` times along the batch (copies 0..B-1, 0..B-1, ...)."""
    for layer in cache.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            layer.keys = layer.keys.repeat(reps, *([1] * (layer.keys.dim() - 1)))
            layer.values = layer.values.repeat(reps, *([1] * (layer.values.dim() - 1)))


def _check_words(candidates, what: str) -> list[str]:
    if isinstance(candidates, str):
        raise TypeError(f"expected a sequence of {what} words, got a single str")
    out = list(candidates)
    if not out:
        raise ValueError(f"no {what} words given")
    for i, c in enumerate(out):
        if not isinstance(c, str):
            raise TypeError(f"{what} {i} is {type(c).__name__}, not str: {c!r}")
        if not c.strip() or any(ch.isspace() for ch in c):
            raise ValueError(f"{what} {i} ({c!r}) must be a non-empty word without spaces")
    return out


def from_spec(
    target: str,
    options: dict[str, str],
    *,
    kind: str = "hf-causal",
    device=None,
    dtype=None,
    batch_size: int | None = None,
    cache=None,
    progress: bool = True,
) -> CausalScorer:
    """Factory of ``hf-causal:<target>?start=<token>`` (target: Hub id, folder or short name)."""
    from . import offline

    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for hf-causal; accepted: {sorted(OPTION_KEYS)}")
    start = options.get("start")
    path: str | Path = target
    name = target
    if target in offline.OFFLINE_MODELS:
        path = offline.model_dir(target, progress=progress)
        start = start or offline.OFFLINE_MODELS[target].start_token
    spec = f"{kind}:{target}" + (f"?start={options['start']}" if "start" in options else "")
    return CausalScorer(
        path, start=start, device=device, dtype=dtype, batch_size=batch_size, cache=cache,
        progress=progress, spec=spec, name=name,
    )
