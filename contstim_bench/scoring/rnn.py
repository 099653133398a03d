"""Word-level RNN and LSTM language models (``rnn:<dir>`` / ``lstm:<dir>``): training and scoring.

The architecture follows Golan et al. 2023 (Methods, "Recurrent neural network models") and the
original contstimlang code: a word embedding of 256 features, one recurrent layer with a
512-feature hidden state (``nn.RNN`` with ReLU for ``rnn``, ``nn.LSTM`` for ``lstm``) and a linear
read-out to the vocabulary, trained on next-word prediction with Adam at learning rate 0.002.

Sentences are split on whitespace.  Each sentence is framed by one boundary token ``</s>``
(the original code used ``.``): the model reads ``</s> w1 ... wn`` from a zero initial state
and predicts ``w1 ... wn </s>``, so a sentence's score is the **natural-log probability of its
words and of the end-of-sentence token**, float64.  Words outside the model's vocabulary are
mapped to ``<unk>`` and receive the probability of the ``<unk>`` class (trained on the corpus'
words dropped by ``max_vocab`` / ``min_count``; without such words ``<unk>`` is never a target
and its probability is small).

A checkpoint is a folder with ``model.safetensors`` (tensors only: loading never unpickles),
``vocab.json`` (the token list; index = id; ``<unk>`` = 0, ``</s>`` = 1) and ``config.json``
(architecture and training settings, per-epoch losses).
"""
from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np

from .base import hash_files, length_sorted_batches, LoadSettings, ScoreCache, Scorer
from .devices import describe_device_dtype, resolve_device, resolve_dtype
from .ngram import validate_sweep

if TYPE_CHECKING:
    from .rnn_net import WordLM

# torch is imported where a model is built, trained or run (and WordLM lives in .rnn_net), so that
# importing this module (``contstim models`` reads OPTION_KEYS) costs no torch import, as with
# every other model family

UNK = "<unk>"
BOUNDARY = "</s>"
KINDS = ("rnn", "lstm")
#: ``rnn:`` / ``lstm:`` specs take no options (checked by the registry)
OPTION_KEYS = frozenset()
FORMAT = "contstim-word-lm"
WEIGHTS_FILE = "model.safetensors"
VOCAB_FILE = "vocab.json"
CONFIG_FILE = "config.json"


@dataclass
class WordLMConfig:
    """Architecture of a word-level recurrent LM."""

    kind: str  # "rnn" or "lstm"
    vocab_size: int
    embed_size: int = 256
    hidden_size: int = 512
    num_layers: int = 1
    nonlinearity: str = "relu"  # RNN only (the original contstimlang RNN used ReLU)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"model kind must be one of {KINDS}, got {self.kind!r}")
        for name in ("vocab_size", "embed_size", "hidden_size", "num_layers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.nonlinearity not in ("relu", "tanh"):
            raise ValueError(f"nonlinearity must be relu or tanh, got {self.nonlinearity!r}")


# -- vocabulary and data ---------------------------------------------------------------------
def build_vocab(sentences: Sequence[Sequence[str]], max_vocab: int | None = None, min_count: int = 1) -> list[str]:
    """``[<unk>, </s>, words...]``: words by decreasing count (ties alphabetical), at most
    ``max_vocab`` of them, each seen at least ``min_count`` times."""
    if max_vocab is not None and (isinstance(max_vocab, bool) or not isinstance(max_vocab, int) or max_vocab < 1):
        raise ValueError(f"max_vocab must be a positive integer or None, got {max_vocab!r}")
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be a positive integer, got {min_count!r}")
    counts = Counter(w for s in sentences for w in s)
    for special in (UNK, BOUNDARY):
        if special in counts:
            raise ValueError(f"reserved token {special!r} occurs in the corpus")
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    if max_vocab is not None:
        words = words[:max_vocab]
    return [UNK, BOUNDARY, *words]


def _encode(words: Sequence[str], index: dict[str, int]) -> list[int]:
    unk = index[UNK]
    return [index.get(w, unk) for w in words]


# -- training ---------------------------------------------------------------------------------
@dataclass
class TrainSettings:
    """Training hyper-parameters (defaults: the paper's learning rate, Adam)."""

    epochs: int = 10
    batch_size: int = 64  # sentences per step
    lr: float = 0.002
    seed: int = 0
    clip: float = 1.0  # gradient-norm clipping
    max_steps: int | None = None  # stop after this many optimiser steps (None: all epochs)

    def __post_init__(self):
        for name in ("epochs", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.max_steps is not None and (not isinstance(self.max_steps, int) or self.max_steps < 1):
            raise ValueError(f"max_steps must be a positive integer or None, got {self.max_steps!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"learning rate must be positive, got {self.lr!r}")
        if not self.clip > 0:
            raise ValueError(f"clip must be positive, got {self.clip!r}")


@dataclass
class TrainResult:
    """A trained model with its vocabulary and loss history (mean cross-entropy, nats/token)."""

    model: WordLM
    vocab: list[str]
    settings: TrainSettings
    step_losses: list[float] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def train(
    sentences: Sequence[Sequence[str]],
    kind: str,
    *,
    settings: TrainSettings | None = None,
    max_vocab: int | None = None,
    min_count: int = 1,
    embed_size: int = 256,
    hidden_size: int = 512,
    num_layers: int = 1,
    device=None,
    progress: bool = True,
) -> TrainResult:
    """Train a word-level ``kind`` ("rnn"/"lstm") LM on tokenised sentences.

    Deterministic for a given seed on CPU: the initial weights and the per-epoch sentence order
    come from generators seeded with ``settings.seed`` (the global RNG is left untouched).
    """
    import torch
    from torch import nn

    from .rnn_net import WordLM, pad as _pad

    settings = settings or TrainSettings()
    sentences = [list(s) for s in sentences]
    if not sentences:
        raise ValueError("cannot train on an empty corpus")
    for i, s in enumerate(sentences):
        if not s:
            raise ValueError(f"sentence {i} of the corpus is empty")
    vocab = build_vocab(sentences, max_vocab=max_vocab, min_count=min_count)
    config = WordLMConfig(kind, len(vocab), embed_size, hidden_size, num_layers)
    dev = resolve_device(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(settings.seed)
        model = WordLM(config)
    model.to(dev)
    index = {w: i for i, w in enumerate(vocab)}
    b = index[BOUNDARY]
    data = [[b, *_encode(s, index), b] for s in sentences]
    gen = torch.Generator().manual_seed(settings.seed)
    opt = torch.optim.Adam(model.parameters(), lr=settings.lr)
    result = TrainResult(model, vocab, settings)
    n_batches = math.ceil(len(data) / settings.batch_size)
    total_steps = settings.epochs * n_batches
    if settings.max_steps is not None:
        total_steps = min(total_steps, settings.max_steps)
    bar = None
    if progress:
        from ..progress import progress_bar

        bar = progress_bar(total=total_steps, desc=f"train {kind}", unit="step")
    t0 = time.perf_counter()
    step = 0
    model.train()
    for _epoch in range(settings.epochs):
        order = torch.randperm(len(data), generator=gen).tolist()
        epoch_loss, epoch_tokens = 0.0, 0
        for start in range(0, len(order), settings.batch_size):
            if settings.max_steps is not None and step >= settings.max_steps:
                break
            batch = [data[i] for i in order[start : start + settings.batch_size]]
            inputs = _pad([s[:-1] for s in batch], b).to(dev)
            targets = _pad([s[1:] for s in batch], -100).to(dev)
            logits, _ = model(inputs)
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), settings.clip)
            opt.step()
            n_tok = int((targets != -100).sum())
            value = float(loss.detach())
            result.step_losses.append(value)
            epoch_loss += value * n_tok
            epoch_tokens += n_tok
            step += 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{value:.3f}")
        if epoch_tokens:
            result.epoch_losses.append(epoch_loss / epoch_tokens)
        if settings.max_steps is not None and step >= settings.max_steps:
            break
    if bar is not None:
        bar.close()
    model.eval()
    result.seconds = time.perf_counter() - t0
    return result


# -- checkpoints ------------------------------------------------------------------------------
def save_checkpoint(result: TrainResult, output_dir: str | os.PathLike, extra: dict | None = None) -> Path:
    """Write ``model.safetensors``, ``vocab.json`` and ``config.json`` into ``output_dir``."""
    import torch
    from safetensors.torch import save_file

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in result.model.state_dict().items()}
    save_file(state, str(out / WEIGHTS_FILE))
    (out / VOCAB_FILE).write_text(json.dumps(result.vocab, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    config = {
        "format": FORMAT,
        "version": 1,
        **asdict(result.model.config),
        "unk_token": UNK,
        "boundary_token": BOUNDARY,
        "training": {
            **asdict(result.settings),
            "steps": len(result.step_losses),
            "epoch_losses": result.epoch_losses,
            "final_step_loss": result.step_losses[-1] if result.step_losses else None,
            **(extra or {}),
        },
    }
    (out / CONFIG_FILE).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out


def load_checkpoint(path: str | os.PathLike, device=None, dtype=None) -> tuple[WordLM, list[str], dict]:
    """Load a checkpoint folder (tensors via safetensors, never a pickle): model, vocab, config."""
    from safetensors.torch import load_file

    from .rnn_net import WordLM

    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"RNN/LSTM checkpoint folder not found: {folder}")
    for name in (WEIGHTS_FILE, VOCAB_FILE, CONFIG_FILE):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"checkpoint {folder} lacks {name}")
    try:
        config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
        vocab = json.loads((folder / VOCAB_FILE).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"checkpoint {folder}: invalid JSON ({exc})") from exc
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise ValueError(f"{folder / CONFIG_FILE} is not a {FORMAT} config")
    if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab) or vocab[:2] != [UNK, BOUNDARY]:
        raise ValueError(f"{folder / VOCAB_FILE} must be a list of tokens starting with {UNK!r}, {BOUNDARY!r}")
    if len(set(vocab)) != len(vocab):
        raise ValueError(f"{folder / VOCAB_FILE} has duplicate tokens")
    arch = WordLMConfig(
        kind=config.get("kind"), vocab_size=config.get("vocab_size"), embed_size=config.get("embed_size"),
        hidden_size=config.get("hidden_size"), num_layers=config.get("num_layers"),
        nonlinearity=config.get("nonlinearity", "relu"),
    )
    if arch.vocab_size != len(vocab):
        raise ValueError(f"checkpoint {folder}: config vocab_size {arch.vocab_size} != {len(vocab)} tokens in {VOCAB_FILE}")
    model = WordLM(arch)
    try:
        tensors = load_file(str(folder / WEIGHTS_FILE), device="cpu")
    except Exception as exc:  # safetensors raises its own SafetensorError on malformed files
        raise ValueError(f"{folder / WEIGHTS_FILE} is not a valid safetensors file: {exc}") from exc
    try:
        model.load_state_dict(tensors, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"{folder / WEIGHTS_FILE} does not match config.json: {exc}") from exc
    model.to(device=resolve_device(device), dtype=resolve_dtype(dtype)).eval()
    return model, vocab, config


# -- scoring ----------------------------------------------------------------------------------
class RecurrentScorer(Scorer):
    """Natural-log sentence probabilities (words + end of sentence) from an RNN/LSTM checkpoint."""

    def __init__(
        self,
        checkpoint: str | os.PathLike,
        *,
        kind: str | None = None,
        device=None,
        dtype=None,
        batch_size: int | None = None,
        cache: ScoreCache | None | bool = None,
        progress: bool = True,
    ):
        folder = Path(checkpoint)
        model, vocab, config = load_checkpoint(folder, device=device, dtype=dtype)
        if kind is not None and kind != config["kind"]:
            raise ValueError(f"{kind}:{folder} is a {config['kind']} checkpoint; use {config['kind']}:{folder}")
        super().__init__(cache=cache, progress=progress)
        self.folder = folder
        self.model = model
        self.vocab = vocab
        self.config = config
        self.kind = config["kind"]
        self.method = self.kind
        self.spec = f"{self.kind}:{folder}"
        self.index = {w: i for i, w in enumerate(vocab)}
        self.boundary = self.index[BOUNDARY]
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = batch_size or 256
        self._fingerprint: str | None = None

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = hash_files(
                [self.folder / WEIGHTS_FILE, self.folder / VOCAB_FILE, self.folder / CONFIG_FILE],
                {"dtype": str(self.dtype).replace("torch.", "")},
            )
        return self._fingerprint

    def describe(self) -> dict:
        device, dtype = describe_device_dtype(self.device, self.dtype)
        return {**super().describe(), "device": device, "dtype": dtype}

    def known_words(self, words: Sequence[str]) -> list[bool]:
        """Whether the vocabulary holds each word (``<unk>`` and ``</s>`` are not words)."""
        return [w in self.index and w not in (UNK, BOUNDARY) for w in words]

    def encode(self, words: Sequence[str]) -> list[int]:
        """Vocabulary ids of ``words`` (out-of-vocabulary words -> ``<unk>``)."""
        return _encode(words, self.index)

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            return self._score_batches(sentences)

    def _score_batches(self, sentences: list[str]) -> np.ndarray:
        import torch

        from .rnn_net import pad as _pad

        seqs = [self.encode(s.split()) for s in sentences]
        batches = length_sorted_batches([len(s) for s in seqs], self.batch_size)
        out = np.empty(len(seqs), dtype=np.float64)
        it = batches
        if self.progress and len(batches) > 1:
            from ..progress import progress_bar

            it = progress_bar(batches, desc=f"{self.kind} {self.folder.name}", unit="batch", leave=False)
        b = self.boundary
        for batch in it:
            inputs = _pad([[b, *seqs[i]] for i in batch], b).to(self.device)
            targets = _pad([[*seqs[i], b] for i in batch], -1).to(self.device)
            logits, _ = self.model(inputs)
            logp = torch.log_softmax(logits, dim=-1)
            mask = targets >= 0
            picked = logp.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            sums = (picked.double() * mask).sum(dim=1)
            out[batch] = sums.cpu().numpy()
        return out

    def sweep(self, words: Sequence[str], position: int, candidates: Sequence[str], chunk_size: int | None = None) -> np.ndarray:
        """Natural-log probability of ``words`` with ``words[position]`` replaced by each candidate.

        Exact and batched: the words before the position are run once; the rest of the sentence
        is run for every distinct candidate id at once (in chunks bounded by memory), starting
        from the shared prefix state.  Out-of-vocabulary candidates score as ``<unk>``.
        """
        import torch

        with torch.inference_mode():
            return self._sweep(words, position, candidates, chunk_size)

    def _sweep(self, words, position, candidates, chunk_size) -> np.ndarray:
        import torch

        words, cands = validate_sweep(words, position, candidates)
        if not cands:
            return np.empty(0, dtype=np.float64)
        ids = self.encode(words)
        cand_ids = np.asarray(self.encode(cands), dtype=np.int64)
        uniq, inverse = np.unique(cand_ids, return_inverse=True)
        b = self.boundary

        prefix_in = torch.tensor([[b, *ids[:position]]], device=self.device)
        logits, state = self.model(prefix_in)
        logp = torch.log_softmax(logits[0], dim=-1).double()
        prefix = float(logp[torch.arange(position), torch.tensor(ids[:position], dtype=torch.long)].sum()) if position else 0.0
        first = logp[-1].cpu().numpy()[uniq]  # log p(candidate | prefix)

        rest = ids[position + 1 :]
        steps = len(rest) + 1
        targets = torch.tensor([*rest, b], device=self.device)
        vocab_size = len(self.vocab)
        if chunk_size is None:
            chunk_size = max(1, min(4096, (1 << 25) // (steps * vocab_size)))
        suffix = np.empty(len(uniq), dtype=np.float64)
        for lo in range(0, len(uniq), chunk_size):
            chunk = torch.as_tensor(uniq[lo : lo + chunk_size], device=self.device)
            n = len(chunk)
            inputs = torch.cat([chunk[:, None], torch.tensor([rest], dtype=torch.long, device=self.device).expand(n, -1)], dim=1)
            init = tuple(s.expand(-1, n, -1).contiguous() for s in state) if isinstance(state, tuple) else state.expand(-1, n, -1).contiguous()
            out, _ = self.model(inputs, init)
            lp = torch.log_softmax(out, dim=-1).gather(-1, targets.expand(n, -1).unsqueeze(-1)).squeeze(-1)
            suffix[lo : lo + n] = lp.double().sum(dim=1).cpu().numpy()
        return (prefix + first + suffix)[inverse]


def from_spec(target: str, options: dict[str, str], load: LoadSettings) -> RecurrentScorer:
    """Build a :class:`RecurrentScorer` from ``rnn:<checkpoint dir>`` or ``lstm:<checkpoint dir>``."""
    kind = load.kind
    if kind not in KINDS:
        raise ValueError(f"rnn.from_spec handles rnn: and lstm: specs, not {kind}:")
    if not target:
        raise ValueError(f"{kind}: spec needs a checkpoint folder, e.g. {kind}:models/{kind}")
    if options:
        raise ValueError(f"unknown {kind} option(s) {sorted(options)}; {kind}: specs take no options")
    return RecurrentScorer(target, kind=kind, device=load.options.device, dtype=load.options.dtype, batch_size=load.options.batch_size,
                           cache=load.options.cache, progress=load.options.progress)
