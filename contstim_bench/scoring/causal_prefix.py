"""Scoring many texts that share a prefix with a causal LM: the prefix runs once and its key/value
cache is reused for every continuation.

:class:`SharedPrefixScoring` holds the methods of :class:`.causal.CausalScorer` built on that:
:meth:`~SharedPrefixScoring.sweep` (the ``VocabularySweep`` protocol: a sentence with each
candidate word at one position), :meth:`~SharedPrefixScoring.next_word_logprobs`
(``NextWordScorer``) and :meth:`~SharedPrefixScoring.continuation_logprobs` (answer options after
prompts, for :mod:`.prompting`).  It relies on the scorer's tokenising and forward pass
(``encode``, ``_pad``, ``_forward``, ``_token_logprobs``, ``_score_ids``) and attributes
(``tokenizer``, ``start_id``, ``device``, ``batch_size``, ``name``, ``progress``, ``_torch``).
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
        continuations, which are right-padded so that their positions follow the prefix's.
        An empty continuation scores 0.  float64 sums.
        """
        torch = self._torch
        from ..progress import progress_bar

        out = np.zeros(len(conts), dtype=np.float64)
        plen = len(prefix)
        with torch.inference_mode():
            prefix_lp, cache, last = self._prefix_state(prefix)
            last_lp = torch.log_softmax(last.float(), -1)[0]  # (V,): first continuation token
            nonempty = [i for i, c in enumerate(conts) if c]
            batches = length_sorted_batches([len(conts[i]) for i in nonempty], self.batch_size)
            bar = progress_bar(total=len(nonempty), desc=f"{self.name}: {desc}", unit="cand",
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
