"""Controversial natural-sentence pairs by integer linear programming (Golan et al. 2023,
Supplementary Methods "Selection of controversial natural-sentence pairs", Eq. 5-6).

The problem
-----------
Given natural-log probabilities ``log p(s | m)`` of a pool of sentences under each model, rank
them per model into fractional ranks ``r(s | m) = rank / n`` (``scipy.stats.rankdata``, average
ranks for ties: ``1/n`` for the least probable sentence, ``1`` for the most probable one).
For each model pair ``(m1, m2)`` choose ``K`` pairs ``(s1, s2)`` that

* minimise ``sum r(s1 | m1) + r(s2 | m2)`` over all pairs of all model pairs       (Eq. 5)
* with ``r(s1 | m2) >= 0.5`` and ``r(s2 | m1) >= 0.5``                               (5a, 5b)
* using every sentence at most once in the whole selection                          (5c)

Candidates are filtered first, as in the paper and the upstream code: a sentence survives only
if it is below the median (``r < 0.5``) under one model and at or above it under another (the
"controversial" prefilter; the ranks are computed on the *whole* pool before filtering), and
only if no word other than the 42 function words of ``contstimlang/resources/preps.pkl``
appears twice in it.

"No repeated words" is a property of one sentence, not of the selection: the paper ("We also
excluded sentences in which any word (except for prepositions) appeared more than once") and
the upstream selection script apply it as a per-sentence filter, and the published 360 pairs
(``sents_reddit_natural_June2021_selected.csv``) share content words across sentences (630
non-function words occur in more than one of the 720 sentences, within every one of the 36
model pairs too) but never repeat one inside a sentence.  Words are compared case-sensitively
(``Cut`` and ``cut`` differ, as in the upstream vocabulary, which keeps capitalised and
lower-case words apart; the synthesis pool has 117 sentences that repeat a word only up to case
and none that repeat it exactly); a word is a function word when its lower-case form is in the
list.

The reformulation (why it solves on one machine)
------------------------------------------------
The literal Eq. 6 has a binary per (sentence, trial, member): 85,749 x 360 x 2 = 6.2e7.  The K
trials of a model pair are interchangeable, and a pair's two members have independent
constraints, so the problem is an assignment of sentences to *slot types*: an ordered model
pair ``t = (lo, hi)`` asks for ``K`` distinct sentences with ``r(s | hi) >= 0.5``, each costing
``r(s | lo)`` (member 1 of pair (m1, m2) is type (m1, m2); member 2 is type (m2, m1)).  With
``T`` types (``2 x`` the number of model pairs), the ILP is

    min  sum_{t, s} r(s | lo_t) x[s, t]
    s.t. sum_s x[s, t] = K                 for every type t
         sum_t x[s, t] <= 1                for every sentence s
         x[s, t] in {0, 1},  x[s, t] = 0 unless s is eligible for t.

Its constraint matrix is the incidence matrix of a bipartite graph (sentences x types), hence
totally unimodular: the LP relaxation already has an integral optimum (a transportation
problem), and the solvers close it at the root node.

Exact pruning.  Let ``L = K * T`` and let ``C_t`` be the ``L`` cheapest sentences eligible for
type ``t`` (all of them if fewer; order: cost, then pool index).  *Claim: some optimal solution
uses, for every type t, only sentences of C_t.*  Proof: take an optimal solution with the fewest
assignments outside the lists.  If sentence ``i`` is assigned to ``t`` with ``i`` not in
``C_t``, then ``|C_t| = L`` (otherwise every eligible sentence is in ``C_t``) and the solution
makes ``K * T - 1 = L - 1`` other assignments, which occupy at most ``L - 1`` sentences; so some
``j`` in ``C_t`` is unused.  ``j`` is eligible for ``t`` and, being in ``C_t`` while ``i`` is
not, costs ``r(j | lo_t) <= r(i | lo_t)``.  Moving type ``t``'s slot from ``i`` to ``j`` keeps
every constraint, does not increase the cost, and reduces the number of assignments outside the
lists: a contradiction.  Hence restricting ``x[s, t]`` to ``s in C_t`` keeps the optimum.  For 9
models and K = 10 this is at most 72 x 720 = 51,840 binaries, whatever the pool size.

``tests/generate/test_natural_ilp.py`` checks the optimum against brute-force enumeration of the literal
formulation (every injective assignment of sentences to trial members) on small random pools.
"""
from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pulp
import scipy.stats

from contstim_bench.data import safe_pickle, sources
from contstim_bench.generate.ilp_solvers import SolveReport, chosen, solve

FUNCTION_WORDS_FILE = "contstimlang/resources/preps.pkl"
"""The 42 determiners and prepositions that may repeat within a sentence."""

PAIR_COLUMNS = (
    "model_1", "model_2", "sentence1", "sentence2", "sentence1_index", "sentence2_index",
    "s1_ranked_log_prob_model_1", "s1_ranked_log_prob_model_2",
    "s2_ranked_log_prob_model_1", "s2_ranked_log_prob_model_2",
    "s1_log_prob_model_1", "s1_log_prob_model_2", "s2_log_prob_model_1", "s2_log_prob_model_2",
)
"""Columns of :attr:`NaturalPairSelection.pairs`; the ``*_ranked_log_prob_*`` ones are named as
in the published ``sents_reddit_natural_June2021_selected.csv``."""


def load_function_words(source: str | None = None) -> frozenset[str]:
    """The 42 function words (determiners and prepositions) allowed to repeat in a sentence,
    read from ``contstimlang/resources/preps.pkl`` (verified by checksum, restricted unpickler)."""
    words = safe_pickle.load(sources.resolve(FUNCTION_WORDS_FILE, source))
    if not isinstance(words, (list, tuple, set, frozenset)) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"{FUNCTION_WORDS_FILE}: expected a list of words, got {type(words).__name__}")
    return frozenset(words)


def sentence_words(sentence: str) -> list[str]:
    """The words of a sentence: whitespace-separated, sentence-final ``.``, ``!``, ``?`` removed."""
    return sentence.strip().rstrip(".!?").split()


def repeated_words(sentence: str, function_words: Iterable[str]) -> list[str]:
    """Words that occur more than once in ``sentence`` (case-sensitive), function words excepted
    (a word is a function word when its lower-case form is in ``function_words``)."""
    fw = {w.lower() for w in function_words}
    counts = Counter(w for w in sentence_words(sentence) if w.lower() not in fw)
    return [w for w, c in counts.items() if c > 1]


def repeated_word_mask(sentences: Sequence[str], function_words: Iterable[str]) -> np.ndarray:
    """Boolean array: True where a sentence repeats a non-function word."""
    fw = frozenset(w.lower() for w in function_words)
    out = np.zeros(len(sentences), dtype=bool)
    for i, s in enumerate(sentences):
        if not isinstance(s, str) or not s.strip():
            raise ValueError(f"sentence {i} is not a non-empty string: {s!r}")
        out[i] = bool(repeated_words(s, fw))
    return out


def fractional_ranks(log_probs: np.ndarray) -> np.ndarray:
    """Per-model fractional ranks of natural-log probabilities, shape (n_sentences, n_models):
    ``rankdata(..., method="average") / n``, in (0, 1], 1 = most probable sentence."""
    lp = _check_log_probs(log_probs)
    return scipy.stats.rankdata(lp, axis=0, method="average") / lp.shape[0]


def controversial_mask(ranks: np.ndarray) -> np.ndarray:
    """The paper's prefilter: True where some model ranks the sentence below the median
    (``r < 0.5``) and another at or above it (``r >= 0.5``)."""
    return (ranks < 0.5).any(axis=1) & (ranks >= 0.5).any(axis=1)


def slot_types(model_names: Sequence[str],
               model_pairs: Sequence[tuple[str, str]] | None = None) -> list[tuple[int, int]]:
    """Model pairs as index pairs ``(m1, m2)``: all ``itertools.combinations`` of the models in
    their given order, or the given ``model_pairs`` (names) in their given order."""
    index = {m: k for k, m in enumerate(model_names)}
    if model_pairs is None:
        return list(itertools.combinations(range(len(model_names)), 2))
    out: list[tuple[int, int]] = []
    for pair in model_pairs:
        if len(pair) != 2:
            raise ValueError(f"model pair {pair!r} does not have two models")
        a, b = pair
        for m in (a, b):
            if m not in index:
                raise ValueError(f"model pair {pair!r}: unknown model {m!r}; models are {list(model_names)}")
        if a == b:
            raise ValueError(f"model pair {pair!r} pits a model against itself")
        key = (index[a], index[b])
        if key in out or key[::-1] in out:
            raise ValueError(f"model pair {pair!r} is listed twice")
        out.append(key)
    if not out:
        raise ValueError("model_pairs is empty")
    return out


def candidate_lists(ranks: np.ndarray, keep: np.ndarray, types: Sequence[tuple[int, int]],
                    per_pair: int, prune: bool = True) -> list[np.ndarray]:
    """For each slot type ``(lo, hi)``, the pool indices of its candidate sentences, cheapest
    first: kept sentences with ``r(s | hi) >= 0.5``, ordered by ``r(s | lo)`` then index, cut to
    the ``per_pair * len(types)`` cheapest when ``prune`` (exact; see the module docstring)."""
    limit = per_pair * len(types)
    out = []
    for lo, hi in types:
        idx = np.flatnonzero(keep & (ranks[:, hi] >= 0.5))
        order = np.argsort(ranks[idx, lo], kind="stable")
        idx = idx[order]
        out.append(idx[:limit] if prune else idx)
    return out


@dataclass(frozen=True)
class NaturalPairSelection:
    """The selected pairs and how they were obtained.

    ``pairs``: one row per trial (``K`` per model pair), columns :data:`PAIR_COLUMNS`
    (``sentence1``/``sentence2`` are None when no sentences were given).
    ``objective``: Eq. 5, the sum over trials of ``r(s1 | m1) + r(s2 | m2)`` (fractional ranks).
    ``report``: the solver's status (``"optimal"`` = proven optimal), objective and seconds.
    ``n_pool``, ``n_uncontroversial``, ``n_repeated``, ``n_candidates``: pool size, sentences
    removed by the controversial prefilter, by the repeated-word filter (among those passing the
    first), and sentences left.  ``n_variables``: binaries in the reduced ILP.
    ``build_seconds``: ranking, filtering, pruning and model building time (wall clock).
    """

    pairs: pd.DataFrame
    objective: float
    report: SolveReport
    n_pool: int
    n_uncontroversial: int
    n_repeated: int
    n_candidates: int
    n_variables: int
    build_seconds: float


def select_natural_pairs(
    log_probs: np.ndarray,
    model_names: Sequence[str],
    sentences: Sequence[str] | None,
    per_pair: int = 10,
    *,
    model_pairs: Sequence[tuple[str, str]] | None = None,
    function_words: Iterable[str] | None = None,
    solver: str = "cbc",
    prune: bool = True,
    time_limit: float | None = None,
    threads: int | None = None,
) -> NaturalPairSelection:
    """Select ``per_pair`` controversial natural-sentence pairs per model pair (Eq. 5-6).

    ``log_probs``: float array (n_sentences, n_models) of natural-log probabilities, column k
    for ``model_names[k]``.  ``sentences``: the n_sentences texts (for the repeated-word filter
    and the output); None skips that filter (only for pools whose texts are unavailable, e.g.
    the precomputed upstream arrays).  ``model_pairs``: which model pairs get trials (default:
    every combination).  ``function_words``: words that may repeat (default: the 42 of
    ``preps.pkl``).  ``solver``: ``"cbc"`` or ``"highs"``.  ``prune=False`` disables the exact
    candidate pruning (for verification; much larger ILPs).

    Raises ValueError on malformed input and when no selection exists (too few eligible
    sentences); RuntimeError when the solver returns no solution (e.g. the time limit).
    """
    t0 = time.perf_counter()
    lp = _check_log_probs(log_probs)
    n, m = lp.shape
    names = [str(x) for x in model_names]
    if len(names) != m:
        raise ValueError(f"{len(names)} model names for {m} log-probability columns")
    if len(set(names)) != m:
        raise ValueError(f"model names are not unique: {names}")
    if m < 2:
        raise ValueError("need at least two models")
    if isinstance(per_pair, bool) or not isinstance(per_pair, (int, np.integer)) or per_pair < 1:
        raise ValueError(f"per_pair must be a positive integer, got {per_pair!r}")
    per_pair = int(per_pair)
    if sentences is not None:
        sentences = list(sentences)
        if len(sentences) != n:
            raise ValueError(f"{len(sentences)} sentences for {n} rows of log-probabilities")
    pairs = slot_types(names, model_pairs)
    types = [(a, b) for a, b in pairs] + [(b, a) for a, b in pairs]

    ranks = fractional_ranks(lp)
    controversial = controversial_mask(ranks)
    keep = controversial.copy()
    n_repeated = 0
    if sentences is not None:
        fw = load_function_words() if function_words is None else frozenset(function_words)
        repeated = repeated_word_mask(sentences, fw)
        n_repeated = int((repeated & controversial).sum())
        keep &= ~repeated

    lists = candidate_lists(ranks, keep, types, per_pair, prune=prune)
    for (lo, hi), cand in zip(types, lists):
        if len(cand) < per_pair:
            raise ValueError(
                f"no selection exists: only {len(cand)} candidate sentences are at or above the "
                f"median under {names[hi]!r} (needed {per_pair} as the sentence that "
                f"{names[lo]!r} should find improbable)")

    problem = pulp.LpProblem("natural_controversial_pairs", pulp.LpMinimize)
    variables: list[pulp.LpVariable] = []
    owner: list[tuple[int, int]] = []  # (type position, pool index) per variable
    by_sentence: dict[int, list[pulp.LpVariable]] = {}
    objective_terms = []
    for t, ((lo, _hi), cand) in enumerate(zip(types, lists)):
        type_vars = []
        for i in cand.tolist():
            v = pulp.LpVariable(f"x_{t}_{i}", cat=pulp.LpBinary)
            variables.append(v)
            owner.append((t, i))
            type_vars.append(v)
            by_sentence.setdefault(i, []).append(v)
            objective_terms.append((v, float(ranks[i, lo])))
        problem += pulp.LpAffineExpression([(v, 1.0) for v in type_vars]) == per_pair, f"slots_{t}"
    problem += pulp.LpAffineExpression(objective_terms)
    for i, vs in by_sentence.items():
        if len(vs) > 1:
            problem += pulp.LpAffineExpression([(v, 1.0) for v in vs]) <= 1, f"once_{i}"
    build_seconds = time.perf_counter() - t0

    report = solve(problem, solver=solver, time_limit=time_limit, threads=threads)
    if report.status == "infeasible":
        raise ValueError(
            f"no selection exists: the pool has too few distinct eligible sentences for "
            f"{per_pair} pairs per model pair over {len(pairs)} model pairs")
    if report.status not in ("optimal", "feasible"):
        raise RuntimeError(f"ILP solver {solver!r} returned no solution (status {report.status})")

    picked: list[list[int]] = [[] for _ in types]
    for k in chosen(variables):
        t, i = owner[k]
        picked[t].append(i)
    frame = _pairs_frame(pairs, picked, ranks, lp, names, sentences, per_pair)
    objective = float(frame["s1_ranked_log_prob_model_1"].sum() + frame["s2_ranked_log_prob_model_2"].sum())
    return NaturalPairSelection(
        pairs=frame, objective=objective, report=report, n_pool=n,
        n_uncontroversial=int((~controversial).sum()), n_repeated=n_repeated,
        n_candidates=int(keep.sum()), n_variables=len(variables), build_seconds=build_seconds)


def _pairs_frame(pairs: list[tuple[int, int]], picked: list[list[int]], ranks: np.ndarray,
                 lp: np.ndarray, names: list[str], sentences: list[str] | None,
                 per_pair: int) -> pd.DataFrame:
    """One row per trial: within a model pair, members 1 and 2 are matched in order of cost."""
    rows = []
    n_pairs = len(pairs)
    for p, (a, b) in enumerate(pairs):
        s1 = sorted(picked[p], key=lambda i: (ranks[i, a], i))
        s2 = sorted(picked[n_pairs + p], key=lambda i: (ranks[i, b], i))
        if len(s1) != per_pair or len(s2) != per_pair:
            raise RuntimeError(f"solver returned {len(s1)}/{len(s2)} sentences for model pair "
                               f"{names[a]} vs {names[b]}, expected {per_pair}")
        for i, j in zip(s1, s2):
            rows.append({
                "model_1": names[a], "model_2": names[b],
                "sentence1": None if sentences is None else sentences[i],
                "sentence2": None if sentences is None else sentences[j],
                "sentence1_index": i, "sentence2_index": j,
                "s1_ranked_log_prob_model_1": ranks[i, a], "s1_ranked_log_prob_model_2": ranks[i, b],
                "s2_ranked_log_prob_model_1": ranks[j, a], "s2_ranked_log_prob_model_2": ranks[j, b],
                "s1_log_prob_model_1": lp[i, a], "s1_log_prob_model_2": lp[i, b],
                "s2_log_prob_model_1": lp[j, a], "s2_log_prob_model_2": lp[j, b],
            })
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def _check_log_probs(log_probs: np.ndarray) -> np.ndarray:
    """A float64 (n_sentences, n_models) array without NaN or +inf (``-inf``, probability 0,
    ranks lowest, as in the upstream arrays), or a ValueError naming the first bad cell."""
    if not isinstance(log_probs, np.ndarray):
        raise TypeError(f"log_probs must be a numpy array, got {type(log_probs).__name__}")
    if log_probs.ndim != 2:
        raise ValueError(f"log_probs must be 2-D (n_sentences, n_models), got shape {log_probs.shape}")
    if log_probs.shape[0] < 2:
        raise ValueError(f"need at least two sentences, got {log_probs.shape[0]}")
    if not np.issubdtype(log_probs.dtype, np.number) or np.issubdtype(log_probs.dtype, np.complexfloating):
        raise TypeError(f"log_probs must be real numbers, got dtype {log_probs.dtype}")
    lp = log_probs.astype(np.float64, copy=False)
    bad = np.argwhere(np.isnan(lp) | (lp == np.inf))
    if len(bad):
        r, c = bad[0]
        raise ValueError(f"log_probs[{r}, {c}] is {lp[r, c]}: a log-probability must be a real number below +inf "
                         f"({len(bad)} bad values; -inf, probability 0, is allowed)")
    return lp
