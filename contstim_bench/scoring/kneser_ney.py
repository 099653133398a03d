"""Interpolated modified Kneser-Ney n-gram estimation (Chen & Goodman 1998), written as ARPA.

This is the pure-Python fallback of ``contstim train ngram`` for machines without KenLM's
``lmplz``; it follows lmplz's conventions (Heafield et al. 2013) so that both produce the same
model up to float rounding:

* every sentence (one non-blank line, split on whitespace) is padded as ``<s> w1 ... wn </s>``;
* the highest order keeps raw counts; a lower-order n-gram gets its *adjusted* (continuation)
  count, the number of distinct words seen immediately to its left, except n-grams that start
  with ``<s>`` (nothing can precede them), which keep their raw count;
* per order n, three discounts from the count-of-counts t_k of adjusted counts
  (Chen & Goodman eq. 26): ``Y = t1 / (t1 + 2 t2)``, ``D_k = k - (k + 1) Y t_{k+1} / t_k`` for
  k = 1, 2, 3 (D3 is used for every count >= 3); when t1, t2 or t3 is 0 or a D_k falls outside [0, k]
  estimation fails unless fallback discounts are given (lmplz's ``--discount_fallback``);
* interpolation: ``p(w | h) = (a(h w) - D(a(h w))) / sum_x a(h x) + gamma(h) p(w | h')`` with
  ``gamma(h) = sum_k D_k N_k(h .) / sum_x a(h x)`` and, at the unigram level, the uniform
  distribution over the vocabulary (every word type, ``</s>`` and ``<unk>``; not ``<s>``);
* ARPA stores log10 of the interpolated probabilities and, for every n-gram that is a context
  of a longer one, log10 gamma as its backoff weight; ``<s>`` is written with log10 p = 0 (it is
  never predicted), ``<unk>`` with the uniform share of the unigram interpolation mass.

Querying the ARPA with backoff (as KenLM does) then reproduces the interpolated model exactly,
and ``p(. | h)`` sums to 1 over the vocabulary for every history ``h``.
"""
from __future__ import annotations

import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"
SPECIAL = (BOS, EOS, UNK)

#: lmplz's ``--discount_fallback`` default discounts (D1, D2, D3+)
DEFAULT_FALLBACK = (0.5, 1.0, 1.5)

KENLM_ORDERS = range(2, 7)
"""The orders of a model KenLM loads: its query code assumes at least a bigram model, and KenLM as
``pip install kenlm`` builds it stops at order 6 (its compile-time ``KENLM_MAX_ORDER``)."""


def check_kenlm_order(order: object, flag: str = "n-gram order") -> int:
    """``order`` if KenLM can load a model of that order (:data:`KENLM_ORDERS`); ValueError naming
    ``flag``, the value and the reason otherwise.  Checked before anything is read or written."""
    if isinstance(order, bool) or not isinstance(order, int) or order not in KENLM_ORDERS:
        raise ValueError(f"{flag} must be an integer from {KENLM_ORDERS[0]} to {KENLM_ORDERS[-1]}, got {order!r}: "
                         f"KenLM loads no unigram model (it assumes at least a bigram model), and as `pip install "
                         f"kenlm` builds it, no model above order {KENLM_ORDERS[-1]}")
    return order


def check_fallback(fallback: Sequence[float]) -> tuple[float, float, float]:
    """The fallback discounts (D1, D2, D3+) as floats; ValueError unless they are 3 values with
    0 < Dk <= k (a zero discount leaves no probability for what the corpus never showed, and the
    model's log-probabilities would be minus infinity)."""
    fb = tuple(float(x) for x in fallback)
    if len(fb) != 3 or not all(0.0 < d <= k for k, d in zip((1, 2, 3), fb)):
        raise ValueError(f"fallback discounts must be 3 values D1 in (0,1], D2 in (0,2], D3 in (0,3], got "
                         f"{tuple(fallback)} (a zero discount leaves no probability for unseen words)")
    return fb  # type: ignore[return-value]


class DiscountError(ValueError):
    """Modified Kneser-Ney discounts cannot be estimated from the corpus' count-of-counts."""


def read_corpus(path: str | os.PathLike) -> list[list[str]]:
    """Sentences of a text corpus: one per non-blank line, split on whitespace.

    Raises FileNotFoundError for a missing file, ValueError for an empty corpus or a line that
    contains one of the reserved tokens ``<s>``, ``</s>``, ``<unk>`` (naming the line).
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"corpus file not found: {p}")
    sentences: list[list[str]] = []
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            words = line.split()
            if not words:
                continue
            bad = [w for w in words if w in SPECIAL]
            if bad:
                raise ValueError(f"{p}:{lineno}: reserved token {bad[0]!r} in the corpus")
            sentences.append(words)
    if not sentences:
        raise ValueError(f"corpus {p} is empty (no non-blank line)")
    return sentences


@dataclass
class KneserNeyModel:
    """An estimated model: per order n (index n-1), log10 probability and backoff of each n-gram."""

    order: int
    #: ``logprob[n-1][ngram]``: log10 p(w_n | w_1..w_{n-1}) (interpolated)
    logprob: list[dict[tuple[str, ...], float]]
    #: ``backoff[n-1][ngram]``: log10 gamma(ngram) for n-grams that are contexts (else absent = 0)
    backoff: list[dict[tuple[str, ...], float]]
    #: ``discounts[n-1] = (D1, D2, D3+)``
    discounts: list[tuple[float, float, float]]
    #: orders whose discounts came from the fallback (1-based)
    fallback_orders: list[int] = field(default_factory=list)

    @property
    def vocabulary(self) -> list[str]:
        """Every unigram of the model (``<s>`` and ``<unk>`` included)."""
        return [g[0] for g in self.logprob[0]]


def count_ngrams(sentences: Sequence[Sequence[str]], order: int, progress: bool = False) -> list[Counter]:
    """Raw counts of every n-gram (n = 1..order) of the padded sentences ``<s> w.. </s>``."""
    counts = [Counter() for _ in range(order)]
    it: Iterable[Sequence[str]] = sentences
    if progress:
        from ..progress import progress_bar

        it = progress_bar(sentences, desc=f"counting {order}-grams", unit="sent")
    for words in it:
        seq = (BOS, *words, EOS)
        for n in range(1, order + 1):
            c = counts[n - 1]
            for i in range(len(seq) - n + 1):
                c[seq[i : i + n]] += 1
    # the unigram <s> is a context only (never predicted); its count plays no role
    counts[0].pop((BOS,), None)
    return counts


def adjusted_counts(raw: list[Counter]) -> list[dict[tuple[str, ...], int]]:
    """Kneser-Ney adjusted counts: raw for the highest order and for n-grams starting with
    ``<s>``; the number of distinct left extensions for every other lower-order n-gram."""
    order = len(raw)
    adjusted: list[dict[tuple[str, ...], int]] = [dict() for _ in range(order)]
    adjusted[order - 1] = dict(raw[order - 1])
    for n in range(order - 1, 0, -1):
        left = Counter(g[1:] for g in raw[n])  # distinct (n+1)-grams by their n-word suffix
        a = adjusted[n - 1]
        for g, c in raw[n - 1].items():
            a[g] = c if g[0] == BOS else left[g]
    return adjusted


def discounts_from_counts(
    counts: Iterable[int], order: int, fallback: Sequence[float] | None = None
) -> tuple[tuple[float, float, float], bool]:
    """(D1, D2, D3+) of Chen & Goodman eq. 26 from adjusted counts of one order.

    Returns the discounts and whether the fallback was used.  Raises DiscountError (naming the
    order and the missing count-of-count) when estimation fails and no fallback is given.
    """
    t = Counter(min(c, 5) for c in counts)
    problem = None
    for k in (1, 2, 3):  # as lmplz: t4 = 0 is allowed (it gives D3+ = 3)
        if t[k] == 0:
            problem = (
                f"no {order}-gram has adjusted count {k}, so the order-{order} discounts "
                "cannot be estimated (small or artificial corpus?)"
            )
            break
    if problem is None:
        y = t[1] / (t[1] + 2.0 * t[2])
        ds = tuple(k - (k + 1) * y * t[k + 1] / t[k] for k in (1, 2, 3))
        for k, d in zip((1, 2, 3), ds):
            if not 0.0 <= d <= k:
                problem = f"order-{order} discount D{k} = {d:.4f} is outside [0, {k}]"
                break
        if problem is None:
            return ds, False  # type: ignore[return-value]
    if fallback is None:
        raise DiscountError(problem + "; pass fallback discounts (--discount-fallback) to override")
    return check_fallback(fallback), True


def estimate(
    sentences: Sequence[Sequence[str]],
    order: int,
    discount_fallback: Sequence[float] | None = None,
    progress: bool = False,
) -> KneserNeyModel:
    """Estimate an interpolated modified Kneser-Ney model of ``order`` from tokenised sentences
    (``progress``: a tqdm bar over the counting pass, for large corpora)."""
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"n-gram order must be an integer >= 1, got {order!r}")
    if not sentences:
        raise ValueError("cannot estimate an n-gram model from an empty corpus")
    raw = count_ngrams(sentences, order, progress=progress)
    adj = adjusted_counts(raw)

    discounts: list[tuple[float, float, float]] = []
    fallback_orders: list[int] = []
    for n in range(1, order + 1):
        ds, used = discounts_from_counts(adj[n - 1].values(), n, discount_fallback)
        discounts.append(ds)
        if used:
            fallback_orders.append(n)

    vocab_size = len(adj[0]) + 1  # every predicted word type plus <unk> (not <s>)
    prob: list[dict[tuple[str, ...], float]] = [dict() for _ in range(order)]
    gamma: list[dict[tuple[str, ...], float]] = [dict() for _ in range(order)]
    for n in range(1, order + 1):
        d = (0.0, *discounts[n - 1])
        by_context: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
        for g, a in adj[n - 1].items():
            by_context[g[:-1]].append((g[-1], a))
        for h, ext in by_context.items():
            denom = float(sum(a for _, a in ext))
            g_h = sum(d[min(a, 3)] for _, a in ext) / denom
            gamma[n - 1][h] = g_h  # interpolation weight of context h at order n
            for w, a in ext:
                lower = 1.0 / vocab_size if n == 1 else prob[n - 2][(*h[1:], w)]
                prob[n - 1][(*h, w)] = (a - d[min(a, 3)]) / denom + g_h * lower
    # <unk> is a zeroton of the unigram level; <s> is never predicted (log10 p = 0 as in lmplz)
    prob[0][(UNK,)] = gamma[0][()] / vocab_size
    prob[0][(BOS,)] = 1.0

    logprob = [{g: (0.0 if g == (BOS,) else math.log10(p)) for g, p in level.items()} for level in prob]
    backoff: list[dict[tuple[str, ...], float]] = [dict() for _ in range(order)]
    for n in range(1, order):
        for h, g_h in gamma[n].items():  # contexts of order-(n+1) n-grams are n-grams
            backoff[n - 1][h] = math.log10(g_h)
    return KneserNeyModel(order, logprob, backoff, discounts, fallback_orders)


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def write_arpa(model: KneserNeyModel, path: str | os.PathLike) -> Path:
    """Write ``model`` as an ARPA file (n-grams sorted, so the output is deterministic)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write("\\data\\\n")
        for n in range(1, model.order + 1):
            fh.write(f"ngram {n}={len(model.logprob[n - 1])}\n")
        for n in range(1, model.order + 1):
            fh.write(f"\n\\{n}-grams:\n")
            bo = model.backoff[n - 1]
            for g in sorted(model.logprob[n - 1]):
                line = f"{_fmt(model.logprob[n - 1][g])}\t{' '.join(g)}"
                if n < model.order:
                    line += f"\t{_fmt(bo.get(g, 0.0))}"
                fh.write(line + "\n")
        fh.write("\n\\end\\\n")
    os.replace(tmp, out)
    return out


def train_arpa(
    corpus: str | os.PathLike,
    order: int,
    output: str | os.PathLike,
    discount_fallback: Sequence[float] | None = None,
) -> KneserNeyModel:
    """Read ``corpus``, estimate a modified Kneser-Ney model of ``order`` and write ``output`` (ARPA).
    ValueError, before anything is read or written, for an order KenLM would not load
    (:func:`check_kenlm_order`) or invalid fallback discounts (:func:`check_fallback`)."""
    check_kenlm_order(order)
    if discount_fallback is not None:
        check_fallback(discount_fallback)
    model = estimate(read_corpus(corpus), order, discount_fallback)
    write_arpa(model, output)
    return model
