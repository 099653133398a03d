"""What an lm-evaluation-harness backend returns, checked before it becomes a score.

Servers differ in what they return, and some return wrong numbers without an error: llama.cpp's
``llama-server`` returns no log-probabilities for the prompt (lm-eval then scores every
continuation 0.0), and a server that leaves out or adds a token shifts every value.  So nothing a
backend returns is used until:

* :func:`check_loglikelihoods`: ``loglikelihood`` gave one ``(log p, is_greedy)`` per request,
  each log p a finite real number below 0 (a sentence's natural-log probability; exactly 0.0,
  probability 1, is what a backend without prompt log-probabilities reports);
* :func:`watch_completions` (OpenAI-style completions backends, which report per-token values):
  every response carries one log-probability per prompt token plus the generated one, each a
  finite number at most 0, and the total lm-eval takes is their sum.

Any other answer raises :class:`BackendOutputError`, which names the backend and what it returned.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np


class BackendOutputError(RuntimeError):
    """A backend returned something that is not a sentence log-probability (named in the message)."""

    def __init__(self, backend: str, problem: str) -> None:
        super().__init__(f"lm-eval backend {backend!r} {problem}; no score was kept")
        self.backend = backend


def _short(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def check_loglikelihoods(answers: object, sentences: Sequence[str], backend: str) -> np.ndarray:
    """Float64 log-probabilities (nats, one per sentence, input order) from the answers of
    ``loglikelihood``; :class:`BackendOutputError` for a wrong count, an answer that is not a
    ``(log p, is_greedy)`` pair, a value that is not a finite real number, above 0 or exactly 0."""
    if not isinstance(answers, (list, tuple)):
        raise BackendOutputError(backend, f"returned {type(answers).__name__} {_short(answers)} instead of a list "
                                          "of (log-probability, is_greedy) pairs")
    if len(answers) != len(sentences):
        raise BackendOutputError(backend, f"returned {len(answers)} log-probabilities for {len(sentences)} "
                                          "sentences")
    out = np.empty(len(answers), dtype=np.float64)
    for i, (answer, sentence) in enumerate(zip(answers, sentences)):
        if not isinstance(answer, (list, tuple)) or len(answer) != 2:
            raise BackendOutputError(backend, f"returned {_short(answer)} for sentence {sentence!r}, not a "
                                              "(log-probability, is_greedy) pair")
        value = answer[0]
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise BackendOutputError(backend, f"returned {_short(value)} ({type(value).__name__}) as the "
                                              f"log-probability of sentence {sentence!r}, not a number")
        value = float(value)
        if not math.isfinite(value) or value > 0:
            raise BackendOutputError(backend, f"returned {value!r} as the log-probability of sentence {sentence!r}: "
                                              "a natural-log probability is finite and at most 0")
        if value == 0.0:
            raise BackendOutputError(backend, f"returned exactly 0.0 (probability 1) for sentence {sentence!r}: "
                                              "what a server that returns no log-probabilities for the prompt "
                                              "reports")
        out[i] = value
    return out


def _token_values(choice: object, n_tokens: int, ctxlen: int, backend: str) -> list[float]:
    """The continuation's per-token log-probabilities of one completions choice, checked."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(values, list):
        raise BackendOutputError(backend, f"returned no per-token log-probabilities for the prompt "
                                          f"(logprobs: {_short(logprobs)}); it does not echo prompt log-probabilities")
    if len(values) != n_tokens + 1:
        raise BackendOutputError(backend, f"returned {len(values)} token log-probabilities for a prompt of "
                                          f"{n_tokens} tokens and 1 generated token: its values cannot be aligned with the tokens sent")
    for position in range(ctxlen, n_tokens):
        value = values[position]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value > 0:
            raise BackendOutputError(backend, f"returned {_short(value)} as the log-probability of prompt token "
                                              f"{position}: a natural-log probability is finite and at most 0")
    return [float(v) for v in values[ctxlen:n_tokens]]


def watch_completions(parse: Callable, backend: str) -> Callable:
    """A replacement for an OpenAI-style completions backend's ``parse_logprobs(outputs, tokens,
    ctxlens)`` that checks each response (:func:`_token_values`) before ``parse`` reads it, and
    each total ``parse`` returns against the sum of the per-token values."""

    def checked(outputs=None, tokens=None, ctxlens=None, **kwargs):
        responses = outputs if isinstance(outputs, list) else [outputs]
        expected: list[float] = []
        for response in responses:
            choices = response.get("choices") if isinstance(response, dict) else None
            if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
                raise BackendOutputError(backend, f"returned a response without choices: {_short(response)}")
            if len(choices) != len(ctxlens or []) or len(tokens or []) != len(choices):
                raise BackendOutputError(backend, f"returned {len(choices)} choices for {len(ctxlens or [])} prompts")
            ordered = sorted(choices, key=lambda c: c.get("index", 0))
            for choice, prompt, ctxlen in zip(ordered, tokens, ctxlens):
                expected.append(math.fsum(_token_values(choice, len(prompt), ctxlen, backend)))
        answers = parse(outputs=outputs, tokens=tokens, ctxlens=ctxlens, **kwargs)
        if len(answers) != len(expected):
            raise BackendOutputError(backend, f"gave {len(answers)} totals for {len(expected)} prompts")
        for (total, _), want in zip(answers, expected):
            if not math.isclose(float(total), want, rel_tol=1e-9, abs_tol=1e-9):
                raise BackendOutputError(backend, f"gave the total {total!r} where its per-token log-probabilities "
                                                  f"add up to {want!r}")
        return answers

    return checked
