"""Cheap upper bounds and threshold decisions for the lazy synthetic search with a causal LM
(the ``LazySweep`` protocol's bounds), on the shared-prefix machinery of
:class:`.causal_prefix.SharedPrefixScoring`: :class:`PrefixBounds` is its base, and its methods
use the host's ``_memoized``, ``_prefix_ids``, ``_next_texts``, ``_fixed_prefix_state``,
``_forward`` and ``_torch``.  Also the key/value-cache helpers both modules use.
"""
from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from .base import length_sorted_batches
from .kv_cache import cache_batch


class PrefixBounds:
    """Upper bounds of next-word and sentence values, and decisions against a sentence
    threshold, that score a candidate's tokens only as far as the decision needs.  Their counts
    go to ``_fixed_counts``, declared and set by ``CausalScorer.__init__``."""

    _fixed_counts: dict[str, int]

    def next_word_bounds(self, prefix_words: Sequence[str], candidates: Sequence[str],
                         floor: float) -> tuple[np.ndarray, np.ndarray]:
        """``(values, exact)``: :meth:`prefix_next_word_logprobs` where ``exact``, which holds
        for every candidate whose value may reach ``floor``; elsewhere an upper bound below
        ``floor`` (the log-probability of the word's first tokens: the others only lower it).

        Words that share their first tokens share the forward passes of those tokens (a trie
        over the candidates' tokens, one row per distinct token prefix), so the words of a
        29,000-word vocabulary cost about as many rows as they have distinct first tokens.
        Exact values are kept for later calls.  float64 nats."""
        cands = candidate_words(candidates)
        prefix_words = list(prefix_words)
        prefix = self._prefix_ids(prefix_words)
        state = self._fixed_prefix_state(prefix)
        texts = self._next_texts(prefix_words, cands)
        conts = self._split(prefix, texts)
        memo = state["next_word"]
        values = np.empty(len(cands), dtype=np.float64)
        exact = np.ones(len(cands), dtype=bool)
        todo, whole = [], []
        first = state["next"].double().cpu().numpy()
        for i, (t, c) in enumerate(zip(texts, conts)):
            if t in memo:
                values[i] = memo[t]
            elif c is None:
                whole.append(i)
            elif len(c) == 1:
                values[i] = memo[t] = float(first[c[0]])
            else:
                todo.append(i)
        if whole:
            values[whole] = self.prefix_next_word_logprobs(prefix_words, [cands[i] for i in whole])
        if todo:
            sums, complete = self._trie_sums(prefix, state, [conts[i] for i in todo], floor)
            counts = self._fixed_counts
            counts["next_word"] += int(complete.sum())
            for i, v, ok in zip(todo, sums, complete):
                values[i] = v
                exact[i] = bool(ok)
                if ok:
                    memo[texts[i]] = float(v)
        return values, exact

    def _trie_sums(self, prefix: tuple[int, ...], state: dict, conts: list[list[int]],
                   floor: float) -> tuple[np.ndarray, np.ndarray]:
        """Log-probabilities of multi-token continuations after ``prefix`` summed token by token
        over a trie of their tokens, a continuation stopping once its partial sum is below
        ``floor``: ``(sums, complete)``."""
        torch = self._torch
        first = state["next"].double().cpu().numpy()
        sums = np.array([first[c[0]] for c in conts], dtype=np.float64)
        complete = np.zeros(len(conts), dtype=bool)
        alive = [i for i in range(len(conts)) if sums[i] >= floor]
        roots = sorted({conts[i][0] for i in alive})
        with torch.inference_mode():
            for start in range(0, len(roots), self.DECISION_ROWS):
                chunk = set(roots[start: start + self.DECISION_ROWS])
                members = [i for i in alive if conts[i][0] in chunk]
                keys = sorted({(conts[i][0],) for i in members})
                cache = copy.deepcopy(state["cache"])
                cache.batch_repeat_interleave(len(keys))
                mask = torch.ones((len(keys), len(prefix)), dtype=torch.long, device=self.device)
                depth = 1
                while keys:
                    rows = {k: r for r, k in enumerate(keys)}
                    ids = torch.tensor([[k[-1]] for k in keys], dtype=torch.long, device=self.device)
                    mask = torch.cat([mask, torch.ones((len(keys), 1), dtype=torch.long, device=self.device)], 1)
                    logits = self._forward(ids, mask, cache)
                    if cache_batch(cache) > len(keys):  # _forward replicated a small batch
                        cache.batch_select_indices(torch.arange(len(keys), device=self.device))
                    logp = torch.log_softmax(logits[:, -1].float(), -1).double().cpu().numpy()
                    still = []
                    for i in members:
                        c = conts[i]
                        sums[i] += logp[rows[tuple(c[:depth])], c[depth]]
                        if len(c) == depth + 1:
                            complete[i] = True
                        elif sums[i] >= floor:
                            still.append(i)
                    members = still
                    keys = sorted({tuple(conts[i][: depth + 1]) for i in members})
                    if keys:
                        parents = torch.tensor([rows[k[:-1]] for k in keys], dtype=torch.long, device=self.device)
                        cache.batch_select_indices(parents)
                        mask = mask[parents]
                    depth += 1
        return sums, complete

    def first_token_logprobs(self, prefix_words: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """Upper bounds of :meth:`prefix_next_word_logprobs` from the prefix's forward pass alone:
        the already computed value where there is one, else log p(the candidate's first token |
        prefix), which is at least the sum over all of its tokens (each term is <= 0, also in
        floating point); +inf (no bound) where the candidate's tokens do not extend the prefix's."""
        cands = candidate_words(candidates)
        prefix = self._prefix_ids(list(prefix_words))
        state = self._fixed_prefix_state(prefix)
        texts = self._next_texts(prefix_words, cands)
        conts = self._split(prefix, texts)
        first = self._torch.tensor([c[0] if c is not None else 0 for c in conts], dtype=self._torch.long,
                                   device=state["next"].device)
        out = state["next"][first].double().cpu().numpy()
        for i, (t, c) in enumerate(zip(texts, conts)):
            if t in state["next_word"]:
                out[i] = state["next_word"][t]
            elif c is None:
                out[i] = np.inf
        return out

    #: candidates :meth:`sweep_at_least` runs together (one token per row and step: wide batches)
    DECISION_ROWS = 256
    #: positions :meth:`sweep_at_least` feeds ``chunk`` at a time at the end of the continuations;
    #: the ones before run in one forward pass.  Measured on the synthesis bench (SmolLM2, a
    #: trigram): of 32 candidates with 6 positions to feed, 32, 32, 32, 31, 14 and 2 were still
    #: undecided at each position, so one pass per position cost twice the forward passes (each
    #: reads every weight) for the same rows
    DECISION_TAIL = 2

    def sweep_at_least(self, words: Sequence[str], position: int, candidates: Sequence[str], threshold: float,
                       margin: float | None = None, chunk: int = 1) -> np.ndarray:
        """Whether each :meth:`prefix_sweep` value is at least ``threshold``: 1.0 (yes), 0.0
        (no) or nan (too close to call, within ``margin`` (default :data:`BOUND_MARGIN`) of the
        threshold, or the candidate's tokens do not extend the prefix's: compute the value).

        The candidates' tokens run after the kept prefix, each candidate keeping its key/value
        cache, and a candidate stops as soon as its partial log-probability, an upper bound of
        the whole (the remaining tokens only lower it), falls below the threshold.  The
        threshold is a whole sentence's, so a partial sum rarely falls below it before the last
        few tokens: the first forward pass feeds every position but the last
        :data:`DECISION_TAIL`, and the rest run ``chunk`` at a time.  Kept values decide at once,
        and so do the partial sums of earlier calls: a sentence whose first tokens after the
        prefix were summed before (the same word at the same position, before a later word
        changed) is ruled out without running the model when that sum already falls below the
        threshold.  The decisions do not depend on the chunking (partial sums only decrease).
        float64."""
        cands = candidate_words(candidates)
        words = list(words)
        texts = self._sentences(words, position, cands)
        prefix = self._prefix_ids(words[:position])
        state = self._fixed_prefix_state(prefix)
        out = np.full(len(cands), np.nan)
        conts = self._split(prefix, texts)
        todo = []
        margin = self.BOUND_MARGIN if margin is None else float(margin)
        need = threshold - state["lp"]
        wide = margin + self.BOUND_MARGIN  # partial sums round differently from prefix_sweep
        chains = state["chain"]
        for i, (t, c) in enumerate(zip(texts, conts)):
            if t in state["sweep"]:
                v = state["sweep"][t]
                out[i] = 1.0 if v - margin >= threshold else 0.0 if v + margin < threshold else np.nan
                continue
            if c is None:
                continue
            # the longest run of its first tokens summed before (by an earlier call): an upper bound
            for j in range(len(c), 0, -1):
                known = chains.get(tuple(c[:j]))
                if known is not None:
                    break
            if known is not None and known + wide < need:
                out[i] = 0.0
            elif known is not None and j == len(c):
                out[i] = 1.0 if known - wide >= need else np.nan
            else:
                todo.append(i)
        counts = self._fixed_counts
        counts["bounded"] += len(todo)
        for batch in length_sorted_batches([len(conts[i]) for i in todo], max(self.batch_size, self.DECISION_ROWS)):
            rows = [todo[b] for b in batch]
            out[rows] = self._chunked_decisions(prefix, state, [conts[i] for i in rows], need, margin, chunk)
        return out

    def _chunked_decisions(self, prefix: tuple[int, ...], state: dict, conts: list[list[int]], need: float,
                           margin: float, chunk: int) -> np.ndarray:
        """:meth:`sweep_at_least` for one batch: 1.0 / 0.0 / nan per continuation, whether its
        log-probability after ``prefix`` is at least ``need``."""
        torch = self._torch
        n = len(conts)
        out = np.full(n, np.nan)
        first = torch.tensor([c[0] for c in conts], dtype=torch.long, device=state["next"].device)
        partial = state["next"][first].double().cpu().numpy()
        chains = state["chain"]
        for r, c in enumerate(conts):
            chains[(c[0],)] = float(partial[r])
        active = np.arange(n)
        fed = 0  # tokens of every active continuation run so far
        step = max(chunk, max(len(c) for c in conts) - 1 - self.DECISION_TAIL)  # the first pass
        cache = mask = None
        margin = margin + self.BOUND_MARGIN  # the partial sums round differently from prefix_sweep
        with torch.inference_mode():
            while True:
                keep = []
                for j, r in enumerate(active):
                    if partial[r] + margin < need:
                        out[r] = 0.0
                    elif fed >= len(conts[r]) - 1:  # every token's log-probability is in partial
                        out[r] = 1.0 if partial[r] - margin >= need else np.nan
                    else:
                        keep.append(j)
                if not keep:
                    return out
                if cache is None:
                    cache = copy.deepcopy(state["cache"])
                    cache.batch_repeat_interleave(len(keep))
                    mask = torch.ones((len(keep), len(prefix)), dtype=torch.long, device=self.device)
                elif len(keep) < len(active):
                    index = torch.tensor(keep, dtype=torch.long, device=self.device)
                    cache.batch_select_indices(index)
                    mask = mask[index]
                active = active[keep]
                ids = torch.full((len(active), step), self.pad_id, dtype=torch.long)
                fed_mask = torch.zeros((len(active), step), dtype=torch.long)
                targets = torch.zeros((len(active), step), dtype=torch.long)
                target_mask = torch.zeros((len(active), step), dtype=torch.float64)
                widths = []
                for j, r in enumerate(active):
                    c = conts[r]
                    seg = c[fed: min(fed + step, len(c) - 1)]  # the last token is never fed
                    ids[j, : len(seg)] = torch.tensor(seg)
                    fed_mask[j, : len(seg)] = 1
                    targets[j, : len(seg)] = torch.tensor(c[fed + 1: fed + 1 + len(seg)])
                    target_mask[j, : len(seg)] = 1.0
                    widths.append(len(seg))
                ids, fed_mask = ids.to(self.device), fed_mask.to(self.device)
                mask = torch.cat([mask, fed_mask], 1)
                logits = self._forward(ids, mask, cache)
                if cache_batch(cache) > len(active):  # _forward replicated a small batch
                    cache.batch_select_indices(torch.arange(len(active), device=self.device))
                lp = self._token_logprobs(logits, targets.to(self.device)).double().cpu() * target_mask
                sums = partial[active][:, None] + lp.cumsum(-1).numpy()  # after each fed position
                partial[active] = sums[:, -1]
                for j, r in enumerate(active):  # every depth, for later calls
                    c = conts[r]
                    for i in range(widths[j]):
                        chains[tuple(c[: fed + i + 2])] = float(sums[j, i])
                fed += step
                step = chunk

    def sweep_upper_bounds(self, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
        """Upper bounds of :meth:`prefix_sweep` without running the model on the candidates:
        log p(prefix) + (:meth:`first_token_logprobs`) + :data:`BOUND_MARGIN`, since the words
        after the position only add log-probabilities <= 0; +inf where the sentence's tokens do
        not begin with the tokens of the prefix and the word.  float64 nats."""
        cands = candidate_words(candidates)
        words = list(words)
        prefix = self._prefix_ids(words[:position])
        state = self._fixed_prefix_state(prefix)
        word_conts = self._split(prefix, self._next_texts(words[:position], cands))
        sent_conts = self._split(prefix, self._sentences(words, position, cands))
        bound = state["lp"] + self.first_token_logprobs(words[:position], cands) + self.BOUND_MARGIN
        for i, (w, s) in enumerate(zip(word_conts, sent_conts)):
            if w is None or s is None or s[: len(w)] != w:
                bound[i] = np.inf
        return bound


def candidate_words(candidates) -> list[str]:
    """:func:`check_words` for the long candidate lists of the ``LazySweep`` methods (one
    C-level ``split`` per word instead of a Python loop over its characters)."""
    if isinstance(candidates, str):
        raise TypeError("expected a sequence of candidate words, got a single str")
    out = list(candidates)
    if not out:
        raise ValueError("no candidate words given")
    for i, c in enumerate(out):
        if not isinstance(c, str):
            raise TypeError(f"candidate {i} is {type(c).__name__}, not str: {c!r}")
        if c.split() != [c]:
            raise ValueError(f"candidate {i} ({c!r}) must be a non-empty word without spaces")
    return out


def check_words(candidates, what: str) -> list[str]:
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
