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
from .packing import PACK_WIDTH, pack_rows, prefix_mask, replicas
from .causal_bounds import PrefixBounds, candidate_words as _candidate_words, check_words as _check_words
from .kv_cache import cache_batch


class SharedPrefixScoring(PrefixBounds):
    """Shared-prefix methods of :class:`.causal.CausalScorer` (see the module docstring); the
    bounds and threshold decisions of the lazy search come from :class:`.causal_bounds.PrefixBounds`.
    The state they keep is declared and set by ``CausalScorer.__init__``."""

    _start: tuple | None
    _fixed_prefix_states: dict

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

    def _continuation_totals(self, cache, plen: int, next_lp, conts: list[list[int]], wide: bool = False) -> np.ndarray:
        """log p(cont | prefix) of one batch of continuations (float64), after the prefix whose
        key/value ``cache`` (``plen`` tokens; copied here, not changed) and next-token
        log-softmax ``next_lp`` are given.  A continuation's last token is never fed (its logits
        predict nothing that is scored), and nothing is fed when every continuation is a single
        token.  The continuations are packed into rows that share the prefix's cache when
        :attr:`packs` (:mod:`.packing`) and packing feeds fewer positions than padding would
        (continuations of one length: the same), else right-padded with the cache repeated per
        row.
        ``wide``: read out in float64 when the logits are bfloat16/float16 (sentence scores)."""
        torch = self._torch
        first = torch.tensor([c[0] for c in conts], dtype=torch.long, device=next_lp.device)
        total = next_lp[first].double().cpu().numpy()
        fed = [c[:-1] for c in conts]
        if not any(fed):
            return total
        read = self._token_logprobs64 if wide else self._token_logprobs
        rows = self._packed_rows(plen, conts)
        if rows is not None:
            return total + self._packed_rest(cache, plen, conts, read, self._packing_window(), rows=rows)
        return total + self._padded_rest(cache, plen, conts, read).sum(-1).cpu().numpy()

    def _packed_rows(self, plen: int, conts: list[list[int]]):
        """The packed rows (:meth:`_pack`) that a batch of continuations after a prefix of
        ``plen`` tokens runs in, or None when it runs right-padded: the model does not keep packed
        rows apart, a row would not fit in its sliding window, or packing feeds no fewer positions
        than padding (continuations of one length)."""
        longest = max(len(c) for c in conts) - 1  # a continuation's last token is not fed
        window = self._packing_window() if self.packs else None
        if not self.packs or longest < 1 or (window is not None and plen + longest > window):
            return None
        rows = self._pack(conts, plen, window)
        return rows if rows.fed < len(conts) * longest else None

    def positions_fed(self, plen: int, conts: list[list[int]]) -> int:
        """Positions the model is fed to score a batch of continuations after a prefix of
        ``plen`` tokens (:meth:`_continuation_totals`: packed or right-padded, no last tokens)."""
        longest = max(len(c) for c in conts) - 1
        if longest < 1:
            return 0
        rows = self._packed_rows(plen, conts)
        return rows.fed if rows is not None else len(conts) * longest

    def _padded_rest(self, cache, plen: int, conts: list[list[int]], read):
        """log p(token | prefix, earlier tokens) at tokens 2.. of each continuation, right-padded
        (zeros past a continuation's end) after the prefix ``cache`` repeated per row: a float64
        tensor (continuations, longest - 1)."""
        torch = self._torch
        ids, mask = self._pad(conts)
        batch_cache = copy.deepcopy(cache)
        batch_cache.batch_repeat_interleave(len(conts))
        ones = torch.ones((len(conts), plen), dtype=mask.dtype, device=self.device)
        logits = self._forward(ids[:, :-1], torch.cat([ones, mask[:, :-1]], 1), batch_cache)
        return read(logits, ids[:, 1:]).double() * mask[:, 1:]

    def _pack(self, conts: list[list[int]], plen: int, window: int | None):
        """:func:`.packing.pack_rows` of the fed tokens of the multi-token continuations (rows
        within the sliding window, prefix included, when the model has one)."""
        width = PACK_WIDTH if window is None else max(1, min(PACK_WIDTH, window - plen))
        return pack_rows([c[:-1] for c in conts if len(c) > 1], self.pad_id, width=width, offset=plen)

    def _packed_rest(self, cache, plen: int, conts: list[list[int]], read, window: int | None,
                     rows=None) -> np.ndarray:
        """Sum of log p(token | prefix, earlier tokens) over tokens 2.. of each continuation:
        every continuation's tokens but the last packed into rows (:func:`.packing.pack_rows`,
        positions after the prefix's), which attend to the one prefix cache and to their own
        segment (:func:`.packing.prefix_mask`); read only at real positions."""
        torch = self._torch
        model = self.model
        multi = [k for k, c in enumerate(conts) if len(c) > 1]
        rows = rows or self._pack(conts, plen, window)
        ids = torch.tensor(rows.ids, dtype=torch.long, device=self.device)
        positions = torch.tensor(rows.positions, dtype=torch.long, device=self.device)
        segments = torch.tensor(rows.segments, dtype=torch.long, device=self.device)
        mask = prefix_mask(segments, plen, model.dtype)
        n = ids.shape[0]
        reps = replicas(ids.numel())  # as _forward does
        if reps > 1:
            ids, positions, mask = ids.repeat(reps, 1), positions.repeat(reps, 1), mask.repeat(reps, 1, 1, 1)
        batch_cache = copy.deepcopy(cache)
        batch_cache.batch_repeat_interleave(n * reps)
        logits = self._run_model(ids, mask, positions, batch_cache)[0][:n]
        row_of, at, targets, owner = [], [], [], []
        for j, k in enumerate(multi):
            row, start = rows.spans[j]
            c = conts[k]
            row_of.extend([row] * (len(c) - 1))
            at.extend(range(start, start + len(c) - 1))
            targets.extend(c[1:])
            owner.extend([k] * (len(c) - 1))
        dev = self.device
        picked = logits[torch.tensor(row_of, device=dev), torch.tensor(at, device=dev)]
        tok = read(picked, torch.tensor(targets, dtype=torch.long, device=dev)).double()
        sums = torch.zeros(len(conts), dtype=torch.float64, device=tok.device)
        sums.index_add_(0, torch.tensor(owner, device=tok.device), tok)
        return sums.cpu().numpy()

    def _packing_window(self) -> int | None:
        """The model's sliding attention window (Gemma-3's local layers, Mistral), or None: a
        4-D mask given to the model replaces the window its layers would build, so packed rows
        (prefix included) must fit in it; longer inputs are scored padded."""
        window = getattr(self.model.config, "sliding_window", None)
        return int(window) if isinstance(window, int) and window > 0 else None

    def _start_state(self):
        """(key/value cache, next-token log-softmax) of the start token alone, computed once:
        the part every sentence shares.  The log-softmax is float64 for bfloat16/float16
        weights (sentence scores are read out in float64 there)."""
        if self._start is None:
            torch = self._torch
            with torch.inference_mode():
                _, cache, last = self._prefix_state([self.start_id])
                wide = last if last.dtype == torch.float32 else last.double()
                self._start = (cache, torch.log_softmax(wide, -1)[0])
        return self._start

    def _check_packing(self) -> bool:
        """Whether packed rows keep their sequences apart on this model (see :mod:`.packing`):
        after the start token, a continuation packed behind another must score the same
        whichever that other one is (the same shapes: equal to the kernels' rounding), and as
        it does alone in a padded row (within 1e-3 nats in float32/float64, 0.05 in 16 bits).
        A model that ignores ``position_ids`` or the 4-D mask fails one of the two."""
        torch = self._torch
        model = self.model
        vocab = int(model.get_input_embeddings().weight.shape[0])
        x, y, z, w = (vocab // 5, 2 * vocab // 5, 3 * vocab // 5, 4 * vocab // 5)
        b = [z, x, y]
        cache, _ = self._start_state()
        with torch.inference_mode():
            one = self._packed_rest(cache, 1, [[x, y, z, w], b], self._token_logprobs, None)
            two = self._packed_rest(cache, 1, [[y, x, w, z], b], self._token_logprobs, None)
            alone = self._padded_rest(cache, 1, [b], self._token_logprobs).sum(-1).cpu().numpy()
        tol = 5e-2 if model.dtype in (torch.float16, torch.bfloat16) else 1e-3
        return bool(abs(one[1] - two[1]) <= 1e-6 * max(1.0, abs(one[1])) and abs(one[1] - alone[0]) <= tol)

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
        self, prompts: Sequence[str], options: Sequence[str] | Sequence[Sequence[str]], *, add_start: bool = True
    ) -> np.ndarray:
        """log p(option | prompt) for every prompt x option: float64 array (n_prompts, n_options).

        ``options``: the same options for every prompt, or one sequence of ``n_options`` options per
        prompt (e.g. each pair's own two words).  The option text is appended to the prompt
        verbatim (give ``" Yes"`` for a space-separated answer).  The option's tokens are those of ``prompt + option`` after the prompt's own
        tokens.  The prompts whose every option is a single token after them (the usual case for
        answer labels such as " 1" or " Yes") run in length-sorted batches and the answers are
        read from the last position's next-token distribution; each other prompt runs once and
        its key/value cache is shared by its options.  ``add_start=False`` leaves
        out the start token (for chat-formatted prompts that carry their own special tokens).
        """
        prompts = list(prompts)
        options = list(options)
        if not prompts or not options:
            raise ValueError("continuation_logprobs needs at least one prompt and one option")
        per = [list(o) for o in options] if not isinstance(options[0], str) else [options] * len(prompts)
        if len(per) != len(prompts) or len({len(o) for o in per}) != 1 or not per[0]:
            raise ValueError(f"continuation_logprobs: give one list of options, or one per prompt ({len(prompts)}) "
                             "of one length")
        for i, o in enumerate(x for opts in per for x in opts):
            if not isinstance(o, str) or not o:
                raise ValueError(f"option {i} ({o!r}) must be a non-empty str")
        head = [self.start_id] if add_start else []
        enc = self.tokenizer
        prompt_ids = [head + x for x in enc(prompts, add_special_tokens=False)["input_ids"]]
        full = enc([p + o for p, opts in zip(prompts, per) for o in opts], add_special_tokens=False)["input_ids"]
        k = len(per[0])
        single: list[int] = []  # prompts whose every option is one token after the prompt's own
        targets: list[list[int]] = []
        for i, p_ids in enumerate(prompt_ids):
            seqs = [head + full[i * k + j] for j in range(k)]
            if all(len(f) == len(p_ids) + 1 and f[: len(p_ids)] == p_ids for f in seqs):
                single.append(i)
                targets.append([f[-1] for f in seqs])
        out = np.empty((len(prompts), k), dtype=np.float64)
        if single:
            out[single] = self._next_token_logprobs([prompt_ids[i] for i in single], targets)
        torch = self._torch
        done = set(single)
        for i, p_ids in enumerate(prompt_ids):
            if i in done:
                continue
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
        states = self._fixed_prefix_states
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
        counts = self._fixed_counts
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
        return dict(self._fixed_counts)

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
