"""Scoring many texts that share a prefix with a causal LM: the prefix runs once and its key/value
cache is reused for every continuation.

:class:`SharedPrefixScoring` holds the methods of :class:`.causal.CausalScorer` built on that:
:meth:`~SharedPrefixScoring.sweep` (the ``VocabularySweep`` protocol: a sentence with each
candidate word at one position), :meth:`~SharedPrefixScoring.next_word_logprobs`
(``NextWordScorer``) and :meth:`~SharedPrefixScoring.continuation_logprobs` (answer options after
prompts, for :mod:`.prompting`).  It relies on the scorer's tokenising and forward pass
(``encode``, ``_pad``, ``_forward``, ``_token_logprobs``, ``_score_ids``) and attributes
(``tokenizer``, ``start_id``, ``device``, ``batch_size``, ``name``, ``progress``, ``_torch``).

The methods of the ``LazySweep`` protocol (for the lazy synthetic search) always share the
same prefix, the start token and the tokens of the words before the position, and keep its
forward pass and the values computed after it for later calls: a candidate's value is then the
same whichever other candidates are scored with it, so a search may score candidates a few at a
time, in any order, and reuse values across calls.  :meth:`~SharedPrefixScoring.first_token_logprobs`
and :meth:`~SharedPrefixScoring.sweep_upper_bounds` give cheap upper bounds of the next-word and
sentence values.
"""
from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from .base import length_sorted_batches


class SharedPrefixScoring:
    """Shared-prefix methods of :class:`.causal.CausalScorer` (see the module docstring)."""

    def _prefix_state(self, prefix: list[int]):
        """Run ``prefix`` once: (sum of its log-probs after the start token, cache, last logits)."""
        torch = self._torch
        ids = torch.tensor([prefix], dtype=torch.long, device=self.device)
        logits, cache = self._forward(ids, torch.ones_like(ids), want_cache=True)
        if cache_batch(cache) > 1:  # _forward replicated the row
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
        continuations (:meth:`_continuation_batches`), which are right-padded so that their
        positions follow the prefix's; a continuation's last token is not fed.  An empty
        continuation scores 0.  float64 sums.
        """
        torch = self._torch
        from ..progress import progress_bar

        out = np.zeros(len(conts), dtype=np.float64)
        plen = len(prefix)
        with torch.inference_mode():
            prefix_lp, cache, last = self._prefix_state(prefix)
            last_lp = torch.log_softmax(last.float(), -1)[0]  # (V,): first continuation token
            nonempty = [i for i, c in enumerate(conts) if c]
            batches = self._continuation_batches([conts[i] for i in nonempty])
            bar = progress_bar(total=len(nonempty), desc=f"{self.name}: {desc}", unit="cand",
                               disable=not self.progress, leave=False)
            for batch in batches:
                idx = [nonempty[i] for i in batch]
                out[idx] = self._continuation_totals(cache, plen, last_lp, [conts[i] for i in idx])
                bar.update(len(idx))
            bar.close()
        return prefix_lp, out

    #: padded positions fed per forward pass when continuations of one prefix are scored (unless
    #: the scorer has a --max-tokens-per-batch): wide batches read the weights once for many
    #: candidates (on a CPU a forward pass of a few rows costs about as much as one of a hundred)
    CONTINUATION_TOKENS = 256

    def _continuation_batches(self, conts: list[list[int]]) -> list[list[int]]:
        """Length-sorted batches of continuations after one prefix (indices into ``conts``),
        sized by the positions each feeds (every token but the last): at most
        ``--max-tokens-per-batch`` (default :data:`CONTINUATION_TOKENS`) padded positions, and at
        most ``--batch-size`` continuations when one was given.  Single-token continuations form
        one batch of their own, which runs no forward pass (the prefix's next-token
        distribution scores them); mixed with longer ones they would feed padding."""
        budget = self.max_tokens_per_batch or self.CONTINUATION_TOKENS
        multi = [i for i, c in enumerate(conts) if len(c) > 1]
        single = [i for i, c in enumerate(conts) if len(c) <= 1]
        fed = [len(conts[i]) - 1 for i in multi]
        batches = [[multi[j] for j in b] for b in length_sorted_batches(fed, self._count_cap, budget)]
        return batches + ([single] if single else [])

    def _continuation_totals(self, cache, plen: int, next_lp, conts: list[list[int]]) -> np.ndarray:
        """log p(cont | prefix) of one batch of continuations (float64), after the prefix whose
        key/value ``cache`` (``plen`` tokens; copied here, not changed) and next-token
        log-softmax ``next_lp`` are given.  The continuations run right-padded in one forward
        pass, without their last position (its logits predict nothing that is scored), and none
        when every continuation is a single token."""
        torch = self._torch
        ids, mask = self._pad(conts)
        total = next_lp[ids[:, 0]].double()
        if ids.shape[1] > 1:
            batch_cache = copy.deepcopy(cache)
            batch_cache.batch_repeat_interleave(len(conts))
            ones = torch.ones((len(conts), plen), dtype=mask.dtype, device=self.device)
            logits = self._forward(ids[:, :-1], torch.cat([ones, mask[:, :-1]], 1), batch_cache)
            rest = self._token_logprobs(logits, ids[:, 1:]).double() * mask[:, 1:]
            total = total + rest.sum(-1)
        return total.cpu().numpy()

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
        from ..progress import progress_bar

        out = np.empty((len(seqs), len(targets[0])), dtype=np.float64)
        bar = progress_bar(total=len(seqs), desc=f"{self.name}: prompts", unit="prompt",
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


    # ---------------------------------------------------- LazySweep: a fixed shared prefix
    #: prefix forward passes (and the values computed after them) kept for later calls
    PREFIX_STATES = 16
    #: added to the upper bounds of sweep values: the word's tokens are scored in two forward
    #: passes of different lengths, which round differently (by about 1e-6 nats)
    BOUND_MARGIN = 1e-3

    def _fixed_prefix_state(self, prefix: tuple[int, ...]) -> dict:
        """The kept state of ``prefix`` (start token included): ``lp`` (log p of its tokens
        after the start token), ``cache`` (key/value cache), ``next`` (log-softmax of the next
        token), ``next_word`` and ``sweep`` (values computed so far: text -> nats), ``split``
        (token ids of texts after the prefix), ``chain`` (partial sums of :meth:`sweep_at_least`:
        the first tokens after the prefix -> the sum of their log-probabilities)."""
        # kept on the instance, created on first use (the scorer's __init__ is causal.py's)
        states = self.__dict__.setdefault("_fixed_prefix_states", {})
        if prefix in states:
            states[prefix] = states.pop(prefix)  # most recently used last
            return states[prefix]
        torch = self._torch
        with torch.inference_mode():
            lp, cache, last = self._prefix_state(list(prefix))
            state = {"lp": lp, "cache": cache, "next": torch.log_softmax(last.float(), -1)[0],
                     "next_word": {}, "sweep": {}, "split": {}, "chain": {}}
        states[prefix] = state
        while len(states) > self.PREFIX_STATES:
            states.pop(next(iter(states)))
        return state

    def _prefix_ids(self, prefix_words: Sequence[str]) -> tuple[int, ...]:
        prefix_text = " ".join(prefix_words)
        return tuple(self.encode([prefix_text])[0]) if prefix_text else (self.start_id,)

    def _split(self, prefix: tuple[int, ...], texts: list[str]) -> list[list[int] | None]:
        """The ids of each text after ``prefix``; None where its tokens do not begin with it.
        Kept in the prefix's state (a search tokenizes the same candidates again and again).
        Tokenized by the fast tokenizer's backend (the ids of :meth:`encode`, without the
        per-text conversions of the ``transformers`` wrapper)."""
        known = self._fixed_prefix_state(prefix)["split"]
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            encodings = self.tokenizer.backend_tokenizer.encode_batch(todo, add_special_tokens=False)
            for text, enc in zip(todo, encodings):
                if not enc.ids:
                    raise ValueError(f"model {self.name}: text {text!r} has no tokens")
                seq = [self.start_id, *enc.ids]
                ok = len(seq) > len(prefix) and tuple(seq[: len(prefix)]) == prefix
                known[text] = seq[len(prefix):] if ok else None
        return [known[t] for t in texts]

    def _fixed_continuations(self, prefix: tuple[int, ...], conts: list[list[int]]) -> np.ndarray:
        """log p(cont | prefix) per continuation (float64), from the kept prefix state, in
        length-sorted batches as :meth:`_continuation_logprobs` runs them."""
        torch = self._torch
        out = np.zeros(len(conts), dtype=np.float64)
        if not conts:
            return out
        state = self._fixed_prefix_state(prefix)
        plen = len(prefix)
        with torch.inference_mode():
            for batch in self._continuation_batches(conts):
                batch_conts = [conts[i] for i in batch]
                out[batch] = self._continuation_totals(state["cache"], plen, state["next"], batch_conts)
        return out

    def _memoized(self, prefix: tuple[int, ...], table: str, texts: list[str], whole_offset: bool) -> np.ndarray:
        """Values of ``texts`` after ``prefix`` (kept in the prefix state's ``table``), computing
        the missing ones together.  A text whose tokens do not extend the prefix is scored whole
        (minus the prefix's log-probability when ``whole_offset``)."""
        state = self._fixed_prefix_state(prefix)
        memo = state[table]
        todo = list(dict.fromkeys(t for t in texts if t not in memo))
        counts = self.__dict__.setdefault("_fixed_counts", {"sweep": 0, "next_word": 0})
        counts[table] += len(todo)
        if todo:
            conts = self._split(prefix, todo)
            ok = [i for i, c in enumerate(conts) if c is not None]
            values = self._fixed_continuations(prefix, [conts[i] for i in ok])
            base = 0.0 if whole_offset else state["lp"]
            for i, v in zip(ok, values):
                memo[todo[i]] = base + float(v)
            for i in (i for i, c in enumerate(conts) if c is None):
                whole = float(self._score_ids(self.encode([todo[i]]), "whole")[0])
                memo[todo[i]] = whole - state["lp"] if whole_offset else whole
        return np.array([memo[t] for t in texts], dtype=np.float64)

    def evaluation_counts(self) -> dict[str, int]:
        """Values computed so far by :meth:`prefix_sweep` (``sweep``) and
        :meth:`prefix_next_word_logprobs` (``next_word``), and sentences :meth:`sweep_at_least`
        ran (``bounded``); kept values are not counted again."""
        counts = {"sweep": 0, "next_word": 0, "bounded": 0}
        counts.update(self.__dict__.get("_fixed_counts", {}))
        return counts

    @staticmethod
    def _sentences(words: Sequence[str], position: int, cands: list[str]) -> list[str]:
        words = list(words)
        if not 0 <= position < len(words):
            raise ValueError(f"position {position} outside 0..{len(words) - 1}")
        return [" ".join(words[:position] + [c] + words[position + 1:]) for c in cands]

    @staticmethod
    def _next_texts(prefix_words: Sequence[str], cands: list[str]) -> list[str]:
        prefix_text = " ".join(prefix_words)
        return [f"{prefix_text} {c}" if prefix_text else c for c in cands]

    def prefix_sweep(self, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
        """:meth:`sweep` with the shared prefix fixed to the start token and the words before
        ``position``: each value is independent of the other candidates, and kept for later
        calls.  float64 nats."""
        cands = _candidate_words(candidates)
        texts = self._sentences(words, position, cands)
        return self._memoized(self._prefix_ids(list(words)[:position]), "sweep", texts, whole_offset=False)

    def prefix_next_word_logprobs(self, prefix_words: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """:meth:`next_word_logprobs` with the prefix fixed (start token + prefix words): log p(c |
        prefix) summed over c's tokens, independent of the other candidates, kept for later calls."""
        cands = _candidate_words(candidates)
        prefix = self._prefix_ids(list(prefix_words))
        return self._memoized(prefix, "next_word", self._next_texts(prefix_words, cands), whole_offset=True)

    def next_word_bounds(self, prefix_words: Sequence[str], candidates: Sequence[str],
                         floor: float) -> tuple[np.ndarray, np.ndarray]:
        """``(values, exact)``: :meth:`prefix_next_word_logprobs` where ``exact``, which holds
        for every candidate whose value may reach ``floor``; elsewhere an upper bound below
        ``floor`` (the log-probability of the word's first tokens: the others only lower it).

        Words that share their first tokens share the forward passes of those tokens (a trie
        over the candidates' tokens, one row per distinct token prefix), so the words of a
        29,000-word vocabulary cost about as many rows as they have distinct first tokens.
        Exact values are kept for later calls.  float64 nats."""
        cands = _candidate_words(candidates)
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
            counts = self.__dict__.setdefault("_fixed_counts", {"sweep": 0, "next_word": 0})
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
        cands = _candidate_words(candidates)
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
        cands = _candidate_words(candidates)
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
        counts = self.__dict__.setdefault("_fixed_counts", {"sweep": 0, "next_word": 0})
        counts["bounded"] = counts.get("bounded", 0) + len(todo)
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
        cands = _candidate_words(candidates)
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

def cache_batch(cache) -> int:
    """Batch size of a key/value cache (0 while it is empty)."""
    for layer in cache.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            return int(layer.keys.shape[0])
    return 0


def tile_cache(cache, reps: int) -> None:
    """Repeat a key/value cache ``reps`` times along the batch (copies 0..B-1, 0..B-1, ...)."""
    for layer in cache.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            layer.keys = layer.keys.repeat(reps, *([1] * (layer.keys.dim() - 1)))
            layer.values = layer.values.repeat(reps, *([1] * (layer.values.dim() - 1)))


def _candidate_words(candidates) -> list[str]:
    """:func:`_check_words` for the long candidate lists of the ``LazySweep`` methods (one
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
