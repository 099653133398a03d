"""Mask plans for masked-LM sentence scores: which masked copies to run, and how to combine them.

A *plan* describes one sentence's computation independently of any model.  The sentence's
content tokens (special tokens excluded) are numbered ``0..T-1``; word ``w`` owns the contiguous
tokens ``offsets[w] .. offsets[w] + pieces[w] - 1``.  A plan holds

* ``rows``: a list of boolean masks over the content tokens (``True`` = replaced by the mask
  token), one masked copy of the sentence per row, all distinct;
* targets: parallel arrays ``row``, ``token``, ``coef``, ``out``: the natural-log probability of
  the true token ``token`` read from row ``row`` is multiplied by ``coef`` and added to output
  ``out``.

Every method of :mod:`contstim_bench.scoring.masked` is such a plan:

* the Golan et al. (2023) estimate (``approx-ll``) is the mean over all ``n!`` word orders of the
  chain-rule log-probability, where each multi-piece word contributes the mean over its ``k!``
  piece orders.  The mean over uniform random orders of a sum of chain terms is a weighted sum
  over (revealed set S, next unit i) with weight ``|S|! (n-|S|-1)! / n!`` (the probability that,
  in a random order, exactly the units of S precede i).  One row per distinct mask pattern serves
  every masked token it predicts, so the exact mean needs ``2^n - 1`` word-level rows plus
  ``2^k - 2`` piece sub-patterns per (masked set, multi-piece word) pair, with no sampling;
* one explicit word order (optionally with explicit piece orders): a single chain;
* the Monte-Carlo baseline (``approx-ll-sampled``): one chain per sampled order, each order
  evaluated on its own rows as in the original algorithm, one output per order;
* PLL (Salazar et al. 2020), PLL-word-l2r and PLL-whole-word (Kauf & Ivanova 2023), and their
  Appendix G PLL-sentence-l2r (the token and every later position masked, the sentence's closing
  special tokens included: ``Plan.mask_trailing``).
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: refuse exact plans with more rows than this (2^16 masked copies of one sentence)
MAX_EXACT_ROWS = 1 << 16


def order_weight(n: int, s: int) -> float:
    """P(exactly a given set of ``s`` units precedes a given unit) in a uniform order of ``n``.

    Equals ``s! (n-s-1)! / n!`` = ``1 / (n * C(n-1, s))``.
    """
    if not 0 <= s < n:
        raise ValueError(f"need 0 <= s < n, got s={s}, n={n}")
    return 1.0 / (n * math.comb(n - 1, s))


@dataclass
class Plan:
    """Rows (masked copies) and weighted read-outs of one sentence; see the module docstring."""

    pieces: tuple[int, ...]
    n_out: int = 1
    #: a row whose last content token is masked also masks the special tokens after the content
    mask_trailing: bool = False
    rows: list[np.ndarray] = field(default_factory=list)
    row: list[int] = field(default_factory=list)
    token: list[int] = field(default_factory=list)
    coef: list[float] = field(default_factory=list)
    out: list[int] = field(default_factory=list)
    _index: dict = field(default_factory=dict, repr=False)
    _arrays: "PlanArrays | None" = field(default=None, repr=False)

    @property
    def n_tokens(self) -> int:
        return int(sum(self.pieces))

    @property
    def offsets(self) -> list[int]:
        return [0, *itertools.accumulate(self.pieces)][:-1]

    def add_row(self, masked: np.ndarray, scope: object = None) -> int:
        """Index of the row with this mask (created on first use; ``scope`` separates orders)."""
        key = (scope, masked.tobytes())
        idx = self._index.get(key)
        if idx is None:
            idx = len(self.rows)
            self._index[key] = idx
            self.rows.append(masked)
        return idx

    def add_target(self, row: int, token: int, coef: float, out: int = 0) -> None:
        self.row.append(row)
        self.token.append(token)
        self.coef.append(coef)
        self.out.append(out)

    def row_matrix(self) -> np.ndarray:
        """``(n_rows, n_tokens)`` bool array of the masks."""
        if not self.rows:
            return np.zeros((0, self.n_tokens), dtype=bool)
        return np.stack(self.rows)

    def arrays(self) -> "PlanArrays":
        """The plan as numpy arrays (built once; the plan must not change afterwards)."""
        cached = self._arrays
        if cached is None or cached.n_rows != len(self.rows) or len(cached.token) != len(self.token):
            cached = self._arrays = PlanArrays(
                masks=self.row_matrix(),
                row=np.asarray(self.row, dtype=np.int64),
                token=np.asarray(self.token, dtype=np.int64),
                coef=np.asarray(self.coef, dtype=np.float64),
                out=np.asarray(self.out, dtype=np.int64),
                n_out=self.n_out,
            )
        return cached


@dataclass(frozen=True)
class PlanArrays:
    """A :class:`Plan` as arrays: ``masks`` ``(n_rows, n_tokens)`` bool, and the parallel
    read-out arrays ``row``, ``token``, ``coef``, ``out``."""

    masks: np.ndarray
    row: np.ndarray
    token: np.ndarray
    coef: np.ndarray
    out: np.ndarray
    n_out: int

    @property
    def n_rows(self) -> int:
        return len(self.masks)


def _check_pieces(pieces: Sequence[int]) -> tuple[int, ...]:
    p = tuple(int(k) for k in pieces)
    if not p:
        raise ValueError("a plan needs at least one word")
    if any(k < 1 for k in p):
        raise ValueError(f"every word needs at least one token, got piece counts {p}")
    return p


def _word_mask(pieces: tuple[int, ...], offsets: list[int], words: Sequence[int]) -> np.ndarray:
    m = np.zeros(sum(pieces), dtype=bool)
    for w in words:
        m[offsets[w] : offsets[w] + pieces[w]] = True
    return m


def _add_word_step(
    plan: Plan,
    base: np.ndarray,
    word: int,
    weight: float,
    *,
    piece_order: Sequence[int] | None = None,
    out: int = 0,
    scope: object = None,
) -> None:
    """Add log p(word | visible part of ``base``) * weight: pieces averaged over all their orders
    (or chained along ``piece_order``), every other masked word staying fully masked."""
    k = plan.pieces[word]
    start = plan.offsets[word]
    if piece_order is not None:
        order = [int(j) for j in piece_order]
        if sorted(order) != list(range(k)):
            raise ValueError(f"piece order {order} of word {word} is not a permutation of range({k})")
        for u, j in enumerate(order):
            masked = base.copy()
            masked[[start + r for r in order[:u]]] = False
            plan.add_target(plan.add_row(masked, scope), start + j, weight, out)
        return
    for revealed in range((1 << k) - 1):  # proper subsets R of the word's pieces
        masked = base.copy()
        shown = [j for j in range(k) if revealed >> j & 1]
        masked[[start + j for j in shown]] = False
        r = plan.add_row(masked, scope)
        w_r = order_weight(k, len(shown))
        for j in range(k):
            if not revealed >> j & 1:
                plan.add_target(r, start + j, weight * w_r, out)


def exact_mean_plan(pieces: Sequence[int], max_rows: int = MAX_EXACT_ROWS) -> Plan:
    """Plan of the exact mean over all word orders (pieces averaged over their orders)."""
    p = _check_pieces(pieces)
    n = len(p)
    n_rows = (1 << n) - 1 + sum((1 << k) - 2 for k in p) * (1 << (n - 1))
    if n_rows > max_rows:
        raise ValueError(
            f"exact approx-ll of a {n}-word sentence with piece counts {p} needs {n_rows} masked "
            f"copies (limit {max_rows}); use method=approx-ll-sampled"
        )
    plan = Plan(pieces=p)
    offsets = plan.offsets
    for masked_words in range(1, 1 << n):
        words = [w for w in range(n) if masked_words >> w & 1]
        weight = order_weight(n, n - len(words))
        base = _word_mask(p, offsets, words)
        for w in words:
            _add_word_step(plan, base, w, weight)
    return plan


@functools.lru_cache(maxsize=1024)
def shared_exact_mean_plan(pieces: tuple[int, ...], max_rows: int = MAX_EXACT_ROWS) -> Plan:
    """:func:`exact_mean_plan`, built once per piece layout and shared (read-only): the stimuli
    of an experiment have few distinct layouts (8 words, mostly single pieces)."""
    plan = exact_mean_plan(pieces, max_rows)
    plan.arrays()
    return plan


def order_plan(
    pieces: Sequence[int],
    order: Sequence[int],
    piece_orders: dict[int, Sequence[int]] | None = None,
    *,
    plan: Plan | None = None,
    out: int = 0,
) -> Plan:
    """Plan of one chain along word ``order`` (first revealed first).

    Pieces of a word are averaged over all their orders unless ``piece_orders[word]`` gives one.
    With ``plan`` given, the chain's rows are added to it under their own scope (rows are shared
    only within this order) and its targets go to output ``out``.
    """
    p = _check_pieces(pieces)
    n = len(p)
    order = [int(w) for w in order]
    if sorted(order) != list(range(n)):
        raise ValueError(f"word order {order} is not a permutation of range({n})")
    piece_orders = dict(piece_orders or {})
    if plan is None:
        plan = Plan(pieces=p)
    offsets = plan.offsets
    scope = ("order", out)
    for t, w in enumerate(order):
        base = _word_mask(p, offsets, order[t:])
        _add_word_step(plan, base, w, 1.0, piece_order=piece_orders.get(w), out=out, scope=scope)
    return plan


def sampled_orders(n: int, n_orders: int, seed: int, key: str) -> list[tuple[int, ...]]:
    """``n_orders`` distinct uniform random word orders of ``n`` words (all ``n!`` if fewer).

    The stream is seeded by ``(seed, sha256(key))`` so a sentence's orders do not depend on which
    other sentences are scored with it.
    """
    if n_orders < 1:
        raise ValueError(f"orders must be >= 1, got {n_orders}")
    if math.factorial(n) <= n_orders:
        return list(itertools.permutations(range(n)))
    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")
    rng = np.random.default_rng([int(seed), digest])
    seen: dict[tuple[int, ...], None] = {}
    while len(seen) < n_orders:
        seen.setdefault(tuple(int(x) for x in rng.permutation(n)), None)
    return list(seen)


def sampled_plan(pieces: Sequence[int], orders: Sequence[Sequence[int]]) -> Plan:
    """Monte-Carlo plan: one output per order, each order evaluated on its own rows."""
    p = _check_pieces(pieces)
    plan = Plan(pieces=p, n_out=len(orders))
    for i, order in enumerate(orders):
        order_plan(p, order, plan=plan, out=i)
    return plan


PLL_VARIANTS = ("original", "word-l2r", "whole-word", "sentence-l2r")


def pll_plan(pieces: Sequence[int], variant: str, per_token: bool = False) -> Plan:
    """PLL plans: ``original`` (one copy per token, Salazar et al. 2020), ``word-l2r`` (the
    token and the later tokens of its word masked), ``whole-word`` (one copy per word with
    the whole word masked, every token of it read out), Kauf & Ivanova (2023) Eq. 1-3, and
    ``sentence-l2r`` (their Eq. 4: the token and every later token masked, so that only the left
    context is seen; as their code, the closing special tokens are masked too).

    ``per_token``: one output per content token (its log-probability) instead of their sum."""
    if variant not in PLL_VARIANTS:
        raise ValueError(f"unknown PLL variant {variant!r}; expected one of {PLL_VARIANTS}")
    p = _check_pieces(pieces)
    n_tok = sum(p)
    plan = Plan(pieces=p, n_out=n_tok if per_token else 1, mask_trailing=variant == "sentence-l2r")
    offsets = plan.offsets
    for w, k in enumerate(p):
        start = offsets[w]
        if variant == "whole-word":
            masked = np.zeros(n_tok, dtype=bool)
            masked[start : start + k] = True
            r = plan.add_row(masked)
            for j in range(k):
                plan.add_target(r, start + j, 1.0, start + j if per_token else 0)
            continue
        for j in range(k):
            masked = np.zeros(n_tok, dtype=bool)
            end = {"original": start + j + 1, "word-l2r": start + k, "sentence-l2r": n_tok}[variant]
            masked[start + j : end] = True
            plan.add_target(plan.add_row(masked), start + j, 1.0, start + j if per_token else 0)
    return plan


def exact_row_count(pieces: Sequence[int]) -> int:
    """Rows of :func:`exact_mean_plan` without building it."""
    p = _check_pieces(pieces)
    n = len(p)
    return (1 << n) - 1 + sum((1 << k) - 2 for k in p) * (1 << (n - 1))
