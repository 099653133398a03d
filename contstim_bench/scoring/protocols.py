"""What a scorer can do, as explicit protocols (checked with ``isinstance``, never ``hasattr``).

Every model family implements :class:`LogProbScorer` except the prompted judges of
:mod:`contstim_bench.scoring.prompting`, which give plausibility judgments, not sentence
log-probabilities (:class:`PromptedJudge`).  The synthetic-sentence search asks for the
cheaper abilities when a scorer has them:

===========================  ==========================================  =====================
protocol                     method                                      families
===========================  ==========================================  =====================
:class:`LogProbScorer`       ``score(sentences)`` -> log p per sentence   all but ``prompt:``
:class:`VocabularySweep`     ``sweep(words, position, candidates)``       kenlm, rnn, lstm,
                                                                         hf-causal
:class:`NextWordScorer`      ``next_word_logprobs(prefix, candidates)``   hf-causal
:class:`LazySweep`           ``prefix_sweep``, ``first_token_logprobs``   hf-causal
:class:`LockstepScorer`      ``lockstep_view(lockstep)``                  hf-causal
:class:`WordCompletion`      ``word_completion_logprobs(sentence, ...)``  hf-masked
:class:`PromptedJudge`       ``judge(sentences)``, ``choose_many(pairs)``  prompt
:class:`ContextLimited`      ``context_length()``, ``token_lengths(...)``  hf-causal, hf-masked
:class:`SentenceLookup`      ``can_score(sentences)`` -> bool per sentence  precomputed
:class:`Tokenized`           ``tokenizer`` (a fast Hugging Face one)      hf-causal, hf-masked
:class:`PLLTokenScorer`      ``pll_token_logprobs(sentences, method)``    hf-masked
:class:`WordVocabulary`      ``known_words(words)`` -> bool per word      kenlm, rnn, lstm
===========================  ==========================================  =====================

A :class:`SentenceLookup` is a log-probability scorer that only *looks up* stored values (the
reference models' published log-probabilities): it scores the sentences it has and no other, so
it can select natural pairs from a pool it covers but cannot take part in the synthetic search.

All values are float64 natural-log probabilities (a judgment: log-odds or the most probable rating).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Described(Protocol):
    """Anything that scores: identity and provenance for cache keys and result files."""

    spec: str
    method: str
    n_model_sentences: int

    def fingerprint(self) -> str:
        """Stable id of the exact model (weights or file hash plus the settings that change values)."""

    def describe(self) -> dict:
        """Provenance for result files: spec, spec_typed, method, fingerprint, dtype, device, ..."""


@runtime_checkable
class LogProbScorer(Described, Protocol):
    """Sentences -> natural-log probabilities (float64, one per sentence, input order)."""

    def score(self, sentences: Sequence[str]) -> np.ndarray:
        """log p(sentence) in nats for each sentence; deterministic and cached."""


@runtime_checkable
class VocabularySweep(Protocol):
    """Exact log-probabilities of a sentence with one word replaced by every candidate."""

    def sweep(self, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
        """log p(words with ``words[position]`` := c) for each candidate c (nats, float64)."""


@runtime_checkable
class NextWordScorer(Protocol):
    """Conditional log-probability of each candidate word after a prefix (causal LMs)."""

    def next_word_logprobs(self, prefix_words: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """log p(c | prefix) summed over c's tokens, for each candidate c (nats, float64)."""


@runtime_checkable
class LazySweep(Protocol):
    """Sweeps and next-word values whose every value is independent of the other candidates
    scored with it (the prefix before the position is always the same), plus cheap upper
    bounds: what the lazy synthetic search needs to score candidates a few at a time."""

    def prefix_sweep(self, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
        """log p(words with ``words[position]`` := c) for each candidate c (nats, float64)."""

    def prefix_next_word_logprobs(self, prefix_words: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """log p(c | prefix) summed over c's tokens, for each candidate c (nats, float64)."""

    def first_token_logprobs(self, prefix_words: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """Upper bounds of :meth:`prefix_next_word_logprobs` (nats, float64; +inf = no bound)."""

    def next_word_bounds(self, prefix_words: Sequence[str], candidates: Sequence[str],
                         floor: float) -> tuple[np.ndarray, np.ndarray]:
        """``(values, exact)``: next-word values where ``exact`` (every value that may reach
        ``floor``), upper bounds below ``floor`` elsewhere (nats, float64)."""

    def sweep_upper_bounds(self, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
        """Upper bounds of :meth:`prefix_sweep` (nats, float64; +inf = no bound)."""

    def sweep_at_least(self, words: Sequence[str], position: int, candidates: Sequence[str],
                       threshold: float, margin: float | None = None) -> np.ndarray:
        """Whether each :meth:`prefix_sweep` value is >= ``threshold``: 1.0, 0.0 or nan (not
        decided, or within ``margin`` nats of it: compute the value), usually without scoring
        every token."""

    def evaluation_counts(self) -> dict[str, int]:
        """How many values ``prefix_sweep`` (``sweep``) and ``prefix_next_word_logprobs``
        (``next_word``) have computed with the model so far, and how many sentences
        ``sweep_at_least`` has run (``bounded``)."""


@runtime_checkable
class WordCompletion(Protocol):
    """Log-probability of each candidate filling one word slot, the rest of the sentence given
    (masked LMs; the regressor of Golan et al. Eq. 3)."""

    def word_completion_logprobs(self, sentence: str, position: int, candidates: Sequence[str]) -> np.ndarray:
        """log p(word ``position`` = c | the other words) for each candidate c (nats, float64)."""


@runtime_checkable
class ContextLimited(Protocol):
    """A model that reads at most a fixed number of tokens (its context); longer sentences are
    scored beyond what it was trained on, or not at all."""

    def context_length(self) -> int | None:
        """The most tokens one input may have (special and start tokens included); None: unknown."""

    def token_lengths(self, sentences: Sequence[str]) -> list[int]:
        """Tokens each sentence occupies in the model's input (special and start tokens included)."""


@runtime_checkable
class Tokenized(Protocol):
    """A model that reads subword tokens of a fast Hugging Face tokenizer (token counts, the
    out-of-vocabulary ratio of Kauf & Ivanova 2023)."""

    tokenizer: object


@runtime_checkable
class StartTokenModel(Protocol):
    """A causal model loaded from a local folder that conditions every sentence on one start
    token (``hf-causal``): what another harness needs to score sentences the same way (the
    folder, and the start token's id as its prefix token)."""

    folder: object
    start_token: str | None

    @property
    def start_id(self) -> int:
        """Vocabulary id of the start token."""


@runtime_checkable
class PLLTokenScorer(Protocol):
    """A masked LM's per-token log-probabilities under a PLL read-out (Kauf & Ivanova 2023)."""

    def pll_token_logprobs(self, sentences: Sequence[str], method: str | None = None) -> list:
        """One :class:`~.word_pieces.TokenLogprobs` per sentence (content tokens, natural log)."""


@runtime_checkable
class WordVocabulary(Protocol):
    """A word-level model with a closed vocabulary (n-gram, RNN/LSTM): a word outside it is
    scored as unknown, so a natural-sentence pool keeps only the words it knows (Golan et al.
    2023's pool, :mod:`contstim_bench.generate.pool`)."""

    def known_words(self, words: Sequence[str]) -> list[bool]:
        """For each word (as written, case-sensitive): whether the model's vocabulary holds it."""


@runtime_checkable
class PromptedJudge(Described, Protocol):
    """Zero-shot prompted plausibility judgments (Kauf et al. 2024, Table 2).

    ``template`` is the prompt (:class:`~contstim_bench.scoring.prompt_templates.Template`); a
    single-sentence template gives :meth:`judge` values, a pair template (Sentence Choice I, Word
    Comparison) gives :meth:`choose_many` log-odds."""

    template: object

    def judge(self, sentences: Sequence[str]) -> np.ndarray:
        """Plausibility of each sentence on the template's own scale (not a log-probability)."""

    def choose_many(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """The log-odds that a is more plausible for each pair (a, b): log p("1") - log p("2"), or
        log p(a's word) - log p(b's word) for Word Comparison."""


@runtime_checkable
class LockstepScorer(Protocol):
    """A scorer whose forward passes several searches can share (:mod:`.lockstep`)."""

    def lockstep_view(self, lockstep) -> "LockstepScorer":
        """A view for one task of ``lockstep``: the same model and values, its passes merged
        with the other tasks' (canonical scores run alone)."""


@runtime_checkable
class SentenceLookup(Protocol):
    """Stored log-probabilities of a fixed set of sentences (``precomputed:NAME``)."""

    def can_score(self, sentences: Sequence[str]) -> np.ndarray:
        """Boolean per sentence: True where a stored log-probability exists."""


def require_logprobs(scorer, purpose: str) -> LogProbScorer:
    """``scorer`` if it gives sentence log-probabilities; otherwise a ValueError that says so
    (a prompted judge gives plausibility judgments, which no log-probability benchmark uses)."""
    if isinstance(scorer, LogProbScorer):
        return scorer
    if isinstance(scorer, PromptedJudge):
        raise ValueError(f"{scorer.spec}: prompt scorers give plausibility judgments, not sentence "
                         f"log-probabilities; {purpose} needs a causal, masked, n-gram or RNN model")
    raise TypeError(f"{purpose} needs a log-probability scorer (a model spec or a Scorer), "
                    f"got {type(scorer).__name__}")
