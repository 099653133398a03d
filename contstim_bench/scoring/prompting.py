"""Plausibility by prompting a causal LM (Kauf et al. 2024, Table 2 and Appendix F):
``prompt:<model>?template=``.

The four zero-shot prompts of Table 2 (wording of the table, line breaks as in the authors'
``utils/make_prompts.py``) and the two sensibility-judgment prompts of Appendix F, each ending in
``Answer:``.  The answer is read out in one of the two ways of Appendix C:

- **constrained** (the default, and what every score here is): only the allowed answers can be
  produced, and the answer is the *most probable* of them.  Every answer option is scored by its
  log-probability as the continuation of the prompt (``" 1"``, ``" Yes"``, ...; natural logs,
  summed over the option's tokens, almost always one token), no text is sampled.
- **free** (:meth:`PromptScorer.generate`): the model continues the prompt greedily for up to
  ``max_new_tokens`` (20, as the paper) tokens and the text is mapped to an answer by
  :func:`parse_answer` (exactly one allowed answer in it, else no valid answer).

========================  ====================  =========================================
template                  answers               constrained score
========================  ====================  =========================================
``sentence-choice-1``     ``1`` / ``2``         pair only: :meth:`PromptScorer.choose`
                                                ``(a, b) = log p(1) - log p(2)``, the
                                                log-odds that ``a`` is the more plausible
                                                (the constrained answer is "1" when > 0)
``sentence-choice-2``     ``Yes`` / ``No``      ``log p(Yes) - log p(No)``
``likert``                ``1`` ... ``7``       the most probable rating, argmax_k p(k)
``sentence-judgment``     ``Yes`` / ``No``      ``log p(Yes) - log p(No)``
``word-comparison``       the pair's two words  pair only (Table 7): :meth:`PromptScorer.choose`
                                                ``(a, b) = log p(word a) - log p(word b)``,
                                                each word the continuation of the prompt
                                                that ends with the sentences' shared prefix
``sense-judgment``        ``Yes`` / ``No``      Appendix F, no context: as sentence-judgment
``sense-judgment-context`` ``Yes`` / ``No``     Appendix F with a context:
                                                :meth:`PromptScorer.judge_in_context`
========================  ====================  =========================================

A "sentence score" of a single-sentence template is therefore *not* a log-probability of the
sentence but a plausibility score on its own scale: the log-odds of answering Yes (positive
means the model says Yes: Kauf et al.'s Sentence Judgment accuracy, chance 25%, counts an item
when the plausible sentence scores > 0 and the implausible one < 0), or the Likert rating the
constrained answer gives (an integer 1..7, so two sentences often tie; a tie is a miss of the
binary accuracy, as the paper compares ``good_generation > bad_generation``).  Comparing two
sentences by these scores is the paper's binary accuracy.

Where the package departs from the authors' code (``llm-plaus-prob``):

- The paper used ``outlines`` 0.0.13 for constrained generation, which *samples* the answer from
  the renormalised distribution over the allowed tokens with an unseeded generator; the package
  takes the most probable answer (the authors' own ``get_logprob_likert`` does the same), so
  results are deterministic.  Free generation is greedy for the same reason (theirs sampled).
- Free and constrained generation use the same Table 2 prompts here; the authors' generation
  runs (``run_generation_likert.py``) formatted theirs slightly differently (the sentence in
  quotes, ``Answer: `` with a trailing space, a longer instruction for Sentence Choice).
- A free answer is valid when the text holds exactly one number (or one Yes/No word) and it is an
  allowed answer; their parser also accepted numbers such as ``17`` that merely contain an
  allowed digit, and compared the answers as strings.
- Appendix F's prompts are worded as the paper prints them (the sentence and the context in
  quotes); the authors' run script instead put the context before the sentence inside the
  no-context prompt.

Chat template: Kauf et al. feed the raw prompt to base and instruction-tuned models alike (their
code formats no chat turns), so the default is ``chat=no``; ``chat=yes`` wraps the prompt (without
the trailing ``Answer:``) in the tokenizer's chat template as a user turn, opens the assistant
turn, and scores the bare labels (``Yes``, ``1``) as its first tokens.

``order=both`` (the pair templates only) averages the log-odds over the two presentation orders,
cancelling a preference for the answer "1" (or the first-listed word); the default
``order=given`` presents ``a`` first.  ``query=`` frames a Table 2 prompt by another query type
(Appendix C.2: ``makes-sense``, ``sounds-good``; :mod:`.prompt_templates`).
"""
from __future__ import annotations

from dataclasses import replace

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from .base import cached_values, LoadSettings, resolve_cache, validate_sentences
from .prompt_templates import (  # noqa: F401  (TEMPLATES re-exported: the prompts' public home was here)
    DEFAULT_QUERY,
    TEMPLATES,
    Template,
    get_template,
    word_continuations,
)

OPTION_KEYS = frozenset({"template", "chat", "order", "start", "query"})
FREE_MAX_NEW_TOKENS = 20
"""Tokens a free generation may produce (Kauf et al. 2024, Appendix C: "up to 20 tokens")."""


def parse_answer(template: Template, text: str) -> str | None:
    """The answer label a freely generated ``text`` gives, or None when it gives no valid answer.

    Valid (Appendix C: "responses that include a valid response"): the text holds exactly one
    number (numeric labels: ``1``/``2``, ``1``..``7``) or exactly one of the label words (Yes/No,
    any case, as whole words), and it is one of ``template.labels``.  ``"Answer: 7."`` -> ``"7"``;
    ``"3 or 4"``, ``"17"``, ``"Yes and no"`` -> None.
    """
    if not isinstance(text, str):
        raise TypeError(f"generated text must be a str, got {type(text).__name__}")
    if all(label.isdigit() for label in template.labels):
        found = re.findall(r"\d+", text)
        return found[0] if len(found) == 1 and found[0] in template.labels else None
    words = "|".join(re.escape(label) for label in template.labels)
    found = re.findall(rf"\b({words})\b", text, flags=re.IGNORECASE)
    if len(found) != 1:
        return None
    return next(label for label in template.labels if label.lower() == found[0].lower())


def most_probable(labels: Sequence[str], logprobs: np.ndarray) -> list[str]:
    """The constrained answer of each row of ``logprobs`` (n, len(labels)): the label of the
    largest log-probability (the first one on an exact tie)."""
    lp = np.asarray(logprobs, dtype=np.float64)
    if lp.ndim != 2 or lp.shape[1] != len(labels):
        raise ValueError(f"expected answer log-probabilities of shape (n, {len(labels)}), got {lp.shape}")
    return [labels[i] for i in lp.argmax(1)]


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
                 cache=None, progress: bool = True, spec: str | None = None, query: str | None = None):
        self.cache = resolve_cache(cache)
        self.progress = progress
        #: sentences and pairs actually sent to the model (not served from the cache)
        self.n_model_sentences = 0
        self.n_model_pairs = 0
        self.lm = lm
        self.template = get_template(template, query)
        self.chat = bool(chat)
        if order not in ("given", "both"):
            raise ValueError(f"option order={order!r} must be 'given' or 'both'")
        if order == "both" and not self.template.pair:
            raise ValueError(f"order=both applies to sentence-choice-1 and word-comparison only, not "
                             f"{self.template.name}")
        self.order = order
        if self.chat and not getattr(lm.tokenizer, "chat_template", None):
            raise ValueError(f"chat=yes but model {lm.name} has no chat template")
        self.spec = spec or f"prompt:{lm.spec}?template={self.template.name}"
        self.method = f"prompt:{self.template.name}:chat={'yes' if self.chat else 'no'}:order={order}"
        if self.template.name == "likert":  # the constrained answer, not the expected rating
            self.method += ":rating=most-probable"
        if self.template.query not in (None, DEFAULT_QUERY):  # the default keeps its cache keys
            self.method += f":query={self.template.query}"

    # ---------------------------------------------------------------------------- identity
    def fingerprint(self) -> str:
        """sha256 over what the judgments depend on besides :attr:`method` (the template's name,
        ``chat``, ``order``, the read-out), the other half of the cache key: the model's content
        fingerprint (weights, config and tokenizer files, start token, dtype), the template's
        text and labels, ``chat`` and, with ``chat=yes``, the chat template the tokenizer renders
        with, wherever transformers read it from (``chat_template.jinja``,
        ``tokenizer_config.json``, ...).  The model's generation config is not in it: only free
        generation (:meth:`generate`, never cached) reads it."""
        h = hashlib.sha256()
        h.update(self.lm.fingerprint().encode())
        h.update(repr((self.template.text, self.template.labels, self.chat)).encode())
        if self.chat:
            h.update(repr(self.lm.tokenizer.chat_template).encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def describe(self) -> dict:
        d = self.lm.describe()
        d.update({"spec": self.spec, "spec_typed": self.spec_typed or self.spec, "method": self.method,
                  "fingerprint": self.fingerprint(),
                  "template": self.template.name, "chat": self.chat, "order": self.order,
                  "query": self.template.query})
        return d

    @property
    def labels(self) -> tuple[str, ...]:
        """Answer labels in the column order of :meth:`answer_logprobs`."""
        if self.template.word_choice:
            raise ValueError("word-comparison has no fixed answer labels: each pair's two words are its answers "
                             "(use choose_many)")
        return self.template.labels

    # ----------------------------------------------------------------------------- prompts
    def render(self, **fields: str) -> str:
        """Full prompt text for the template's fields (``s=``; ``a=``, ``b=``; ``c=``, ``s=``),
        chat-formatted when ``chat=yes``."""
        if set(fields) != set(self.template.fields):
            raise ValueError(f"template {self.template.name} takes fields {self.template.fields}, "
                             f"got {tuple(sorted(fields))}")
        body = self.template.text.format(**fields)
        if not self.chat:
            return body + self.template.suffix
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

    def constrained_answers(self, items: Sequence) -> list[str]:
        """The constrained answer (the most probable allowed label) to each item: a sentence, a
        ``(a, b)`` pair (sentence-choice-1) or a ``(context, sentence)`` pair (with-context
        template).  Not cached: the cached scores (:meth:`judge`, :meth:`choose_many`) hold the
        same decision."""
        return most_probable(self.labels, self._answers(self._prompts(items)))

    def generate(self, items: Sequence, max_new_tokens: int = FREE_MAX_NEW_TOKENS) -> list[str]:
        """Free generation (Appendix C): the greedy continuation of each item's prompt, up to
        ``max_new_tokens`` tokens (stopping at the model's end-of-sequence token), as text.
        ``items`` as in :meth:`constrained_answers`; :func:`parse_answer` maps a text to a label."""
        from .generation import greedy_continuations

        self.labels  # noqa: B018  (word-comparison: no answer labels to parse a text into)
        return greedy_continuations(self.lm, self._prompts(items), max_new_tokens=max_new_tokens,
                                    add_start=not self.chat)

    def _prompts(self, items: Sequence) -> list[str]:
        """Prompts of ``items`` (see :meth:`constrained_answers`), each item checked."""
        items = list(items)
        fields = self.template.fields
        if fields == ("s",):
            return [self.render(s=s) for s in validate_sentences(items)]
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise TypeError(f"item {i} must be a pair {fields}, got {item!r}")
            validate_sentences(item)
            out.append(self.render(**dict(zip(fields, item))))
        return out

    # ------------------------------------------------------------------------------ scores
    def _require_single(self) -> None:
        if self.template.fields != ("s",):
            what, use = (("compares two sentences", "choose(sentence_a, sentence_b)") if self.template.pair
                         else ("judges a sentence in a context", "judge_in_context([(context, sentence), ...])"))
            raise ValueError(
                f"template {self.template.name} {what}: use {use} (sentence scores exist for "
                f"sentence-choice-2, likert, sentence-judgment, sense-judgment)"
            )

    def _values(self, lp: np.ndarray) -> np.ndarray:
        """Constrained score per row of answer log-probabilities: the most probable rating
        (likert), else log p(first label) - log p(second label)."""
        if self.template.name == "likert":
            return np.array([float(k) for k in most_probable(self.labels, lp)])
        return lp[:, 0] - lp[:, 1]  # log p(Yes) - log p(No)

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        self._require_single()
        return self._values(self._answers([self.render(s=s) for s in sentences]))

    def judge(self, sentences: Sequence[str]) -> np.ndarray:
        """Per-sentence plausibility score of a single-sentence template (see module doc): not a
        log-probability of the sentence."""
        self._require_single()
        sents = validate_sentences(sentences)
        values, n = cached_values(self, self.cache, self.method, sents, self._score_unique, what="judgment")
        self.n_model_sentences += n
        return values

    def judge_in_context(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """:meth:`judge` of a with-context template (``sense-judgment-context``) for
        ``(context, sentence)`` pairs: log p(Yes) - log p(No) (float64, cached)."""
        if self.template.fields != ("c", "s"):
            raise ValueError(f"judge_in_context() needs a with-context template, not {self.template.name}")
        pairs = list(pairs)
        self._prompts(pairs)  # checks every pair before anything runs

        def values(keys: list[str]) -> np.ndarray:
            return self._values(self._answers(self._prompts([tuple(k.split("\x1f")) for k in keys])))

        out, n = cached_values(self, self.cache, self.method, [f"{c}\x1f{s}" for c, s in pairs], values,
                               what="judgment")
        self.n_model_pairs += n
        return out

    def choose(self, sentence_a: str, sentence_b: str) -> float:
        """Log-odds that ``sentence_a`` is the more plausible: log p("1") - log p("2") (Sentence
        Choice I), log p(a's last words) - log p(b's) (Word Comparison)."""
        return float(self.choose_many([(sentence_a, sentence_b)])[0])

    def _word_odds(self, pairs: list[tuple[str, str]], listed_first: bool) -> np.ndarray:
        """Word Comparison: log p(word of a) - log p(word of b) after the prompt that lists a's
        word first (``listed_first``) or second, for each (a, b) (:func:`word_continuations`)."""
        prompts, options = [], []
        for a, b in pairs:
            prefix, wa, wb = word_continuations(a, b)
            shown = (wa, wb) if listed_first else (wb, wa)
            prompts.append(self.render(a=shown[0], b=shown[1], p=prefix))
            options.append([wa, wb] if self.chat else [" " + wa, " " + wb])
        lp = self.lm.continuation_logprobs(prompts, options, add_start=not self.chat)  # batched when 1-token words
        return lp[:, 0] - lp[:, 1]

    def choose_many(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """:meth:`choose` for many pairs (float64, cached like sentence scores)."""
        if not self.template.pair:
            raise ValueError(
                f"choose() needs a pair template (sentence-choice-1, word-comparison), not {self.template.name}"
            )
        pairs = list(pairs)
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"pair {i} must be (sentence_a, sentence_b), got {pair!r}")
            validate_sentences(pair)
            if self.template.word_choice:
                word_continuations(*pair)  # every pair checked before anything runs

        def odds(keys: list[str]) -> np.ndarray:
            ab = [tuple(k.split("\x1f")) for k in keys]
            if self.template.word_choice:
                out = self._word_odds(ab, True)
                return 0.5 * (out + self._word_odds(ab, False)) if self.order == "both" else out
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


def from_spec(target: str, options: dict[str, str], load: LoadSettings) -> PromptScorer:
    """Factory of ``prompt:<causal model>?template=NAME[&chat=yes][&order=both][&query=Q][&start=TOK]``.

    ``<causal model>``: an offline short name, a Hub id or folder, or an ``hf-causal:`` spec.
    """
    from . import causal
    from .spec import names_a_spec, parse_spec

    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for prompt; accepted: {sorted(OPTION_KEYS)}")
    if "template" not in options:
        raise ValueError(f"prompt:{target} needs ?template=NAME with NAME one of {', '.join(TEMPLATES)}")
    template = get_template(options["template"])
    inner_target, inner_opts = target, {}
    if names_a_spec(target):
        inner_kind, inner_target, inner_opts = parse_spec(target)
        if inner_kind != "hf-causal":
            raise ValueError(f"prompt: needs a causal model, not {inner_kind}: ({target!r})")
    if "start" in options:
        inner_opts = {**inner_opts, "start": options["start"]}
    lm = causal.from_spec(inner_target, inner_opts, replace(load, kind="hf-causal", options=replace(load.options, cache=False)))
    chat = _flag(options.get("chat", "no"), "chat")
    spec = f"prompt:{target}?" + "&".join(f"{k}={v}" for k, v in sorted(options.items()))
    return PromptScorer(lm, template.name, chat=chat, order=options.get("order", "given"),
                        cache=load.options.cache, progress=load.options.progress, spec=spec, query=options.get("query"))
