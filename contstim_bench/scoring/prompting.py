"""Plausibility by prompting a causal LM (Kauf et al. 2024, Table 2): ``prompt:<model>?template=``.

The four zero-shot prompts of Table 2 (wording of the table, line breaks as in the authors'
``utils/make_prompts.py``), each ending in ``Answer:``.  No text is sampled: every answer
option is scored by its log-probability as the continuation of the prompt (``" 1"``, ``" Yes"``,
...; natural logs, summed over the option's tokens, almost always one token).

========================  ====================  =========================================
template                  answers               score
========================  ====================  =========================================
``sentence-choice-1``     ``1`` / ``2``         pair only: :meth:`PromptScorer.choose`
                                                ``(a, b) = log p(1) - log p(2)``, the
                                                log-odds that ``a`` is the more plausible
``sentence-choice-2``     ``Yes`` / ``No``      ``log p(Yes) - log p(No)``
``likert``                ``1`` ... ``7``       expected rating, sum_k k p(k) / sum_k p(k)
``sentence-judgment``     ``Yes`` / ``No``      ``log p(Yes) - log p(No)``
========================  ====================  =========================================

A "sentence score" of a single-sentence template is therefore *not* a log-probability of the
sentence but a plausibility score on its own scale: the log-odds of answering Yes (positive
means the model says Yes: Kauf et al.'s Sentence Judgment accuracy, chance 25%, counts an item
when the plausible sentence scores > 0 and the implausible one < 0), or the expected Likert
rating, which orders sentences like the paper's constrained generation (the arg-max rating,
available from :meth:`PromptScorer.answer_logprobs`) but without ties.  Comparing two
sentences by these scores is the paper's binary accuracy.

Chat template: Kauf et al. feed the raw prompt to base and instruction-tuned models alike (their
code formats no chat turns), so the default is ``chat=no``; ``chat=yes`` wraps the prompt (without
the trailing ``Answer:``) in the tokenizer's chat template as a user turn, opens the assistant
turn, and scores the bare labels (``Yes``, ``1``) as its first tokens.

``order=both`` (sentence-choice-1 only) averages the log-odds over the two presentation orders,
cancelling a preference for the answer "1"; the default ``order=given`` presents ``a`` first.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .base import cached_values, resolve_cache, validate_sentences

OPTION_KEYS = frozenset({"template", "chat", "order", "start"})


@dataclass(frozen=True)
class Template:
    """One prompt of Table 2: its text (``{s}`` or ``{a}``/``{b}``) and its answer labels."""

    name: str
    title: str  # as in the paper
    text: str  # ends with the question; "\n\nAnswer:" is appended for plain prompting
    labels: tuple[str, ...]
    pair: bool = False


TEMPLATES: dict[str, Template] = {
    "sentence-choice-1": Template(
        name="sentence-choice-1",
        title="Sentence Choice I",
        text=(
            "Here are two English sentences:\n\n1) {a} 2) {b} Which sentence is more plausible? "
            "Respond with either 1 or 2 as your answer."
        ),
        labels=("1", "2"),
        pair=True,
    ),
    "sentence-choice-2": Template(
        name="sentence-choice-2",
        title="Sentence Choice II",
        text=(
            "You are evaluating the plausibility of sentences. A sentence is completely plausible "
            "if the situation it describes commonly occurs in the real world. A sentence is "
            "completely implausible if the situation it describes never occurs in the real world. "
            "Tell me if the following sentence is plausible.\n\n{s} Respond with either Yes or No "
            "as your answer."
        ),
        labels=("Yes", "No"),
    ),
    "likert": Template(
        name="likert",
        title="Likert Scoring",
        text=(
            "You will be given a sentence. Your task is to read the sentence and rate how "
            "plausible it is.\nHere is the sentence: {s}\n\nHow plausible is this sentence?\n\n"
            "Respond with a number on a scale from 1 to 7 as your answer, with 1 meaning "
            '"is completely implausible", and 7 meaning "is completely plausible".'
        ),
        labels=("1", "2", "3", "4", "5", "6", "7"),
    ),
    "sentence-judgment": Template(
        name="sentence-judgment",
        title="Sentence Judgment",
        text=(
            "Here is a sentence:\n\n{s} Is this sentence plausible? Respond with either Yes or No "
            "as your answer."
        ),
        labels=("Yes", "No"),
    ),
}

ALIASES = {
    "sc1": "sentence-choice-1", "sentence-choice-i": "sentence-choice-1",
    "sc2": "sentence-choice-2", "sentence-choice-ii": "sentence-choice-2",
    "likert-scoring": "likert", "sj": "sentence-judgment",
}


def get_template(name: str) -> Template:
    """Template by name or alias; ValueError lists the valid names."""
    key = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    key = ALIASES.get(key, key)
    if key not in TEMPLATES:
        raise ValueError(f"unknown prompt template {name!r}; templates: {', '.join(TEMPLATES)}")
    return TEMPLATES[key]


def _flag(value: str, key: str) -> bool:
    v = str(value).strip().lower()
    if v in ("1", "yes", "true", "on"):
        return True
    if v in ("0", "no", "false", "off"):
        return False
    raise ValueError(f"option {key}={value!r} must be yes or no")


class PromptScorer:
    """Prompt-based plausibility from a :class:`~contstim_bench.scoring.causal.CausalScorer`.

    Not a log-probability scorer (it has no ``score``): it gives prompted judgments
    (:meth:`judge`, :meth:`choose_many`), the :class:`~contstim_bench.scoring.protocols.PromptedJudge`
    protocol.  Values are cached like sentence log-probabilities, under its own method name.
    """

    spec_typed: str = ""

    def __init__(self, lm, template: str, *, chat: bool = False, order: str = "given",
                 cache=None, progress: bool = True, spec: str | None = None):
        self.cache = resolve_cache(cache)
        self.progress = progress
        #: sentences and pairs actually sent to the model (not served from the cache)
        self.n_model_sentences = 0
        self.n_model_pairs = 0
        self.lm = lm
        self.template = get_template(template)
        self.chat = bool(chat)
        if order not in ("given", "both"):
            raise ValueError(f"option order={order!r} must be 'given' or 'both'")
        if order == "both" and not self.template.pair:
            raise ValueError(f"order=both applies to sentence-choice-1 only, not {self.template.name}")
        self.order = order
        if self.chat and not getattr(lm.tokenizer, "chat_template", None):
            raise ValueError(f"chat=yes but model {lm.name} has no chat template")
        self.spec = spec or f"prompt:{lm.spec}?template={self.template.name}"
        self.method = f"prompt:{self.template.name}:chat={'yes' if self.chat else 'no'}:order={order}"

    # ---------------------------------------------------------------------------- identity
    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(self.lm.fingerprint().encode())
        h.update(repr((self.template.text, self.template.labels, self.chat)).encode())
        return h.hexdigest()

    def describe(self) -> dict:
        d = self.lm.describe()
        d.update({"spec": self.spec, "spec_typed": self.spec_typed or self.spec, "method": self.method,
                  "fingerprint": self.fingerprint(),
                  "template": self.template.name, "chat": self.chat, "order": self.order})
        return d

    @property
    def labels(self) -> tuple[str, ...]:
        """Answer labels in the column order of :meth:`answer_logprobs`."""
        return self.template.labels

    # ----------------------------------------------------------------------------- prompts
    def render(self, **fields: str) -> str:
        """Full prompt text for ``s=`` (or ``a=``, ``b=``), chat-formatted when ``chat=yes``."""
        body = self.template.text.format(**fields)
        if not self.chat:
            return body + "\n\nAnswer:"
        return self.lm.tokenizer.apply_chat_template(
            [{"role": "user", "content": body}], tokenize=False, add_generation_prompt=True
        )

    def _answers(self, prompts: list[str]) -> np.ndarray:
        options = list(self.labels) if self.chat else [" " + x for x in self.labels]
        return self.lm.continuation_logprobs(prompts, options, add_start=not self.chat)

    def answer_logprobs(self, sentences: Sequence[str]) -> np.ndarray:
        """(n, n_labels) natural-log probabilities of each answer label (single-sentence templates)."""
        self._require_single()
        sents = validate_sentences(sentences)
        return self._answers([self.render(s=s) for s in sents])

    # ------------------------------------------------------------------------------ scores
    def _require_single(self) -> None:
        if self.template.pair:
            raise ValueError(
                f"template {self.template.name} compares two sentences: use choose(sentence_a, "
                f"sentence_b) (sentence scores exist for sentence-choice-2, likert, sentence-judgment)"
            )

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        self._require_single()
        lp = self._answers([self.render(s=s) for s in sentences])
        if self.template.name == "likert":
            p = np.exp(lp - lp.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            return p @ np.arange(1, 8, dtype=np.float64)
        return lp[:, 0] - lp[:, 1]  # log p(Yes) - log p(No)

    def judge(self, sentences: Sequence[str]) -> np.ndarray:
        """Per-sentence plausibility score of a single-sentence template (see module doc): not a
        log-probability of the sentence."""
        self._require_single()
        sents = validate_sentences(sentences)
        values, n = cached_values(self, self.cache, self.method, sents, self._score_unique, what="judgment")
        self.n_model_sentences += n
        return values

    def choose(self, sentence_a: str, sentence_b: str) -> float:
        """Log-odds that ``sentence_a`` is the more plausible: log p("1") - log p("2")."""
        return float(self.choose_many([(sentence_a, sentence_b)])[0])

    def choose_many(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """:meth:`choose` for many pairs (float64, cached like sentence scores)."""
        if not self.template.pair:
            raise ValueError(
                f"choose() needs the pair template sentence-choice-1, not {self.template.name}"
            )
        pairs = list(pairs)
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"pair {i} must be (sentence_a, sentence_b), got {pair!r}")
            validate_sentences(pair)

        def odds(keys: list[str]) -> np.ndarray:
            ab = [tuple(k.split("\x1f")) for k in keys]
            lp = self._answers([self.render(a=a, b=b) for a, b in ab])
            out = lp[:, 0] - lp[:, 1]
            if self.order == "both":
                lp2 = self._answers([self.render(a=b, b=a) for a, b in ab])
                out = 0.5 * (out + (lp2[:, 1] - lp2[:, 0]))
            return out

        values, n = cached_values(self, self.cache, self.method, [f"{a}\x1f{b}" for a, b in pairs], odds,
                                  what="choice log-odds")
        self.n_model_pairs += n
        return values


def from_spec(target: str, options: dict[str, str], *, kind: str = "prompt", device=None,
              dtype=None, batch_size=None, cache=None, progress: bool = True) -> PromptScorer:
    """Factory of ``prompt:<causal model>?template=NAME[&chat=yes][&order=both][&start=TOK]``.

    ``<causal model>``: an offline short name, a Hub id or folder, or an ``hf-causal:`` spec.
    """
    from . import causal
    from .registry import parse_spec

    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for prompt; accepted: {sorted(OPTION_KEYS)}")
    if "template" not in options:
        raise ValueError(f"prompt:{target} needs ?template=NAME with NAME one of {', '.join(TEMPLATES)}")
    template = get_template(options["template"])
    inner_target, inner_opts = target, {}
    if ":" in target.split("?")[0]:
        inner_kind, inner_target, inner_opts = parse_spec(target)
        if inner_kind != "hf-causal":
            raise ValueError(f"prompt: needs a causal model, not {inner_kind}: ({target!r})")
    if "start" in options:
        inner_opts = {**inner_opts, "start": options["start"]}
    lm = causal.from_spec(inner_target, inner_opts, kind="hf-causal", device=device, dtype=dtype,
                          batch_size=batch_size, cache=False, progress=progress)
    chat = _flag(options.get("chat", "no"), "chat")
    spec = f"prompt:{target}?" + "&".join(f"{k}={v}" for k, v in sorted(options.items()))
    return PromptScorer(lm, template.name, chat=chat, order=options.get("order", "given"),
                        cache=cache, progress=progress, spec=spec)
